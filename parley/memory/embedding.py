"""The default embedding model: WordLlama, whose weights ship inside its PyPI wheel.

WordLlama (``pip install 'parley[memory]'``) is a static embedding model: a token-embedding table
distilled from a large language model's, averaged over a text's tokens. It needs no GPU and no
torch, embeds thousands of texts a second on one core, and its 16 MB of weights and its
tokenizer come inside the wheel, so nothing is downloaded at run time.

The files are loaded from the installed package by path: wordllama's own loader looks for the
bundled tokenizer in the wrong directory and then tries to download it, which fails offline.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["INSTALL_HINT", "WordLlamaEmbedding", "default_embedding_function"]

INSTALL_HINT = (
    "parley's default embedding model needs the `memory` extra: pip install 'parley[memory]' "
    "(or pass an embedding_function of your own)"
)
# The configuration whose weights and tokenizer the wordllama wheel carries.
_CONFIG = "l2_supercat"
_BUNDLED_DIM = 256
_DIMS = (64, 128, 256)

_lock = threading.Lock()
_loaded: dict[str, Any] = {}


def _load() -> Any:
    """wordllama's inference object over the bundled files, loaded once per process."""
    with _lock:
        model = _loaded.get(_CONFIG)
        if model is None:
            model = _loaded[_CONFIG] = _load_bundled()
        return model


def _load_bundled() -> Any:
    root_logger = logging.getLogger()
    handlers, level = list(root_logger.handlers), root_logger.level
    try:
        import wordllama
        from safetensors import safe_open
        from wordllama import WordLlama
        from wordllama.inference import WordLlamaInference
    except ImportError as e:
        raise ImportError(INSTALL_HINT) from e
    finally:
        # wordllama calls logging.basicConfig(level=INFO) when imported, which would turn on
        # every library's INFO logs in the user's program: undone here.
        root_logger.handlers[:] = handlers
        root_logger.setLevel(level)
    root = Path(wordllama.__file__).parent
    weights = root / "weights" / f"{_CONFIG}_{_BUNDLED_DIM}.safetensors"
    tokenizer_file = root / "tokenizers" / f"{_CONFIG}_tokenizer_config.json"
    for path in (weights, tokenizer_file):
        if not path.is_file():
            raise ImportError(
                f"the installed wordllama package has no {path.name} (looked in {root}); "
                f"reinstall it: pip install --force-reinstall 'parley[memory]'"
            )
    with safe_open(str(weights), framework="np", device="cpu") as f:
        table = f.get_tensor("embedding.weight")
    tokenizer = WordLlama.load_tokenizer(tokenizer_file)
    return WordLlamaInference(table, tokenizer)


class WordLlamaEmbedding:
    """Texts to unit-length vectors of ``dim`` floats (64, 128 or 256) with WordLlama.

    Callable as an :class:`~parley.memory.base.EmbeddingFunction` (also by ChromaDB, whose
    embedding functions have the same call shape). The model is loaded on first use, once per
    process, and shared by every instance.
    """

    def __init__(self, dim: int = _BUNDLED_DIM) -> None:
        if dim not in _DIMS:
            raise ValueError(f"dim must be one of {_DIMS} (WordLlama's bundled sizes), got {dim!r}")
        self.dim = dim

    def __call__(self, input: Sequence[str]) -> NDArray[np.float32]:
        import numpy as np

        if isinstance(input, str):
            raise TypeError("pass a list of texts, not one string")
        texts = list(input)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = np.asarray(_load().embed(texts), dtype=np.float32)[:, : self.dim]
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        # A text with no known token embeds to zeros; it stays zero rather than becoming NaN.
        unit: NDArray[np.float32] = vectors / np.where(norms == 0, np.float32(1), norms)
        return unit

    def __repr__(self) -> str:
        return f"WordLlamaEmbedding(dim={self.dim})"


def default_embedding_function() -> WordLlamaEmbedding:
    """The embedding function parley uses when none is given; checks the extra is installed."""
    _load()
    return WordLlamaEmbedding()
