"""What every native provider client shares (``parley.oai.anthropic``, ``gemini``, ...).

A provider client is a ``ModelClient`` (AutoGen's protocol) whose ``a_create`` translates an
OpenAI-shaped request (messages, tools, the config's parameters under AutoGen's key names) into
the provider's API, and the provider's answer back into an ``openai`` ``ChatCompletion``: the
rest of parley (agents, caching, logging, cost, usage summaries) sees one response type.

The pieces here:

- :class:`ProviderClient`: the base class (the blocking ``create`` over ``a_create``, message
  retrieval, usage, cost from a price table);
- :func:`completion` and :func:`chunk`: an answer, or a piece of a streamed one, as openai's
  types. A streaming client yields chunks and hands them to :func:`collect`, the same collector
  OpenAI streams go through (echo to the ``IOStream``, tool-call deltas merged, usage);
- :func:`api_error`: a provider's failure as parley's :class:`~parley.exceptions.ModelAPIError`
  tree, by status, so retry and fallback work across providers; its message, and every error
  leaving a client's ``a_create`` with its chain, are scrubbed of the configured credentials
  (:mod:`parley._credentials`, where the client's keys are noted as it is built);
- :func:`price_per_1k`: a price table lookup by the longest matching model-name prefix.
"""

from __future__ import annotations

import importlib
import time
import uuid
import warnings
from collections.abc import AsyncIterable, Mapping, Sequence
from typing import Any, ClassVar

from ..._core.runtime import run_sync
from ..._credentials import redact, remember_environment, remember_in, scrubbing_errors
from ...exceptions import (
    AuthenticationError,
    BadRequestError,
    MalformedResponseError,
    ModelAPIError,
    ModelConnectionError,
    ModelServerError,
    RateLimitError,
)
from .._cost import (
    USAGE_KEYS,
    cache_write_tokens,
    cached_prompt_tokens,
    compute_cost,
    response_usage,
)
from .._retry import parse_retry_after
from .._streaming import collect_stream
from ._prices import CacheRates, provider_cache_rates, provider_prices

__all__ = [
    "ProviderClient",
    "api_error",
    "chunk",
    "collect",
    "completion",
    "new_id",
    "price_per_1k",
    "require",
    "scrubbing_errors",
    "tokens_cost",
    "tool_call",
]


def require(module: str, provider: str) -> Any:
    """Import a provider's SDK ``module``; ImportError naming the parley extra that installs
    it."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        from ._registry import provider_for

        known = provider_for(provider)
        extra = known.extra if known is not None else provider
        raise ImportError(
            f"the {provider} client needs the {module!r} package: pip install 'parley[{extra}]'"
        ) from e


def new_id(prefix: str = "chatcmpl") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:24]}"


def tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    """An OpenAI tool call (``arguments`` is a JSON text)."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _usage(
    prompt_tokens: int, completion_tokens: int, details: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        **(details or {}),
    }


