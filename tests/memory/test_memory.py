"""Long-term memory on real parts: WordLlama's bundled model, numpy search, a SQLite file."""

from __future__ import annotations

import hashlib
import logging
import math
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parley.memory import (
    EmbeddingFunction,
    InMemoryVectorStore,
    LongTermMemory,
    MemoryHit,
    SQLiteVectorStore,
    VectorStore,
    WordLlamaEmbedding,
)

FACTS = [
    "The cat sat on the mat in the sunny kitchen.",
    "Quarterly revenue grew five percent on strong cloud sales.",
    "The user's favourite colour is green.",
    "Paris is the capital of France.",
]


def bag_of_words(texts: Sequence[str]) -> list[list[float]]:
    """A user-supplied embedding function: hashed word counts in 64 buckets."""
    out = []
    for text in texts:
        v = [0.0] * 64
        for word in text.lower().split():
            v[int(hashlib.md5(word.strip(".,?!").encode()).hexdigest(), 16) % 64] += 1.0
        out.append(v)
    return out


# -- the bundled embedding model -----------------------------------------------------------


def test_wordllama_embeds_offline_to_unit_vectors_that_rank_by_meaning() -> None:
    embed = WordLlamaEmbedding()
    assert isinstance(embed, EmbeddingFunction)
    vectors = embed(FACTS)
    assert vectors.shape == (4, 256)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    [kitten] = embed(["a kitten resting on a rug"])
    scores = vectors @ kitten
    assert int(np.argmax(scores)) == 0
    assert np.array_equal(embed(FACTS), vectors)  # deterministic


def test_wordllama_truncated_sizes_and_bad_input() -> None:
    assert WordLlamaEmbedding(dim=64)(["hello"]).shape == (1, 64)
    assert WordLlamaEmbedding()([]).shape == (0, 256)
    with pytest.raises(ValueError, match="dim must be one of"):
        WordLlamaEmbedding(dim=300)
    with pytest.raises(TypeError, match="list of texts"):
        WordLlamaEmbedding()("one string")


# -- LongTermMemory ---------------------------------------------------------------------------


def test_long_term_memory_recalls_by_meaning_with_the_default_model() -> None:
    memory = LongTermMemory()
    ids = memory.add_many(FACTS, [{"n": i} for i in range(4)])
    assert len(memory) == 4
    assert len(set(ids)) == 4
    hits = memory.search("which city is France's capital?", k=2)
    assert [type(h) for h in hits] == [MemoryHit, MemoryHit]
    assert hits[0].text == FACTS[3]
    assert hits[0].metadata == {"n": 3}
    assert hits[0].score >= hits[1].score
    memory.delete([ids[3]])
    assert FACTS[3] not in [h.text for h in memory.search("capital of France", k=4)]
    memory.clear()
    assert memory.search("anything") == []


async def test_async_methods_and_a_user_embedding_function() -> None:
    memory = LongTermMemory(embedding_function=bag_of_words)
    await memory.a_add("deploy the green build to staging")
    await memory.a_add_many(["lunch is at noon", "the build failed on staging"])
    hits = await memory.a_search("staging build", k=3)
    assert {h.text for h in hits[:2]} == {
        "deploy the green build to staging",
        "the build failed on staging",
    }
    assert hits[-1].text == "lunch is at noon"


def test_memory_refuses_bad_input_clearly() -> None:
    memory = LongTermMemory(embedding_function=bag_of_words)
    with pytest.raises(ValueError, match="k must be positive"):
        memory.search("x", k=0)
    with pytest.raises(TypeError, match="use add"):
        memory.add_many("not a list")
    with pytest.raises(TypeError, match="must be callable"):
        LongTermMemory(embedding_function="bge")  # type: ignore[arg-type]
    broken = LongTermMemory(embedding_function=lambda texts: [[1.0, 0.0]])
    with pytest.raises(ValueError, match="returned 1 vectors for 2 texts"):
        broken.add_many(["a", "b"])
    assert len(broken) == 0


