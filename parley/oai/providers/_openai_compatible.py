"""What the clients of OpenAI-shaped APIs share (``parley.oai.groq``, ``together``,
``cerebras``, and ``mistral`` for its answers): their requests carry OpenAI's messages and
tools, their answers and stream chunks have OpenAI's shape in each SDK's own types.

- :func:`answer` and :func:`chunks`: an SDK's completion, or its stream, as openai's types
  (finish reasons outside OpenAI's set mapped: Together's ``eos`` is ``stop``);
- :func:`hide_tools`: AutoGen's ``hide_tools`` option (``"if_all_run"``, ``"if_any_run"``,
  ``"never"``): leave the tools out of the request once they have run;
- :class:`OpenAICompatibleClient`: the whole client over a Stainless-generated SDK (groq,
  together, cerebras: ``client.chat.completions.create`` with openai's error classes); a
  provider sets its SDK, the parameters it accepts under AutoGen's names (checked as AutoGen
  checked them: :mod:`._params`), and its prices.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, ClassVar

from ...exceptions import ConfigError
from ._base import ProviderClient, chunk, completion, tool_call
from ._messages import tools_hidden
from ._params import Param, checked, model_of
from ._sdk_calls import call_kwargs, per_loop, root_url, stainless_reply
from ._tool_images import images_after_results

__all__ = [
    "COMMON_PARAMS",
    "OpenAICompatibleClient",
    "answer",
    "chunks",
    "hide_tools",
    "parameters",
    "request",
]

# The OpenAI parameters these APIs all take under OpenAI's names.
COMMON_PARAMS = (
    "max_tokens",
    "seed",
    "stream",
    "temperature",
    "top_p",
    "stop",
    "response_format",
    "tool_choice",
)

_FINISH = {"eos": "stop", "end_turn": "stop", "model_length": "length", "error": "stop"}
_OPENAI_FINISH = frozenset({"stop", "length", "tool_calls", "content_filter", "function_call"})
# Request options of the Stainless SDKs, passed through as the openai client passes them.
_OPTIONS = ("extra_headers", "extra_query", "extra_body", "timeout")


def _finish(reason: Any) -> str:
    reason = str(getattr(reason, "value", reason) or "stop")
    reason = _FINISH.get(reason, reason)
    return reason if reason in _OPENAI_FINISH else "stop"


def _text(content: Any) -> str | None:
    """A message's or delta's content: a str, or (Mistral) a list of chunks with ``text``."""
    if content is None or isinstance(content, str):
        return content
    return "".join(str(getattr(part, "text", "") or "") for part in content)


def _arguments(arguments: Any) -> str:
    import json

    return arguments if isinstance(arguments, str) else json.dumps(arguments or {})


def answer(raw: Any) -> Any:
    """An SDK's OpenAI-shaped completion (its first choice) as an openai ``ChatCompletion``."""
    choice = raw.choices[0]
    calls = [
        tool_call(str(c.id), c.function.name, _arguments(c.function.arguments))
        for c in choice.message.tool_calls or ()
    ]
    usage = raw.usage
    return completion(
        model=str(raw.model),
        content=_text(choice.message.content),
        tool_calls=calls,
        finish_reason=_finish(choice.finish_reason),
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        response_id=str(raw.id),
        created=int(getattr(raw, "created", 0) or time.time()),
    )


def _usage(raw: Any) -> tuple[int, int] | None:
    # Groq sends a stream's usage under x_groq; the others on the last chunk.
    usage = getattr(raw, "usage", None) or getattr(getattr(raw, "x_groq", None), "usage", None)
    if usage is None:
        return None
    return int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0)


async def chunks(stream: Any, unwrap: Callable[[Any], Any] = lambda e: e) -> AsyncIterator[Any]:
    """An SDK's stream of OpenAI-shaped chunks (each ``unwrap(event)``) as openai's
    ``ChatCompletionChunk``s for :func:`~parley.oai.providers._base.collect`."""
    usage: tuple[int, int] | None = None
    head: dict[str, Any] | None = None
    async for event in stream:
        raw = unwrap(event)
        head = {
            "response_id": str(raw.id),
            "model": str(raw.model),
            "created": int(getattr(raw, "created", 0) or time.time()),
        }
        usage = _usage(raw) or usage
        for c in raw.choices or ():
            if c.index != 0:
                continue
            text = _text(c.delta.content)
            if text:
                yield chunk(**head, content=text)
            for position, call in enumerate(c.delta.tool_calls or ()):
                function = call.function
                delta: dict[str, Any] = {
                    "index": position if getattr(call, "index", None) is None else call.index,
                    "function": {
                        "name": getattr(function, "name", None),
                        "arguments": _arguments(getattr(function, "arguments", None) or ""),
                    },
                }
                if getattr(call, "id", None):
                    delta["id"] = call.id
                yield chunk(**head, tool_call_delta=delta)
            if c.finish_reason is not None:
                yield chunk(**head, finish_reason=_finish(c.finish_reason))
    if head is not None and usage is not None:
        yield chunk(**head, usage=usage)


