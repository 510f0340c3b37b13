"""AutoGen's private ``GroupChat`` helpers, kept for compatibility.

Extensions and AutoGen-style tests call (and subclasses override) these underscored steps of
AutoGen's speaker selection: ``_prepare_and_select_agents``, ``_auto_select_speaker`` /
``a_auto_select_speaker``, ``_validate_speaker_name``, ``_process_speaker_selection_result``,
``_finalize_speaker``, ``_create_internal_agents`` and the custom model client registration.
Each function here is written as the method it is on ``GroupChat`` (its first parameter is the
group, ``self``); ``GroupChat`` binds them under AutoGen's names.

A subclass that overrides ``_prepare_and_select_agents``, ``_auto_select_speaker`` or
``a_auto_select_speaker`` has its override used by the rounds (``prepared``, ``auto_chosen``),
as AutoGen's ``select_speaker`` called them. Each is a thin face over the step parley already has (``SpeakerSelector.prepare`` and
``.auto``, ``judge_answer``, ``match_speaker``, ``client_class``), so the rules exist once.
AutoGen ran "auto" selection as a private chat between a ``checking_agent`` and a
``speaker_selection_agent`` and read the outcome from marker messages (``[AGENT SELECTED]``,
``[AGENT SELECTION FAILED]``); parley's own rounds ask the model directly, and these faces
speak that protocol for code written against it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._auto_selection import (
    CHECKER_NAME,
    SELECTOR_NAME,
    client_class,
    judge_answer,
    match_speaker,
    register_clients,
    selector_history,
)
from ._messages import content_text
from ._sync_chat import run_sync, sync_of
from .agent import Agent
from .conversable_agent import ConversableAgent

if TYPE_CHECKING:
    from ._group_chat import GroupChat

__all__ = [
    "SELECTED",
    "SELECTION_FAILED",
    "a_auto_select_speaker",
    "auto_chosen",
    "auto_select_speaker",
    "create_internal_agents",
    "finalize_speaker",
    "get_transforms",
    "prepare_and_select_agents",
    "prepared",
    "process_speaker_selection_result",
    "register_client_from_config",
    "register_custom_model_clients",
    "set_transforms",
    "validate_speaker_name",
]

logger = logging.getLogger(__name__)

SELECTED = "[AGENT SELECTED]"
"""Marks the private selection chat's last message when a name was found (the name follows)."""
SELECTION_FAILED = "[AGENT SELECTION FAILED]"
"""Marks it when the attempts ran out without a single name."""

Triple = tuple[Agent | None, list[Agent] | None, list[dict[str, Any]] | None]


def get_transforms(self: GroupChat) -> Any:
    """AutoGen's name for ``select_speaker_transform_messages``."""
    return self.select_speaker_transform_messages


def set_transforms(self: GroupChat, transforms: Any) -> None:
    self.select_speaker_transform_messages = transforms


def prepare_and_select_agents(self: GroupChat, last_speaker: Agent) -> Triple:
    """Every selection step but the model's: (the agent chosen, or None; the eligible
    agents, None meaning all; for "auto", the transcript as the model reads it)."""
    return run_sync(self._speaker_selector.prepare(self, last_speaker))


async def a_auto_select_speaker(
    self: GroupChat,
    last_speaker: Agent,
    selector: Any,
    messages: list[dict[str, Any]] | None,
    agents: list[Agent] | None,
) -> Agent:
    """The "auto" choice among ``agents`` (None: all), the model reading ``messages``
    (None: the transcript) with ``selector``'s (the manager's) model."""
    history = selector_history(self.messages) if messages is None else messages
    return await self._speaker_selector.auto(self, last_speaker, selector, history, agents)


auto_select_speaker = sync_of(a_auto_select_speaker, "_auto_select_speaker")
"""The sync form of ``a_auto_select_speaker``."""


def _unchanged(method: Any, face: Callable[..., Any]) -> bool:
    """Whether the bound ``method`` is the face of this module (not a subclass's override)."""
    return getattr(method, "__func__", None) is face


async def prepared(self: GroupChat, last_speaker: Agent) -> Triple:
    """The first selection step: a subclass's own ``_prepare_and_select_agents`` (user code,
    run in a worker thread), else parley's."""
    if _unchanged(self._prepare_and_select_agents, prepare_and_select_agents):
        return await self._speaker_selector.prepare(self, last_speaker)
    return await asyncio.to_thread(self._prepare_and_select_agents, last_speaker)


async def auto_chosen(
    self: GroupChat,
    last_speaker: Agent,
    selector: Any,
    history: list[dict[str, Any]],
    eligible: list[Agent] | None,
) -> Agent:
    """The "auto" step: a subclass's own ``a_auto_select_speaker`` or ``_auto_select_speaker``
    (in a worker thread), else parley's."""
    if not _unchanged(self.a_auto_select_speaker, a_auto_select_speaker):
        return await self.a_auto_select_speaker(last_speaker, selector, history, eligible)
    if not _unchanged(self._auto_select_speaker, auto_select_speaker):
        return await asyncio.to_thread(
            self._auto_select_speaker, last_speaker, selector, history, eligible
        )
    return await self._speaker_selector.auto(self, last_speaker, selector, history, eligible)


