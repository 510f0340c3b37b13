"""The embedded local model behind an OpenAI-compatible HTTP endpoint: ``serve_local_model``.

For clients that only speak OpenAI's HTTP API (the openai SDK, another process, the legacy
``Completion`` API of a tuning notebook)::

    from parley.local import serve_local_model

    with serve_local_model() as server:  # 127.0.0.1, a free port; the weights load now
        client = openai.OpenAI(base_url=server.base_url, api_key="unused")
        client.completions.create(model="smollm2", prompt="Once upon a time", max_tokens=20)
        client.chat.completions.create(model="smollm2", messages=[...])
        llm_config = {"config_list": server.config_list()}

It serves ``POST /v1/chat/completions`` (the messages answered as :class:`LocalLlamaClient`
answers them, old history trimmed to fit the context) and ``POST /v1/completions`` (the raw
prompt continued; token-id prompts are ids of the local model's vocabulary). ``n`` choices are
``n`` generations one after the other, choice ``i`` with seed ``seed + i`` (a random seed when
the request has none, as OpenAI does), so they differ at temperature > 0. ``usage`` holds the
model's own token counts. Logprobs and ``best_of`` > ``n`` are refused with a 400.

The HTTP side is :class:`parley.testing.FakeLLMServer`: OpenAI's request checks and error
wording, batches of prompts, ``echo``, and streaming (of the finished text: generation is not
token by token on the wire). Its answers come from a responder that runs the model in a
worker thread, so the server's loop keeps serving; one model generates one text at a time.
A request whose client goes away is abandoned, but a generation already started runs to its
end (llama.cpp cannot be interrupted).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping
from typing import Any

from .._core.lifetime import Serving
from ..testing import FakeLLMServer
from ..testing._validation import prompt_texts
from .client import LocalLlamaClient

__all__ = ["DEFAULT_SERVED_MODEL", "LocalModelServer", "serve_local_model"]

DEFAULT_SERVED_MODEL = "smollm2"
PLACEHOLDER_API_KEY = "sk-parley-local"  # the server checks no key; clients insist on one


def serve_local_model(
    host: str = "127.0.0.1",
    port: int = 0,
    model: str = DEFAULT_SERVED_MODEL,
    **client_options: Any,
) -> LocalModelServer:
    """Load the local model and serve it on ``host:port`` (0: a free port) as ``model``.

    ``client_options`` are :class:`LocalLlamaClient`'s config keys: ``model_path``, ``n_ctx``,
    ``n_threads``. Raises ``LocalModelUnavailableError`` (with the install command) when the
    ``local`` extra is missing. Returns the started server; stop it with ``stop()`` or use it
    as a context manager.
    """
    client = LocalLlamaClient({**client_options, "model": model})
    client.load()  # fail here, not at the first request, when the model cannot load
    return LocalModelServer(client, model, host, port).start()


class LocalModelServer(Serving):
    """A started :func:`serve_local_model` endpoint: ``base_url``, ``config_list()``,
    ``stop()``."""

    def __init__(self, client: LocalLlamaClient, model: str, host: str, port: int) -> None:
        self.model = model
        self._client = client
        self._http = FakeLLMServer(host, port, models=(model,), responder=self._answer)

    def start(self) -> LocalModelServer:
        self._http.start()
        return self

    def stop(self) -> None:
        """Stop serving and close every connection (idempotent)."""
        self._http.stop()

    @property
    def port(self) -> int:
        return self._http.port

    @property
    def url(self) -> str:
        """The server's root, e.g. ``http://127.0.0.1:8123``."""
        return self._http.url

    @property
    def base_url(self) -> str:
        """The OpenAI ``base_url``, e.g. ``http://127.0.0.1:8123/v1``."""
        return self._http.base_url

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions the model raised while answering (each answered with a 500)."""
        return self._http.errors

    def config_list(self, model: str | None = None, **extra: Any) -> list[dict[str, Any]]:
        """A fresh ``config_list`` with one entry for this server (``model``: the served one)."""
        return [
            {
                "model": model or self.model,
                "base_url": self.base_url,
                "api_key": PLACEHOLDER_API_KEY,
                **extra,
            }
        ]

    async def _answer(self, body: dict[str, Any]) -> dict[str, Any]:
        # The model blocks for seconds: off the server's loop, which keeps serving.
        return await asyncio.to_thread(self._generate, body)

    def _generate(self, body: Mapping[str, Any]) -> dict[str, Any]:
        refused = _unsupported(body)
        if refused is not None:
            return {"error": 400, "message": refused[0], "param": refused[1]}
        n = body.get("n") or 1
        seed = body.get("seed")
        base = seed if isinstance(seed, int) else random.randrange(2**31)
        seeds = [base + i for i in range(n)]
        try:
            if "prompt" in body:
                return self._complete(body, seeds)
            return self._chat(body, seeds)
        except ValueError as e:
            if "context window" not in str(e):
                raise
            # llama.cpp's refusal of a prompt longer than its context window.
            return {"error": 400, "message": str(e), "code": "context_length_exceeded"}

    def _chat(self, body: Mapping[str, Any], seeds: list[int]) -> dict[str, Any]:
        choices, usage = [], _Usage()
        for i, seed in enumerate(seeds):
            response = self._client.create({**body, "seed": seed})
            choice = response.choices[0]
            choices.append(
                {"content": choice.message.content or "", "finish_reason": choice.finish_reason}
            )
            usage.add(response.usage.model_dump(), first=i == 0)
        return {"choices": choices, "usage": usage.total(), "model": self.model}

    def _complete(self, body: Mapping[str, Any], seeds: list[int]) -> dict[str, Any]:
        # OpenAI's batch order: the n choices of the first prompt, then of the next.
        choices, usage = [], _Usage()
        for prompt in prompt_texts(body["prompt"]):
            for i, seed in enumerate(seeds):
                raw = self._client.complete({**body, "prompt": prompt, "seed": seed})
                choice = raw["choices"][0]
                choices.append(
                    {"content": choice["text"], "finish_reason": choice["finish_reason"] or "stop"}
                )
                usage.add(raw["usage"], first=i == 0)
        return {"choices": choices, "usage": usage.total(), "model": self.model}


class _Usage:
    """A request's token counts: each prompt counted once (as OpenAI bills n choices of one
    prompt), every generated token counted."""

    def __init__(self) -> None:
        self.prompt = 0
        self.completion = 0

    def add(self, usage: Mapping[str, Any], *, first: bool) -> None:
        if first:
            self.prompt += int(usage["prompt_tokens"])
        self.completion += int(usage["completion_tokens"])

    def total(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt,
            "completion_tokens": self.completion,
            "total_tokens": self.prompt + self.completion,
        }


def _unsupported(body: Mapping[str, Any]) -> tuple[str, str] | None:
    """(message, param) for what the local model cannot do, or None."""
    if body.get("logprobs") not in (None, False) or body.get("top_logprobs") is not None:
        return ("the local model server does not return logprobs", "logprobs")
    best_of, n = body.get("best_of"), body.get("n") or 1
    if isinstance(best_of, int) and best_of > n:
        return ("the local model server does not support best_of greater than n", "best_of")
    if "prompt" in body and body.get("max_tokens") == 0:
        # OpenAI's max_tokens=0 scores a prompt through logprobs, which are not returned here.
        return ("the local model server needs max_tokens >= 1", "max_tokens")
    return None
