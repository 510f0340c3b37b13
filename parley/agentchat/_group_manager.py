"""``GroupChatManager``: the agent that runs a group chat's rounds.

The manager is a ``ConversableAgent`` whose first reply function, for any agent sender, runs
the whole group chat and answers nothing, so the initiator's ``initiate_chat`` ends when the
group chat does. Rounds are delivered one after another in a loop, never by recursion.

Differences from AutoGen, on purpose:

- ``run_chat`` and ``a_run_chat`` are one algorithm (AutoGen's two versions drifted apart):
  every round appends the message to the transcript, broadcasts it, stops on the manager's
  termination test or at ``max_round``, then selects and asks the next speaker. So in async
  chats too a terminating message is broadcast before the chat stops, ``last_speaker`` is
  kept, "Next speaker" is printed and ``enable_clear_history`` works.
- Members receive each message with its original content (the transcript keeps text only,
  for text-only selectors; AutoGen broadcast the stringified copy, losing images).
- The reply function's config is the live ``GroupChat``, not a shallow copy, so settings
  changed after construction (``max_round``, ``resume``'s ``send_introductions=False``) apply.
- Streamed replies follow the rounds' printing: a speaker's stream is echoed only when its
  message will be printed (the manager's ``silent``, or the speaker's own ``silent``), and the
  "auto" selection's stream only with ``select_speaker_auto_verbose``.
- A ``KeyboardInterrupt`` raised by user code during selection or a reply lets the admin
  take over, as in AutoGen. A real Ctrl-C in a sync chat cancels the chat instead, as it
  does for every parley chat (the chat runs on parley's event loop, not the main thread).
- ``resume`` checks every saved message before it clears anything (see ``_group_resume``).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, cast

from .._core import reports as _reports
from ..code_utils import content_str
from ..exceptions import BudgetExceededError, NoEligibleSpeaker
from ..oai._streaming import echo_silenced
from ..usage import Budget
from ..usage import _run as _usage
from ..usage._budget import checked as checked_budget
from . import _delivery, _group_resume
from ._agent_configs import LLMConfigView
from ._group_chat import GroupChat
from ._group_visibility import Relay
from ._human import is_termination
from ._overrides import sync_only
from ._registry import builtin_reply, insert_reply
from ._state import as_messages
from ._sync_chat import run_sync
from .agent import Agent
from .conversable_agent import ConversableAgent

if TYPE_CHECKING:
    from ..types import Message

__all__ = ["GroupChatManager"]

logger = logging.getLogger(__name__)

_Select = Callable[[Agent, Any], Awaitable[Agent]]


class GroupChatManager(ConversableAgent):
    """Runs a :class:`GroupChat`: ``user.initiate_chat(manager, message=...)`` starts it."""

    def __init__(
        self,
        groupchat: GroupChat,
        name: str | None = "chat_manager",
        max_consecutive_auto_reply: int | None = sys.maxsize,
        human_input_mode: Literal["ALWAYS", "NEVER", "TERMINATE"] = "NEVER",
        system_message: str | list[Any] | None = "Group chat manager.",
        silent: bool = False,
        budget: Budget | None = None,
        **kwargs: Any,
    ) -> None:
        checked_budget(budget)
        if not isinstance(groupchat, GroupChat):
            raise TypeError(f"GroupChatManager needs a GroupChat, got {type(groupchat).__name__}")
        if LLMConfigView(kwargs.get("llm_config")).has_tools:
            raise ValueError(
                "GroupChatManager is not allowed to make function/tool calls. Please remove the "
                "'functions' or 'tools' config in 'llm_config' you passed in."
            )
        super().__init__(
            name=name,  # type: ignore[arg-type]
            max_consecutive_auto_reply=max_consecutive_auto_reply,
            human_input_mode=human_input_mode,
            system_message=system_message,
            **kwargs,
        )
        self._groupchat = groupchat
        self.budget = budget  # applies to each group chat this manager runs (parley only)
        self._last_speaker: Agent | None = None
        self._silent = silent  # the group rounds' printing; the agent-level `silent` stays None
        # A built-in reply, like the base class's own. Its config is the live GroupChat
        # (register_reply would store a shallow copy, as AutoGen did, and settings changed
        # after construction would not be seen).
        insert_reply(
            self._reply_func_list,
            builtin_reply(
                Agent,
                GroupChatManager.run_chat,
                GroupChatManager.a_run_chat,
                config=groupchat,
                reset_config=GroupChat.reset,
            ),
            0,
        )

    @property
    def groupchat(self) -> GroupChat:
        return self._groupchat

    @property
    def last_speaker(self) -> Agent | None:
        """The agent whose message the manager broadcast most recently."""
        return self._last_speaker

    def chat_messages_for_summary(self, agent: Agent) -> list[dict[str, Any]]:
        """The whole group transcript: what ``reflection_with_llm`` summarises."""
        return self._groupchat.messages

    def _raise_exception_on_async_reply_functions(self) -> None:
        """AutoGen's check (kept for compatibility, see ConversableAgent), for the manager and
        every member."""
        super()._raise_exception_on_async_reply_functions()
        for agent in self._groupchat.agents:
            if isinstance(agent, ConversableAgent):
                agent._raise_exception_on_async_reply_functions()

    def _prepare_chat(self, recipient: Any, clear_history: bool, *args: Any, **kwargs: Any) -> None:
        """The base class's preparation, then the group's: the transcript is cleared with the
        history, and every member is prepared towards the manager."""
        super()._prepare_chat(recipient, clear_history, *args, **kwargs)
        prepare_recipient, reply_at_receive = _preparation(*args, **kwargs)
        if clear_history:
            self._groupchat.reset()
        for agent in self._groupchat.agents:
            if (recipient is not agent or prepare_recipient) and isinstance(
                agent, ConversableAgent
            ):
                agent._prepare_chat(self, clear_history, False, reply_at_receive)

    # -- the rounds --------------------------------------------------------------------------
    # ``run_chat`` and ``a_run_chat`` are AutoGen's reply functions, and code registers them on
    # agents of its own (``agent.register_reply(Agent, GroupChatManager.run_chat,
    # config=groupchat)``): ``self`` is then any ConversableAgent, which runs the rounds of
    # ``config`` as the manager would, with a manager's defaults (not silent, no budget).

    async def a_run_chat(
        self: ConversableAgent,
        messages: list[dict[str, Any]] | None = None,
        sender: Agent | None = None,
        config: GroupChat | None = None,
    ) -> tuple[bool, None]:
        """Run the group chat from the sender's last message; always ``(True, None)``."""
        manager = self if isinstance(self, GroupChatManager) else None
        groupchat = config if config is not None else getattr(manager, "groupchat", None)
        if not isinstance(groupchat, GroupChat):
            raise TypeError(
                "run_chat needs the GroupChat to run: pass config=groupchat (register_reply(..., "
                f"config=groupchat)); got {type(config).__name__}"
            )
        if messages is None:
            messages = self._oai_messages[sender]
        if not messages or sender is None:
            return True, None
        if groupchat.send_introductions:
            intro = groupchat.introductions_msg()
            for agent in groupchat.agents:
                await _delivery.send(self, intro, agent, request_reply=False, silent=True)
        run = _Run(self, manager, groupchat, self._is_termination_msg)
        saved = _share_cache(self.client_cache, groupchat)
        try:
            with _usage.watch_budget(getattr(manager, "budget", None)):
                await run.rounds(as_messages(messages)[-1], sender)
        finally:
            for agent, cache in saved:
                agent.client_cache = cache
        return True, None

    def run_chat(
        self: ConversableAgent,
        messages: list[dict[str, Any]] | None = None,
        sender: Agent | None = None,
        config: GroupChat | None = None,
    ) -> tuple[bool, None]:
        """The sync form of :meth:`a_run_chat`."""
        return run_sync(GroupChatManager.a_run_chat(self, messages, sender, config))

    # -- resuming and clearing ---------------------------------------------------------------

    async def a_resume(
        self,
        messages: list[dict[str, Any]] | str,
        remove_termination_string: str | Callable[[str], str] | None = None,
        silent: bool | None = False,
    ) -> tuple[ConversableAgent, dict[str, Any]]:
        """Load a saved transcript (a list of messages, or its JSON text) into the group so
        that the chat can continue; returns the agent that spoke last and its message.

        Continue with ``agent.a_initiate_chat(manager, message=msg, clear_history=False)``.
        ``remove_termination_string`` (a text, or a function of the text) is taken out of the
        last message so that the chat does not end at once. Every saved message is checked
        before any history is cleared.
        """
        return await _group_resume.resume(
            self,
            self._groupchat,
            messages,
            remove_termination_string,
            silent,
            self._is_termination_msg,
        )

    def resume(
        self,
        messages: list[dict[str, Any]] | str,
        remove_termination_string: str | Callable[[str], str] | None = None,
        silent: bool | None = False,
    ) -> tuple[ConversableAgent, dict[str, Any]]:
        """The sync form of :meth:`a_resume`."""
        return run_sync(self.a_resume(messages, remove_termination_string, silent))

    def _valid_resume_messages(self, messages: list[dict[str, Any]]) -> None:
        """AutoGen's check of the messages ``resume`` loads (here: every check ``resume``
        makes, so a list that passes loads): an error naming the first bad one."""
        _group_resume.check_saved(self, self._groupchat, messages)

    def _process_resume_termination(
        self,
        remove_termination_string: str | Callable[[str], str] | None,
        messages: list[dict[str, Any]],
    ) -> None:
        """Take the termination text out of the last of ``messages`` (in place) and warn when
        it would still end the resumed chat at once (AutoGen's step of ``resume``)."""
        _group_resume.process_termination(
            messages[-1], remove_termination_string, self._is_termination_msg
        )

    def messages_to_string(self, messages: list[dict[str, Any]]) -> str:
        """The messages as JSON, for saving a chat to ``resume`` later."""
        return _group_resume.messages_to_string(messages)

    def messages_from_string(self, message_string: str) -> list[dict[str, Any]]:
        return _group_resume.messages_from_string(message_string)

    def clear_agents_history(self, reply: dict[str, Any], groupchat: GroupChat) -> str:
        """Carry out a ``clear history <agent> <n>`` command in ``reply``; the reply's text
        without the command."""
        return _group_resume.clear_agents_history(reply, groupchat)


