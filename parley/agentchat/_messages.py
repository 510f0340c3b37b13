"""Messages: how they are stored, printed, and prepared for the model.

Differences from AutoGen, on purpose: a message is checked before it is stored
(``_message_check``: what no request could carry is refused, lone surrogates are repaired), and
agent names the API would refuse are refused as a chat starts (:func:`check_agent_names`),
except in a two-agent chat, whose requests leave such a name out (:func:`request_messages`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, NoReturn, cast

from .._plain import NotPlain, SealedMessages, plain_copy
from ..code_utils import content_text
from ..exceptions import InvalidAgentNameError, InvalidMessageError
from ..types import Message
from ._message_check import (
    MAX_NESTING,
    STORED_KEYS,
    check_message,
    fail,
    fill_template,
    short_repr,
)

__all__ = [
    "MAX_NESTING",
    "InvalidAgentNameError",
    "InvalidMessageError",
    "check_agent_names",
    "check_message",
    "content_text",
    "fill_template",
    "invalid_text",
    "nothing_to_store",
    "render_message",
    "request_messages",
    "sanitize_name",
    "stored_form",
    "stored_message",
]

_API_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_NOT_NAME_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
_RULE = "-" * 80


def stored_message(
    message: str | Mapping[str, Any],
    *,
    sending: bool,
    own_name: str,
    partner_name: str,
    role: str | None = None,
    checked: bool = False,
) -> Message | None:
    """The dict an agent stores for ``message``, or None when it has nothing to store (no
    content and no call); :class:`InvalidMessageError` (a ValueError) if no request could
    carry it.

    ``sending``: the agent stores its own outgoing message (role ``assistant``, named after
    the agent) rather than an incoming one (role ``user``, named after the partner); ``role``
    overrides that default role (AutoGen's ``_append_oai_message`` takes one). ``checked``:
    ``message`` already went through :func:`check_message`.
    """
    if not checked:
        message = check_message(
            message, sending=sending, own_name=own_name, partner_name=partner_name
        )
    if isinstance(message, str):
        message = {"content": message}
    if role is None:
        role = "assistant" if sending else "user"
    return stored_form(message, role, own_name if sending else partner_name)


def nothing_to_store(sending: bool, own_name: str, partner_name: str, message: Any) -> NoReturn:
    """Raise :class:`InvalidMessageError` for a message with neither content nor a call, in
    AutoGen's words (which user code may match) followed by the message."""
    fail(sending, own_name, partner_name, f"{invalid_text(sending)} Got {short_repr(message)}")


def invalid_text(sending: bool) -> str:
    """AutoGen's words for a message with nothing to store, which user code may match."""
    head = "Message" if sending else "Received message"
    return (
        f"{head} can't be converted into a valid ChatCompletion message. Either content or "
        "function_call must be provided."
    )


def stored_form(message: Mapping[str, Any], role: str, speaker: str) -> Message | None:
    """What an agent stores for the message dict ``message`` (AutoGen's rule, pinned by
    tests/agentchat/test_spec_messages.py), or None when it has neither content nor a call
    (nothing is stored then).

    ``role`` is the role of a message that names none it may keep (``"assistant"`` for the
    agent's own, ``"user"`` for a received one); ``speaker`` the name given to a message
    without one (the agent's own, or its partner's).
    """
    # An empty tool_calls list is no tool call, and the API refuses an empty one.
    stored = {
        k: message[k]
        for k in STORED_KEYS
        if message.get(k) is not None and not (k == "tool_calls" and not message[k])
    }
    if "content" not in stored:
        if not (stored.get("function_call") or stored.get("tool_calls")):
            return None
        stored["content"] = None
    own_role = message.get("role")
    if own_role in ("function", "tool"):
        stored["role"] = own_role
    elif "override_role" in message:
        stored["role"] = message["override_role"]
    else:
        stored["role"] = role
    if stored.get("function_call") or stored.get("tool_calls"):
        stored["role"] = "assistant"
    elif "name" not in stored:
        stored["name"] = speaker
    # The keys are STORED_KEYS, whose values check_message has checked: a Message.
    return cast(Message, stored)


# parley_reasoning goes on to the client: the Responses client sends it back, the wrapper drops
# it from every other client's request (oai/_slot).
_API_KEYS = frozenset(
    {"role", "content", "name", "tool_calls", "tool_call_id", "function_call", "parley_reasoning"}
)
_accepted_names: set[str] = set()  # names already checked: a chat repeats a handful of names


def request_messages(
    system: Sequence[Mapping[str, Any]],
    history: Sequence[Mapping[str, Any]],
    speakers: Collection[str] = (),
) -> list[Mapping[str, Any]]:
    """The messages of a model request: the system message, then the history as the API takes
    it — bundled ``tool_responses`` expanded into one message each, parley's own keys (``context``)
    dropped, and names checked. One pass; a message that needs no change is shared, not copied.

    ``speakers`` are the two agents of a two-agent conversation: the roles tell them apart, so
    a name of theirs that the API would refuse is left out of the request instead of refused
    (AutoGen's two-agent notebooks name agents ``"Player Black"``).
    """
    out: list[Mapping[str, Any]] = list(system)
    for m in history:
        _add_request_message(out, m, speakers)
    return out


def _add_request_message(
    out: list[Mapping[str, Any]], m: Mapping[str, Any], speakers: Collection[str] = ()
) -> None:
    content = m.get("content")
    if content is not None and not isinstance(content, (str, list)):
        # A template whose context is still there (the sender's own copy): its text.
        m = {**m, "content": fill_template(m)}
    if not m.keys() <= _API_KEYS:
        responses = m.get("tool_responses")
        if responses:
            out.extend(responses)
            if m.get("role") == "tool":
                return
        m = {k: v for k, v in m.items() if k in _API_KEYS}
    name = m.get("name")
    if name is not None and name not in _accepted_names:
        if name in speakers and not _api_name(name):
            m = {k: v for k, v in m.items() if k != "name"}
        else:
            _check_name(name, m)
    out.append(m)


class RequestMemo:
    """:func:`request_messages` for one conversation, whose history grows between requests.

    It keeps private copies of the system message and of the history it converted, and the
    converted list, built from those copies. When the next history starts with messages equal
    to the copies (one ``==``, done in C: about 6x cheaper than converting them again), only the
    new messages are converted; a change anywhere in the remembered part (an edited message, a
    cleared history) is a mismatch and everything is converted again. The memo stops at a
    message that is not plain JSON data (a template, an object), converted live every time.
    """

    __slots__ = ("_out", "_seen", "_speakers", "_system")

    def __init__(self, speakers: Collection[str] = ()) -> None:
        self._speakers = tuple(speakers)  # see request_messages
        self._system: Any = None
        self._seen: list[Any] = []
        self._out: list[Mapping[str, Any]] = []

    def build(
        self, system: Sequence[Mapping[str, Any]], history: Sequence[Mapping[str, Any]]
    ) -> list[Mapping[str, Any]]:
        """``request_messages(system, history)``."""
        seen = self._seen
        if not (
            self._system is not None
            and len(seen) <= len(history)
            and self._system == system
            and history[: len(seen)] == seen
        ):
            try:
                self._system = plain_copy(list(system))
            except NotPlain:
                self.forget()
                return request_messages(system, history, self._speakers)
            self._seen = seen = []
            self._out = list(self._system)
        # The memo's own lists grow in place; the caller gets a copy.
        out = self._out
        try:
            for i in range(len(seen), len(history)):
                try:
                    copy = plain_copy(history[i])
                except NotPlain:
                    # The memo ends here: the rest is converted live, into a copy.
                    live = list(out)
                    for m in history[i:]:
                        _add_request_message(live, m, self._speakers)
                    return live
                _add_request_message(out, copy, self._speakers)
                seen.append(copy)
        except BaseException:
            self.forget()  # a refused name, say: out may hold part of a message
            raise
        return SealedMessages(out)

    def forget(self) -> None:
        """Drop what the memo holds (the next build converts everything)."""
        self._system, self._seen, self._out = None, [], []


def _check_name(name: Any, message: Mapping[str, Any], why: str = "") -> None:
    """Refuse, before sending, a ``name`` the OpenAI API would reject (AutoGen #941, #4157)."""
    if message.get("role") == "function":
        return
    if _api_name(name):
        if len(_accepted_names) < 10_000:
            _accepted_names.add(name)
        return
    raise InvalidAgentNameError(
        f"agent name {name!r} cannot be sent to the model{why}: OpenAI accepts message names "
        f"of letters, digits, '_' and '-', at most 64 characters. Rename the agent, e.g. "
        f"{sanitize_name(str(name))!r}."
    )


def _api_name(name: Any) -> bool:
    return isinstance(name, str) and _API_NAME.match(name) is not None


def check_agent_names(agents: Iterable[Any], reader: Any) -> None:
    """Refuse, before a chat starts, an agent name the OpenAI API would reject: every message
    of the chat carries its speaker's name, and ``reader`` sends them to its model."""
    reader_name = getattr(reader, "name", reader)
    why = f" (checked as the chat starts: {reader_name!r} answers with a model)"
    for agent in agents:
        name = getattr(agent, "name", None)
        if not (isinstance(name, str) and name in _accepted_names):
            _check_name(name, {}, why)


def sanitize_name(name: str) -> str:
    """A name OpenAI accepts: other characters become ``_``, cut to 64 characters."""
    return _NOT_NAME_CHARS.sub("_", name)[:64] or "_"


def _fill(content: Any, message: Mapping[str, Any], allow_format: bool) -> Any:
    context = message.get("context")
    if not context:
        return content
    from ..oai._templating import instantiate

    return instantiate(content, context, allow_format)


def render_message(
    message: Mapping[str, Any], sender_name: str, recipient_name: str, *, allow_format: bool = False
) -> str:
    """The console text for a received message, as AutoGen prints it, ending with a rule of dashes."""
    lines = [f"{sender_name} (to {recipient_name}):", ""]
    role = message.get("role")
    if role in ("function", "tool"):
        if role == "tool" and message.get("tool_responses"):
            for response in message["tool_responses"]:
                lines.append(_tool_response_block(response))
        else:
            lines.append(_tool_response_block(message))
    else:
        content = message.get("content")
        if content is not None:
            content = _fill(content, message, allow_format)
            lines.append(content_text(content))
        if message.get("function_call"):
            fc = message["function_call"]
            lines.append(f"***** Suggested function call: {fc.get('name', '(no name)')} *****")
            lines.append("Arguments: ")
            lines.append(str(fc.get("arguments", "")))
            lines.append("*" * 40)
        for tc in message.get("tool_calls") or ():
            fn = tc.get("function", {})
            lines.append(
                f"***** Suggested tool call ({tc.get('id', '')}): {fn.get('name', '')} *****"
            )
            lines.append("Arguments: ")
            lines.append(str(fn.get("arguments", "")))
            lines.append("*" * 40)
    lines.append("")
    lines.append(_RULE)
    return "\n".join(lines)


def _tool_response_block(response: Mapping[str, Any]) -> str:
    if response.get("role") == "function":
        head = f"***** Response from calling function ({response.get('name', '')}) *****"
    else:
        head = f"***** Response from calling tool ({response.get('tool_call_id', '')}) *****"
    content = response.get("content")
    if isinstance(content, (str, list)):
        text = content_text(content)  # a result's images shown as "<image>", not their data
    else:
        text = json.dumps(content, default=str)
    return f"{head}\n{text}\n{'*' * len(head)}"
