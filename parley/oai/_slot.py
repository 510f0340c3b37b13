"""One config of an ``OpenAIWrapper``'s list: its client, its policies, and its requests.

A config entry (a checked :class:`~parley.oai._config.Entry`) holds three kinds of keys: the
client's settings build the client once; its options and request parameters are the config's
stored defaults, merged over every call's own when a request is made for this config. The entry
wins over the call, as in AutoGen: ``create(model="x")`` does not override an entry's ``model``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from .._credentials import remember_environment, remember_in
from .._model_profiles import profile_for
from ..exceptions import ConfigError
from . import _templating
from ._config import PROMPT_CACHE_KEYS, Entry, split_config
from ._retry import RetryPolicy
from ._structured import OutputSchema, output_schema_of
from ._typed_reply import with_instruction
from .providers._registry import RESPONSES, make_client, provider_for
from .providers._responses_items import REASONING_KEY, drop_reasoning
from .rate_limiters import TimeRateLimiter

__all__ = ["Attempt", "Options", "Slot"]


class Options(NamedTuple):
    """A request's options that are never sent: the call's, with its config's over them.
    (A named tuple: made for every request, it is built in a third of a frozen dataclass's
    time.)"""

    agent: Any = None
    cache: Any = None
    cache_seed: int | str | None = None
    filter_func: Callable[..., Any] | None = None
    context: Mapping[str, Any] | None = None
    price: list[float] | float | None = None
    structured_output_retries: int = 2

    @classmethod
    def of(cls, extras: Mapping[str, Any]) -> Options:
        return cls(
            extras.get("agent"),
            extras.get("cache"),
            extras.get("cache_seed"),
            extras.get("filter_func"),
            extras.get("context"),
            extras.get("price"),
            _retries(extras.get("structured_output_retries")),
        )


@dataclass(slots=True)
class Attempt:
    """A request for one config: the body to send and the options that steer it."""

    slot: Slot
    params: dict[str, Any]
    options: Options
    #: The typed response_format replies must conform to (None: untyped).
    schema: OutputSchema | None = None


class Slot:
    """A config entry with its client (None until a custom ``model_client_cls`` is registered),
    retry policy and rate limiter."""

    def __init__(self, index: int, entry: Entry) -> None:
        self.index = index
        self.entry = entry
        # The config's credentials (and those its SDK may read from the environment) are
        # scrubbed from every error text, span and page from now on.
        remember_in(entry.client_kwargs)
        remember_environment()
        self.client: Any = None
        provider = provider_for(entry.api_type)
        if entry.model_client_cls is None and provider is not None:
            # Prompt caching is the provider client's to apply (never a request parameter).
            caching = {k: entry.extras[k] for k in PROMPT_CACHE_KEYS if k in entry.extras}
            self.client = make_client(
                provider, {**entry.client_kwargs, "model": entry.model, **caching}
            )
        elif entry.model_client_cls is None:
            from .providers._openai import OpenAIClient, missing_credentials

            problem = missing_credentials(entry.client_kwargs, entry.api_type)
            if problem:
                raise ConfigError(f"config {index} (model {entry.model!r}): {problem}")
            cls: type[OpenAIClient] = OpenAIClient
            if entry.api_type == RESPONSES:
                from .providers._openai_responses import OpenAIResponsesClient

                cls = OpenAIResponsesClient
            self.client = cls(
                entry.client_kwargs,
                api_type=entry.api_type,
                api_version=entry.api_version,
                model_profile=entry.extras.get("model_profile"),
            )
        # OpenAI's own client sends a schema natively unless the model's profile says it
        # cannot take one; a prompted model is told the schema instead.
        self._profiled = entry.model_client_cls is None and provider is None
        # Only the Responses client sends a message's reasoning items back; the others' requests
        # leave them out.
        self._keeps_reasoning = entry.api_type == RESPONSES and entry.model_client_cls is None
        self.policy = RetryPolicy(
            max_retries=2 if entry.max_retries is None else entry.max_retries,
            budget=RetryPolicy.budget if entry.retry_budget is None else entry.retry_budget,
        )
        self.limiter = TimeRateLimiter(entry.api_rate_limit) if entry.api_rate_limit else None
        # A call's keys are sorted by the entry's provider (by the call's when it names none).
        self._provider_from = entry.extras if "api_type" in entry.extras else None
        # Plain-dict copies of the entry's defaults for every request: a dict updates from a
        # dict three times as fast as from the entry's read-only views.
        self._extras = dict(entry.extras)
        self._params = dict(entry.params)

    @property
    def placeholder(self) -> str | None:
        """The custom client class name this config waits for (None: a built-in client)."""
        return self.entry.model_client_cls

    def attempt(self, config: Mapping[str, Any]) -> Attempt:
        """The request ``create(**config)`` makes of this config: templates filled, a prompt
        turned into a user message, options set apart."""
        client, extras, params = split_config(config, provider_from=self._provider_from)
        extras.update(self._extras)
        params.update(self._params)
        # A per-request timeout is a request option; other client settings belong in the config.
        if "timeout" in client:
            params["timeout"] = client.pop("timeout")
        client.pop("max_retries", None)
        if client:
            raise TypeError(
                f"{sorted(client)} configure the model client, not a request: put them in the "
                "llm_config or its config_list entries"
            )
        if ("messages" in params) == ("prompt" in params):
            raise ValueError("Either prompt or messages should be in create config but not both.")
        context = extras.get("context")
        allow = bool(extras.get("allow_format_str_template"))
        if "prompt" in params:
            prompt = _templating.instantiate(params.pop("prompt"), context, allow)
            params["messages"] = _templating.prompt_to_messages(prompt)
        elif context:
            params["messages"] = _templating.instantiate_messages(
                params["messages"], context, allow
            )
        if self.entry.model_client_cls is None:
            params.pop("model_client_cls", None)
        schema = self._output_schema(params)
        messages = params.get("messages")
        if not self._keeps_reasoning and messages and any(REASONING_KEY in m for m in messages):
            params["messages"] = drop_reasoning(messages)
        api_type = extras.get("api_type")
        if api_type and str(api_type).startswith("azure") and isinstance(params.get("model"), str):
            # Azure deployment names cannot hold dots ("gpt-3.5" is deployed as "gpt-35").
            params["model"] = params["model"].replace(".", "")
        if schema is not None:
            if self.structured_output(params) == "native":
                params["response_format"] = schema.response_format()
            else:
                params["messages"] = with_instruction(params["messages"], schema)
        return Attempt(self, params, Options.of(extras), schema)

    def _output_schema(self, params: dict[str, Any]) -> OutputSchema | None:
        """The request's typed schema, taken out of ``params``: the entry's (it wins over the
        call's, as every entry key does), else the call's. An untyped format (json_object)
        stays in ``params``, a copy of the caller's."""
        if self.entry.output_schema is not None:
            params.pop("response_format", None)
            return self.entry.output_schema
        given = params.get("response_format")
        if given is None or "response_format" in self._params:
            return None
        schema = output_schema_of(given, "create(response_format=...)")
        if schema is None:
            params["response_format"] = dict(given)
        else:
            del params["response_format"]
        return schema

    def structured_output(self, params: Mapping[str, Any]) -> str:
        """How this config's client takes the request ``params``'s typed response_format:
        ``"native"`` or ``"prompted"`` (its class's ``STRUCTURED_OUTPUT``, as a provider
        client's ``structured_output_for`` fits it to the request; a custom client: prompted)."""
        mode = getattr(type(self.client), "STRUCTURED_OUTPUT", "prompted")
        fitted = getattr(self.client, "structured_output_for", None)
        if mode == "native" and callable(fitted):
            mode = fitted(params)
        if mode != "native":
            return "prompted"
        override = self.entry.extras.get("model_profile")
        if self._profiled and not profile_for(params.get("model"), override).json_schema:
            return "prompted"
        return "native"


def _retries(value: Any) -> int:
    return 2 if value is None else int(value)