def _preparation(
    prepare_recipient: bool = True, reply_at_receive: bool = True
) -> tuple[bool, bool]:
    """The optional arguments of ``ConversableAgent._prepare_chat``, with their defaults."""
    return prepare_recipient, reply_at_receive


def _ends_after(groupchat: GroupChat, message: Message, i: int, terminates: Any) -> bool:
    """Whether the chat ends after round ``i``'s message (noting why)."""
    if is_termination(terminates, message):
        _usage.note_end("is_termination_msg")
        return True
    if i == groupchat.max_round - 1:
        _usage.note_end("max_round")
        return True
    # The budget is spent: no selection, no further round.
    return _usage.check() is not None


def _selection(groupchat: GroupChat) -> _Select:
    """How the rounds pick speakers: ``a_select_speaker``, or a subclass's sync
    ``select_speaker`` (in a worker thread) when it overrides only that one."""
    if sync_only(type(groupchat), "select_speaker", GroupChat):
        sync = groupchat.select_speaker

        async def in_thread(last_speaker: Agent, selector: Any) -> Agent:
            return await asyncio.to_thread(sync, last_speaker, selector)

        return in_thread
    return groupchat.a_select_speaker


def _share_cache(cache: Any, groupchat: GroupChat) -> list[tuple[Any, Any]]:
    """Give every member the running agent's chat ``cache`` for the run; what to restore."""
    if cache is None:
        return []
    saved = []
    for agent in groupchat.agents:
        saved.append((agent, getattr(agent, "client_cache", None)))
        agent.client_cache = cache  # type: ignore[attr-defined]
    return saved


