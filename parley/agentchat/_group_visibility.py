"""Which members of a group chat see which message (``GroupChat(visibility=...)``).

AutoGen's manager relays every message to every member, so every member's model reads the whole
transcript (AutoGen #2544). A visibility rule narrows that per member; the manager, the "auto"
speaker selection and ``groupchat.messages`` keep the full transcript.

A message's audience is decided once, in transcript order, by :class:`Audience`. It depends on
the message, its sender, whether it is a broadcast, and the agent that speaks after it: so the
live rounds decide a message when the next speaker has been chosen (just before that speaker
replies) and ``resume`` decides a saved transcript with the same rule, the next speaker being the
sender of the following message.

A tool call and the results that answer it form one unit, seen whole or not at all: the unit's
audience is the call's (plus the agent that speaks right after the call, which is the one asked
to run it), because a request with a result whose call is missing, or a call without its
results, is refused by the API.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._core import reports as _reports
from ..exceptions import GroupChatConfigError
from . import _delivery
from ._group_history import call_ids, is_tool_result, result_ids
from ._messages import content_text
from .agent import Agent

if TYPE_CHECKING:
    from ..types import Message
    from ._group_chat import GroupChat

__all__ = ["VISIBILITY_NAMES", "Audience", "Relay", "Rule", "check_visibility"]

Rule = Callable[[dict[str, Any], Agent], Any]
"""A visibility callable: ``(message as stored in the transcript, member) -> sees it``."""

VISIBILITY_NAMES = ("all", "addressed")
"""The rules ``visibility`` accepts by name, besides a callable and a dict of allow lists."""


def check_visibility(value: Any, members: Sequence[str]) -> None:
    """Refuse a ``visibility`` setting the rounds could not apply, naming what is wrong."""
    if isinstance(value, str):
        if value not in VISIBILITY_NAMES:
            raise GroupChatConfigError(
                f"GroupChat visibility is {value!r}; it should be one of "
                f"{list(VISIBILITY_NAMES)}, a callable (message, agent) -> bool, or a dict "
                "{agent name: [names of the senders it sees]}"
            )
        return
    if isinstance(value, Mapping):
        _check_allow_lists(value, members)
        return
    if not callable(value):
        raise GroupChatConfigError(
            f"GroupChat visibility must be 'all', 'addressed', a callable or a dict of allow "
            f"lists, got {type(value).__name__} {value!r}"
        )


def _check_allow_lists(lists: Mapping[Any, Any], members: Sequence[str]) -> None:
    unknown: list[str] = []
    for key, senders in lists.items():
        if isinstance(senders, str) or not isinstance(senders, (list, tuple, set, frozenset)):
            raise GroupChatConfigError(
                f"GroupChat visibility[{key!r}] must be a list of sender names, got "
                f"{type(senders).__name__} {senders!r}"
            )
        for name in [key, *senders]:
            if name not in members and name not in unknown:
                unknown.append(name)
    if unknown:
        raise GroupChatConfigError(
            f"GroupChat visibility names agents that are not members: {unknown}; the members "
            f"are {list(members)}"
        )


def mentions(text: str, name: str) -> bool:
    """Whether ``text`` addresses ``name`` as ``@name`` (not a longer name starting with it)."""
    return re.search("@" + re.escape(name) + r"(?![\w-])", text) is not None


class _Unit:
    """An open tool call: the ids still unanswered (None for a legacy ``function_call``, which
    one ``function`` message answers) and who sees it."""

    __slots__ = ("audience", "ids")

    def __init__(self, ids: set[str] | None, audience: list[Agent]) -> None:
        self.ids = ids
        self.audience = audience

    def answered_by(self, message: Mapping[str, Any]) -> bool:
        if self.ids is None:
            return message.get("role") == "function"
        ids = result_ids(message)
        return is_tool_result(message) and bool(ids) and set(ids) <= self.ids


class Audience:
    """Decides, one message at a time and in transcript order, which members see it."""

    __slots__ = ("_group", "_rule", "_unit")

    def __init__(self, group: GroupChat) -> None:
        self._group = group
        self._rule: Any = group.visibility
        self._unit: _Unit | None = None

    @property
    def members(self) -> list[Agent]:
        return self._group.agents

    @property
    def everyone(self) -> bool:
        return isinstance(self._rule, str) and self._rule == "all"

    def of(
        self,
        message: Mapping[str, Any],
        sender: Agent | None,
        next_speaker: Agent | None,
        broadcast: bool,
    ) -> list[Agent]:
        """The members other than ``sender`` that see ``message`` (as stored in the transcript,
        with its ``name``), in the group's order. Call it for every message, in order."""
        unit = self._unit
        if unit is not None and unit.answered_by(message):
            if unit.ids is not None:
                unit.ids.difference_update(result_ids(message))
            if not unit.ids:
                self._unit = None
            return [a for a in unit.audience if a is not sender]
        self._unit = None
        if is_tool_result(message) or message.get("role") == "function":
            return []  # a result whose call is not just before it: nobody could pair it
        members = self.members
        seen = [
            a
            for a in members
            if a is not sender and self._sees(message, sender, a, next_speaker, broadcast)
        ]
        ids = call_ids(message)
        if ids or message.get("function_call"):
            # The agent asked to run the call sees it, whatever the rule.
            runner = next_speaker
            if runner is not None and runner is not sender and runner not in seen:
                seen = [a for a in members if a in seen or a is runner]
            self._unit = _Unit(set(ids) if ids else None, [*seen, *([sender] if sender else [])])
        return seen

    def _sees(
        self,
        message: Mapping[str, Any],
        sender: Agent | None,
        agent: Agent,
        next_speaker: Agent | None,
        broadcast: bool,
    ) -> bool:
        rule = self._rule
        if isinstance(rule, str):
            if rule == "all" or broadcast or agent is next_speaker:
                return True
            return mentions(content_text(message.get("content")), agent.name)
        if isinstance(rule, Mapping):
            allowed = rule.get(agent.name)
            if allowed is None or broadcast:
                return True
            return sender is not None and sender.name in allowed
        return bool(rule(message, agent))


class Relay:
    """Delivers the rounds' messages to the members that see them.

    With ``visibility="all"`` a message goes to every other member as soon as it is in the
    transcript (AutoGen's order). With a narrower rule it waits until the next speaker is
    known, since "addressed" depends on it: :meth:`release` delivers it just before that speaker
    replies, or when the chat ends (no next speaker).
    """

    __slots__ = ("_audience", "_manager", "_pending")

    def __init__(self, manager: Agent, group: GroupChat) -> None:
        self._manager = manager
        self._audience = Audience(group)
        self._pending: tuple[dict[str, Any], Message, Agent, bool] | None = None

    async def hold(
        self, stored: dict[str, Any], message: Message, speaker: Agent, broadcast: bool
    ) -> None:
        """``message`` (as relayed: original content) was just stored as ``stored``;
        ``broadcast`` for the chat's initial message."""
        if self._audience.everyone:
            await self._send(message, [a for a in self._audience.members if a is not speaker])
        else:
            self._pending = (stored, message, speaker, broadcast)

    async def release(self, next_speaker: Agent | None) -> None:
        """Deliver the held message, now that the agent speaking after it is known."""
        if self._pending is None:
            return
        stored, message, speaker, broadcast = self._pending
        self._pending = None
        await self._send(message, self._audience.of(stored, speaker, next_speaker, broadcast))

    async def _send(self, message: Message, agents: list[Agent]) -> None:
        with _reports.relaying():
            for agent in agents:
                await _delivery.send(
                    self._manager, message, agent, request_reply=False, silent=True
                )
