"""Durable chats in Redis: several processes, or machines, share one store.

Per chat, under the store's ``prefix``: a hash ``chat:<id>`` (header, status, termination
reason, times), a hash ``steps:<id>`` (step key -> ``[seq, start, result, done]`` as JSON), and
the chat's id in the sorted set ``chats`` (by creation time). Each write that must not race
(creating a chat, updating a step, answering an input) is one Lua script, so it is atomic in
the server.

A write is acknowledged once Redis holds it in memory: it survives this process being killed.
Whether it survives the Redis server's own crash or a power cut is the server's persistence
setting (``appendonly yes`` with ``appendfsync always`` writes it to disk before replying).
"""

from __future__ import annotations

import json
from typing import Any

from ._store import BaseChatStore, StepRow

__all__ = ["RedisChatStore"]

_CREATE = """
if redis.call('HSETNX', KEYS[1], 'header', ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'status', 'running', 'created', ARGV[2], 'updated', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
return 1
"""
# A step written again (its result) keeps the seq and start it was first written with.
_WRITE = """
local new = cjson.decode(ARGV[2])
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old then
  local rec = cjson.decode(old)
  new[1] = rec[1]
  new[2] = rec[2]
end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(new))
return 1
"""
_ANSWER = """
local old = redis.call('HGET', KEYS[1], ARGV[1])
if not old then return 0 end
local rec = cjson.decode(old)
if rec[4] == true then return 0 end
rec[3] = ARGV[2]
rec[4] = true
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(rec))
return 1
"""
_TIMEOUT = 30.0


class RedisChatStore(BaseChatStore):
    """Durable chats in the Redis server at ``url`` (``redis://host:port/db``), under keys
    starting with ``prefix``. Needs the ``redis`` package: ``pip install 'parley[redis]'``."""

    def __init__(self, url: str, *, prefix: str = "parley:durable:") -> None:
        try:
            import redis
        except ImportError as e:
            raise ImportError("RedisChatStore needs redis: pip install 'parley[redis]'") from e
        if not isinstance(url, str) or not url:
            raise ValueError(f"url must be a redis:// URL, got {url!r}")
        self.url = url
        self.prefix = prefix
        # Parsing now makes a malformed URL fail here; the connection is made on first use.
        self._client: Any = redis.Redis.from_url(
            url, socket_timeout=_TIMEOUT, socket_connect_timeout=_TIMEOUT, decode_responses=True
        )
        self._scripts = {
            name: self._client.register_script(source)
            for name, source in (("create", _CREATE), ("write", _WRITE), ("answer", _ANSWER))
        }

    @property
    def location(self) -> str:
        return f"{self.url} ({self.prefix}*)"

    def close(self) -> None:
        """Close the connections (the next call opens them again)."""
        self._client.close()

    def _chat(self, chat_id: str) -> str:
        return f"{self.prefix}chat:{chat_id}"

    def _steps(self, chat_id: str) -> str:
        return f"{self.prefix}steps:{chat_id}"

    def _read_chat(self, chat_id: str) -> tuple[str, str] | None:
        header, status = self._client.hmget(self._chat(chat_id), ["header", "status"])
        return None if header is None else (str(header), str(status))

    def _create_chat(self, chat_id: str, header: str, now: float) -> bool:
        keys = [self._chat(chat_id), f"{self.prefix}chats"]
        return bool(self._scripts["create"](keys=keys, args=[header, repr(now), chat_id]))

    def _read_steps(self, chat_id: str) -> list[StepRow]:
        rows = []
        for key, text in self._client.hgetall(self._steps(chat_id)).items():
            seq, start, result, done = json.loads(text)
            rows.append((str(key), int(seq), start, result, bool(done)))
        rows.sort(key=lambda row: row[1])
        return rows

    def _write_step(self, chat_id: str, row: StepRow) -> None:
        key, seq, start, result, done = row
        record = json.dumps([seq, start, result, done])
        self._scripts["write"](keys=[self._steps(chat_id)], args=[key, record])

    def _answer_step(self, chat_id: str, key: str, result: str) -> bool:
        answered = self._scripts["answer"](keys=[self._steps(chat_id)], args=[key, result])
        return bool(answered)

    def _end_chat(self, chat_id: str, reason: str | None, now: float) -> None:
        fields: dict[str, str] = {"status": "done", "updated": repr(now)}
        if reason is not None:
            fields["termination_reason"] = reason
        self._client.hset(self._chat(chat_id), mapping=fields)

    def _chat_ids(self, status: str | None) -> list[str]:
        ids = [str(i) for i in self._client.zrange(f"{self.prefix}chats", 0, -1)]
        if status is None or not ids:
            return ids
        pipe = self._client.pipeline(transaction=False)
        for chat_id in ids:
            pipe.hget(self._chat(chat_id), "status")
        return [i for i, s in zip(ids, pipe.execute(), strict=True) if s == status]
