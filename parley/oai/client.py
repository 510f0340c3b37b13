"""``OpenAIWrapper``: one completion call across a config list (AutoGen's ``autogen.oai.client``).

``create`` / ``a_create`` (one implementation; ``create`` runs it from sync code, ``a_create``
on the caller's own event loop) try the configs in order, each through small layers over its
``ModelClient`` (:mod:`parley.oai._layers`): cache, price, rate limit, retry. Trying the next
config on errors that mean "try elsewhere" and on responses ``filter_func`` rejects is the layer
above (:mod:`parley.oai._fallback`); the wrapper's usage summaries observe every response it
makes or finds in the cache.

Deliberate differences from AutoGen 0.2 (see README):
- caching is off unless ``cache_seed`` or ``cache`` is given (AutoGen defaults to seed 41), and
  responses are cached as JSON documents, never pickles (see :mod:`parley.oai._cache_io`), so
  AutoGen's cache entries are misses;
- retries are parley's own policy (``max_retries``, ``retry_budget``), with backoff, jitter and
  ``Retry-After``; the SDK's retries are off so a request is never retried twice over;
- when several configs all fail, one :class:`AllConfigsFailedError` lists every failure
  (a single config still raises its own error, or ``TimeoutError`` on a timeout, as AutoGen);
- a ``prompt`` becomes one user message on the chat endpoint;
- the caller's config dicts are never changed (AutoGen deletes ``api_rate_limit``);
- cancelling the task awaiting ``a_create`` aborts its HTTP request (the connection is closed).
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

from .._core import reports as _reports
from .._core.runtime import run_sync
from ..exceptions import ModelClientError
from . import _templating
from ._cache_io import LEGACY_CACHE_DIR
from ._config import (
    EXTRA_KWARGS,
    Entry,
    client_kwarg_names,
    validate_config_list,
    validate_entry,
)
from ._cost import OAI_PRICE1K, format_usage_summary, update_usage_summary
from ._fallback import Completed, Fallback
from ._layers import stack
from ._slot import Slot
from .model_client import ModelClient

__all__ = [
    "LEGACY_CACHE_DIR",
    "LEGACY_DEFAULT_CACHE_SEED",
    "OAI_PRICE1K",  # imported there in AutoGen, and read from there by some code
    "OPEN_API_BASE_URL_PREFIX",
    "TOOL_ENABLED",
    "ModelClient",
    "OpenAIWrapper",
    "PlaceHolderClient",
]

logger = logging.getLogger(__name__)

LEGACY_DEFAULT_CACHE_SEED = 41
OPEN_API_BASE_URL_PREFIX = "https://api.openai.com"
TOOL_ENABLED = True


class _ClientKwargNames:
    """``OpenAIWrapper.openai_kwargs``, computed from the installed SDK on first access."""

    def __get__(self, obj: object, owner: type | None = None) -> frozenset[str]:
        return client_kwarg_names()


class PlaceHolderClient:
    """What ``OpenAIWrapper._clients`` shows for a config whose ``model_client_cls`` is not
    registered yet (AutoGen's class): ``config`` is that entry. Its repr shows no value."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config

    def __repr__(self) -> str:
        return f"PlaceHolderClient(model_client_cls={self.config.get('model_client_cls')!r})"


class _ConfigListView(list[dict[str, Any]]):
    """``OpenAIWrapper._config_list``: a fresh list each read; its repr names keys only."""

    def __repr__(self) -> str:
        return f"<config list: {[sorted(entry) for entry in self]!r}>"


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
        entries = validate_config_list(config_list) if config_list else [Entry.of({})]
        self._slots = [Slot(i, e.under(base)) for i, e in enumerate(entries)]
        last = len(self._slots) - 1
        self._complete = Fallback(
            [(s, stack(s, last=s.index == last)) for s in self._slots], owner=self
        )
        self._complete.subscribe(self._count_usage)
        self.wrapper_id = id(self)
        self.total_usage_summary = None
        self.actual_usage_summary = None
        _reports.wrapper_created(self, config_list, base_config)
        for slot in self._slots:
            if slot.client is not None:
                _reports.client_created(slot.client, self, slot.entry.as_dict())

    # -- custom clients -------------------------------------------------------------------

    def register_model_client(self, model_client_cls: type, **kwargs: Any) -> None:
        """Activate the first config naming ``model_client_cls`` (by class name)."""
        name = model_client_cls.__name__
        for slot in self._slots:
            if slot.placeholder == name and slot.client is None:
                slot.client = model_client_cls(slot.entry.as_dict(), **kwargs)
                _reports.client_created(slot.client, self, slot.entry.as_dict())
                return
        if any(isinstance(slot.client, model_client_cls) for slot in self._slots):
            logger.warning("model client %s is already registered", name)
            return
        raise ValueError(
            f'model client "{name}" is being registered but was not found in the config_list. '
            f'Add "model_client_cls": "{name}" to the config entry it should serve.'
        )

    def pending_model_clients(self) -> list[str]:
        """The ``model_client_cls`` names of the configs still waiting for
        :meth:`register_model_client`, in config order (a name once per such config)."""
        return [s.placeholder for s in self._slots if s.placeholder and s.client is None]

    def adopt_model_clients(self, other: OpenAIWrapper) -> None:
        """Take over ``other``'s registered custom clients: each config of this wrapper that
        names the same ``model_client_cls`` as ``other``'s config at the same index gets the
        client registered there (for a wrapper rebuilt from a changed config)."""
        for mine, theirs in zip(self._slots, other._slots, strict=False):
            if (
                mine.placeholder is not None
                and mine.placeholder == theirs.placeholder
                and theirs.client is not None
            ):
                mine.client = theirs.client

    # -- AutoGen's internals, read by AutoGen's tests and extensions -----------------------

    @property
    def _clients(self) -> list[Any]:
        """Each config's model client, in config order (a :class:`PlaceHolderClient` for a
        custom client not registered yet). A fresh list: changing it changes nothing."""
        return [
            PlaceHolderClient(s.entry.as_dict()) if s.client is None else s.client
            for s in self._slots
        ]

    @property
    def _config_list(self) -> list[dict[str, Any]]:
        """Each config as AutoGen kept it: the entry's keys (over the wrapper's own non-client
        keys) without those that configure the client object, so no API key or endpoint.
        Fresh copies: changing them changes nothing."""
        return _ConfigListView(
            {k: v for k, v in s.entry.given.items() if k not in s.entry.client_kwargs}
            for s in self._slots
        )

    # -- completion -----------------------------------------------------------------------

    def create(self, **config: Any) -> Any:
        """Make a completion; see the module docstring for the flow."""
        return run_sync(self._create(config))

    async def a_create(self, **config: Any) -> Any:
        """The async form of :meth:`create` (the same implementation, on the caller's loop)."""
        return await self._create(config)

    async def _create(self, config: dict[str, Any]) -> Any:
        missing = self.pending_model_clients()
        if missing:
            raise ModelClientError(
                f"model client(s) {missing} are not activated; call register_model_client() for "
                "each before create()"
            )
        return await self._complete(config)

    # -- usage ----------------------------------------------------------------------------

    def _count_usage(self, done: Completed) -> None:
        usage = done.usage
        self.total_usage_summary = update_usage_summary(self.total_usage_summary, usage)
        if not done.cached:
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
