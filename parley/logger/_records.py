"""What both of parley's loggers do with a record: snapshot it cheaply on the caller's thread,
serialize it (credentials stripped) on the writer thread.

The snapshot is a shallow copy of the dicts and lists a chat may still change after the call
(a message, a request's message list); the objects inside are not copied, as they are not
changed once made. :data:`from_listener` and :func:`reporting` are set by :mod:`parley.runtime_logging`'s listener around
its calls, so that a logger can read the step being reported (its duration, its call id).
"""

from __future__ import annotations

import contextvars
import itertools
import json
from typing import Any

from .._agent_protocol import is_agent
from .._core.events import Step
from .._plain import SealedMessages
from ..usage import _run
from . import _secrets
from ._schema import MESSAGES_MARK
from ._secrets import is_secret_item, is_secret_key, maybe_secret_key, scrub
from .logger_utils import to_dict

__all__ = [
    "chat_id",
    "client_class",
    "dumps",
    "dumps_request",
    "dumps_response",
    "dumps_state",
    "encode_request",
    "encode_response",
    "encode_state",
    "from_listener",
    "reported_step",
    "reporting",
    "snapshot",
    "snapshot_request",
    "source_name",
]

# Request keys that may hold credentials below their top level (headers, query parameters).
_WALKED = ("extra_headers", "default_headers", "extra_query", "default_query", "extra_body")

reporting: contextvars.ContextVar[Step | None] = contextvars.ContextVar(
    "parley_logged_step", default=None
)
# True while the listener makes its calls: the records of chats wait for their batch. A call
# from anywhere else (a user's, an extension's) returns once its record is written, as
# AutoGen's did, so that a query or a read of the file right after it finds the record.
from_listener: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "parley_logging_from_listener", default=False
)


def reported_step() -> Step | None:
    """The ``parley._core.events.Step`` being logged, when the listener is the caller."""
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


def client_class(client: Any) -> str:
    """A model client's class name as AutoGen logged it: AutoGen logged the openai SDK's
    client, ``OpenAI`` or ``AzureOpenAI``, where parley has its ``OpenAIClient``; the other
    providers' clients have AutoGen's names already."""
    cls = type(client)
    if cls.__name__ == "OpenAIClient" and cls.__module__.startswith("parley."):
        return "AzureOpenAI" if getattr(client, "azure", False) else "OpenAI"
    return cls.__name__


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
    return scrub(_encode_any(data))


# Most events of a chat are a reply function that did not reply: the same few keys with the
# same short strings, flags and Nones, turn after turn. Their JSON is made once (per set of
# remembered secrets); a state holding anything else is serialized every time.
_STATES_MAX = 1024
_MEMO_TEXT = 256
_states: dict[tuple[Any, ...], tuple[frozenset[str], str]] = {}


def _memoizable(state: dict[str, Any]) -> bool:
    """Whether every value is None, a bool or a short str (no int: ``True == 1`` would share
    a memo key with a different text)."""
    for value in state.values():
        if (value is not None and value is not True and value is not False) and (
            type(value) is not str or len(value) > _MEMO_TEXT
        ):
            return False
    return True


def dumps_state(state: dict[str, Any]) -> str:
    """An event's keyword arguments as JSON (:func:`dumps`), memoized (see above)."""
    if not _memoizable(state):
        return dumps(state)
    key = tuple(state.items())
    secrets = _secrets.known()
    known = _states.get(key)
    if known is not None and known[0] is secrets:
        return known[1]
    text = dumps(state)
    if len(_states) >= _STATES_MAX:
        _states.clear()
    _states[key] = (secrets, text)
    return text


_PLAIN_DEPTH = 16


# key -> whether it is surely not a credential's (the same few keys); a key with the word "key"
# in it is checked with its value.
_plain_keys: dict[str, bool] = {}


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
                ok = not is_secret_key(key) and not maybe_secret_key(key)
                if len(known) < 4096:
                    known[key] = ok
            if not ok and (type(key) is not str or is_secret_item(key, item)):
                return False
            if type(item) in (dict, list, tuple) and not _plain(item, depth + 1):
                return False
        return True
    if kind is list or kind is tuple:
        if depth >= _PLAIN_DEPTH:
            return False
        return all(type(i) not in (dict, list, tuple) or _plain(i, depth + 1) for i in value)
    return True


