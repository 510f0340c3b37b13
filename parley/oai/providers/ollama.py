"""Local models served by Ollama as a ``ModelClient`` (``api_type`` "ollama"), over the ollama
SDK's ``AsyncClient``.

A config entry, as AutoGen's::

    {"api_type": "ollama", "model": "llama3.1:8b", "client_host": "http://127.0.0.1:11434",
     "num_ctx": 8192, "native_tool_calls": False, "hide_tools": "if_any_run"}

``native_tool_calls`` (default True) sends the tools as Ollama's own; False emulates tool
calling in the prompt, for models without it (:mod:`parley.oai.providers._ollama_tools`).

A ``response_format`` with a JSON schema is sent as Ollama's ``format`` (its structured outputs,
Ollama 0.5 and later); ``{"type": "json_object"}`` as ``format: "json"``.
"""

from __future__ import annotations

import json
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
    tool_call,
)
from ._messages import FunctionSpec, function_specs
from ._ollama_messages import options, to_messages
from ._ollama_tools import parse_tool_calls, should_hide_tools
from ._params import model_of, validate_parameter
from ._response_format import OutputSchema, requested
from ._sdk_calls import PooledClient, sdk_errors

__all__ = ["OllamaClient"]


_FINISH = {"stop": "stop", "length": "length"}
_NO_MODEL = (
    "Please specify the 'model' in your config list entry to nominate the Ollama model to use."
)


class OllamaClient(PooledClient):
    """AutoGen's ``OllamaClient``: OpenAI-shaped requests to Ollama's chat API, its answers as
    ``ChatCompletion``s."""

    PROVIDER: ClassVar[str] = "ollama"
    SDK: ClassVar[str] = "ollama"
    STRUCTURED_OUTPUT: ClassVar[str] = "native"  # the schema as ``format``

    def structured_output_for(self, params: Mapping[str, Any]) -> str:
        """Tool calls emulated in the text (``native_tool_calls=False``) could not be written
        under a schema: such a turn that offers tools is told the schema as an instruction."""
        emulated = params.get("native_tool_calls", True) is False
        return "prompted" if emulated and function_specs(params) else self.STRUCTURED_OUTPUT

    async def _close_sdk(self, client: Any) -> None:
        await client.close()

    def _new_sdk(self) -> Any:
        config = self._config
        headers = {"authorization": f"Bearer {config['api_key']}"} if config.get("api_key") else {}
        return self._module.AsyncClient(
            host=config.get("client_host") or config.get("base_url"),
            timeout=config.get("timeout"),
            headers=headers,
            # Ollama's SDK drops an error's headers (Retry-After); the hook reads them first.
            event_hooks={"response": [self._refuse_errors]},
        )

    async def _refuse_errors(self, response: Any) -> None:
        if response.status_code < 400:
            return
        await response.aread()
        try:
            message = str(json.loads(response.text).get("error"))
        except (ValueError, AttributeError):
            message = response.text or response.reason_phrase
        raise api_error(
            self.PROVIDER,
            message,
            status=response.status_code,
            headers=header_dict(response.headers),
        )

    def parse_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """AutoGen's ``parse_params``: what this client sends for ``params`` but the messages:
        the model, ``stream`` (False unless a bool says otherwise), the ``options`` given
        (those AutoGen's client knew checked as it checked them: a wrong type is its default,
        with a ``UserWarning``), the ``tools`` when sent natively and not hidden, the
        ``format``. No model: :class:`~parley.exceptions.ConfigAssertionError` (an
        ``AssertionError``)."""
        request, _, _ = self._request(params)
        del request["messages"]
        return request

    def oai_messages_to_ollama_messages(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None
    ) -> list[dict[str, Any]]:
        """AutoGen's method: the Ollama messages this client sends for OpenAI ``messages``
        offering ``tools`` (:func:`~._ollama_messages.to_messages`), natively or emulated as
        the config's ``native_tool_calls`` says. Names are left out, a final system message
        is the user's and a final assistant turn is followed by "Please continue.", as in
        AutoGen; tool calls and results are parley's (README, Differences)."""
        specs = function_specs({"tools": list(tools or ())})
        native = self._config.get("native_tool_calls", True) is not False
        return to_messages(messages, specs, emulate=not native)

    def _request(
        self, params: Mapping[str, Any]
    ) -> tuple[dict[str, Any], list[FunctionSpec], bool]:
        """(the ``chat`` keyword arguments, the tools offered, whether natively)."""
        messages = params.get("messages") or []
        specs = function_specs(params)
        if specs and should_hide_tools(messages, specs, str(params.get("hide_tools", "never"))):
            specs = []
        native = params.get("native_tool_calls", True) is not False
        request: dict[str, Any] = {
            "model": model_of(params, _NO_MODEL),
            "messages": to_messages(messages, specs, emulate=not native),
            "stream": validate_parameter(params, "stream", bool, True, False, None, None),
        }
        chosen = options(params)
        if chosen:
            request["options"] = chosen
        if specs and native:
            request["tools"] = [_tool(s) for s in specs]
        # Ollama (0.5 and later) constrains its output to a JSON schema given as ``format``;
        # "json" asks for any JSON. The config's own ``format`` wins.
        wanted = requested(params)
        response_format = params.get("format") or (
            dict(wanted.schema) if isinstance(wanted, OutputSchema) else "json" if wanted else None
        )
        if response_format:
            request["format"] = response_format
        return request, specs, native

    async def a_create(self, params: dict[str, Any]) -> Any:
        request, specs, native = self._request(params)
        streamed = request.pop("stream")
        with reading_reply(self.PROVIDER), sdk_errors(self.PROVIDER, self._error):
            if streamed:
                answer = await collect(self._chunks(request), params)
            else:
                answer = self._completion(await self._sdk().chat(**request, stream=False))
        if specs and not native:
            answer = _emulated_calls(answer, specs)
        return answer

    def _completion(self, answer: Any) -> Any:
        message = answer.message
        calls = [_call(c, i) for i, c in enumerate(message.tool_calls or ())]
        return completion(
            model=answer.model,
            content=message.content if message.content or not calls else None,
            tool_calls=calls,
            finish_reason="tool_calls" if calls else _FINISH.get(answer.done_reason, "stop"),
            prompt_tokens=answer.prompt_eval_count or 0,
            completion_tokens=answer.eval_count or 0,
        )

    async def _chunks(self, request: dict[str, Any]) -> AsyncIterator[Any]:
        head = {"response_id": new_id(), "model": request["model"], "created": int(time.time())}
        calls = 0
        async for piece in await self._sdk().chat(**request, stream=True):
            message = piece.message
            if message.content:
                yield chunk(**head, content=message.content)
            for call in message.tool_calls or ():
                openai_call = _call(call, calls)
                delta = {"index": calls, "id": openai_call["id"]}
                yield chunk(**head, tool_call_delta={**delta, "function": openai_call["function"]})
                calls += 1
            if piece.done:
                reason = "tool_calls" if calls else _FINISH.get(piece.done_reason, "stop")
                yield chunk(**head, finish_reason=reason)
                yield chunk(**head, usage=(piece.prompt_eval_count or 0, piece.eval_count or 0))

    def _error(self, error: Exception) -> ModelAPIError | None:
        if isinstance(error, self._module.ResponseError):
            status = error.status_code if error.status_code > 0 else 500
            return api_error(self.PROVIDER, str(error.error), status=status)
        return None


