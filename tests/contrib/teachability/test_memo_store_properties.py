"""MemoStore invariants over many inputs (hypothesis): what a lookup returns, and that any text
survives a new store over the same directory."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parley.agentchat.contrib.capabilities.teachability import MemoStore
from parley.io import IOScripted, IOStream

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
QUESTIONS = [
    "What is the name of my dog?",
    "What is my cat called?",
    "In which city do I live?",
    "Adding two numbers.",
    "Summarising a research abstract.",
    "When is my birthday?",
    "Which programming language do I prefer?",
]
# Texts SQLite and JSON can hold: no lone surrogates.
TEXTS = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)


@pytest.fixture(scope="module")
def store() -> Iterator[MemoStore]:
    with tempfile.TemporaryDirectory() as directory:
        memos = MemoStore(path_to_db_dir=directory)
        for i, question in enumerate(QUESTIONS):
            memos.add_input_output_pair(question, f"answer {i}")
        yield memos
        memos.close()


@PROPERTY
@given(
    query=st.sampled_from([*QUESTIONS, "hello", "What's my dog's name?", "Sum 3 and 4", ""]),
    n_results=st.integers(1, 12),
    threshold=st.floats(0.0, 4.5),
)
def test_a_lookup_is_the_nearest_memos_below_the_threshold(
    store: MemoStore, query: str, n_results: int, threshold: float
) -> None:
    ranking = store.get_related_memos(query, len(QUESTIONS), 4.5)
    assert len(ranking) == len(QUESTIONS)
    distances = [d for _, _, d in ranking]
    assert distances == sorted(distances)
    assert all(0.0 <= d <= 4.0 + 1e-6 for d in distances)
    found = store.get_related_memos(query, n_results, threshold)
    assert found == [m for m in ranking[:n_results] if m[2] < threshold]


@PROPERTY
@given(pairs=st.lists(st.tuples(TEXTS, TEXTS), min_size=1, max_size=4))
def test_any_text_survives_a_new_store(pairs: list[tuple[str, str]]) -> None:
    with tempfile.TemporaryDirectory() as directory, IOStream.set_default(IOScripted()):
        first = MemoStore(path_to_db_dir=directory)
        for input_text, output_text in pairs:
            first.add_input_output_pair(input_text, output_text)
        first.close()
        second = MemoStore(path_to_db_dir=str(Path(directory)))
        listed = second.list_memos()
        second.close()
    assert [(i, o) for _, i, o in listed] == pairs
    assert [uid for uid, _, _ in listed] == [str(n) for n in range(1, len(pairs) + 1)]
