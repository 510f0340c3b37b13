"""Durable chats in Redis: several processes, or machines, share one store.

Per chat, under the store's ``prefix``: a hash ``chat:<id>`` (header, status, termination
reason, times), a hash ``steps:<id>`` (step key -> ``[seq, start, result, done]`` as JSON), and
the chat's id in the sorted set ``chats`` (by creation time), and the chat's lease, a hash
``lease:<id>`` holding its owner and when it expires unless renewed. Each write that must not race
(creating a chat, updating a step with the check that its run holds the lease, answering an
input, claiming a lease) is one Lua script, so it is atomic in the server; the lease's expiry
is the server's clock, so the hosts' clocks need not agree.

A write is acknowledged once Redis holds it in memory: it survives this process being killed.
Whether it survives the Redis server's own crash or a power cut is the server's persistence
setting (``appendonly yes`` with ``appendfsync always`` writes it to disk before replying).
"""

from __future__ import annotations

import json
from typing import Any

from ..exceptions import JournalIntegrityError
from ._lease import LEASE_SECONDS, RELEASED
from ._records import StepRow
from ._store import BaseChatStore

__all__ = ["RedisChatStore"]

_CREATE = """
if redis.call('HSETNX', KEYS[1], 'header', ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'status', 'running', 'created', ARGV[2], 'updated', ARGV[2],
           'mac', ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
return 1
"""
# The lease is a hash ``lease:<id>`` (owner, expires: the server's clock, in ms). A writer
# writes only while it is the owner (an expired lease nobody claimed is still its own); any
# other holder, or none (released), is returned and nothing is written.
_HOLD = """
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function holder(lease, owner)
  local cur = redis.call('HGET', lease, 'owner')
  if cur == owner then return nil end
  if not cur then return ARGV[#ARGV] end
  return cur
end
"""
# A step written again (its result) keeps the seq and start it was first written with.
_WRITE = (
    _HOLD
    + """
local other = holder(KEYS[2], ARGV[3])
if other then return other end
local new = cjson.decode(ARGV[2])
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old then
  local rec = cjson.decode(old)
  new[1] = rec[1]
  new[2] = rec[2]
end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(new))
return false
"""
)
_ANSWER = """
local old = redis.call('HGET', KEYS[1], ARGV[1])
if not old then return 0 end
local rec = cjson.decode(old)
if rec[4] == true then return 0 end
rec[3] = ARGV[2]
rec[4] = true
rec[5] = ARGV[3]
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(rec))
return 1
"""
_END = (
    _HOLD
    + """
local other = holder(KEYS[2], ARGV[1])
if other then return other end
redis.call('HSET', KEYS[1], 'status', 'done', 'updated', ARGV[2])
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'termination_reason', ARGV[4]) end
redis.call('DEL', KEYS[2])
return false
"""
)
_CLAIM = (
    _HOLD
    + """
local cur = redis.call('HGET', KEYS[1], 'owner')
local expires = tonumber(redis.call('HGET', KEYS[1], 'expires') or '0')
local now = now_ms()
if cur and cur ~= ARGV[1] and cur ~= ARGV[3] and expires > now then return cur end
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'expires', now + tonumber(ARGV[2]))
return false
"""
)
_RENEW = (
    _HOLD
    + """
if holder(KEYS[1], ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'expires', now_ms() + tonumber(ARGV[2]))
return 1
"""
)
_RELEASE = """
if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
"""
_TIMEOUT = 30.0


