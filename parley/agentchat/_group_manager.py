"""``GroupChatManager``: the agent that runs a group chat's rounds (spec 5.5-5.7).

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
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Any, Literal

from .._calls import overrides
from ..code_utils import content_str
from ..exceptions import NoEligibleSpeaker
from ..oai._streaming import echo_silenced
from . import _delivery, _group_resume
from ._human import is_termination
from ._registry import ReplyEntry
from ._sync_chat import run_sync
from .agent import Agent
from .conversable_agent import ConversableAgent

if TYPE_CHECKING:
    from .groupchat import GroupChat

__all__ = ["GroupChatManager"]

logger = logging.getLogger(__name__)


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
        **kwargs: Any,
    ) -> None:
        from .groupchat import GroupChat

        if not isinstance(groupchat, GroupChat):
            raise TypeError(f"GroupChatManager needs a GroupChat, got {type(groupchat).__name__}")
        llm_config = kwargs.get("llm_config")
        if isinstance(llm_config, dict) and (
            llm_config.get("functions") or llm_config.get("tools")
        ):
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
        self._last_speaker: Agent | None = None
        self._silent = silent  # the group rounds' printing; the agent-level `silent` stays None
        # The live GroupChat is the config (AutoGen stored a shallow copy, so settings changed
        # after construction, such as resume's send_introductions=False, were not seen).
        self._reply_func_list.insert(
            0,
            ReplyEntry(
                Agent,
                GroupChatManager.run_chat,
                GroupChatManager.a_run_chat,
                config=groupchat,
                init_config=groupchat,
                reset_config=GroupChat.reset,
                builtin=True,
                slots=2,
            ),
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

    def _prepare_chat(
        self,
        recipient: Any,
        clear_history: bool,
        prepare_recipient: bool = True,
        reply_at_receive: bool = True,
    ) -> None:
        super()._prepare_chat(recipient, clear_history, prepare_recipient, reply_at_receive)
        if clear_history:
            self._groupchat.reset()
        for agent in self._groupchat.agents:
            if (recipient is not agent or prepare_recipient) and isinstance(
                agent, ConversableAgent
            ):
                agent._prepare_chat(self, clear_history, False, reply_at_receive)

    # -- the rounds --------------------------------------------------------------------------

    async def a_run_chat(
        self,
        messages: list[dict[str, Any]] | None = None,
        sender: Agent | None = None,
        config: GroupChat | None = None,
    ) -> tuple[bool, None]:
        """Run the group chat from the sender's last message; always ``(True, None)``."""
        groupchat = config if config is not None else self._groupchat
        if messages is None:
            messages = self._oai_messages[sender]
        if not messages or sender is None:
            return True, None
        message: dict[str, Any] = messages[-1]
        speaker: Agent = sender
        silent = self._silent
        if groupchat.send_introductions:
            intro = groupchat.introductions_msg()
            for agent in groupchat.agents:
                await _delivery.send(self, intro, agent, request_reply=False, silent=True)
        saved = self._share_cache(groupchat)
        try:
            for i in range(groupchat.max_round):
                self._last_speaker = speaker
                groupchat.append(message, speaker)
                # Members get the speaker's message with its name, and with its content as
                # it was (the transcript keeps text only; multimodal members need the parts).
                if message.get("role") != "function":
                    message = {**message, "name": speaker.name}
                for agent in groupchat.agents:
                    if agent is not speaker:
                        await _delivery.send(self, message, agent, request_reply=False, silent=True)
                if (
                    is_termination(self._is_termination_msg, message)
                    or i == groupchat.max_round - 1
                ):
                    break
                try:
                    with echo_silenced(silent or not groupchat.select_speaker_auto_verbose):
                        speaker = await _select(groupchat, speaker, self)
                    if not silent:
                        from ..io import IOStream

                        IOStream.get_default().print(
                            f"\nNext speaker: {speaker.name}\n", flush=True
                        )
                    with echo_silenced(_printing_silenced(speaker, silent)):
                        reply = await _delivery.generate_reply(speaker, sender=self)
                except KeyboardInterrupt:
                    # The admin (a human participant) takes over, as in AutoGen.
                    admin = groupchat.agent_by_name(groupchat.admin_name)
                    if admin is None:
                        raise
                    speaker = admin
                    with echo_silenced(_printing_silenced(speaker, silent)):
                        reply = await _delivery.generate_reply(speaker, sender=self)
                except NoEligibleSpeaker:
                    logger.warning("No eligible speaker found. Terminating the conversation.")
                    break
                if reply is None:
                    break
                if (
                    groupchat.enable_clear_history
                    and isinstance(reply, dict)
                    and reply.get("content")
                    and "CLEAR HISTORY" in content_str(reply["content"]).upper()
                ):
                    reply = {**reply, "content": self.clear_agents_history(reply, groupchat)}
                await _delivery.send(speaker, reply, self, request_reply=False, silent=silent)
                message = self.last_message(speaker)  # type: ignore[assignment]
        finally:
            for agent, cache in saved:
                agent.client_cache = cache
        return True, None

    def run_chat(
        self,
        messages: list[dict[str, Any]] | None = None,
        sender: Agent | None = None,
        config: GroupChat | None = None,
    ) -> tuple[bool, None]:
        """Run the group chat from the sender's last message; always ``(True, None)``."""
        return run_sync(self.a_run_chat(messages, sender, config))

    def _share_cache(self, groupchat: GroupChat) -> list[tuple[Any, Any]]:
        """Give every member the manager's chat cache for the run; returns what to restore."""
        if self.client_cache is None:
            return []
        saved = []
        for agent in groupchat.agents:
            saved.append((agent, getattr(agent, "client_cache", None)))
            agent.client_cache = self.client_cache  # type: ignore[attr-defined]
        return saved

    # -- resuming and clearing ---------------------------------------------------------------

    async def a_resume(
        self,
        messages: list[dict[str, Any]] | str,
        remove_termination_string: str | Any = None,
        silent: bool | None = False,
    ) -> tuple[ConversableAgent, dict[str, Any]]:
        """Load a saved transcript into the group so that the chat can continue (spec 5.7).
        Continue with ``agent.a_initiate_chat(manager, message=msg, clear_history=False)``."""
        return await _group_resume.resume(self, messages, remove_termination_string, silent)

    def resume(
        self,
        messages: list[dict[str, Any]] | str,
        remove_termination_string: str | Any = None,
        silent: bool | None = False,
    ) -> tuple[ConversableAgent, dict[str, Any]]:
        """Load a saved transcript into the group so that the chat can continue (spec 5.7).
        Continue with ``agent.initiate_chat(manager, message=msg, clear_history=False)``."""
        return run_sync(self.a_resume(messages, remove_termination_string, silent))

    def messages_to_string(self, messages: list[dict[str, Any]]) -> str:
        """The messages as JSON, for saving a chat to ``resume`` later."""
        return _group_resume.messages_to_string(messages)

    def messages_from_string(self, message_string: str) -> list[dict[str, Any]]:
        return _group_resume.messages_from_string(message_string)

    def clear_agents_history(self, reply: dict[str, Any], groupchat: GroupChat) -> str:
        """Carry out a "clear history [agent] [n]" command in ``reply``; the reply's text
        without the command."""
        return _group_resume.clear_agents_history(reply, groupchat)


def _printing_silenced(speaker: Any, silent: bool) -> bool:
    """Whether the speaker's message is printed silently when it sends it to the manager."""
    own = getattr(speaker, "silent", None)
    return bool(own if own is not None else silent)


async def _select(groupchat: GroupChat, last_speaker: Agent, manager: GroupChatManager) -> Agent:
    """``groupchat``'s next speaker, through a subclass's sync ``select_speaker`` override."""
    from .groupchat import GroupChat

    if overrides(groupchat, "select_speaker", GroupChat) and not overrides(
        groupchat, "a_select_speaker", GroupChat
    ):
        import asyncio

        return await asyncio.to_thread(groupchat.select_speaker, last_speaker, manager)
    return await groupchat.a_select_speaker(last_speaker, manager)
