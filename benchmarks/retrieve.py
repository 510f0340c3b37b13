"""RetrieveChat throughput: index 1,000 documents, ask 100 questions; parley against AutoGen 0.2.35.

    python benchmarks/retrieve.py                                  # parley only
    python benchmarks/retrieve.py --autogen /tmp/agvenv-rag/bin/python # parley and AutoGen
    PYTHONPATH=/path/to/checkout python benchmarks/retrieve.py     # that checkout's parley

The corpus is ``--docs`` (1,000) generated text files of 150 to 300 words in a few paragraphs,
each about a made-up subject; the ``--queries`` (100) questions each name a document's subject
and two of its facts. Each package runs in a subprocess (this file with ``--worker``) through
its own ``RetrieveUserProxyAgent``, with the defaults a user gets (``vector_db="chroma"``, a
persistent Chroma in a fresh directory, chunks of ``gpt-4``'s default size, so one chunk per
document):

* ``index``: the first ``retrieve_docs`` call, which reads, chunks, embeds and stores the whole
  corpus (and answers one question);
* ``query``: ``message_generator`` for each question with ``n_results=5`` (embed the question,
  search, build the context and the prompt), what a chat pays per question;
* ``hit@5``: the share of questions whose document was among the five chunks found. An exact
  search over the same embeddings finds 78% (both wordllama versions embed alike); Chroma's HNSW
  index is approximate, and chromadb 0.5 searches it with ``ef=10`` by default, which is why
  AutoGen's stack finds about 40% where parley's (chromadb 1.x, ``ef_search=100``) finds 71-78%
  (the index is built by several threads, so the share moves a little between runs).

Both use the same embedding model, WordLlama's bundled ``l2_supercat`` 256-dimension weights:
parley's default embedding function, and for AutoGen the same weights and tokenizer passed as
``embedding_function`` (AutoGen's default, sentence-transformers' all-MiniLM-L6-v2, downloads
its model, which cannot run here; and a different model would not compare like for like). The
two venvs pin different versions of the libraries (pyautogen 0.2.35 needs numpy < 2, hence
wordllama 0.3 and chromadb 0.5 there; parley's venv has wordllama 0.4 and chromadb 1.x): the
table is the end-to-end cost of each stack as a user installs it. AutoGen's venv needs
``chromadb==0.5.3`` (``pip install pyautogen==0.2.35 chromadb==0.5.3 wordllama pypdf
markdownify beautifulsoup4 ipython``): later releases (0.5.23 was tried) raise, for a missing
collection, an error AutoGen 0.2.35 does not catch, and its RetrieveChat fails before indexing.
Chroma's telemetry is off in both, and AutoGen's tiktoken gets parley's shipped cl100k
vocabulary (nothing is downloaded).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
SYLLABLES = ["ka", "lo", "mi", "ren", "sa", "tor", "vel", "qu", "ban", "dri", "fen", "gol", "zu"]
FILLER = [
    "the",
    "of",
    "and",
    "a",
    "to",
    "in",
    "is",
    "was",
    "it",
    "for",
    "on",
    "with",
    "as",
    "by",
    "at",
    "from",
    "that",
    "this",
    "which",
    "be",
    "are",
    "an",
    "or",
    "its",
    "river",
    "hill",
    "market",
    "winter",
    "summer",
    "council",
    "harbour",
    "school",
    "bridge",
    "garden",
    "festival",
    "railway",
    "mill",
    "village",
    "records",
    "archive",
    "museum",
    "library",
    "tower",
    "valley",
    "forest",
    "island",
    "coast",
]
FACTS = [
    ("founded in", lambda r: str(r.randint(1200, 1990))),
    ("known for its", lambda r: r.choice(["copper", "wool", "glass", "salt", "silk", "clocks", "cheese", "boats"])),
    ("population of", lambda r: f"{r.randint(2, 900) * 100}"),
    ("twinned with", lambda r: _name(r)),
    ("main export is", lambda r: r.choice(["timber", "olives", "coal", "tea", "paper", "wine", "tin", "amber"])),
]  # fmt: skip


def _name(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(3)).capitalize()


def corpus(n_docs: int, n_queries: int, folder: Path) -> list[tuple[str, str]]:
    """Write the documents; return (question, file name of its document) pairs."""
    rng = random.Random(20240501)
    questions = []
    for i in range(n_docs):
        subject = _name(rng) + " " + rng.choice(["Town", "Abbey", "Valley", "Works", "Port"])
        facts = [f"{subject} is {label} {value(rng)}." for label, value in rng.sample(FACTS, 3)]
        paragraphs = []
        for facts_here in (facts[:2], facts[2:], []):
            words = [rng.choice(FILLER) for _ in range(rng.randint(40, 90))]
            sentences = [
                " ".join(words[k : k + 12]).capitalize() + "." for k in range(0, len(words), 12)
            ]
            paragraphs.append(" ".join(facts_here + sentences))
        name = f"doc{i:04d}.txt"
        (folder / name).write_text("\n\n".join(paragraphs) + "\n")
        if len(questions) < n_queries and i % max(1, n_docs // n_queries) == 0:
            questions.append((f"What do we know about {subject}: {facts[0]} {facts[1]}", name))
    return questions


# -- the workers ------------------------------------------------------------------------------


def _autogen_embedding() -> Any:
    """WordLlama over its bundled files, for the wordllama version in AutoGen's venv."""
    import numpy as np
    import wordllama
    from safetensors import safe_open
    from wordllama.inference import WordLlamaInference

    root = Path(wordllama.__file__).parent
    with safe_open(str(root / "weights" / "l2_supercat_256.safetensors"), framework="np") as f:
        table = f.get_tensor("embedding.weight")
    tokenizer_file = root / "tokenizers" / "l2_supercat_tokenizer_config.json"
    try:  # wordllama 0.4
        from wordllama import WordLlama

        model = WordLlamaInference(table, WordLlama.load_tokenizer(tokenizer_file))
    except TypeError:  # wordllama 0.3: the config is an argument too
        from wordllama.config import Config
        from wordllama.tokenizers import tokenizer_from_file

        config = Config._configurations["l2_supercat"]
        model = WordLlamaInference(table, config, tokenizer_from_file(tokenizer_file))

    class WordLlamaFunction:
        def __call__(self, input: list[str]) -> Any:
            vectors = np.asarray(model.embed(list(input)), dtype=np.float32)
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            # chromadb 0.5 wants lists of floats, not an array.
            return (vectors / np.where(norms == 0, 1, norms)).tolist()

    return WordLlamaFunction()