_state_texts: dict[tuple[Any, ...], str] = {}


def encode_state(state: dict[str, Any]) -> str | None:
    """An event's keyword arguments as JSON text, *not yet scrubbed* (the writer scrubs), when
    that is cheap enough for the caller's thread: the same few short values (memoized, see
    :func:`dumps_state`), or plain JSON data (encoded by ``json``, in C). None otherwise: the
    writer serializes a :func:`snapshot` then.

    Text is what a queued record should hold: a record of strings and numbers only is not
    tracked by the garbage collector, so however long it waits for its batch it never adds to
    the collections that the chat's own objects pay for (see ``_writer``).
    """
    if _memoizable(state):
        key = tuple(state.items())
        text = _state_texts.get(key)
        if text is None:
            if not _plain(state, 0):  # a credential's key: dropped by the writer's walk
                return None
            text = json.dumps(state)
            if len(_state_texts) >= _STATES_MAX:
                _state_texts.clear()
            _state_texts[key] = text
        return text
    if not _plain(state, 0):
        return None
    try:
        return json.dumps(state)
    except (TypeError, ValueError):
        return None


def _walked(obj: Any) -> Any:
    return to_dict(obj)


# ``json.dumps(x, default=f)`` builds a new encoder on every call; these are built once.
_encode_walked = json.JSONEncoder(default=_walked).encode
_encode_any = json.JSONEncoder(default=_non_serializable).encode


_serials = itertools.count(1)


class _Transcript:
    """The messages a conversation's requests have sent so far, in order, append-only.

    A chat's requests repeat its history: each holds the previous one's messages plus one or
    two new ones. Snapshotting and serializing the whole list for every request would cost
    O(n) Python work per turn (O(n^2) per chat); instead each conversation keeps one
    transcript (found by its first message's id, the system message parley's request memo
    keeps). A request whose messages start with the transcript's (one list compare, in C)
    only appends its new messages, and is snapshotted as a prefix of the transcript; its
    JSON extends the longest prefix serialized so far by the new messages' text (a string
    concatenation, in C). The loop's thread appends, a writer thread reads prefixes: a prefix
    never changes once taken.

    A message is kept in parallel lists (its copy, its JSON text once serialized, the secrets
    that text was scrubbed of), not as an object of its own: a transcript lives as long as its
    conversation, and per-message objects would be so many more for the garbage collector to
    promote and walk (see ``_writer``).
    """

    __slots__ = ("copies", "joined", "scrubbed_for", "sealed", "serial", "sources", "texts")

    def __init__(self) -> None:
        self.serial = next(_serials)  # the SQLite logger's transcript number
        self.sources: list[Any] = []  # the messages as the requests held them
        self.sealed = True  # whether every source came in a SealedMessages
        self.copies: list[Any] = []
        self.texts: list[str | None] = []  # JSON, scrubbed of ``scrubbed_for`` (writer thread)
        self.scrubbed_for: list[frozenset[str] | None] = []
        self.joined: tuple[frozenset[str], int, str] = (frozenset(), 0, "")

    def add(self, sources: list[Any], sealed: bool) -> None:
        self.sealed = self.sealed and sealed
        self.sources.extend(sources)
        self.copies.extend([_level(m) for m in sources])
        # Texts before the count that readers go by (copies): a reader never sees a copy
        # without its text slot.
        self.texts.extend([None] * len(sources))
        self.scrubbed_for.extend([None] * len(sources))

    def __len__(self) -> int:
        return len(self.copies)

    def message_json(self, i: int) -> str:
        """Message ``i`` as JSON, serialized and scrubbed once (scrubbed again if a secret was
        remembered since)."""
        secrets, text = _secrets.known(), self.texts[i]
        if text is None:
            text = scrub(_encode_walked(self.copies[i]), secrets)
        elif self.scrubbed_for[i] is not secrets:
            text = scrub(text, secrets)
        else:
            return text
        # Text first: a reader seeing the new set with the old text would skip a scrub.
        self.texts[i], self.scrubbed_for[i] = text, secrets
        return text

    def json(self, n: int) -> str:
        """The JSON array of the first ``n`` messages, scrubbed."""
        secrets = _secrets.known()
        scrubbed_for, done, text = self.joined  # one read: another writer may replace it
        one = self.message_json
        if n < done:
            return "[" + ", ".join([one(i) for i in range(n)]) + "]"
        if scrubbed_for is not secrets:
            text = scrub(text, secrets)
        rest = ", ".join([one(i) for i in range(done, n)])
        if not done:
            text = rest
        elif rest:
            text = text + ", " + rest
        self.joined = (secrets, n, text)
        return "[" + text + "]"


