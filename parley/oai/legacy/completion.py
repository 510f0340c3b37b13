"""AutoGen/FLAML's enhanced-inference API: ``Completion`` and ``ChatCompletion``
(``autogen.oai.completion``), working on openai>=1.

Both classes are used through classmethods, never instantiated; their state (cache seed and
path, call history, the last tuning run) lives on the class, and ``ChatCompletion`` sees what is
set on ``Completion`` until it sets its own, as in AutoGen::

    response = parley.ChatCompletion.create(
        context={"problem": "1 + 1"}, prompt="Solve {problem}", allow_format_str_template=True,
        config_list=config_list,
    )
    parley.ChatCompletion.extract_text(response)

``create`` fills the ``prompt`` / ``messages`` templates with ``context``, answers from the disk
cache ``<cache_path_root>/<cache_seed>`` or asks the model (chat models on the chat endpoint, a
prompt turned into one user message; other models on the legacy ``/v1/completions`` endpoint),
retries by ``retry_wait_time`` / ``max_retry_period`` / ``request_timeout``
(:mod:`parley.oai.legacy._call`), falls back across a ``config_list`` and keeps the first
response ``filter_func`` accepts. Responses are plain dicts with a ``cost`` key.

``tune`` (needs ``pip install 'parley[tune]'``) searches inference settings for the best metric
within an inference and an optimisation budget (:mod:`parley.oai.legacy._tune`).

Deliberate differences from AutoGen 0.2 (see README): the API works instead of raising
``AssertionError``, and logs no deprecation warning on every call; ``create(cache_seed=...)``
keeps the cache root set with ``set_cache``; ``print_usage_summary`` without logging says so and
returns; ``logged_history`` works on every Python version; a config with neither prompt nor
messages is a ``ValueError`` for every model; retries are bounded by ``max_retry_period`` for
every kind of transient error; ``test`` requests the instances concurrently.
"""

from __future__ import annotations

import inspect
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from ..._core.runtime import run_sync, sync_face
from .. import _templating
from .._cost import compute_cost
from .._gather import gather_bounded
from . import _call, _evaluate, _history
from ._params import CHAT_MODELS, PRICE_1K, build_request, looks_like_chat_model
from ._tune import tune as tune_settings

__all__ = ["ChatCompletion", "Completion"]

logger = logging.getLogger("parley.oai.completion")


class _CompletionType(type):
    @property
    def logged_history(cls) -> dict[Any, Any] | None:
        """The history ``start_logging`` keeps (None when logging is off)."""
        return cls._history_dict  # type: ignore[attr-defined, no-any-return]


class _SearchSpace:
    """``default_search_space``: built on first read (it holds flaml domains, and flaml is an
    optional extra), once per class."""

    def __get__(self, obj: object, owner: type[Completion]) -> dict[str, Any]:
        space = owner.__dict__.get("_search_space")
        if space is None:
            from ._tune import default_search_space

            space = default_search_space(chat=owner._chat_only)
            type.__setattr__(owner, "_search_space", space)
        return space


def _as_dict(response: Any) -> dict[str, Any]:
    if isinstance(response, dict):
        return response
    dump = getattr(response, "model_dump", None)
    if dump is None:
        raise TypeError(f"expected a response dict, got {type(response).__name__}")
    return dict(dump(exclude_none=True))