class _Run:
    """One run of a group chat's rounds by ``host``: the manager (``manager``, the same
    agent), or an agent that registered ``run_chat`` itself (``manager`` None)."""

    __slots__ = ("group", "host", "manager", "select", "silent", "terminates")

    def __init__(
        self,
        host: ConversableAgent,
        manager: GroupChatManager | None,
        group: GroupChat,
        terminates: Callable[[dict[str, Any]], Any],
    ) -> None:
        self.host, self.manager, self.group = host, manager, group
        self.silent = manager._silent if manager is not None else False
        self.terminates = terminates
        self.select = _selection(group)

    async def rounds(self, message: Message, speaker: Agent) -> None:
        groupchat, host = self.group, self.host
        relay = Relay(host, groupchat)
        for i in range(groupchat.max_round):
            if self.manager is not None:
                self.manager._last_speaker = speaker
            groupchat.append(message, speaker)
            # Members get the speaker's message with its name, and with its content as it was
            # (the transcript keeps text only; multimodal members need the parts).
            if message.get("role") != "function":
                message = {**message, "name": speaker.name}
            await relay.hold(groupchat.messages[-1], message, speaker, broadcast=i == 0)
            turn = (
                None
                if _ends_after(groupchat, message, i, self.terminates)
                else (await self.turn(speaker, relay))
            )
            if turn is None:
                await relay.release(None)  # the chat's last message: addressed to nobody
                return
            speaker, reply = turn
            if (
                groupchat.enable_clear_history
                and isinstance(reply, dict)
                and reply.get("content")
                and "CLEAR HISTORY" in content_str(reply["content"]).upper()
            ):
                reply = {**reply, "content": _group_resume.clear_agents_history(reply, groupchat)}
            await _delivery.send(speaker, reply, host, request_reply=False, silent=self.silent)
            # The speaker's reply was just sent: the history with it is not empty.
            message = cast("Message", host.last_message(speaker))

    async def turn(self, last_speaker: Agent, relay: Relay) -> tuple[Agent, Any] | None:
        """The next speaker and its reply; None when the chat ends here. The last message is
        delivered (``relay``) once the speaker is known, before it replies."""
        groupchat, silent = self.group, self.silent
        try:
            with (
                echo_silenced(silent or not groupchat.select_speaker_auto_verbose),
                _usage.acting_for(self.host, "speaker_selection"),
                _reports.speaker_selection_step(self.host, last_speaker) as step,
            ):
                speaker = await self.select(last_speaker, self.host)
                step.end(speaker.name)
            if not silent:
                from ..io import IOStream

                IOStream.get_default().print(f"\nNext speaker: {speaker.name}\n", flush=True)
            await relay.release(speaker)
            reply = await self.reply_of(speaker)
        except KeyboardInterrupt:
            # The admin (a human participant) takes over, as in AutoGen.
            admin = groupchat.agent_by_name(groupchat.admin_name)
            if admin is None:
                raise
            speaker = admin
            await relay.release(speaker)
            reply = await self.reply_of(speaker)
        except NoEligibleSpeaker:
            logger.warning("No eligible speaker found. Terminating the conversation.")
            _usage.note_end("no_eligible_speaker")
            return None
        except BudgetExceededError:
            return None  # the selection's request was refused: the chat ends before the round
        return None if reply is None else (speaker, reply)

    async def reply_of(self, speaker: Agent) -> Any:
        # The speaker's stream is echoed only if its message will be printed when it is sent.
        own = getattr(speaker, "silent", None)
        with echo_silenced(bool(own if own is not None else self.silent)):
            return await _delivery.generate_reply(speaker, sender=self.host)