def worker(package: str, folder: str, questions: list[tuple[str, str]]) -> dict[str, Any]:
    if package == "parley":
        from parley.agentchat.contrib.retrieve_user_proxy_agent import RetrieveUserProxyAgent

        embedding = None  # parley's default: WordLlama
    else:
        from autogen.agentchat.contrib.retrieve_user_proxy_agent import RetrieveUserProxyAgent

        embedding = _autogen_embedding()
    config: dict[str, Any] = {
        "docs_path": folder,
        "vector_db": "chroma",
        "db_config": {"path": tempfile.mkdtemp(prefix=f"bench-{package}-db-")},
        "collection_name": "bench",
        # A fresh database: the collection is created. (get_or_create=True would make AutoGen
        # 0.2.35 look the collection up first, and it expects chromadb < 0.5's ValueError there.)
        "get_or_create": False,
        "model": "gpt-4",
    }
    if embedding is not None:
        config["embedding_function"] = embedding
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
        agent = RetrieveUserProxyAgent(
            "rag", human_input_mode="NEVER", code_execution_config=False, retrieve_config=config
        )
        start = time.perf_counter()
        agent.retrieve_docs(questions[0][0], n_results=5)
        index_s = time.perf_counter() - start
        stored = len(agent._vector_db.get_docs_by_ids(ids=None, collection_name="bench"))
        hits = 0
        start = time.perf_counter()
        for question, name in questions:
            agent.message_generator(agent, None, {"problem": question, "n_results": 5})
            found = [Path(d["metadata"]["source"]).name for d, _ in agent._results[0]]
            hits += name in found
        query_s = time.perf_counter() - start
    return {"index_s": index_s, "query_s": query_s, "chunks": stored, "hits": hits}


# -- the driver -------------------------------------------------------------------------------


def tiktoken_cache() -> str:
    """A TIKTOKEN_CACHE_DIR holding parley's cl100k_base under tiktoken's cache name."""
    from parley._tokenizer import _vocabulary_bytes

    folder = tempfile.mkdtemp(prefix="parley-bench-tiktoken-")
    name = hashlib.sha1(CL100K_URL.encode()).hexdigest()
    with open(os.path.join(folder, name), "wb") as f:
        f.write(_vocabulary_bytes("cl100k_base"))
    return folder


def run(python: str, package: str, folder: Path, questions_file: Path, env: dict[str, str]) -> Any:
    proc = subprocess.run(
        [
            python,
            __file__,
            "--worker",
            package,
            "--corpus",
            str(folder),
            "--questions",
            str(questions_file),
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=3600,
    )
    if proc.returncode != 0:
        return f"worker failed: {proc.stderr.strip()[-1500:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument(
        "--autogen", help="python of a venv with pyautogen==0.2.35, chromadb, wordllama"
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--corpus", help=argparse.SUPPRESS)
    parser.add_argument("--questions", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        questions = [tuple(q) for q in json.loads(Path(args.questions).read_text())]
        print(json.dumps(worker(args.worker, args.corpus, questions)))  # type: ignore[arg-type]
        return
    folder = Path(tempfile.mkdtemp(prefix="bench-retrieve-docs-"))
    questions = corpus(args.docs, args.queries, folder)
    questions_file = folder.parent / f"{folder.name}-questions.json"
    questions_file.write_text(json.dumps(questions))
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False", "TOKENIZERS_PARALLELISM": "false"}
    results = {"parley": run(sys.executable, "parley", folder, questions_file, env)}
    if args.autogen:
        autogen_env = {**env, "TIKTOKEN_CACHE_DIR": tiktoken_cache()}
        autogen_env.pop("PYTHONPATH", None)
        results["autogen"] = run(args.autogen, "autogen", folder, questions_file, autogen_env)
    print(f"{args.docs} documents, {len(questions)} questions, n_results=5, WordLlama embeddings")
    print(
        f"{'':<8}{'chunks':>8}{'index s':>10}{'docs/s':>10}{'query s':>10}{'queries/s':>11}{'hit@5':>8}"
    )
    for package, r in results.items():
        if isinstance(r, str):
            print(f"{package:<8}{r}")
            continue
        print(
            f"{package:<8}{r['chunks']:>8}{r['index_s']:>10.2f}{args.docs / r['index_s']:>10.0f}"
            f"{r['query_s']:>10.2f}{len(questions) / r['query_s']:>11.0f}{r['hits'] / len(questions):>8.0%}"
        )
    ours, theirs = results["parley"], results.get("autogen")
    if isinstance(ours, dict) and isinstance(theirs, dict):
        print(
            f"ratio (AutoGen's time / parley's): index {theirs['index_s'] / ours['index_s']:.2f}x, "
            f"query {theirs['query_s'] / ours['query_s']:.2f}x"
        )


if __name__ == "__main__":
    main()
