"""``AnthropicClient``: Claude models through the ``anthropic`` SDK (``api_type: "anthropic"``),
at AutoGen's path ``autogen.oai.anthropic``.

::

    config_list = [{"model": "claude-3-5-sonnet-20240620", "api_key": "...", "api_type": "anthropic"}]

Without an ``api_key`` (nor ``ANTHROPIC_API_KEY``), an entry with ``aws_access_key``,
``aws_secret_key`` (and ``aws_session_token``, ``aws_region``) uses Claude on Amazon Bedrock,
one with ``gcp_project_id`` and ``gcp_region`` Claude on Google Vertex AI.

Request parameters under AutoGen's names: ``temperature``, ``top_p``, ``top_k``, ``max_tokens``
(Anthropic requires one: 4096 when the config has none, as AutoGen), ``stop`` or
``stop_sequences``, ``stream``, ``tools`` and ``tool_choice`` (``parallel_tool_calls=False``
asks for one call at a time), ``response_format`` (Claude's structured outputs, or a tool that
carries the answer: :mod:`parley.oai.providers._anthropic_output`). Other OpenAI parameters
(``n``, ``seed``, penalties, ...) have no Anthropic counterpart and are not sent.
``"prompt_cache": true`` in the config entry places
prompt-cache breakpoints (:mod:`parley.oai.providers._anthropic_cache`; ``"prompt_cache_ttl":
"1h"`` for Anthropic's one-hour cache); cache reads and writes come back in the usage's
``prompt_tokens_details`` and are priced as Anthropic bills them. Messages are translated as
:mod:`parley.oai.providers._anthropic_messages` says. A streamed reply is echoed to the IOStream as an
OpenAI stream is.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import AsyncIterator, Mapping
from typing import Any, ClassVar

from ...exceptions import ConfigError
from . import _anthropic_messages as translate
from . import _anthropic_output as output
from ._anthropic_cache import cache_usage, place_breakpoints
from ._anthropic_output import OutputTool
from ._base import (
    ProviderClient,
    chunk,
    completion,
    tool_call,
)
from ._sdk_calls import call_kwargs, per_loop, stainless_reply

__all__ = ["AnthropicClient"]


_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}
_AWS = ("aws_access_key", "aws_secret_key", "aws_session_token", "aws_region")
_SHARED = ("base_url", "timeout", "default_headers", "default_query", "http_client")
# The anthropic SDK's own settings a config entry may carry besides credentials.
DEFAULT_MAX_TOKENS = 4096


def _model_name(model: str) -> str:
    """A Bedrock or Vertex model id as its Anthropic name (``us.anthropic.claude-3-5-sonnet-
    20240620-v1:0`` and ``claude-3-5-sonnet@20240620`` price as ``claude-3-5-sonnet``)."""
    return model.rpartition("anthropic.")[2].replace("@", "-")


class AnthropicClient(ProviderClient):
    """The ModelClient of ``api_type: "anthropic"``."""

    PROVIDER: ClassVar[str] = "anthropic"
    SDK: ClassVar[str] = "anthropic"
    STRUCTURED_OUTPUT: ClassVar[str] = "native"  # output_config or a forced tool

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        config = self._config
        api_key = config.get("api_key") or os.environ.get("ANTHROPIC_API_KEY")
        settings: dict[str, Any] = {k: config[k] for k in _SHARED if config.get(k) is not None}
        settings["max_retries"] = 0  # parley's retry policy retries
        if api_key:
            self._cls, settings["api_key"] = "AsyncAnthropic", api_key
        elif config.get("aws_access_key") or config.get("aws_region"):
            self._cls = "AsyncAnthropicBedrock"
            settings.update({k: config[k] for k in _AWS if config.get(k) is not None})
            if config.get("aws_profile_name"):
                settings["aws_profile"] = config["aws_profile_name"]
        elif config.get("gcp_project_id") and config.get("gcp_region"):
            if not hasattr(self._module, "AsyncAnthropicVertex"):
                raise ConfigError("this anthropic SDK has no Vertex AI client: upgrade anthropic")
            self._cls = "AsyncAnthropicVertex"
            settings.update(project_id=config["gcp_project_id"], region=config["gcp_region"])
            if config.get("gcp_auth_token"):
                settings["access_token"] = config["gcp_auth_token"]
        else:
            raise ConfigError(
                "the anthropic config has no api_key (nor ANTHROPIC_API_KEY), AWS keys "
                "(aws_access_key, aws_secret_key, aws_region) or gcp_project_id and gcp_region"
            )
        self._settings = settings

    def _client(self) -> Any:
        def make() -> Any:
            return getattr(self._module, self._cls)(**self._settings)

        return per_loop(f"anthropic:{self._cls}", self._settings, make, self._own_key)

    def _body(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The Messages API request for OpenAI-shaped ``params``."""
        tools = translate.tools(params)
        system, messages = translate.to_anthropic(
            params.get("messages") or [], with_tools=bool(tools)
        )
        body: dict[str, Any] = {
            "model": params.get("model") or self._config.get("model"),
            "messages": messages,
            "max_tokens": params.get("max_tokens") or DEFAULT_MAX_TOKENS,
        }
        if system:
            body["system"] = system
        for key in ("temperature", "top_p", "top_k", "metadata"):
            if params.get(key) is not None:
                body[key] = params[key]
        stop = params.get("stop_sequences", params.get("stop"))
        if stop:
            body["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
        if tools:
            body["tools"] = tools
            choice = translate.tool_choice(
                params.get("tool_choice"), params.get("parallel_tool_calls")
            )
            if choice is not None:
                body["tool_choice"] = choice
        if self._config.get("prompt_cache"):
            body = place_breakpoints(body, self._config.get("prompt_cache_ttl"))
        return body

    def _request(self, params: Mapping[str, Any]) -> tuple[dict[str, Any], OutputTool | None]:
        """The Messages API body, and the tool that carries a structured answer (if one
        does: :mod:`._anthropic_output`)."""
        body = self._body(params)
        model = _model_name(str(body["model"]))
        return body, output.apply(body, params, model, params.get("tool_choice"))

    async def a_create(self, params: dict[str, Any]) -> Any:
        body, answer_tool = self._request(params)
        client = self._client()
        create = client.messages.create
        kwargs = call_kwargs(create, body)
        if params.get("timeout") is not None:
            kwargs["timeout"] = params["timeout"]
        if params.get("stream"):
            kwargs["stream"] = True
        name = answer_tool.name if answer_tool is not None else None
        read = functools.partial(_response, answer_tool=name)
        pieces = functools.partial(_chunks, answer_tool=name) if params.get("stream") else None
        return await stainless_reply(
            self.PROVIDER, self._module, create(**kwargs), read, pieces, params
        )

    @staticmethod
    def price_name(model: str) -> str:
        return _model_name(model)


def _input_tokens(usage: Any) -> int:
    # Tokens read from or written to the prompt cache are prompt tokens too.
    return sum(
        int(getattr(usage, name, 0) or 0)
        for name in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )


def _response(message: Any, answer_tool: str | None = None) -> Any:
    """The message as a ChatCompletion; a call to ``answer_tool`` (the tool carrying a
    structured answer) is the reply's content, unless real tools were called too."""
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    answers: list[str] = []
    for block in message.content:
        if block.type == "text":
            texts.append(block.text)
        elif block.type == "tool_use" and block.name == answer_tool:
            answers.append(json.dumps(block.input))
        elif block.type == "tool_use":
            calls.append(tool_call(block.id, block.name, json.dumps(block.input)))
    reason = _FINISH.get(str(message.stop_reason), "stop")
    if answers and not calls:
        texts, reason = answers[:1], "stop" if reason == "tool_calls" else reason
    return completion(
        model=message.model,
        content="".join(texts) if texts or not calls else None,
        tool_calls=calls,
        finish_reason=reason,
        prompt_tokens=_input_tokens(message.usage),
        completion_tokens=int(message.usage.output_tokens or 0),
        response_id=message.id,
        usage_details=cache_usage(message.usage),
    )


async def _chunks(events: Any, answer_tool: str | None = None) -> AsyncIterator[Any]:
    """Anthropic's stream events as ChatCompletionChunks: text deltas, tool-call deltas (one
    index per tool_use block), the finish reason, then the usage. The input of a call to
    ``answer_tool`` streams as the reply's text (see :func:`_response`)."""
    import time

    head: dict[str, Any] = {"response_id": "", "model": "", "created": int(time.time())}
    prompt = done = 0
    details = None
    tools: dict[int, int] = {}  # content block index -> tool call index
    answers: set[int] = set()  # content block indexes of the answer tool's calls
    sent_arguments: set[int] = set()
    async for event in events:
        kind = event.type
        if kind == "message_start":
            head.update(response_id=event.message.id, model=event.message.model)
            prompt = _input_tokens(event.message.usage)
            details = cache_usage(event.message.usage)
            done = int(event.message.usage.output_tokens or 0)
        elif kind == "content_block_start" and _calls_tool(event.content_block, answer_tool):
            answers.add(event.index)
        elif kind == "content_block_delta" and event.index in answers:
            if event.delta.type == "input_json_delta" and event.delta.partial_json:
                sent_arguments.add(event.index)
                yield chunk(**head, content=event.delta.partial_json)
        elif kind == "content_block_stop" and event.index in answers:
            if event.index not in sent_arguments:
                yield chunk(**head, content="{}")
        elif kind == "content_block_start" and event.content_block.type == "tool_use":
            block = event.content_block
            tools[event.index] = len(tools)
            delta = {"index": tools[event.index], "id": block.id, "function": {"name": block.name}}
            yield chunk(**head, tool_call_delta=delta)
        elif kind == "content_block_delta" and event.delta.type == "text_delta":
            yield chunk(**head, content=event.delta.text)
        elif kind == "content_block_delta" and event.delta.type == "input_json_delta":
            if event.delta.partial_json:
                sent_arguments.add(event.index)
                delta = {
                    "index": tools[event.index],
                    "function": {"arguments": event.delta.partial_json},
                }
                yield chunk(**head, tool_call_delta=delta)
        elif kind == "content_block_stop" and event.index in tools:
            if event.index not in sent_arguments:  # a call without arguments: "{}", not ""
                delta = {"index": tools[event.index], "function": {"arguments": "{}"}}
                yield chunk(**head, tool_call_delta=delta)
        elif kind == "message_delta":
            if event.usage is not None:
                done = int(event.usage.output_tokens or 0)
            reason = _FINISH.get(str(event.delta.stop_reason), "stop")
            if reason == "tool_calls" and not tools:  # only the answer tool was called
                reason = "stop"
            yield chunk(**head, finish_reason=reason)
    yield chunk(**head, usage=(prompt, done), usage_details=details)


def _calls_tool(block: Any, name: str | None) -> bool:
    return name is not None and block.type == "tool_use" and block.name == name


PRICES = AnthropicClient.PRICES  # its table in prices.json, at AutoGen's module path too
