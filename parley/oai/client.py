"""``OpenAIWrapper``: one completion call across a config list (AutoGen's ``autogen.oai.client``).

The flow of ``create`` / ``a_create`` (one implementation; ``create`` runs it from sync code):
for each config in order — merge the call's arguments under the config (the entry wins, as in
AutoGen), fill templates, look in the cache, else call the model through the retry policy; a
response that fails ``filter_func`` moves on to the next config, as does an error that means
"try elsewhere" (auth, rate limit, timeout, connection, 5xx, unknown model). The last config's
response is returned even if the filter rejects it (``pass_filter`` says so).

Deliberate differences from AutoGen 0.2 (see README):
- caching is off unless ``cache_seed`` or ``cache`` is given (AutoGen defaults to seed 41), and
  responses are cached as JSON documents, never pickles (see :mod:`parley.oai._cache_io`), so
  AutoGen's cache entries are misses;
- retries are parley's own policy (``max_retries``, ``retry_budget``), with backoff, jitter and
  ``Retry-After``; the SDK's retries are off so a request is never retried twice over;
- when several configs all fail, one :class:`AllConfigsFailedError` lists every failure
  (a single config still raises its own error, or ``TimeoutError`` on a timeout, as AutoGen);
- a ``prompt`` becomes one user message on the chat endpoint;
- the caller's config dicts are never changed (AutoGen deletes ``api_rate_limit``).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Mapping
from typing import Any, ClassVar

from .._sync import on_runner, run_sync
from ..exceptions import (
    AllConfigsFailedError,
    ConfigError,
    ConfigFailure,
    MalformedResponseError,
    ModelClientError,
)
from . import _cache_io, _templating
from ._config import (
    EXTRA_KWARGS,
    client_kwarg_names,
    split_config,
    validate_config_list,
    validate_entry,
)
from ._cost import compute_cost, format_usage_summary, update_usage_summary
from ._retry import RetryPolicy, call_with_retries, error_status
from .model_client import ModelClient

__all__ = [
    "LEGACY_CACHE_DIR",
    "LEGACY_DEFAULT_CACHE_SEED",
    "OPEN_API_BASE_URL_PREFIX",
    "TOOL_ENABLED",
    "ModelClient",
    "OpenAIWrapper",
]

logger = logging.getLogger(__name__)

LEGACY_DEFAULT_CACHE_SEED = 41
LEGACY_CACHE_DIR = ".cache"
OPEN_API_BASE_URL_PREFIX = "https://api.openai.com"
TOOL_ENABLED = True

_TIMEOUT_MESSAGE = (
    "OpenAI API call timed out. This could be due to congestion or too small a timeout value. "
    "The timeout can be specified by setting the 'timeout' value (in seconds) in the llm_config "
    "(if you are using agents) or the OpenAIWrapper constructor (if you are using the "
    "OpenAIWrapper directly)."
)
# Statuses after which another config (another endpoint, key or model) may succeed.
_FALLBACK_STATUSES = frozenset({401, 403, 404, 408, 409, 429})


def _should_fall_back(error: BaseException) -> bool:
    import openai

    if isinstance(
        error,
        (
            openai.APITimeoutError,
            openai.APIConnectionError,
            openai.APIResponseValidationError,
            MalformedResponseError,
        ),
    ):
        return True
    if isinstance(error, openai.APIStatusError):
        if getattr(error, "code", None) == "content_filter":
            return False
        status, _ = error_status(error)
        return status is not None and (status in _FALLBACK_STATUSES or status >= 500)
    return False


class _ClientKwargNames:
    """``OpenAIWrapper.openai_kwargs``, computed from the installed SDK on first access."""

    def __get__(self, obj: object, owner: type | None = None) -> frozenset[str]:
        return client_kwarg_names()


class _RateLimiter:
    """At most ``rate`` requests per second on one config."""

    def __init__(self, rate: float) -> None:
        self._interval = 1.0 / rate
        self._next = 0.0

    async def wait(self) -> None:
        now = time.monotonic()
        start = max(now, self._next)
        self._next = start + self._interval
        if start > now:
            await asyncio.sleep(start - now)


class _Slot:
    """One config of the list: its stored defaults, its client and policies."""

    def __init__(self, index: int, entry: dict[str, Any], base_client: dict[str, Any]) -> None:
        client_kwargs, _, _ = split_config(entry)
        self.index = index
        self.entry = entry  # the full entry, as custom clients receive it
        # Stored defaults: everything but client settings (spec 6.2 step 3.2).
        self.defaults = {k: v for k, v in entry.items() if k not in client_kwargs}
        self.client_kwargs = {**base_client, **client_kwargs}
        self.placeholder: str | None = entry.get("model_client_cls")
        self.client: Any = None
        if self.placeholder is None:
            from ._openai_client import OpenAIClient, missing_credentials

            problem = missing_credentials(self.client_kwargs, entry.get("api_type"))
            if problem:
                raise ConfigError(f"config {index} (model {entry.get('model')!r}): {problem}")
            self.client = OpenAIClient(
                self.client_kwargs,
                api_type=entry.get("api_type"),
                api_version=entry.get("api_version"),
            )
        max_retries = self.client_kwargs.get("max_retries")
        budget = entry.get("retry_budget")
        self.policy = RetryPolicy(
            max_retries=2 if max_retries is None else int(max_retries),
            budget=RetryPolicy.budget if budget is None else float(budget),
        )
        rate = entry.get("api_rate_limit")
        self.limiter = _RateLimiter(float(rate)) if rate else None

    async def call(self, params: dict[str, Any]) -> Any:
        client = self.client
        a_create = getattr(client, "a_create", None)
        if a_create is not None and inspect.iscoroutinefunction(a_create):
            return await a_create(params)
        # A custom client's blocking create must not stall the event loop.
        result = await asyncio.to_thread(client.create, params)
        return await result if inspect.isawaitable(result) else result


class OpenAIWrapper:
    """A completion client over a list of configs: fallback, filter, retries, cache, cost."""

    openai_kwargs: ClassVar[frozenset[str]] = _ClientKwargNames()  # type: ignore[assignment]
    extra_kwargs: ClassVar[frozenset[str]] = EXTRA_KWARGS
    total_usage_summary: dict[str, Any] | None = None
    actual_usage_summary: dict[str, Any] | None = None

    def __init__(
        self, *, config_list: list[dict[str, Any]] | None = None, **base_config: Any
    ) -> None:
        base = validate_entry(base_config, "llm_config", require_model=False)
        entries = validate_config_list(config_list) if config_list else []
        base_client, _, _ = split_config(base)
        base_rest = {k: v for k, v in base.items() if k not in base_client}
        if not entries:
            entries = [{}]
        self._slots = [_Slot(i, {**base_rest, **e}, base_client) for i, e in enumerate(entries)]
        self.wrapper_id = id(self)
        self.total_usage_summary = None
        self.actual_usage_summary = None

    # -- custom clients -------------------------------------------------------------------

    def register_model_client(self, model_client_cls: type, **kwargs: Any) -> None:
        """Activate the first config naming ``model_client_cls`` (by class name)."""
        name = model_client_cls.__name__
        for slot in self._slots:
            if slot.placeholder == name and slot.client is None:
                slot.client = model_client_cls(dict(slot.entry), **kwargs)
                return
        if any(isinstance(slot.client, model_client_cls) for slot in self._slots):
            logger.warning("model client %s is already registered", name)
            return
        raise ValueError(
            f'model client "{name}" is being registered but was not found in the config_list. '
            f'Add "model_client_cls": "{name}" to the config entry it should serve.'
        )

    # -- completion -----------------------------------------------------------------------

    def create(self, **config: Any) -> Any:
        """Make a completion; see the module docstring for the flow."""
        return run_sync(self._create(config))

    async def a_create(self, **config: Any) -> Any:
        """The async form of :meth:`create` (the same implementation)."""
        return await on_runner(self._create(config))

    async def _create(self, config: dict[str, Any]) -> Any:
        missing = [s.placeholder for s in self._slots if s.client is None]
        if missing:
            raise ModelClientError(
                f"model client(s) {missing} are not activated; call register_model_client() for "
                "each before create()"
            )
        failures: list[ConfigFailure] = []
        last = len(self._slots) - 1
        for slot in self._slots:
            params, extras = self._request(slot, config)
            cache = extras.get("cache")
            if cache is None and extras.get("cache_seed") is not None:
                cache = await _cache_io.seed_cache(extras["cache_seed"], LEGACY_CACHE_DIR)
            cache_key = None
            if cache is not None:
                cache_key = _cache_io.cache_key(params)
                cached = await _cache_io.cache_get(cache, cache_key)
                if cached is not None:
                    done = await self._accept(slot, cached, params, extras, last, cache_hit=True)
                    if done:
                        return cached
                    continue
            if slot.limiter is not None:
                await slot.limiter.wait()
            try:
                response = await call_with_retries(
                    lambda s=slot, p=params: s.call(p),  # type: ignore[misc]
                    slot.policy,
                    describe=f"config {slot.index} ({params.get('model')!r})",
                    max_wait=None if slot.index == last else slot.policy.max_delay,
                )
            except Exception as error:
                if not _should_fall_back(error):
                    raise
                failures.append(ConfigFailure(slot.index, params.get("model"), error))
                if slot.index == last:
                    self._raise_all_failed(failures)
                logger.info(
                    "config %d failed (%s); trying the next one", slot.index, type(error).__name__
                )
                continue
            price = extras.get("price")
            response.cost = self._cost(slot, response, price)
            self._count(slot, response, actual=True)
            if cache is not None and cache_key is not None:
                await _cache_io.cache_set(cache, cache_key, response)
            if await self._accept(slot, response, params, extras, last, cache_hit=False):
                return response
        raise RuntimeError("Should not reach here.")

    def _request(
        self, slot: _Slot, config: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """(request params, extras) for one config: the entry wins over the call (spec 6.4)."""
        full = {**config, **slot.defaults}
        _, extras, params = _split_call(full)
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
        if slot.placeholder is None:
            params.pop("model_client_cls", None)
        api_type = extras.get("api_type")
        if api_type and str(api_type).startswith("azure") and isinstance(params.get("model"), str):
            params["model"] = params["model"].replace(".", "")
        return params, extras

    async def _accept(
        self,
        slot: _Slot,
        response: Any,
        params: dict[str, Any],
        extras: dict[str, Any],
        last: int,
        *,
        cache_hit: bool,
    ) -> bool:
        """Finish a response; True when it is the one to return."""
        if cache_hit:
            if getattr(response, "cost", None) is None:
                response.cost = self._cost(slot, response, extras.get("price"))
            self._count(slot, response, actual=False)
        response.message_retrieval_function = slot.client.message_retrieval
        filter_func = extras.get("filter_func")
        passed = True
        if filter_func is not None:
            verdict = filter_func(context=extras.get("context"), response=response)
            passed = bool(await verdict if inspect.isawaitable(verdict) else verdict)
        if passed or slot.index == last:
            response.config_id = slot.index
            response.pass_filter = passed
            return True
        return False

    def _raise_all_failed(self, failures: list[ConfigFailure]) -> None:
        import openai

        error = failures[-1].error
        if len(failures) == 1:
            if isinstance(error, openai.APITimeoutError):
                raise TimeoutError(_TIMEOUT_MESSAGE) from error
            raise error
        raise AllConfigsFailedError(failures) from error

    # -- cache ----------------------------------------------------------------------------

    # -- cost and usage -------------------------------------------------------------------

    @staticmethod
    def _cost(slot: _Slot, response: Any, price: Any) -> float:
        if price is not None:
            usage = getattr(response, "usage", None)
            if usage is None:
                return 0.0
            return compute_cost(
                response.model, usage.prompt_tokens, usage.completion_tokens or 0, price
            )
        return float(slot.client.cost(response))

    def _count(self, slot: _Slot, response: Any, *, actual: bool) -> None:
        usage = slot.client.get_usage(response)
        self.total_usage_summary = update_usage_summary(self.total_usage_summary, usage)
        if actual:
            self.actual_usage_summary = update_usage_summary(self.actual_usage_summary, usage)

    def print_usage_summary(self, mode: str | list[str] = ["actual", "total"]) -> None:  # noqa: B006 - AutoGen's signature
        """Print the usage summaries to the current IOStream."""
        from ..io import IOStream

        IOStream.get_default().print(
            format_usage_summary(self.actual_usage_summary, self.total_usage_summary, mode),
            flush=True,
        )

    def clear_usage_summary(self) -> None:
        self.total_usage_summary = None
        self.actual_usage_summary = None

    # -- helpers AutoGen exposes ----------------------------------------------------------

    @classmethod
    def instantiate(
        cls,
        template: Any,
        context: dict[str, Any] | None = None,
        allow_format_str_template: bool = False,
    ) -> Any:
        return _templating.instantiate(template, context, allow_format_str_template)

    @classmethod
    def extract_text_or_completion_object(cls, response: Any) -> list[Any]:
        """The texts (or message objects for tool/function calls) of a response's choices."""
        return list(response.message_retrieval_function(response))


def _split_call(full: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    client, extras, params = split_config(full)
    # A per-request timeout is a request option; other client settings belong in the config.
    if "timeout" in client:
        params["timeout"] = client.pop("timeout")
    for key in ("max_retries",):
        client.pop(key, None)
    if client:
        raise TypeError(
            f"{sorted(client)} configure the model client, not a request: put them in the "
            "llm_config or its config_list entries"
        )
    return client, extras, params
