"""Choosing the next speaker of a group chat.

A round's choice is made in steps. A callable ``speaker_selection_method`` is asked first (it
may return the speaker, a method name for this round, or None to end the chat); then the
function-call filter (a pending tool call goes to an agent able to run it), the repeat rule and
the transition graph narrow the candidates; when more than one is left, the method ("manual",
"round_robin", "random", "auto") picks among them. "auto" asks a model (``_auto_selection``).

Each ``GroupChat`` owns one :class:`SpeakerSelector`, which keeps what outlives a round: the
model selection and its private agent, and the warnings already given for the group. The
group's settings are read afresh every round, through its public attributes and its
overridable methods (``next_agent``, ``manual_select_speaker``, ``random_select_speaker``,
``select_speaker_msg``...), so a ``GroupChat`` subclass or a setting changed mid-chat counts.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from .._agent_protocol import is_agent as _is_agent
from .._core.calls import call_user
from ..exceptions import NoEligibleSpeaker
from . import _group_compat
from ._auto_selection import ModelSelection, selector_history
from .agent import Agent

if TYPE_CHECKING:
    from ._group_chat import GroupChat
    from ._state import AgentCore

__all__ = ["SPEAKER_SELECTION_METHODS", "SPEAKER_TRANSITIONS_TYPES", "SpeakerSelector"]

logger = logging.getLogger(__name__)

SPEAKER_SELECTION_METHODS: tuple[str, ...] = ("auto", "manual", "random", "round_robin")
"""The method names ``speaker_selection_method`` accepts (in any case), besides a callable."""

SPEAKER_TRANSITIONS_TYPES: tuple[str | None, ...] = ("allowed", "disallowed", None)
"""How a transition graph is read; None when there is no graph."""


class SpeakerSelector:
    """Chooses the next speaker of the group it belongs to (see the module docstring)."""

    __slots__ = ("_model", "_warned")

    def __init__(self) -> None:
        self._warned: set[str] = set()
        self._model = ModelSelection()

    def warn_once(self, key: str, message: str) -> None:
        """Log ``message`` the first time ``key`` comes up for this group (not every round)."""
        if key not in self._warned:
            self._warned.add(key)
            logger.warning(message)

    async def select(self, group: GroupChat, last_speaker: Agent, manager: AgentCore) -> Agent:
        """The speaker after ``last_speaker``; ``NoEligibleSpeaker`` when nobody may speak.
        ``manager`` lends its model to "auto" selection."""
        # Through _group_compat: a GroupChat subclass may override AutoGen's steps.
        picked, eligible, history = await _group_compat.prepared(group, last_speaker)
        if picked is not None:
            return picked
        if history is None:
            # "manual" and the human chose nobody: the next agent in order (among the eligible).
            return group.next_agent(last_speaker, eligible)
        return await _group_compat.auto_chosen(group, last_speaker, manager, history, eligible)

    async def prepare(
        self, group: GroupChat, last_speaker: Agent
    ) -> tuple[Agent | None, list[Agent] | None, list[dict[str, Any]] | None]:
        """Every step but the model's (AutoGen's ``_prepare_and_select_agents``): (the agent
        chosen, or None; the eligible agents, None meaning all; for "auto", the transcript as
        the model is to read it, else None)."""
        chosen, eligible, method = await self._narrow(group, last_speaker)
        if chosen is not None:
            return chosen, eligible, None
        if method == "manual":
            return await asyncio.to_thread(group.manual_select_speaker, eligible), eligible, None
        if method == "round_robin":
            return group.next_agent(last_speaker, eligible), eligible, None
        if method == "random":
            return group.random_select_speaker(eligible), eligible, None
        return None, eligible, selector_history(group.messages)

    async def auto(
        self,
        group: GroupChat,
        last_speaker: Agent,
        manager: AgentCore,
        history: list[dict[str, Any]],
        eligible: list[Agent] | None,
    ) -> Agent:
        """The model's choice among ``eligible`` (None: all) after reading ``history``; without
        a model, the next agent in order."""
        agents = eligible if eligible is not None else list(group.agents)
        picked = await self._model.choose(group, last_speaker, manager, agents, history)
        if picked is not None:
            return picked
        self.warn_once(
            "no llm",
            "speaker_selection_method='auto' but the manager has no llm_config (and the group "
            "no select_speaker_auto_llm_config): speakers take turns in order instead",
        )
        return group.next_agent(last_speaker, agents)

    async def _narrow(
        self, group: GroupChat, last_speaker: Agent
    ) -> tuple[Agent | None, list[Agent] | None, str]:
        """(an agent chosen before the method is applied, or None; the eligible agents, None
        meaning all; the method name for this round)."""
        agents = list(group.agents)
        method = await self._method(group, last_speaker)
        if not isinstance(method, str):  # the agent a callable method chose
            return method, agents, "custom"
        repeat = group.allow_repeat_speaker
        allow_repeat = (
            repeat if isinstance(repeat, bool) or repeat is None else last_speaker in repeat
        )
        if len(agents) < 2:
            raise ValueError(
                f"GroupChat is underpopulated with {len(agents)} agents. Add more agents to the "
                "GroupChat or use a two-agent chat instead."
            )
        if len(agents) == 2 and method != "round_robin" and allow_repeat:
            self.warn_once(
                "two",
                "GroupChat is underpopulated with two agents. Consider "
                "speaker_selection_method='round_robin', allow_repeat_speaker=False, or a "
                "two-agent chat.",
            )
        calls = _called_functions(group.messages[-1]) if group.messages else []
        if group.func_call_filter and calls:
            able = _able_to_run(agents, calls)
            if len(able) == 1:
                return able[0], able, method
            agents = able
        if allow_repeat is False:
            agents = [a for a in agents if a is not last_speaker]
        transitions = group.allowed_speaker_transitions_dict
        if last_speaker not in transitions:
            if last_speaker in group.agents:
                raise NoEligibleSpeaker(
                    f"Last speaker {last_speaker.name} is not in the allowed_speaker_transitions_dict."
                )
            eligible = agents  # an outsider (the initiator) may be followed by anyone
        else:
            allowed = transitions[last_speaker]
            eligible = [a for a in agents if a in allowed]
        if len(eligible) == 1:
            return eligible[0], eligible, method
        return None, eligible or None, method

    async def _method(self, group: GroupChat, last_speaker: Agent) -> Any:
        """This round's method name (lower case), or the agent a callable method chose."""
        method: Any = group.speaker_selection_method
        if callable(method):
            chosen = await call_user(method, last_speaker, group)
            if chosen is None:
                raise NoEligibleSpeaker(
                    "Custom speaker selection function returned None. Terminating conversation."
                )
            if _is_agent(chosen):
                if chosen in group.agents:
                    return chosen
                raise ValueError(
                    f"Custom speaker selection function returned an agent {chosen.name!r} that "
                    "is not in the group chat."
                )
            if not isinstance(chosen, str):
                raise ValueError(
                    "Custom speaker selection function returned an object of type "
                    f"{type(chosen).__name__}: it must return an agent of the group, a selection "
                    "method name or None."
                )
            method = chosen
        if not isinstance(method, str) or method.lower() not in SPEAKER_SELECTION_METHODS:
            raise ValueError(
                f"GroupChat speaker_selection_method is set to {method!r}. It should be one of "
                f"{list(SPEAKER_SELECTION_METHODS)} (case insensitive) or a callable."
            )
        return method.lower()


def _called_functions(message: dict[str, Any]) -> list[str]:
    names = []
    fc = message.get("function_call")
    if fc:
        names.append(str(fc.get("name", "")))
    for tc in message.get("tool_calls") or ():
        if tc.get("type", "function") == "function":
            names.append(str((tc.get("function") or {}).get("name", "")))
    return names


def _able_to_run(agents: list[Agent], calls: list[str]) -> list[Agent]:
    """The agents that can execute every called function; failing that, those with any
    function at all (AutoGen's fallback); an error when no agent has one."""
    able = [a for a in agents if _can_execute(a, calls)]
    if not able:
        able = [a for a in agents if getattr(a, "function_map", None)]
        if not able:
            raise ValueError(
                f"No agent can execute the function {', '.join(calls)}. Please check the "
                "function_map of the agents."
            )
    return able


def _can_execute(agent: Any, names: list[str]) -> bool:
    check = getattr(agent, "can_execute_function", None)
    return bool(check(names)) if check is not None else False
