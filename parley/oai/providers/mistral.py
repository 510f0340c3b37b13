"""``MistralAIClient``: Mistral AI's models through the ``mistralai`` SDK
(``api_type: "mistral"``), at AutoGen's path ``autogen.oai.mistral``.

::

    config_list = [{"model": "open-mistral-nemo", "api_key": "...", "api_type": "mistral"}]

Parameters under AutoGen's names, checked as AutoGen checked them (a wrong type is the
default, with a warning): ``temperature`` (0.7 when the config has none, as AutoGen),
``top_p``, ``max_tokens``, ``safe_prompt`` (False), ``random_seed``; also ``stop``,
``presence_penalty``, ``frequency_penalty``, ``response_format``, ``tool_choice``,
``parallel_tool_calls`` and AutoGen's ``hide_tools``. Messages as AutoGen sends them: a tool
result carries its function's name, a system message after an assistant turn is sent as a user
message, other messages lose their ``name``, and a conversation that ends with the assistant
gets a user "Please continue.". ``base_url`` is the API's root (``https://api.mistral.ai``; a
``.../v1`` works too).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ...exceptions import ConfigError, ModelAPIError
from .._reply_checks import reading_reply
from .._retry import parse_retry_after
from ._base import ProviderClient, api_error, collect, require
from ._openai_compatible import answer, chunks, request
from ._params import Param, model_of
from ._sdk_calls import aclose, per_loop, root_url, sdk_errors
from ._tool_images import images_after_results

__all__ = ["MistralAIClient"]


_PARAMS = (
    Param("temperature", (int, float), default=0.7),
    Param("top_p", (int, float)),
    Param("max_tokens", int, bounds=(0, None)),
    Param("safe_prompt", bool, allow_none=False, default=False, allowed=[True, False]),
    Param("random_seed", int),
)
_EXTRAS = (
    "stop",
    "presence_penalty",
    "frequency_penalty",
    "response_format",
    "tool_choice",
    "parallel_tool_calls",
)
_NO_MODEL = (
    "Please specify the 'model' in your config list entry to nominate the Mistral.ai model to use."
)


def mistral_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI-shaped messages as Mistral's chat API takes them (see the module's docs)."""
    out: list[dict[str, Any]] = []
    names: dict[Any, str] = {}
    for m in images_after_results(messages):
        role = m.get("role")
        if role == "tool":
            name = names.get(m.get("tool_call_id"), "")
            out.append({**m, "name": name} if name else dict(m))
            continue
        message = {k: v for k, v in m.items() if k != "name"}
        for call in m.get("tool_calls") or ():
            names[call.get("id")] = call["function"]["name"]
        if role == "system" and out and out[-1]["role"] == "assistant":
            message["role"] = "user"
        if message.get("tool_calls") and message.get("content") is None:
            message["content"] = ""
        out.append(message)
    if not out or out[-1]["role"] not in ("user", "tool"):
        out.append({"role": "user", "content": "Please continue."})
    return out


def _transport(error: BaseException) -> str | None:
    """What an HTTP library's transport error (the SDK's httpx or httpx2) says went wrong."""
    for cls in type(error).__mro__:
        if cls.__module__.split(".")[0].startswith("httpx"):
            if cls.__name__ == "TimeoutException":
                return "the request timed out"
            if cls.__name__ in ("TransportError", "NetworkError"):
                return f"connection failed: {error}"
    return None


class MistralAIClient(ProviderClient):
    """The ModelClient of ``api_type: "mistral"``."""

    PROVIDER: ClassVar[str] = "mistral"
    SDK: ClassVar[str] = "mistralai"
    STRUCTURED_OUTPUT: ClassVar[str] = "native"  # response_format as given (json_schema)

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        api_key = self._config.get("api_key") or os.environ.get("MISTRAL_API_KEY")
        if not api_key:
            raise ConfigError("the mistral config has no api_key and MISTRAL_API_KEY is not set")
        settings: dict[str, Any] = {"api_key": api_key, "retry_config": None}
        if self._config.get("base_url"):
            settings["server_url"] = root_url(self._config["base_url"], "/v1")
        if self._config.get("timeout") is not None:
            settings["timeout_ms"] = int(float(self._config["timeout"]) * 1000)
        self._settings = settings

    def _client(self) -> Any:
        def make() -> Any:
            # mistralai 1.x exports Mistral at the top; 2.x and later from mistralai.client.
            cls = getattr(self._module, "Mistral", None)
            if cls is None:
                cls = require("mistralai.client", "mistral").Mistral
            return cls(**self._settings)

        return per_loop("mistral", self._settings, make, self._own_key)

    def parse_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """AutoGen's ``parse_params``: the request this client sends for ``params`` (without
        the ``timeout``): the model, AutoGen's parameters checked as AutoGen's client checked
        them (a wrong type is the default, with a ``UserWarning``; None is not sent), the
        parameters parley sends beyond them when given, ``messages`` as Mistral takes them and
        the ``tools`` unless ``hide_tools`` leaves them out. Messages and tools are the JSON
        dicts parley sends, where AutoGen built ``mistralai`` objects of the same fields.
        No model: :class:`~parley.exceptions.ConfigAssertionError` (an ``AssertionError``)."""
        body = self._body(params)
        body.pop("timeout_ms", None)
        for p in _PARAMS:
            body.setdefault(p.name, None)
        return body

    def _body(self, params: Mapping[str, Any]) -> dict[str, Any]:
        given = {"model": params.get("model") or self._config.get("model")}
        body: dict[str, Any] = {
            "model": model_of(given, _NO_MODEL),
            "messages": mistral_messages(params.get("messages") or ()),
            **request(params, _PARAMS, _EXTRAS),
        }
        if params.get("timeout") is not None:
            body["timeout_ms"] = int(float(params["timeout"]) * 1000)
        return body

    async def a_create(self, params: dict[str, Any]) -> Any:
        chat = self._client().chat
        body = self._body(params)
        # The SDK checks the request, and reports an answer it cannot read as an error with
        # the answer's status (a MalformedResponseError for a success: api_error).
        with sdk_errors(self.PROVIDER, self._error):
            if not params.get("stream"):
                reply = await chat.complete_async(**body)
                with reading_reply(self.PROVIDER):
                    return answer(reply)
            stream = await chat.stream_async(**body)
            try:
                with reading_reply(self.PROVIDER):
                    return await collect(chunks(stream, lambda event: event.data), params)
            finally:
                await aclose(stream)

    def _error(self, error: Exception) -> ModelAPIError | None:
        status = getattr(error, "status_code", None)
        if isinstance(status, int) and hasattr(error, "raw_response"):
            headers = {k.lower(): v for k, v in error.raw_response.headers.items()}
            return api_error(
                "mistral",
                str(error),
                status=status,
                headers=headers,
                retry_after=parse_retry_after(headers),
            )
        problem = _transport(error)
        if problem is None and type(error).__name__ == "NoResponseError":
            problem = f"no response: {error}"
        return None if problem is None else api_error("mistral", problem, status=None)


PRICES = MistralAIClient.PRICES  # its table in prices.json, at AutoGen's module path too