def completion(
    *,
    model: str,
    content: str | None,
    tool_calls: Sequence[Mapping[str, Any]] = (),
    finish_reason: str = "stop",
    prompt_tokens: int = 0,
    completion_tokens: int = 0,
    response_id: str | None = None,
    created: int | None = None,
    usage_details: Mapping[str, Any] | None = None,
) -> Any:
    """A one-choice ``openai.types.chat.ChatCompletion``; ``usage_details`` are OpenAI's
    ``prompt_tokens_details`` / ``completion_tokens_details`` of its usage."""
    from openai.types.chat import ChatCompletion

    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [dict(t) for t in tool_calls]
    return ChatCompletion.model_validate(
        {
            "id": response_id or new_id(),
            "object": "chat.completion",
            "created": int(time.time()) if created is None else created,
            "model": model,
            "choices": [
                {"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}
            ],
            "usage": _usage(prompt_tokens, completion_tokens, usage_details),
        }
    )


def chunk(
    *,
    response_id: str,
    model: str,
    created: int,
    content: str | None = None,
    tool_call_delta: Mapping[str, Any] | None = None,
    finish_reason: str | None = None,
    usage: tuple[int, int] | None = None,
    usage_details: Mapping[str, Any] | None = None,
) -> Any:
    """A ``ChatCompletionChunk``: a text delta, a tool-call delta (``{"index", "id"?,
    "function": {"name"?, "arguments"?}}``), a finish reason, or the usage (no choices; with
    ``usage_details`` as in :func:`completion`)."""
    from openai.types.chat import ChatCompletionChunk

    choices: list[dict[str, Any]] = []
    if content is not None or tool_call_delta is not None or finish_reason is not None:
        delta: dict[str, Any] = {"role": "assistant"}
        if content is not None:
            delta["content"] = content
        if tool_call_delta is not None:
            delta["tool_calls"] = [{"type": "function", **tool_call_delta}]
        choices.append({"index": 0, "delta": delta, "finish_reason": finish_reason})
    return ChatCompletionChunk.model_validate(
        {
            "id": response_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": choices,
            "usage": None if usage is None else _usage(*usage, usage_details),
        }
    )


async def collect(chunks: AsyncIterable[Any], params: Mapping[str, Any]) -> Any:
    """One ``ChatCompletion`` from a provider's stream turned into chunks (see :func:`chunk`),
    its text echoed to the IOStream as it arrives, as OpenAI streams are."""
    return await collect_stream(chunks, params)


_STATUS_ERRORS: dict[int, type[ModelAPIError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: AuthenticationError,
    404: BadRequestError,
    413: BadRequestError,
    422: BadRequestError,
    429: RateLimitError,
}


def api_error(
    provider: str,
    message: str,
    *,
    status: int | None,
    headers: Mapping[str, str] | None = None,
    code: str | None = None,
    retry_after: float | None = None,
) -> ModelAPIError:
    """The :class:`ModelAPIError` subclass for ``status`` (None: no answer came); its
    ``retry_after`` read from the headers when not given. Raise it ``from`` the SDK's error."""
    if retry_after is None and headers:
        retry_after = parse_retry_after(headers)
    if status is None:
        cls: type[ModelAPIError] = ModelConnectionError
    elif 200 <= status < 300:  # a success the SDK could not read as a reply
        cls = MalformedResponseError
        message = f"the answer is not a valid reply: {message}"
    elif status >= 500:
        cls = ModelServerError
    else:
        cls = _STATUS_ERRORS.get(status, ModelAPIError)
    return cls(
        redact(message),
        provider=provider,
        status_code=status,
        headers=headers,
        code=code,
        retry_after=retry_after,
    )


def price_per_1k(
    model: str, table: Mapping[str, tuple[float, float]]
) -> tuple[float, float] | None:
    """USD per 1k (input, output) tokens of ``model``: the entry whose name is the longest
    prefix of it (``claude-3-5-sonnet`` prices ``claude-3-5-sonnet-20241022``)."""
    best: str | None = None
    for name in table:
        if model.startswith(name) and (best is None or len(name) > len(best)):
            best = name
    return None if best is None else table[best]


def tokens_cost(input_tokens: int, output_tokens: int, price: tuple[float, float]) -> float:
    """Dollars for the tokens at ``price`` (USD per 1k, in and out), summed as AutoGen sums."""
    return input_tokens / 1000 * price[0] + output_tokens / 1000 * price[1]


class ProviderClient:
    """Base of the native clients: subclasses set ``PROVIDER`` (their ``PRICES`` are that
    provider's table in ``prices.json`` unless they set their own) and implement
    :meth:`a_create`. Constructed as AutoGen's are, ``cls(**config)`` with the config entry's
    model, client settings and credentials (``parley.oai.providers._registry`` sorts them out); the
    caller's dict is never changed. SDK retries must be off: parley's retry policy retries."""

    PROVIDER: ClassVar[str] = ""
    PRICES: ClassVar[Mapping[str, tuple[float, float]]] = {}
    # The provider's prompt-cache prices (prices.json's cache_rates); None: cached prompt
    # tokens cost as input.
    CACHE_RATES: ClassVar[CacheRates | None] = None
    # The SDK's module, imported as each client is made (ImportError naming the parley extra,
    # EXTRA or else PROVIDER, when it is missing); "" for a client that imports its own.
    SDK: ClassVar[str] = ""
    EXTRA: ClassVar[str] = ""
    RESPONSE_USAGE_KEYS: ClassVar[list[str]] = list(USAGE_KEYS)
    # How the client honours a typed ``response_format`` (parley.oai._structured): "native"
    # when it maps params["response_format"] (OpenAI's json_schema shape) to its API;
    # "prompted" when it cannot, and the wrapper sends the schema as an instruction instead.
    STRUCTURED_OUTPUT: ClassVar[str] = "prompted"

    def structured_output_for(self, params: Mapping[str, Any]) -> str:
        """How this request's typed ``response_format`` goes: ``STRUCTURED_OUTPUT``, unless
        the API cannot take a schema beside what else the request asks (a client says so by
        answering "prompted": the schema then goes as an instruction)."""
        return self.STRUCTURED_OUTPUT

    def __init__(self, **config: Any) -> None:
        self._config = dict(config)
        remember_in(self._config)  # its keys are scrubbed from every error text from now on
        remember_environment()  # and the keys its SDK may read from the environment
        self._module: Any = require(self.SDK, self.EXTRA or self.PROVIDER) if self.SDK else None
        self._own_key = object()  # this client's SDK clients apart from others' (see per_loop)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "PROVIDER" in cls.__dict__ and "PRICES" not in cls.__dict__:
            cls.PRICES = provider_prices(cls.PROVIDER)
        if "PROVIDER" in cls.__dict__ and "CACHE_RATES" not in cls.__dict__:
            cls.CACHE_RATES = provider_cache_rates(cls.PROVIDER)
        # Every provider's a_create: whatever error leaves it (a ModelAPIError, the SDK's
        # error chained to it, an error of the SDK's own) is scrubbed of credentials first.
        own = cls.__dict__.get("a_create")
        if own is not None and not getattr(own, "_scrubs_errors", False):
            cls.a_create = scrubbing_errors(own)  # type: ignore[method-assign,assignment]

    async def a_create(self, params: dict[str, Any]) -> Any:
        raise NotImplementedError

    def create(self, params: dict[str, Any]) -> Any:
        """The ModelClient protocol's blocking form."""
        return run_sync(self.a_create(params))

    def message_retrieval(self, response: Any) -> list[Any]:
        """Per choice: the message object if it calls tools, else its text."""
        out: list[Any] = []
        for choice in response.choices:
            message = choice.message
            out.append(message if getattr(message, "tool_calls", None) else message.content)
        return out

    @staticmethod
    def price_name(model: str) -> str:
        """The name ``PRICES`` knows ``model`` by (a provider whose model ids carry more, a
        region or a version, strips it)."""
        return model

    def cost(self, response: Any) -> float:
        """Dollars by ``PRICES`` (a config's ``price`` overrides it, in the wrapper); 0 for a
        model the table does not know. Prompt tokens read from or written to the provider's
        prompt cache cost its ``CACHE_RATES`` times the input price."""
        usage = response.usage
        price = price_per_1k(self.price_name(str(response.model)), self.PRICES)
        if usage is None or price is None:
            return 0.0
        rates = self.CACHE_RATES
        read = cached_prompt_tokens(usage)
        written, written_1h = cache_write_tokens(usage)
        if rates is None or not (read or written):
            return tokens_cost(int(usage.prompt_tokens), int(usage.completion_tokens or 0), price)
        return compute_cost(
            None,
            int(usage.prompt_tokens),
            int(usage.completion_tokens or 0),
            price,
            cached_tokens=read,
            cached_rate=price[0] * rates.read,
            written=(
                (written_1h, price[0] * rates.write_1h),
                (written - written_1h, price[0] * rates.write_5m),
            ),
        )

    @classmethod
    def token_cost(cls, input_tokens: int, output_tokens: int, model: str) -> float:
        """Dollars for ``input_tokens`` in and ``output_tokens`` out of ``model`` by ``PRICES``
        (AutoGen's ``calculate_<provider>_cost``): 0 with a ``UserWarning`` for a model the
        table does not know."""
        price = price_per_1k(cls.price_name(model), cls.PRICES)
        if price is None:
            warnings.warn(
                f"Cost calculation not available for model {model}", UserWarning, stacklevel=3
            )
            return 0.0
        return tokens_cost(input_tokens, output_tokens, price)

    @staticmethod
    def get_usage(response: Any) -> dict[str, Any]:
        return response_usage(response)
