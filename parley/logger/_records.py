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
    data = to_dict(value, **to_dict_args)
    return scrub(json.dumps(data, default=_non_serializable))


def _walked(obj: Any) -> Any:
    return to_dict(obj)


def dumps_request(request: Any) -> str:
    """A model request as JSON: credentials stripped at the top level and in its headers and
    query; the messages (plain JSON, and most of the bytes) serialized by ``json`` directly,
    so that long chats stay cheap to log."""
    if not isinstance(request, dict):
        return dumps(request)
    clean = {k: v for k, v in request.items() if not is_secret_key(k)}
    for key in _WALKED:
        if key in clean:
            clean[key] = to_dict(clean[key])
    return scrub(json.dumps(clean, default=_walked))


def dumps_response(response: Any) -> str:
    """A model response as JSON (a pydantic model is dumped by pydantic)."""
    dump = getattr(response, "model_dump", None)
    if callable(dump):
        try:
            data = dump()
        except Exception:
            pass
        else:
            return scrub(json.dumps(data, default=_non_serializable))
    return dumps(response)
