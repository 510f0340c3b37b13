"""The embedding function a RetrieveChat store uses: the user's, or parley's bundled WordLlama model.

Any callable from a list of texts to one vector per text works (a ChromaDB embedding function,
``SentenceTransformer(...).encode``, a plain function). Nothing here downloads anything: the
default model's weights ship inside the ``wordllama`` wheel.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "EmbedFunction",
    "as_chroma_embedding",
    "default_embedding",
    "embed",
    "import_chromadb",
    "install_hint",
    "offline_settings",
]

EmbedFunction = Callable[..., Any]
_adapter_class: Any = None


def install_hint(extra: str, package: str) -> str:
    return f"{package} is not installed: pip install 'parley[{extra}]'"


def default_embedding() -> EmbedFunction:
    """parley's default embedding function (WordLlama, 256 dimensions, unit length)."""
    from .memory.embedding import default_embedding_function

    try:
        return default_embedding_function()
    except ImportError as e:
        raise ImportError(
            "RetrieveChat's default embedding model needs wordllama: "
            "pip install 'parley[retrieve]' (or pass an embedding_function of your own)"
        ) from e


def embed(function: EmbedFunction, texts: Sequence[str]) -> list[list[float]]:
    """``function(texts)`` as plain lists of floats, checked to be one vector per text."""
    vectors = function(list(texts))
    rows = [[float(x) for x in row] for row in vectors]
    if len(rows) != len(texts):
        raise ValueError(
            f"the embedding function returned {len(rows)} vectors for {len(texts)} texts"
        )
    return rows


def import_chromadb() -> Any:
    try:
        import chromadb
    except ImportError as e:
        raise ImportError(install_hint("retrieve", "chromadb")) from e
    return chromadb


def offline_settings(chromadb: Any, **settings: Any) -> Any:
    """Chroma client settings with its anonymous telemetry off (unless the caller says)."""
    settings.setdefault("anonymized_telemetry", False)
    return chromadb.config.Settings(**settings)


def as_chroma_embedding(function: EmbedFunction) -> Any:
    """``function`` as a Chroma embedding function: Chroma's own pass through; any other
    callable is wrapped, which also spares Chroma's warnings about "legacy" functions."""
    global _adapter_class
    from chromadb.api.types import EmbeddingFunction

    if isinstance(function, EmbeddingFunction):
        return function
    if _adapter_class is None:

        class ParleyEmbeddingFunction(EmbeddingFunction):  # type: ignore[type-arg]
            def __init__(self, function: EmbedFunction) -> None:
                self.function = function

            def __call__(self, input: Sequence[str]) -> list[Any]:
                import numpy as np

                return [np.asarray(v, dtype=np.float32) for v in self.function(list(input))]

            @staticmethod
            def name() -> str:
                return "parley"

            def get_config(self) -> dict[str, Any]:
                return {}

            @staticmethod
            def build_from_config(config: dict[str, Any]) -> Any:
                return ParleyEmbeddingFunction(default_embedding())

        _adapter_class = ParleyEmbeddingFunction
    return _adapter_class(function)
