"""Calling a provider's SDK from a native client (``parley.oai.anthropic``, ``groq``, ...).

What every such call needs, whichever SDK it is:

- :func:`per_loop` (and :class:`PooledClient`, a base class over it): one SDK client per
  event loop. An async SDK client owns a connection pool
  bound to the loop that opened it: async callers use one on their own loop, sync callers one
  on parley's runner loop; clients with the same settings are shared on a loop (a hundred agents
  on one endpoint use one pool) and closed when their loop shuts down.
- :func:`call_kwargs`: a request's keys split into the SDK method's keyword arguments and
  ``extra_body`` (what a given SDK version does not declare still reaches the API, as the
  JSON body's keys).
- :func:`sdk_errors`: around an SDK call, the SDK's errors become parley's
  :class:`~parley.exceptions.ModelAPIError` tree, raised from them: each provider reads its
  own SDK's errors, a failure to reach the server is recognized here once for all;
  :func:`stainless_error` is that reading for the Stainless-generated SDKs (anthropic, groq,
  together, cerebras all share openai's error classes, each under its own module).
  (:func:`api_error` scrubs the messages of the configured credentials.)
- :func:`root_url`: a configured ``base_url`` without the path the SDK appends itself.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import AsyncIterable, Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ..._core.runtime import loop_resource
from ...exceptions import ModelAPIError, ParleyError
from .._reply_checks import reading_reply
from .._retry import parse_retry_after
from .._transport_errors import is_connection_failure
from ._base import ProviderClient, api_error, collect

__all__ = [
    "PooledClient",
    "aclose",
    "call_kwargs",
    "per_loop",
    "root_url",
    "sdk_errors",
    "stainless_error",
    "stainless_reply",
]


async def aclose(client: Any) -> None:
    """Close an SDK's client or stream: each is an async context manager that closes on exit;
    not all of them have a close(), nor an async one."""
    exit_ = getattr(client, "__aexit__", None)
    result = exit_(None, None, None) if exit_ is not None else client.close()
    if inspect.isawaitable(result):
        await result


def per_loop(
    provider: str,
    settings: Mapping[str, Any],
    make: Callable[[], Any],
    own_key: object,
    close: Callable[[Any], Awaitable[None]] = aclose,
) -> Any:
    """The running loop's SDK client for ``provider`` with ``settings``, made by ``make()`` on
    first use and closed by ``close`` when the loop shuts down; ``own_key`` (an object the
    caller keeps) when a setting cannot be compared (a callable, an http client). A client over
    the caller's own ``http_client`` is never closed by parley."""
    try:
        key: object = (provider, json.dumps(sorted(settings.items()), sort_keys=True))
    except TypeError:
        key = own_key
    own_http = settings.get("http_client") is not None
    return loop_resource(key, make, _leave_open if own_http else close)


class PooledClient(ProviderClient):
    """A native client over an async SDK client: subclasses build one in :meth:`_new_sdk` from
    ``self._config`` and close it in :meth:`_close_sdk`; :meth:`_sdk` is the running loop's
    (see :func:`per_loop`)."""

    def _sdk(self) -> Any:
        return per_loop(self.PROVIDER, self._config, self._new_sdk, self._own_key, self._close_sdk)

    def _new_sdk(self) -> Any:
        raise NotImplementedError

    async def _close_sdk(self, client: Any) -> None:
        await aclose(client)


async def _leave_open(client: Any) -> None:
    """A client over the caller's own ``http_client``: closing it would close theirs."""


@functools.lru_cache(maxsize=64)
def _declared(method: Callable[..., Any]) -> frozenset[str]:
    try:
        return frozenset(inspect.signature(method).parameters)
    except (TypeError, ValueError):
        return frozenset()


def call_kwargs(method: Callable[..., Any], body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` as keyword arguments of the SDK ``method``: the keys it declares as they are,
    the others under ``extra_body`` (merged into the JSON body by the SDK)."""
    declared = _declared(getattr(method, "__func__", method))
    kwargs: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in body.items():
        (kwargs if key in declared else extra)[key] = value
    if extra:
        kwargs["extra_body"] = {**extra, **kwargs.get("extra_body", {})}
    return kwargs


def root_url(base_url: Any, *suffixes: str) -> Any:
    """``base_url`` without a trailing ``suffix`` the SDK adds to its paths itself (an OpenAI-
    style ``https://host/v1`` is ``https://host`` for an SDK that posts to ``/v1/...``)."""
    if not isinstance(base_url, str):
        return base_url
    url = base_url.rstrip("/")
    for suffix in suffixes:
        if url.endswith(suffix):
            return url[: -len(suffix)]
    return url


def _error_code(body: Any) -> str | None:
    error = body.get("error") if isinstance(body, Mapping) else None
    if isinstance(error, Mapping):
        code = error.get("code") or error.get("type")
        return str(code) if code is not None else None
    return None


@contextmanager
def sdk_errors(provider: str, read: Callable[[Exception], Exception | None]) -> Iterator[None]:
    """Raise the errors of the SDK call inside the block as parley's, ``from`` the SDK's:
    ``read(error)`` is the provider's reading of its SDK's errors (None: not one of them); a
    failure to reach the server that it does not know (the HTTP library's, let through by the
    SDK) is a ModelConnectionError. parley's own errors, and any other, pass unchanged."""
    try:
        yield
    except ParleyError:
        raise
    except Exception as e:
        error = read(e)
        if error is None and is_connection_failure(e):
            error = api_error(provider, f"no answer: {type(e).__name__}: {e}", status=None)
        if error is None:
            raise
        raise error from e


async def stainless_reply(
    provider: str,
    sdk: Any,
    call: Awaitable[Any],
    whole: Callable[[Any], Any],
    pieces: Callable[[Any], AsyncIterable[Any]] | None,
    params: Mapping[str, Any],
) -> Any:
    """The reply of a Stainless SDK's request ``call``: ``whole(reply)``, or with ``pieces`` the
    stream's chunks (``pieces(reply)``) collected and the stream closed. The SDK checks the
    request, parley the reply (:func:`reading_reply`); the SDK's API errors become parley's
    (:func:`stainless_error`)."""
    with sdk_errors(provider, functools.partial(stainless_error, provider, sdk)):
        with reading_reply(provider, shapes=False):
            reply = await call
        with reading_reply(provider):
            if pieces is None:
                return whole(reply)
            try:
                return await collect(pieces(reply), params)
            finally:
                await reply.close()


def stainless_error(provider: str, sdk: Any, error: Exception) -> ModelAPIError | None:
    """``error`` of a Stainless SDK module ``sdk`` as a ModelAPIError (None if it is not one of
    the SDK's API errors); raise it ``from error``."""
    if isinstance(error, sdk.APIStatusError):
        headers = {k.lower(): v for k, v in error.response.headers.items()}
        return api_error(
            provider,
            str(error.message),
            status=int(error.status_code),
            headers=headers,
            code=_error_code(error.body),
            retry_after=parse_retry_after(headers),
        )
    if isinstance(error, sdk.APITimeoutError):
        return api_error(provider, "the request timed out", status=None)
    if isinstance(error, sdk.APIConnectionError):
        return api_error(provider, f"connection failed: {error}", status=None)
    return None