class Completion(metaclass=_CompletionType):
    """Text and chat completions with templates, caching, retries, fallback, filtering, logging
    and tuning; every member is a classmethod or a class attribute."""

    chat_models: ClassVar[set[str]] = set(CHAT_MODELS)
    price1K: ClassVar[dict[str, float | tuple[float, float]]] = PRICE_1K
    default_search_space: ClassVar[dict[str, Any]] = _SearchSpace()  # type: ignore[assignment]
    cache_seed: ClassVar[Any] = 41
    cache_path: ClassVar[str] = f".cache/{cache_seed}"
    retry_wait_time: ClassVar[float] = 10
    max_retry_period: ClassVar[float] = 120
    request_timeout: ClassVar[float] = 60
    optimization_budget: ClassVar[float | None] = None
    _chat_only: ClassVar[bool] = False
    _history_dict: ClassVar[dict[Any, Any] | None] = None
    _history_compact: ClassVar[bool] = True
    _count_create: ClassVar[int] = 0

    # -- making a completion ----------------------------------------------------------------

    @classmethod
    async def a_create(
        cls,
        context: dict[str, Any] | None = None,
        use_cache: bool | None = True,
        config_list: list[dict[str, Any]] | None = None,
        filter_func: Callable[..., Any] | None = None,
        raise_on_ratelimit_or_timeout: bool | None = True,
        allow_format_str_template: bool | None = False,
        **config: Any,
    ) -> Any:
        """A completion for ``config`` with its templates filled from ``context`` (see the module
        docstring); ``-1`` when rate limits or timeouts outlasted ``max_retry_period`` and
        ``raise_on_ratelimit_or_timeout`` is false. ``create`` is its blocking form."""
        if config_list is not None and len(config_list) == 0:
            logger.warning("config_list is empty; using the call's own config")
        if not config_list:
            return await cls._create_one(
                context,
                bool(use_cache),
                bool(raise_on_ratelimit_or_timeout),
                {**config, "allow_format_str_template": allow_format_str_template},
            )
        return await cls._fall_back(
            context,
            bool(use_cache),
            config_list,
            filter_func,
            bool(raise_on_ratelimit_or_timeout),
            {**config, "allow_format_str_template": allow_format_str_template},
        )

    create = classmethod(sync_face(a_create))

    @classmethod
    async def _fall_back(
        cls,
        context: dict[str, Any] | None,
        use_cache: bool,
        config_list: Sequence[Mapping[str, Any]],
        filter_func: Callable[..., Any] | None,
        raise_on_ratelimit_or_timeout: bool,
        config: dict[str, Any],
    ) -> Any:
        import openai

        from .._error_kinds import classify

        last = len(config_list) - 1
        rejected_cost = 0.0
        for i, entry in enumerate(config_list):
            base = {**config, **entry}  # the entry wins over the call, as in AutoGen
            if i < last and filter_func is None and "max_retry_period" not in entry:
                base["max_retry_period"] = 0  # fail over fast when another config follows
            try:
                response = await cls._create_one(
                    context, use_cache, i < last or raise_on_ratelimit_or_timeout, base
                )
            except Exception as error:
                if i == last or not (
                    # AutoGen's Completion moves on after a 400 too (a prompt too long for
                    # this model may fit the next one).
                    classify(error).fall_back or isinstance(error, openai.BadRequestError)
                ):
                    raise
                logger.debug("config %d failed (%s); trying the next one", i, error)
                continue
            if response == _call.GAVE_UP:
                return response
            verdict = (
                True if filter_func is None else filter_func(context=context, response=response)
            )
            passed = bool(await verdict if inspect.isawaitable(verdict) else verdict)
            if passed or i == last:
                response["cost"] += rejected_cost
                response["config_id"] = i
                response["pass_filter"] = passed
                return response
            rejected_cost += response["cost"]
        raise RuntimeError("Should not reach here.")

    @classmethod
    async def _create_one(
        cls,
        context: dict[str, Any] | None,
        use_cache: bool,
        raise_on_ratelimit_or_timeout: bool,
        config: dict[str, Any],
    ) -> Any:
        request = build_request(
            context, config, chat_models=cls.chat_models, force_chat=cls._chat_only
        )
        path = cls._cache_dir(request.options) if use_cache else None
        if path is not None:
            hit = await _call.cache_lookup(path, request)
            if hit is not None and not (hit == _call.GAVE_UP and raise_on_ratelimit_or_timeout):
                cls._book_keeping(request.body, hit)
                return hit
        gave_up_on: list[str] = []
        response = await _call.send(
            request,
            retry_wait_time=float(request.options.get("retry_wait_time", cls.retry_wait_time)),
            max_retry_period=float(request.options.get("max_retry_period", cls.max_retry_period)),
            request_timeout=float(cls.request_timeout),
            raise_on_ratelimit_or_timeout=raise_on_ratelimit_or_timeout,
            on_give_up=gave_up_on.append,
        )
        if isinstance(response, dict):
            response["cost"] = cls._cost_with(response, request.options.get("price"))
            if path is not None:
                await _call.cache_store(path, request, response)
            cls._book_keeping(request.body, response)
        elif path is not None and gave_up_on == ["timeout"]:
            await _call.cache_store(path, request, response)  # AutoGen caches these
        return response

    @classmethod
    def _cache_dir(cls, options: Mapping[str, Any]) -> str | None:
        if "cache_seed" not in options:
            return cls.cache_path if cls.cache_seed is not None else None
        seed = options["cache_seed"]
        if seed is None:
            return None
        return os.path.join(os.path.dirname(cls.cache_path) or ".", str(seed))

    @classmethod
    def _book_keeping(cls, request: Mapping[str, Any], response: Any) -> None:
        history = cls._history_dict
        if history is None or not isinstance(response, dict):
            return
        _history.record(history, cls._count_create, request, response, compact=cls._history_compact)
        cls._count_create += 1

    # -- responses and cost -----------------------------------------------------------------

    @classmethod
    def is_chat_model(cls, model: str) -> bool:
        """Whether ``model`` is asked on the chat endpoint (always, for ``ChatCompletion``)."""
        return cls._chat_only or looks_like_chat_model(model, cls.chat_models)

    @classmethod
    def price_of(cls, model: str | None, price: Any = None) -> tuple[float, float] | None:
        """(prompt, completion) USD per 1000 tokens: ``price`` if given, else ``price1K``, else
        parley's current price table; None for a model none of them knows."""
        from .._cost import checked_price, model_price

        if price is not None:
            return checked_price(price)
        listed = cls.price1K.get(model) if model is not None else None
        if listed is not None:
            return (listed, listed) if isinstance(listed, (int, float)) else tuple(listed)  # type: ignore[return-value]
        return model_price(model)

    @classmethod
    def _cost_with(cls, response: Mapping[str, Any], price: Any) -> float:
        rates = cls.price_of(response.get("model"), price)
        if rates is None:
            return 0.0
        usage = response.get("usage") or {}
        return compute_cost(
            response.get("model"),
            usage.get("prompt_tokens") or 0,
            usage.get("completion_tokens") or 0,
            rates,
        )

    @classmethod
    def cost(cls, response: Any) -> float:
        """The USD cost of ``response`` by its model's price (0 for a model without one)."""
        return cls._cost_with(_as_dict(response), None)

    @classmethod
    def extract_text(cls, response: Any) -> list[str]:
        """The text of each choice (``text`` for completions, the message content for chat)."""
        choices = _as_dict(response)["choices"]
        if choices and "text" in choices[0]:
            return [choice.get("text", "") for choice in choices]
        return [choice["message"].get("content", "") for choice in choices]

    @classmethod
    def extract_text_or_function_call(cls, response: Any) -> list[Any]:
        """Like :meth:`extract_text`, but a chat message that calls a function (or tools) is
        returned whole."""
        choices = _as_dict(response)["choices"]
        if choices and "text" in choices[0]:
            return [choice.get("text", "") for choice in choices]
        return [
            choice["message"]
            if "function_call" in choice["message"] or "tool_calls" in choice["message"]
            else choice["message"].get("content", "")
            for choice in choices
        ]

    @classmethod
    def instantiate(
        cls,
        template: Any,
        context: dict[str, Any] | None = None,
        allow_format_str_template: bool | None = False,
    ) -> Any:
        """``template`` filled with ``context``: a str only with ``allow_format_str_template``,
        a callable called with the context dict."""
        return _templating.instantiate(template, context, bool(allow_format_str_template))

    # -- cache ------------------------------------------------------------------------------

    @classmethod
    def set_cache(cls, seed: Any = 41, cache_path_root: str | None = ".cache") -> None:
        """Cache responses under ``<cache_path_root>/<seed>`` (for this class and the classes
        that inherit it without setting their own)."""
        cls.cache_seed = seed
        cls.cache_path = f"{cache_path_root}/{seed}"

    @classmethod
    def clear_cache(cls, seed: Any = None, cache_path_root: str | None = ".cache") -> None:
        """Empty the cache of ``seed``; with no seed, delete the whole ``cache_path_root``."""
        run_sync(_call.clear_cache_dir(cache_path_root or ".cache", seed))

    # -- logging ----------------------------------------------------------------------------

    @classmethod
    def start_logging(
        cls,
        history_dict: dict[Any, Any] | None = None,
        compact: bool | None = True,
        reset_counter: bool | None = True,
    ) -> None:
        """Record every call (cached ones too) in ``history_dict`` (a new dict if None)."""
        cls._history_dict = {} if history_dict is None else history_dict
        cls._history_compact = bool(compact)
        if reset_counter or "_count_create" not in cls.__dict__:
            cls._count_create = 0

    @classmethod
    def stop_logging(cls) -> None:
        cls._history_dict = None
        cls._count_create = 0

    @classmethod
    def print_usage_summary(cls) -> None:
        """Print the total cost and the tokens per model of the logged calls."""
        from ...io import IOStream

        lines = _history.usage_summary_lines(cls._history_dict, cls._history_compact)
        IOStream.get_default().print("\n".join(lines), flush=True)

    # -- evaluation and tuning --------------------------------------------------------------

    @classmethod
    def test(
        cls,
        data: Sequence[dict[str, Any]],
        eval_func: Callable[..., Mapping[str, Any]] | None = None,
        use_cache: bool | None = True,
        agg_method: Any = "avg",
        return_responses_and_per_instance_result: bool | None = False,
        logging_level: int | None = logging.WARNING,
        *,
        max_concurrency: int = 8,
        **config: Any,
    ) -> Any:
        """Evaluate ``config`` on ``data``: ``eval_func(responses, **instance)`` per instance,
        aggregated per metric by ``agg_method``, plus ``cost`` and ``inference_cost``."""
        eval_func = eval_func or getattr(cls, "_eval_func", None)
        if eval_func is None:
            logger.warning("Please either provide a valid eval_func or do the test after the tune.")
            return None
        if not data:
            raise ValueError("test() needs at least one data instance, got an empty data set")
        old_level = logger.level
        logger.setLevel(logging.WARNING if logging_level is None else logging_level)
        try:

            async def one(instance: Mapping[str, Any]) -> Any:
                return await cls.a_create(dict(instance), use_cache, **config)

            responses = run_sync(gather_bounded(one, data, max_concurrency))
        finally:
            logger.setLevel(old_level)
        results, texts, cost = [], [], 0.0
        for instance, response in zip(data, responses, strict=True):
            cost += response["cost"]
            texts.append(cls.extract_text_or_function_call(response))
            results.append(eval_func(texts[-1], **instance))
        summary = _evaluate.aggregate(results, agg_method, cost, len(data))
        if return_responses_and_per_instance_result:
            return summary, results, texts
        return summary

    tune = classmethod(tune_settings)  # AutoGen's signature, with the class as first argument


class ChatCompletion(Completion):
    """:class:`Completion` that always uses the chat endpoint (a prompt becomes a user message)."""

    _chat_only: ClassVar[bool] = True