# -- the stores ---------------------------------------------------------------------------


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorStore]:
    if request.param == "memory":
        yield InMemoryVectorStore()
    else:
        with SQLiteVectorStore(tmp_path / "vectors.db") as s:
            yield s


def test_store_replaces_ids_deletes_and_refuses_other_dimensions(store: VectorStore) -> None:
    assert isinstance(store, VectorStore)
    store.add(["a", "b"], [[1, 0, 0], [0, 1, 0]], ["A", "B"], [{"k": 1}, {"k": 2}])
    store.add(["a"], [[0, 0, 2]], ["A2"])
    assert len(store) == 2
    [hit] = store.query([0, 0, 1], k=1)
    assert (hit.id, hit.text, hit.metadata) == ("a", "A2", {})
    assert math.isclose(hit.score, 1.0, rel_tol=1e-6)
    with pytest.raises(ValueError, match="2 dimensions but this store holds 3"):
        store.add(["c"], [[1, 1]], ["C"])
    with pytest.raises(ValueError, match="same length"):
        store.add(["c", "d"], [[1, 1, 1]], ["C", "D"])
    with pytest.raises(ValueError, match="NaN"):
        store.add(["c"], [[float("nan"), 0, 0]], ["C"])
    assert len(store) == 2
    store.delete(["b", "unknown"])
    assert [h.id for h in store.query([0, 1, 0], k=5)] == ["a"]
    store.clear()
    assert len(store) == 0
    assert store.query([1, 0, 0], k=1) == []


def test_sqlite_store_keeps_records_across_reopening(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "memory.db"
    with SQLiteVectorStore(path) as s:
        memory = LongTermMemory(embedding_function=bag_of_words, store=s)
        memory.add_many(["alpha beta", "gamma delta", "beta gamma"])
        memory.delete([memory.search("gamma delta", k=1)[0].id])
        with pytest.raises(ValueError, match="dimensions"):
            s.add(["x"], [[1.0]], ["x"])  # rolled back in the file too
    with SQLiteVectorStore(path) as again:
        assert len(again) == 2
        texts = {h.text for h in LongTermMemory(bag_of_words, again).search("beta", k=5)}
        assert texts == {"alpha beta", "beta gamma"}


vectors = st.lists(
    st.floats(min_value=-10, max_value=10, allow_nan=False, width=32), min_size=3, max_size=3
)


@settings(max_examples=60, deadline=None)
@given(
    records=st.dictionaries(st.sampled_from("abcdefghij"), vectors, min_size=1),
    deleted=st.sets(st.sampled_from("abcdefghij")),
    query=vectors.filter(lambda v: any(abs(x) > 1e-3 for x in v)),
    k=st.integers(1, 12),
)
def test_query_matches_brute_force_cosine_search(
    records: dict[str, list[float]], deleted: set[str], query: list[float], k: int
) -> None:
    store = InMemoryVectorStore()
    for record_id, vector in records.items():  # one at a time: the matrix grows and moves
        store.add([record_id], [vector], [record_id.upper()])
    store.delete(sorted(deleted))
    kept = {i: v for i, v in records.items() if i not in deleted}
    q = np.asarray(query, dtype=np.float32)
    q /= np.linalg.norm(q)

    def cosine(v: list[float]) -> float:
        a = np.asarray(v, dtype=np.float32)
        n = np.linalg.norm(a)
        return float(a @ q / n) if n else 0.0

    hits = store.query(query, k)
    assert len(hits) == min(k, len(kept))
    expected = sorted((cosine(v) for v in kept.values()), reverse=True)[: len(hits)]
    assert np.allclose([h.score for h in hits], expected, atol=1e-4)
    assert all(h.text == h.id.upper() for h in hits)


def test_loading_the_model_leaves_the_programs_logging_alone() -> None:
    code = (
        "import logging\n"
        "from parley.memory import WordLlamaEmbedding\n"
        "WordLlamaEmbedding()(['hello'])\n"
        "root = logging.getLogger()\n"
        "print(root.level, len(root.handlers))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.split() == [str(logging.WARNING), "0"]
