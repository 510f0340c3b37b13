"""What both of parley's loggers do with a record: snapshot it cheaply on the caller's thread,
serialize it (credentials stripped) on the writer thread.

The snapshot is a shallow copy of the dicts and lists a chat may still change after the call
(a message, a request's message list); the objects inside are not copied, as they are not
changed once made. :func:`reporting` is set by :mod:`parley.runtime_logging`'s listener around
its calls, so that a logger can read the step being reported (its duration, its call id).
"""

from __future__ import annotations

import contextvars
import json
from typing import Any

from .._agent_protocol import is_agent
from ..usage import _run
from ._secrets import is_secret_key, scrub
from .logger_utils import to_dict

__all__ = [
    "chat_id",
    "dumps",
    "dumps_request",
    "dumps_response",
    "reported_step",
    "reporting",
    "snapshot",
    "snapshot_request",
    "source_name",
]

# Request keys that may hold credentials below their top level (headers, query parameters).
_WALKED = ("extra_headers", "default_headers", "extra_query", "default_query", "extra_body")

reporting: contextvars.ContextVar[Any] = contextvars.ContextVar("parley_logged_step", default=None)


def reported_step() -> Any:
    """The ``parley._events.Step`` being logged, when the listener is the caller."""
    return reporting.get()


def chat_id() -> str | None:
    """The id of the chat running in this context, if any."""
    run = _run.current_run()
    return run.id if run is not None else None


def source_name(source: Any) -> str:
    """A source's name: the string itself, an agent's ``name``, else its class name."""
    if isinstance(source, str):
        return source
    name = getattr(source, "name", None)
    return name if isinstance(name, str) else type(source).__name__


def agent_class(source: Any) -> tuple[str | None, str | None]:
    """``(module, class name)`` of an agent source; ``(None, None)`` for anything else."""
    if isinstance(source, str) or not is_agent(source):
        return None, None
    return type(source).__module__, type(source).__name__


def snapshot(value: Any) -> Any:
    """A copy of a dict's or list's first level (and of the dicts and lists in it)."""
    if type(value) is dict:
        return {k: _level(v) for k, v in value.items()}
    if type(value) is list:
        return [_level(v) for v in value]
    return value


def _level(value: Any) -> Any:
    if type(value) is dict:
        return dict(value)
    if type(value) is list:
        return list(value)
    return value


def _non_serializable(obj: Any) -> str:
    to_json = getattr(obj, "to_json", None)
    if callable(to_json):
        return str(to_json())
    return f"<<non-serializable: {type(obj).__qualname__}>>"


def dumps(value: Any, **to_dict_args: Any) -> str:
    """``value`` as JSON, credentials stripped (by key, then by remembered value)."""
    if not to_dict_args and _plain(value, 0):
        # Most records (an event's message, reply, flags) are plain JSON data without a
        # credential's key: serialized by json directly, in C, instead of walked and copied.
        try:
            return scrub(json.dumps(value))
        except (TypeError, ValueError):
            pass  # a value json cannot take (a set, an object): walked below
    data = to_dict(value, **to_dict_args)
    return scrub(json.dumps(data, default=_non_serializable))


_PLAIN_DEPTH = 16


_plain_keys: dict[str, bool] = {}  # key -> whether it is not a credential's (the same few keys)


def _plain(value: Any, depth: int) -> bool:
    """Whether ``value``'s dicts and lists (nested less than ``_PLAIN_DEPTH`` deep) have str
    keys, none of them a credential's."""
    kind = type(value)
    if kind is dict:
        if depth >= _PLAIN_DEPTH:
            return False
        known = _plain_keys
        for key, item in value.items():
            ok = known.get(key) if type(key) is str else False
            if ok is None:
                ok = not is_secret_key(key)
                if len(known) < 4096:
                    known[key] = ok
            if not ok:
                return False
            if type(item) in (dict, list, tuple) and not _plain(item, depth + 1):
                return False
        return True
    if kind is list or kind is tuple:
        if depth >= _PLAIN_DEPTH:
            return False
        return all(type(i) not in (dict, list, tuple) or _plain(i, depth + 1) for i in value)
    return True