def _tool(spec: FunctionSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.parameters,
        },
    }


def _call(call: Any, index: int) -> dict[str, Any]:
    """An Ollama tool call as OpenAI's; Ollama gives no id (or one a model made up), so one
    is made of the call's place and content when missing."""
    function = call.function
    arguments = json.dumps(dict(function.arguments or {}))
    call_id = getattr(call, "id", None) or _made_up_id(index, function.name, arguments)
    return tool_call(str(call_id), str(function.name), arguments)


def _made_up_id(index: int, name: str, arguments: str) -> str:
    import hashlib

    digest = hashlib.sha256(f"{index}\0{name}\0{arguments}".encode()).hexdigest()
    return f"call_{digest[:24]}"


def _emulated_calls(answer: Any, specs: list[FunctionSpec]) -> Any:
    """``answer`` with the tool calls its text asks for (emulated tool calling), or as it is
    when the text is a plain reply."""
    choice = answer.choices[0]
    found = parse_tool_calls(choice.message.content, [s.name for s in specs])
    if not found:
        return answer
    calls = [
        tool_call(_made_up_id(i, name, json.dumps(args)), name, json.dumps(args))
        for i, (name, args) in enumerate(found)
    ]
    usage = answer.usage
    return completion(
        model=answer.model,
        content=None,
        tool_calls=calls,
        finish_reason="tool_calls",
        prompt_tokens=usage.prompt_tokens if usage else 0,
        completion_tokens=usage.completion_tokens if usage else 0,
        response_id=answer.id,
        created=answer.created,
    )


PRICES = OllamaClient.PRICES  # its table in prices.json, at AutoGen's module path too
