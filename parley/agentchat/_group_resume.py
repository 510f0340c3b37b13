"""Resuming a group chat from saved messages, and the "clear history" command.

``resume`` works on a deep copy of the saved messages and checks all of them (the names, and
that each could be stored and sent, as ``_message_check`` requires of every message) before it
clears any history, so bad input raises an error naming the message and loses nothing. A saved
list whose tool calls and tool results were separated (a sliced transcript, AutoGen #3164) is
repaired before it is loaded, with a warning, because every later model request built from it
would be rejected. Each member's history is rebuilt with the group's ``visibility`` rule.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from ..exceptions import InvalidMessageError
from . import _delivery
from ._group_history import pair_tool_calls, tail
from ._group_visibility import Audience
from ._human import is_termination
from ._message_check import check_message
from .conversable_agent import ConversableAgent

if TYPE_CHECKING:
    from ..types import Message
    from ._group_chat import GroupChat

__all__ = [
    "check_saved",
    "clear_agents_history",
    "messages_from_string",
    "messages_to_string",
    "process_termination",
    "resume",
]

logger = logging.getLogger(__name__)

SavedMessages = list[dict[str, Any]] | str
"""What ``resume`` loads: the messages, or their JSON text (``messages_to_string``)."""
TerminationEdit = str | Callable[[str], str] | None
"""``remove_termination_string``: a text removed from the last message, or a function of it."""
Resumed = tuple[ConversableAgent, dict[str, Any]]
"""The agent that spoke last (the manager for its own or the admin's messages) and its message."""


def messages_to_string(messages: list[dict[str, Any]]) -> str:
    return json.dumps(messages)


def messages_from_string(message_string: str) -> list[dict[str, Any]]:
    try:
        messages = json.loads(message_string)
    except json.JSONDecodeError as e:
        raise ValueError(f"Messages string is not a valid JSON string: {e}") from e
    return messages  # type: ignore[no-any-return]


def _load(messages: Any) -> list[dict[str, Any]]:
    if isinstance(messages, str):
        messages = messages_from_string(messages)
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise ValueError(
            f"Messages is not of type str or List[Dict]: got {type(messages).__name__}"
        )
    return copy.deepcopy(messages)


def check_saved(
    manager: ConversableAgent, group: GroupChat, messages: list[dict[str, Any]]
) -> list[Message]:
    """The messages as they will be stored (lone surrogates repaired), or an error naming the
    first one that cannot be loaded."""
    if not messages:
        raise ValueError(
            "Cannot resume group chat as no messages were provided. Use "
            "GroupChatManager.run_chat or ConversableAgent.initiate_chat to start a new chat."
        )
    allowed = {*group.agent_names, group.admin_name, manager.name}
    checked = []
    for i, message in enumerate(messages):
        name = message.get("name")
        if name and name not in allowed and message.get("role") != "function":
            raise ValueError(
                f"Agent name in message doesn't exist as agent in group chat: {name!r} "
                f"(message {i}); the members are {group.agent_names}"
            )
        try:
            checked.append(
                check_message(
                    message,
                    sending=True,
                    own_name=str(name or manager.name),
                    partner_name=manager.name,
                )
            )
        except InvalidMessageError as e:
            raise InvalidMessageError(
                f"Cannot resume group chat: saved message {i} cannot be loaded: {e}"
            ) from e
    return checked


async def resume(
    manager: ConversableAgent,
    group: GroupChat,
    messages: SavedMessages,
    remove_termination_string: TerminationEdit,
    silent: bool | None,
    terminates: Callable[[dict[str, Any]], Any],
) -> Resumed:
    """Load ``messages`` into ``manager``'s ``group`` (see ``GroupChatManager.a_resume``);
    ``terminates`` is the manager's termination test."""
    loaded = check_saved(manager, group, _load(messages))  # before anything is cleared
    for agent in group.agents:
        if isinstance(agent, ConversableAgent):
            agent.clear_history()
    manager.clear_history()
    group.reset()
    loaded, repaired = pair_tool_calls(loaded, allow_pending_last=True)
    if repaired:
        logger.warning(
            "resume: %d saved message(s) had a tool call separated from its results; they were "
            "loaded as plain messages so that model requests stay valid",
            repaired,
        )
    for message in loaded[:-1]:
        if not message.get("name"):
            message["name"] = manager.name  # a ChatResult history: the manager's own messages
    # Each member gets what it would have received live: the same rule, the agent that spoke
    # next being the sender of the following message.
    audience = Audience(group)
    for i, message in enumerate(loaded[:-1]):
        speaker = group.agent_by_name(message["name"])
        following = group.agent_by_name(loaded[i + 1].get("name") or manager.name)
        broadcast = i == 0 or message["name"] == manager.name
        seen = audience.of(message, speaker, following, broadcast)
        for agent in group.agents:
            if agent is speaker:
                await _delivery.send(agent, message, manager, request_reply=False, silent=True)
            elif agent in seen:
                await _delivery.send(manager, message, agent, request_reply=False, silent=True)
        if speaker is not None:
            group.append(message, speaker)
        else:
            group.messages.append(dict(message))
    last = loaded[-1]
    last_name = last.get("name") or manager.name
    # The admin's or the manager's own message: the manager speaks last.
    last_agent = group.agent_by_name(last_name) or manager
    process_termination(cast("dict[str, Any]", last), remove_termination_string, terminates)
    if not silent:
        from ..io import IOStream

        IOStream.get_default().print(
            f"Prepared group chat with {len(loaded)} messages, the last speaker is {last_name}",
            flush=True,
        )
    group.send_introductions = False
    return last_agent, last  # type: ignore[return-value]


def process_termination(
    last: dict[str, Any],
    remove_termination_string: TerminationEdit,
    terminates: Callable[[dict[str, Any]], Any] | None,
) -> None:
    """Take the termination text out of ``last`` (the message the chat resumes from), in
    place; warn when it would still end the chat at once."""
    text = last.get("content")
    if remove_termination_string and isinstance(text, str):
        if isinstance(remove_termination_string, str):
            last["content"] = text.replace(remove_termination_string, "")
        else:
            last["content"] = remove_termination_string(text)
    if terminates is not None and is_termination(terminates, last):
        logger.warning(
            "WARNING: Last message meets termination criteria and this may terminate the chat. "
            "Set remove_termination_string to remove the termination text."
        )


def clear_agents_history(reply: dict[str, Any], groupchat: GroupChat) -> str:
    """Run the "clear history [agent] [n]" command found (last) in ``reply``'s text."""
    from ..io import IOStream

    out = IOStream.get_default()
    words = str(reply.get("content") or "").split()
    at = next(i for i in reversed(range(len(words))) if words[i].upper() == "CLEAR")
    keep: int | None = None
    keep_given = False
    target = None
    for word in words[at + 2 : at + 4]:
        if word.isdigit() or word[:-1].isdigit():
            keep = int(word if word.isdigit() else word[:-1])
            keep_given = True
            continue
        for agent in groupchat.agents:
            if agent.name in (word, word[:-1]):  # a trailing punctuation mark is allowed
                target = agent
                break
    if "tool_responses" in reply and not keep:
        keep = 1  # the reply answers the last tool call: keep that call
        logger.warning(
            "The last tool call message will be kept so that the tool response has its call."
        )
    if target is not None:
        if keep:
            out.print(f"Clearing history for {target.name} except last {keep} messages.")
        else:
            out.print(f"Clearing history for {target.name}.")
        target.clear_history(nr_messages_to_preserve=keep)  # type: ignore[attr-defined]
    else:
        if keep:
            out.print(f"Clearing history for all agents except last {keep} messages.")
            kept = tail(groupchat.messages, keep)
        else:
            out.print("Clearing history for all agents.")
            kept = []
        groupchat.messages[:] = kept
        for agent in groupchat.agents:
            agent.clear_history(nr_messages_to_preserve=keep)  # type: ignore[attr-defined]
    skip = 2 + int(target is not None) + int(keep_given)
    return " ".join(words[:at] + words[at + skip :])