def hide_tools(params: Mapping[str, Any]) -> bool:
    """Whether AutoGen's ``hide_tools`` option leaves the request's tools out
    (:func:`~._messages.tools_hidden`)."""
    names = [t["function"]["name"] for t in params.get("tools") or ()]
    return tools_hidden(params.get("messages") or (), names, params.get("hide_tools", "never"))


def parameters(
    params: Mapping[str, Any], table: Sequence[Param], extras: Sequence[str] = ()
) -> dict[str, Any]:
    """The parameters of ``table`` checked as AutoGen checked them (each present, None when
    it is not sent), and the ``extras`` given (passed as they are)."""
    found = checked(params, table)
    found.update({k: params[k] for k in extras if params.get(k) is not None and k not in found})
    return found


def request(
    params: Mapping[str, Any], table: Sequence[Param], extras: Sequence[str] = ()
) -> dict[str, Any]:
    """The :func:`parameters` that are not None, and the tools, unless ``hide_tools`` leaves
    them out (then no tool choice either)."""
    body = {k: v for k, v in parameters(params, table, extras).items() if v is not None}
    if params.get("tools") and not hide_tools(params):
        body["tools"] = [dict(t) for t in params["tools"]]
    else:
        body.pop("tool_choice", None)
        body.pop("parallel_tool_calls", None)
    return body


class OpenAICompatibleClient(ProviderClient):
    """A client over a Stainless SDK's ``chat.completions.create``. Subclasses set
    ``PROVIDER``, ``PATH`` (what the SDK appends to its base URL: removed from a configured
    ``base_url`` ending with it), ``PARAMS`` (AutoGen's parameters for the provider, with its
    types, default and bounds), ``EXTRAS`` (parameters parley sends too, as they are given) and
    ``LABEL`` (the provider's name in AutoGen's messages). The Stainless SDKs are named after their provider, so
    ``SDK`` (the module), ``CLIENT`` (its async client class) and ``API_KEY_ENV`` follow from
    ``PROVIDER`` (``groq``, ``AsyncGroq``, ``GROQ_API_KEY``) unless a subclass sets its own."""

    CLIENT: ClassVar[str] = ""
    API_KEY_ENV: ClassVar[str] = ""
    PATH: ClassVar[tuple[str, ...]] = ("/v1",)
    PARAMS: ClassVar[tuple[Param, ...]] = ()
    EXTRAS: ClassVar[tuple[str, ...]] = (
        "stop",
        "response_format",
        "tool_choice",
        "parallel_tool_calls",
    )
    LABEL: ClassVar[str] = ""
    SETTINGS: ClassVar[Mapping[str, Any]] = {}  # the SDK client's own, for every config

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        provider = cls.__dict__.get("PROVIDER")
        if provider:
            named = {
                "SDK": provider,
                "CLIENT": f"Async{provider.capitalize()}",
                "API_KEY_ENV": f"{provider.upper()}_API_KEY",
            }
            for attribute, value in named.items():
                if attribute not in cls.__dict__:
                    setattr(cls, attribute, value)

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        api_key = self._config.get("api_key") or os.environ.get(self.API_KEY_ENV)
        if not api_key:
            raise ConfigError(
                f"the {self.PROVIDER} config has no api_key and {self.API_KEY_ENV} is not set"
            )
        settings: dict[str, Any] = {**self.SETTINGS, "api_key": api_key, "max_retries": 0}
        for key in ("timeout", "default_headers", "default_query", "http_client"):
            if self._config.get(key) is not None:
                settings[key] = self._config[key]
        if self._config.get("base_url"):
            settings["base_url"] = root_url(self._config["base_url"], *self.PATH)
        self._settings = settings

    def _client(self) -> Any:
        def make() -> Any:
            return getattr(self._module, self.CLIENT)(**self._settings)

        return per_loop(self.PROVIDER, self._settings, make, self._own_key)

    def _model(self, params: Mapping[str, Any]) -> str:
        given = {"model": params.get("model") or self._config.get("model")}
        return model_of(
            given,
            f"Please specify the 'model' in your config list entry to nominate the {self.LABEL}"
            " model to use.",
        )

    def parse_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """AutoGen's ``parse_params``: the model and the parameters this client sends for
        ``params``, checked as AutoGen's client checked them (a value of the wrong type or out
        of bounds is its default, with a ``UserWarning``); None means not sent. Parameters
        parley sends beyond AutoGen's (``stop``, ``tool_choice``, ...) are there when given.
        No model: :class:`~parley.exceptions.ConfigAssertionError` (an ``AssertionError``)."""
        return {"model": self._model(params), **parameters(params, self.PARAMS, self.EXTRAS)}

    def _body(self, params: Mapping[str, Any]) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self._model(params),
            "messages": [dict(m) for m in images_after_results(params.get("messages") or ())],
            **request(params, self.PARAMS, self.EXTRAS),
        }
        for key in _OPTIONS:
            if params.get(key) is not None:
                body[key] = params[key]
        return body

    async def a_create(self, params: dict[str, Any]) -> Any:
        body = self._body(params)
        create = self._client().chat.completions.create
        call = create(**call_kwargs(create, body))
        pieces = chunks if body.get("stream") else None
        return await stainless_reply(self.PROVIDER, self._module, call, answer, pieces, params)