def _walked(obj: Any) -> Any:
    return to_dict(obj)


class _Message:
    """A request message, copied when first seen and serialized once (on a writer thread)."""

    __slots__ = ("copy", "text")

    def __init__(self, source: Any) -> None:
        self.copy = _level(source)
        self.text: str | None = None

    def json(self) -> str:
        text = self.text
        if text is None:
            text = self.text = json.dumps(self.copy, default=_walked)
        return text


# A chat's requests repeat its history: each holds the previous one's messages plus one or
# two new ones. Snapshotting and serializing the whole list for every request would cost
# O(n) Python work per turn; instead the last request of each conversation is remembered
# (by its first message's id, the system message parley's request memo keeps) and, when the
# new request starts with messages equal to it (one list compare, in C), only the new
# messages are copied, and later serialized.
_conversations: dict[int, tuple[list[Any], list[_Message]]] = {}
_CONVERSATIONS_MAX = 256


def _messages(messages: list[Any]) -> list[_Message]:
    key = id(messages[0]) if messages else 0
    known = _conversations.get(key)
    if known is not None:
        copies, snapshots = known
        n = len(copies)
        if n <= len(messages) and messages[:n] == copies:
            new = [_Message(m) for m in messages[n:]]
            if not new:
                return snapshots
            copies = copies + [m.copy for m in new]
            snapshots = snapshots + new
            _conversations[key] = (copies, snapshots)
            return snapshots
    if len(_conversations) >= _CONVERSATIONS_MAX:
        _conversations.clear()
    snapshots = [_Message(m) for m in messages]
    _conversations[key] = ([m.copy for m in snapshots], snapshots)
    return snapshots


def snapshot_request(request: Any) -> Any:
    """:func:`snapshot` of a model request, its messages shared with the conversation's
    previous request's where they are equal (see :class:`_Message`)."""
    if type(request) is not dict or type(request.get("messages")) is not list:
        return snapshot(request)
    out = {k: _level(v) for k, v in request.items() if k != "messages"}
    out["messages"] = _messages(request["messages"])
    return out


_MESSAGES_MARK = "\x00parley:messages\x00"


def dumps_request(request: Any) -> str:
    """A model request (from :func:`snapshot_request`) as JSON: credentials stripped at the top
    level and in its headers and query; each message serialized by ``json`` directly, once."""
    if not isinstance(request, dict):
        return dumps(request)
    clean = {k: v for k, v in request.items() if not is_secret_key(k)}
    for key in _WALKED:
        if key in clean:
            clean[key] = to_dict(clean[key])
    messages = clean.get("messages")
    if type(messages) is list:
        clean["messages"] = _MESSAGES_MARK
        texts = [
            m.json() if type(m) is _Message else json.dumps(m, default=_walked) for m in messages
        ]
        body = json.dumps(clean, default=_walked).replace(
            json.dumps(_MESSAGES_MARK), "[" + ", ".join(texts) + "]", 1
        )
    else:
        body = json.dumps(clean, default=_walked)
    return scrub(body)


def dumps_response(response: Any) -> str:
    """A model response as JSON (a pydantic model is dumped by pydantic, in Rust; the callable
    parley sets on responses, ``message_retrieval_function``, is left out)."""
    dump_json = getattr(response, "model_dump_json", None)
    if callable(dump_json):
        try:
            return scrub(
                dump_json(exclude={"message_retrieval_function"}, fallback=_non_serializable)
            )
        except Exception:
            pass
    dump = getattr(response, "model_dump", None)
    if callable(dump):
        try:
            data = dump()
        except Exception:
            pass
        else:
            return scrub(json.dumps(data, default=_non_serializable))
    return dumps(response)
