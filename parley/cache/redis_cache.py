"""A cache in Redis (AutoGen's ``autogen.cache.redis_cache``), over redis-py."""

from __future__ import annotations

import logging
from typing import Any

from . import _json_values
from .abstract_cache_base import ClosingCache

__all__ = ["RedisCache"]

logger = logging.getLogger(__name__)

# Defaults for the connection, used unless the URL sets them (e.g. ?socket_timeout=5): a
# dead or unreachable server should fail a call, not hang it.
_SOCKET_CONNECT_TIMEOUT = 10.0
_SOCKET_TIMEOUT = 30.0


class RedisCache(ClosingCache):
    """A cache shared through the Redis server at ``redis_url``.

    Keys are ``autogen:<seed>:<key>``, as in AutoGen. Values must be JSON data (``set`` raises
    ``TypeError`` naming the type of anything else) and are stored as JSON text; ``get`` returns
    the decoded JSON. Nothing is ever unpickled: a value that is not JSON (AutoGen's pickles
    among them) is a miss, with a logged warning, so anyone else who can write to the server
    cannot run code in this process.

    ``close`` disconnects; the next ``get`` or ``set`` connects again.

    The client comes from ``redis.Redis.from_url(redis_url, ...)`` (parley adds connect and
    socket timeouts, which a ``?socket_timeout=`` in the URL overrides), looked up through this
    module's ``redis`` attribute, AutoGen's import, which code patches:
    ``mock.patch("autogen.cache.redis_cache.redis.Redis.from_url")``.
    """

    def __init__(self, seed: str | int, redis_url: str) -> None:
        redis = _import_redis()
        if not isinstance(redis_url, str) or not redis_url:
            raise ValueError(f"redis_url must be a non-empty URL string, got {redis_url!r}")
        self.seed = str(seed)
        self._redis = redis
        self._url = redis_url
        # Parses the URL now so that a malformed one fails here; no connection is made yet.
        self._client: Any = self._connect()

    @property
    def cache(self) -> Any:
        """The ``redis.Redis`` client (created again if the cache was closed)."""
        if self._client is None:
            self._client = self._connect()
        return self._client

    def get(self, key: str, default: Any = None) -> Any:
        """The value stored under ``key``, or ``default``."""
        try:
            # A URL with decode_responses=true has redis-py decode the bytes itself.
            raw = self.cache.get(self._prefixed_key(key))
        except UnicodeDecodeError:
            raw = b"\xff"  # not UTF-8, so not JSON: refused below like any other such entry
        if raw is None:
            return default
        return _json_values.read(raw, default, logger, f"Redis cache (seed {self.seed!r})", key)

    def set(self, key: str, value: Any) -> None:
        """Store ``value`` (JSON data) under ``key``."""
        self.cache.set(self._prefixed_key(key), _json_values.dumps(value, "RedisCache"))

    def close(self) -> None:
        """Disconnect; safe to call more than once."""
        client, self._client = self._client, None
        if client is not None:
            client.close()

    def __repr__(self) -> str:
        # The URL may carry a password, so it is left out.
        return f"RedisCache(seed={self.seed!r})"

    def _prefixed_key(self, key: str) -> str:
        return f"autogen:{self.seed}:{key}"

    def _connect(self) -> Any:
        return self._redis.Redis.from_url(
            self._url,
            socket_connect_timeout=_SOCKET_CONNECT_TIMEOUT,
            socket_timeout=_SOCKET_TIMEOUT,
        )


def _import_redis() -> Any:
    try:
        import redis
    except ImportError as exc:
        raise ImportError(
            'RedisCache needs the redis package: pip install "parley[redis]"'
        ) from exc
    return redis


def __getattr__(name: str) -> Any:
    # AutoGen imported redis at the top of this module, and code patches it through here
    # (``mock.patch("autogen.cache.redis_cache.redis.Redis.from_url")``). It is imported on
    # first use instead: redis is optional, and importing parley stays light.
    if name == "redis":
        return _import_redis()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
