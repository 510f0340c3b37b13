"""Cohere's Command models as a ``ModelClient`` (``api_type`` "cohere"), over the cohere SDK's
``AsyncClientV2`` (chat v2, whose messages are close to OpenAI's: tool results are ``tool``
messages with their ``tool_call_id``).

A config entry, as AutoGen's::

    {"api_type": "cohere", "model": "command-r-plus", "api_key": "...", "k": 10, "p": 0.9}
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, ClassVar

from ...exceptions import ModelAPIError
from .._reply_checks import reading_reply
from .._transport_errors import header_dict
from ._base import (
    api_error,
    chunk,
    collect,
    completion,
    new_id,
    require,
    tool_call,
)
from ._messages import content_parts, content_text, function_specs
from ._params import Param, checked, model_of
from ._response_format import OutputSchema, requested
from ._sdk_calls import PooledClient, sdk_errors
from ._tool_images import images_after_results

__all__ = ["CohereClient"]


# AutoGen's parameters, checked as its client checked them (chat v2 takes the same names).
_PARAMS = (
    Param("temperature", (int, float), allow_none=False, default=0.3, bounds=(0, None)),
    Param("max_tokens", int, bounds=(0, None)),
    Param("k", int, allow_none=False, default=0, bounds=(0, 500)),
    Param("p", (int, float), allow_none=False, default=0.75, bounds=(0.01, 0.99)),
    Param("seed", int),
    Param("frequency_penalty", (int, float), default=0, bounds=(0, 1)),
    Param("presence_penalty", (int, float), default=0, bounds=(0, 1)),
)
_ALIASES = (("top_k", "k"), ("top_p", "p"))  # OpenAI's names, taken too
_EXTRAS = ("safety_mode", "strict_tools")
_NO_MODEL = (
    "Please specify the 'model' in your config list entry to nominate the Cohere model to use."
)
_FINISH = {"COMPLETE": "stop", "STOP_SEQUENCE": "stop", "MAX_TOKENS": "length"}


def to_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Chat v2 messages of OpenAI ones."""
    out: list[dict[str, Any]] = []
    for message in images_after_results(messages):  # Cohere's tool messages carry no image
        role = message.get("role")
        content = message.get("content")
        if role == "tool":
            text = content_text(content)
            out.append(
                {"role": "tool", "tool_call_id": message.get("tool_call_id"), "content": text}
            )
        elif role == "assistant":
            reply: dict[str, Any] = {"role": "assistant"}
            calls = [dict(c) for c in message.get("tool_calls") or ()]
            text = content_text(content)
            if calls:
                reply["tool_calls"] = calls
                if text:
                    reply["tool_plan"] = text  # Cohere's text before its tool calls
            else:
                reply["content"] = text
            out.append(reply)
        elif role == "system":
            out.append({"role": "system", "content": content_text(content)})
        else:
            out.append({"role": "user", "content": _user_content(content)})
    return out


def _user_content(content: Any) -> Any:
    parts = content_parts(content)
    if all(isinstance(p, str) for p in parts):
        return "".join(p for p in parts if isinstance(p, str))
    return [
        {"type": "text", "text": p}
        if isinstance(p, str)
        else {
            "type": "image_url",
            "image_url": {"url": p.url or f"data:{p.media_type};base64,{p.data}"},
        }
        for p in parts
    ]


def parameters(params: Mapping[str, Any]) -> dict[str, Any]:
    """The model and the parameters sent for ``params`` (None: not sent): AutoGen's, checked
    as AutoGen's client checked them (``top_k`` / ``top_p`` stand for ``k`` / ``p``), then
    ``safety_mode``, ``strict_tools`` and ``stop_sequences`` when given."""
    given = dict(params)
    for alias, name in _ALIASES:
        if given.get(name) is None and given.get(alias) is not None:
            given[name] = given[alias]
    found: dict[str, Any] = {"model": model_of(params, _NO_MODEL), **checked(given, _PARAMS)}
    found.update({k: params[k] for k in _EXTRAS if params.get(k) is not None})
    stop = params.get("stop", params.get("stop_sequences"))
    if stop:
        found["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
    return found


def request_of(params: Mapping[str, Any]) -> dict[str, Any]:
    """The keyword arguments of ``chat`` / ``chat_stream`` for an OpenAI-shaped request."""
    found = parameters(params)
    request: dict[str, Any] = {
        "model": found.pop("model"),
        "messages": to_messages(params.get("messages") or []),
    }
    request.update({k: v for k, v in found.items() if v is not None})
    specs = function_specs(params)
    if specs:
        request["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": s.name,
                    "description": s.description,
                    "parameters": s.parameters,
                },
            }
            for s in specs
        ]
    response_format = _response_format(params)
    # Cohere refuses response_format beside tools: a turn that may call tools goes without it
    # (a typed one is then sent as an instruction: CohereClient.structured_output_for).
    if response_format is not None and not specs:
        request["response_format"] = response_format
    return request