def validate_speaker_name(
    self: GroupChat,
    recipient: Any,
    messages: list[dict[str, Any]],
    sender: Any,
    config: Any,
    attempts_left: int,
    attempt: int,
    agents: list[Agent] | None,
) -> tuple[bool, dict[str, Any] | None]:
    """Judge the selection model's last answer in ``messages`` (the private selection
    chat). A single name: ``[AGENT SELECTED]<name>`` is appended. Otherwise, while
    ``attempts_left``, the follow-up prompt is returned as the checker's reply; after the
    last attempt a ``[AGENT SELECTION FAILED]`` note is appended."""
    candidates = self.agents if agents is None else agents
    text = content_text(messages[-1].get("content")).strip()
    verdict = judge_answer(self, text, candidates, attempt, attempt + attempts_left)
    if verdict.name is not None:
        messages.append({"role": "user", "content": f"{SELECTED}{verdict.name}"})
    elif attempts_left:
        return True, {
            "content": verdict.follow_up,
            "name": CHECKER_NAME,
            "override_role": self.role_for_select_speaker_messages,
        }
    else:
        why = "returned multiple names" if verdict.several else "did not include any agent names"
        messages.append(
            {
                "role": "user",
                "content": f"{SELECTION_FAILED}Select speaker attempt #{attempt} of "
                f"{attempt + attempts_left} failed as it {why}.",
            }
        )
    return True, None


def process_speaker_selection_result(
    self: GroupChat, result: Any, last_speaker: Agent, agents: list[Agent] | None
) -> Agent | None:
    """The speaker a finished selection chat (its ``ChatResult``) designates: the agent
    named after ``[AGENT SELECTED]``, else the next agent after ``last_speaker``; None for
    an empty chat."""
    if not result.chat_history:
        return None
    final = content_text(result.chat_history[-1].get("content"))
    if SELECTED in final:
        return self.agent_by_name(final.replace(SELECTED, ""))
    return self.next_agent(last_speaker, agents)


def finalize_speaker(
    self: GroupChat, last_speaker: Agent, final: bool, name: str, agents: list[Agent] | None
) -> Agent:
    """The speaker a model's answer ``name`` designates (``final`` False: there was no
    answer); the next agent in order when it designates nobody."""
    if not final:
        return self.next_agent(last_speaker, agents)
    picked, _ = match_speaker(name, self.agents if agents is None else agents)
    if picked is None:
        logger.warning(
            "GroupChat select_speaker failed to resolve the next speaker's name. The speaker "
            "selection model returned:\n%s",
            name,
        )
    agent = self.agent_by_name(picked or name)
    return agent if agent is not None else self.next_agent(last_speaker, agents)


def register_client_from_config(self: GroupChat, agent: Any, config: dict[str, Any]) -> None:
    """Register on ``agent`` the custom client class that ``config`` names by
    ``model_client_cls`` (from ``select_speaker_auto_model_client_cls``)."""
    name = config.get("model_client_cls")
    if name:
        agent.register_model_client(client_class(name, self.select_speaker_auto_model_client_cls))


def register_custom_model_clients(self: GroupChat, agent: Any) -> None:
    """Register every custom client that ``select_speaker_auto_llm_config`` names."""
    if self.select_speaker_auto_llm_config:
        register_clients(agent.client, self.select_speaker_auto_model_client_cls)


def create_internal_agents(
    self: GroupChat,
    agents: list[Agent],
    max_attempts: int,
    messages: list[dict[str, Any]],
    validate_speaker_name: Callable[..., Any],
    selector: Any = None,
) -> tuple[ConversableAgent, ConversableAgent]:
    """AutoGen's two agents of a private selection chat: the ``checking_agent``, whose
    only reply is ``validate_speaker_name``, and the ``speaker_selection_agent``, which
    starts with ``messages`` and asks the model (``select_speaker_auto_llm_config``, else
    ``selector``'s config)."""
    # AutoGen also set the checker's default_auto_reply to max_attempts; the validation is
    # its only reply, so that never showed.
    checking = ConversableAgent(CHECKER_NAME, llm_config=False)
    checking.register_reply(
        [ConversableAgent, None], validate_speaker_name, remove_other_reply_funcs=True
    )
    # The group's own selection config, else the selector's (the manager's), else none.
    llm_config: Any = self.select_speaker_auto_llm_config or getattr(selector, "llm_config", False)
    selecting = ConversableAgent(
        SELECTOR_NAME,
        system_message=self.select_speaker_msg(agents),
        chat_messages={checking: messages},
        llm_config=llm_config,
        human_input_mode="NEVER",
    )
    register_custom_model_clients(self, selecting)
    return checking, selecting
