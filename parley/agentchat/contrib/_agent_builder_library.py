"""``AgentBuilder.build_from_library``'s steps: reading an agent library, recalling the agents
whose descriptions are nearest to the task's lines, and reading the builder model's matching.

AutoGen embedded the descriptions with a sentence-transformers model through ChromaDB (a model
download on first use); parley embeds them offline with ``parley.memory``'s WordLlama model,
or with any embedding function given as ``embedding_model``, and ranks by cosine similarity.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import re
from collections.abc import Callable, Sequence
from typing import Any

from ...exceptions import AgentLibraryError

__all__ = [
    "AgentLibraryError",
    "embedding_function",
    "load_library",
    "parse_selection",
    "recall_agents",
]

logger = logging.getLogger(__name__)

Embed = Callable[[Sequence[str]], Any]
_JSON_BLOCK = re.compile(r"```(?:json)?\s*\n(.*?)\n\s*```", re.DOTALL)


def load_library(library_path_or_json: str) -> list[dict[str, Any]]:
    """The library's agents: ``library_path_or_json`` is JSON text or the path of a JSON file
    holding a list of ``{"name", "description", "system_message", ...}``."""
    try:
        library = json.loads(library_path_or_json)
    except json.JSONDecodeError:
        if not os.path.isfile(library_path_or_json):
            raise AgentLibraryError(
                "library_path_or_json is neither JSON nor the path of a file: "
                f"{library_path_or_json[:80]!r}"
            ) from None
        with open(library_path_or_json, encoding="utf-8") as f:
            try:
                library = json.load(f)
            except json.JSONDecodeError as exc:
                raise AgentLibraryError(
                    f"the agent library {library_path_or_json!r} is not valid JSON: {exc}"
                ) from exc
    if not isinstance(library, list) or not library:
        raise AgentLibraryError("an agent library is a non-empty JSON list of agent configs")
    for i, agent in enumerate(library):
        if not isinstance(agent, dict) or not isinstance(agent.get("description"), str):
            raise AgentLibraryError(f"agent {i} of the library has no 'description' text")
        if not isinstance(agent.get("name"), str):
            raise AgentLibraryError(f"agent {i} of the library has no 'name'")
    return library


def _require(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise ImportError(
            f"build_from_library needs {module} to rank the library's agents: "
            "pip install 'parley[autobuild]'"
        )


def embedding_function(embedding_model: Any) -> Embed:
    """The function that embeds texts: a callable as given; a model name (AutoGen's
    sentence-transformers names) means parley's offline WordLlama model."""
    if callable(embedding_model):
        return embedding_model  # type: ignore[no-any-return]
    if embedding_model is not None and not isinstance(embedding_model, str):
        raise TypeError(
            "embedding_model must be a model name or a function from a list of texts to "
            f"vectors, got {type(embedding_model).__name__}"
        )
    _require("wordllama")
    from ...memory import WordLlamaEmbedding

    if embedding_model is not None:
        logger.info(
            "embedding_model %r: parley embeds with WordLlama's bundled model (offline)",
            embedding_model,
        )
    return WordLlamaEmbedding()


def recall_agents(
    task: str, library: list[dict[str, Any]], top_k: int, embed: Embed
) -> list[dict[str, Any]]:
    """The library's agents among the ``top_k`` nearest to any line of ``task`` (copies, in
    library order; agents with the same description count once)."""
    _require("numpy")
    import numpy as np

    skills = [line for line in task.replace(":", " ").split("\n") if line.strip()] or [task]
    descriptions = list(dict.fromkeys(agent["description"] for agent in library))
    docs = np.asarray(embed(descriptions), dtype=np.float64)
    queries = np.asarray(embed(skills), dtype=np.float64)
    docs /= np.maximum(np.linalg.norm(docs, axis=1, keepdims=True), 1e-12)
    queries /= np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)
    scores = queries @ docs.T
    k = max(1, min(top_k, len(descriptions)))
    chosen: set[str] = set()
    for row in scores:
        # A stable sort: ties keep library order, so the recall is deterministic.
        for index in np.argsort(-row, kind="stable")[:k]:
            chosen.add(descriptions[int(index)])
    recalled, seen = [], set()
    for agent in library:
        if agent["description"] in chosen and agent["description"] not in seen:
            seen.add(agent["description"])
            recalled.append(dict(agent))
    return recalled


def parse_selection(text: str) -> dict[str, str]:
    """The builder model's ``{skill: "name: description" | "None"}``, from a ```json block
    or the reply's outermost braces."""
    match = _JSON_BLOCK.search(text)
    candidate = match.group(1) if match else text[text.find("{") : text.rfind("}") + 1]
    # The answer format shows comments; a model may copy them.
    candidate = re.sub(r"\s//[^\n]*", "", candidate)
    try:
        selection = json.loads(candidate)
    except json.JSONDecodeError as exc:
        raise AgentLibraryError(f"the builder model's selection is not JSON: {exc}") from exc
    if not isinstance(selection, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in selection.items()
    ):
        raise AgentLibraryError("the builder model's selection must map skills to strings")
    return selection