class RedisChatStore(BaseChatStore):
    """Durable chats in the Redis server at ``url`` (``redis://host:port/db``), under keys
    starting with ``prefix`` (``key`` and ``lease_seconds``: :class:`BaseChatStore`). Needs
    the ``redis`` package: ``pip install 'parley[redis]'``."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "parley:durable:",
        key: bytes | str | None = None,
        lease_seconds: float = LEASE_SECONDS,
    ) -> None:
        try:
            import redis
        except ImportError as e:
            raise ImportError("RedisChatStore needs redis: pip install 'parley[redis]'") from e
        if not isinstance(url, str) or not url:
            raise ValueError(f"url must be a redis:// URL, got {url!r}")
        super().__init__(key=key, lease_seconds=lease_seconds)
        self.url = url
        self.prefix = prefix
        # Parsing now makes a malformed URL fail here; the connection is made on first use.
        self._client: Any = redis.Redis.from_url(
            url, socket_timeout=_TIMEOUT, socket_connect_timeout=_TIMEOUT, decode_responses=True
        )
        sources = {
            "create": _CREATE,
            "write": _WRITE,
            "answer": _ANSWER,
            "end": _END,
            "claim": _CLAIM,
            "renew": _RENEW,
            "release": _RELEASE,
        }
        self._scripts = {
            name: self._client.register_script(source) for name, source in sources.items()
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

    def _lease(self, chat_id: str) -> str:
        return f"{self.prefix}lease:{chat_id}"

    def _ms(self, seconds: float) -> str:
        return str(max(1, round(seconds * 1000)))

    def read_chat(self, chat_id: str) -> tuple[str, str, str | None] | None:
        header, status, mac = self._client.hmget(self._chat(chat_id), ["header", "status", "mac"])
        return None if header is None else (str(header), str(status), mac)

    def create_chat(self, chat_id: str, header: str, mac: str, now: float) -> bool:
        keys = [self._chat(chat_id), f"{self.prefix}chats"]
        return bool(self._scripts["create"](keys=keys, args=[header, repr(now), chat_id, mac]))

    def sign_header(self, chat_id: str, mac: str) -> None:
        self._client.hset(self._chat(chat_id), "mac", mac)

    def read_steps(self, chat_id: str) -> list[StepRow]:
        rows: list[StepRow] = []
        for key, text in self._client.hgetall(self._steps(chat_id)).items():
            try:
                record = json.loads(text)
                seq, start, result, done = record[:4]
                mac = record[4] if len(record) > 4 else None  # an older parley wrote no MAC
            except (ValueError, TypeError) as e:
                raise JournalIntegrityError(chat_id, str(key), "is not a step record") from e
            # As stored: a value of the wrong type is refused by the MAC check (``_records``).
            rows.append((str(key), seq, start, result, bool(done), mac))
        rows.sort(key=lambda row: row[1] if type(row[1]) is int else -1)
        return rows

    def write_step(self, chat_id: str, row: StepRow, owner: str) -> str | None:
        key, seq, start, result, done, mac = row
        record = json.dumps([seq, start, result, done, mac])
        keys = [self._steps(chat_id), self._lease(chat_id)]
        holder = self._scripts["write"](keys=keys, args=[key, record, owner, RELEASED])
        return None if holder is None else str(holder)

    def answer_step(self, chat_id: str, key: str, result: str, mac: str) -> bool:
        answered = self._scripts["answer"](keys=[self._steps(chat_id)], args=[key, result, mac])
        return bool(answered)

    def end_chat(self, chat_id: str, reason: str | None, now: float, owner: str) -> str | None:
        keys = [self._chat(chat_id), self._lease(chat_id)]
        flag = "" if reason is None else "1"
        args = [owner, repr(now), flag, reason or "", RELEASED]
        holder = self._scripts["end"](keys=keys, args=args)
        return None if holder is None else str(holder)

    def chat_ids(self, status: str | None) -> list[str]:
        ids = [str(i) for i in self._client.zrange(f"{self.prefix}chats", 0, -1)]
        if status is None or not ids:
            return ids
        pipe = self._client.pipeline(transaction=False)
        for chat_id in ids:
            pipe.hget(self._chat(chat_id), "status")
        return [i for i, s in zip(ids, pipe.execute(), strict=True) if s == status]

    def claim_lease(self, chat_id: str, owner: str, seconds: float, dead: str) -> str | None:
        args = [owner, self._ms(seconds), dead, RELEASED]
        holder = self._scripts["claim"](keys=[self._lease(chat_id)], args=args)
        return None if holder is None else str(holder)

    def renew_lease(self, chat_id: str, owner: str, seconds: float) -> bool:
        args = [owner, self._ms(seconds), RELEASED]
        return bool(self._scripts["renew"](keys=[self._lease(chat_id)], args=args))

    def release_lease(self, chat_id: str, owner: str) -> None:
        self._scripts["release"](keys=[self._lease(chat_id)], args=[owner])