class _Prefix:
    """A request's messages: the first ``n`` of a transcript."""

    __slots__ = ("n", "transcript")

    def __init__(self, transcript: _Transcript, n: int) -> None:
        self.transcript = transcript
        self.n = n

    def json(self) -> str:
        return self.transcript.json(self.n)


_conversations: dict[int, _Transcript] = {}
_CONVERSATIONS_MAX = 256


def _messages(messages: list[Any]) -> _Prefix:
    sealed = type(messages) is SealedMessages
    key = id(messages[0]) if messages else 0
    known = _conversations.get(key)
    if known is not None:
        n = len(known)
        if n <= len(messages) and (
            # Sealed messages never change: compared with the sources, the same objects (the
            # rule) are equal at a pointer compare, not a dict compare.
            (sealed and known.sealed and messages[:n] == known.sources)
            or messages[:n] == known.copies
        ):
            if n < len(messages):
                known.add(messages[n:], sealed)
            return _Prefix(known, len(messages))
    if len(_conversations) >= _CONVERSATIONS_MAX:
        _conversations.clear()
    transcript = _conversations[key] = _Transcript()
    transcript.add(messages, sealed)
    return _Prefix(transcript, len(messages))


def snapshot_request(request: Any) -> Any:
    """:func:`snapshot` of a model request, its messages a prefix of their conversation's
    transcript (see :class:`_Transcript`)."""
    if type(request) is not dict or type(request.get("messages")) not in (list, SealedMessages):
        return snapshot(request)
    out = {k: _level(v) for k, v in request.items() if k != "messages"}
    out["messages"] = _messages(request["messages"])
    return out


_MESSAGES_JSON = json.dumps(MESSAGES_MARK)


def encode_request(request: Any) -> tuple[str, _Transcript | None, int]:
    """A model request as JSON text (*not yet scrubbed*) with a mark instead of its messages,
    its messages' transcript and their count; or, when its messages are not a transcript's,
    its whole JSON (scrubbed), None and 0. Runs on the caller's thread, so that the queued
    record holds text, not the request's objects (see :func:`encode_state`)."""
    if type(request) is dict and type(request.get("messages")) in (list, SealedMessages):
        clean = _clean_request(request)
        prefix = _messages(clean["messages"])
        clean["messages"] = MESSAGES_MARK
        return _encode_walked(clean), prefix.transcript, prefix.n
    return dumps_request(snapshot_request(request)), None, 0


def encode_response(response: Any) -> str:
    """A model response as JSON text, *not yet scrubbed* (see :func:`encode_request`)."""
    if response is None or isinstance(response, str):
        return json.dumps({"response": response})
    dump_json = getattr(response, "model_dump_json", None)
    if callable(dump_json):
        try:
            text: str = dump_json(
                exclude={"message_retrieval_function"}, fallback=_non_serializable
            )
            return text
        except Exception:
            pass
    return dumps_response(response)


def _clean_request(request: dict[str, Any]) -> dict[str, Any]:
    clean = {k: v for k, v in request.items() if not is_secret_key(k)}
    for key in _WALKED:
        if key in clean:
            clean[key] = to_dict(clean[key])
    return clean


def dumps_request(request: Any) -> str:
    """A model request (from :func:`snapshot_request`) as JSON: credentials stripped at the top
    level and in its headers and query; each message serialized (by ``json`` directly) and
    scrubbed once, not the whole history again for every request."""
    if not isinstance(request, dict):
        return dumps(request)
    clean = _clean_request(request)
    messages = clean.get("messages")
    if isinstance(messages, _Prefix):
        array = messages.json()
    elif type(messages) is list:
        array = scrub("[" + ", ".join(_encode_walked(m) for m in messages) + "]")
    else:
        return scrub(_encode_walked(clean))
    clean["messages"] = MESSAGES_MARK
    return scrub(_encode_walked(clean)).replace(_MESSAGES_JSON, array, 1)


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
            return scrub(_encode_any(data))
    return dumps(response)