def _response_format(params: Mapping[str, Any]) -> dict[str, Any] | None:
    """Chat v2's ``response_format``: a JSON object, under the request's schema if it has
    one."""
    wanted = requested(params)
    if not wanted:
        return None
    out: dict[str, Any] = {"type": "json_object"}
    if isinstance(wanted, OutputSchema):
        out["json_schema"] = dict(wanted.schema)
    return out


class CohereClient(PooledClient):
    """AutoGen's ``CohereClient``: OpenAI-shaped requests to Cohere's chat v2, its answers as
    ``ChatCompletion``s."""

    PROVIDER: ClassVar[str] = "cohere"
    SDK: ClassVar[str] = "cohere"
    # response_format {"type": "json_object", "json_schema": ...}, but not beside tools.
    STRUCTURED_OUTPUT: ClassVar[str] = "native"

    def structured_output_for(self, params: Mapping[str, Any]) -> str:
        """Cohere refuses ``response_format`` beside tools: a turn that offers tools is told
        the schema in its system message instead."""
        return "prompted" if function_specs(params) else self.STRUCTURED_OUTPUT

    def parse_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """AutoGen's ``parse_params``: the model and the parameters this client sends for
        ``params``, checked as AutoGen's client checked them (a wrong type or a value out of
        bounds is the default, with a ``UserWarning``; None is not sent). No model:
        :class:`~parley.exceptions.ConfigAssertionError` (an ``AssertionError``)."""
        return parameters(params)

    async def _close_sdk(self, client: Any) -> None:
        # The SDK closes its HTTP client only as an async context manager, on leaving it.
        await client.__aexit__(None, None, None)

    def _new_sdk(self) -> Any:
        config = self._config
        kwargs: dict[str, Any] = {"api_key": config.get("api_key"), "max_retries": 0}
        if config.get("base_url"):
            kwargs["base_url"] = str(config["base_url"])
        if config.get("timeout") is not None:
            kwargs["timeout"] = float(config["timeout"])
        return self._module.AsyncClientV2(**kwargs)

    async def a_create(self, params: dict[str, Any]) -> Any:
        request = request_of(params)
        with reading_reply(self.PROVIDER):
            with sdk_errors(self.PROVIDER, self._error):
                if params.get("stream"):
                    return await collect(self._chunks(request), params)
                answer = await self._sdk().chat(**request)
            return self._completion(answer, request["model"])

    @staticmethod
    def _completion(answer: Any, model: str) -> Any:
        message = answer.message
        calls = [_call(c) for c in message.tool_calls or ()]
        text = "".join(c.text for c in message.content or () if getattr(c, "text", None))
        prompt, done = _tokens(answer.usage)
        return completion(
            model=model,
            content=text or (None if calls else message.tool_plan or ""),
            tool_calls=calls,
            finish_reason="tool_calls" if calls else _FINISH.get(str(answer.finish_reason), "stop"),
            prompt_tokens=prompt,
            completion_tokens=done,
            response_id=answer.id,
        )

    async def _chunks(self, request: dict[str, Any]) -> AsyncIterator[Any]:
        head = {"response_id": new_id(), "model": request["model"], "created": int(time.time())}
        calls = -1
        async for event in self._sdk().chat_stream(**request):
            kind = event.type
            if kind == "content-delta":
                yield chunk(**head, content=event.delta.message.content.text)
            elif kind == "tool-call-start":
                calls += 1
                start = event.delta.message.tool_calls
                function = {
                    "name": start.function.name,
                    "arguments": start.function.arguments or "",
                }
                delta = {"index": calls, "id": start.id, "function": function}
                yield chunk(**head, tool_call_delta=delta)
            elif kind == "tool-call-delta":
                more = event.delta.message.tool_calls.function.arguments or ""
                yield chunk(
                    **head, tool_call_delta={"index": calls, "function": {"arguments": more}}
                )
            elif kind == "message-end":
                reason = str(event.delta.finish_reason)
                finish = "tool_calls" if calls >= 0 else _FINISH.get(reason, "stop")
                yield chunk(**head, finish_reason=finish)
                yield chunk(**head, usage=_tokens(event.delta.usage))

    def _error(self, error: Exception) -> ModelAPIError | None:
        api_error_cls = require("cohere.core.api_error", "cohere").ApiError
        if isinstance(error, api_error_cls):
            body = error.body
            message = body.get("message") if isinstance(body, Mapping) else body
            return api_error(
                self.PROVIDER,
                str(message or "request failed"),
                status=error.status_code,
                headers=header_dict(error.headers),
            )
        return None


def _call(call: Any) -> dict[str, Any]:
    return tool_call(str(call.id), str(call.function.name), call.function.arguments or "{}")


def _tokens(usage: Any) -> tuple[int, int]:
    """(input, output) tokens: the tokens the model saw, else the billed ones."""
    for counts in (getattr(usage, "tokens", None), getattr(usage, "billed_units", None)):
        if counts is not None and counts.input_tokens is not None:
            return int(counts.input_tokens), int(counts.output_tokens or 0)
    return 0, 0


PRICES = CohereClient.PRICES  # its table in prices.json, at AutoGen's module path too
