"""The "auto" speaker selection: a model reads the conversation and names the next speaker.

The answer is matched to a name robustly (the exact name, the name in quotes or markdown, a
unique case-insensitive match, then the names mentioned in the text). When no single name comes
out, the model is asked again with a correction prompt; when the retries are used up, the next
agent in round-robin order speaks. An answer that names nobody, such as "TERMINATE", therefore
never crashes the chat (AutoGen #842, #1064).

AutoGen built two throw-away agents and a private chat for every selection. Here the model is
called directly through one private agent, built once and reused (so message transforms and
custom model clients still apply). Without ``select_speaker_auto_llm_config`` that agent uses
the manager's own client, so selection costs show up in the manager's usage.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ..code_utils import content_str
from ._group_history import pair_tool_calls
from ._messages import render_message, sanitize_name
from .agent import Agent
from .conversable_agent import ConversableAgent

if TYPE_CHECKING:
    from ..types import Message
    from ._group_chat import GroupChat
    from ._state import AgentCore

__all__ = [
    "CHECKER_NAME",
    "SELECTOR_NAME",
    "ModelSelection",
    "Verdict",
    "client_class",
    "judge_answer",
    "match_speaker",
    "mentioned_agents",
    "register_clients",
    "selector_history",
]

logger = logging.getLogger(__name__)

SELECTOR_NAME = "speaker_selection_agent"
CHECKER_NAME = "checking_agent"  # AutoGen's name for the side that checks the answers
_TRIM = " \t\r\n\"'`*.,:;!?()[]{}<>"


def mentioned_agents(content: Any, agents: Sequence[Any]) -> dict[str, int]:
    """How often each agent's name occurs in ``content`` as a whole word (AutoGen's counting:
    case-sensitive; the name, the name with ``_`` as spaces, or with ``_`` escaped as ``\\_``)."""
    if isinstance(content, dict):
        content = content.get("content")
    text = f" {_text(content)} "
    mentions: dict[str, int] = {}
    for agent in agents:
        name = agent.name
        forms = {name, name.replace("_", " "), name.replace("_", r"\_")}
        pattern = r"(?<=\W)(" + "|".join(re.escape(f) for f in forms) + r")(?=\W)"
        count = len(re.findall(pattern, text))
        if count:
            mentions[name] = count
    return mentions


def _text(content: Any) -> str:
    try:
        return content_str(content)
    except (TypeError, ValueError, AssertionError):
        return str(content)


def match_speaker(answer: Any, agents: Sequence[Any]) -> tuple[str | None, dict[str, int]]:
    """The agent name a selector's answer designates, or None; and the names it mentions."""
    text = _text(answer.get("content") if isinstance(answer, dict) else answer)
    names = [a.name for a in agents]
    for candidate in (text.strip(), text.strip(_TRIM)):
        if candidate in names:
            return candidate, {candidate: 1}
    folded = text.strip(_TRIM).casefold()
    same = [n for n in names if folded in (n.casefold(), n.replace("_", " ").casefold())]
    if len(same) == 1:
        return same[0], {same[0]: 1}
    mentions = mentioned_agents(text, agents)
    if len(mentions) == 1:
        return next(iter(mentions)), mentions
    return None, mentions


class Verdict(NamedTuple):
    """What one answer of the selection model comes to."""

    name: str | None  # the agent it designates, if exactly one
    several: bool  # no single name because it names several (else: none)
    follow_up: str  # without a name: the prompt that asks the model again


def judge_answer(
    group: GroupChat, answer: Any, agents: Sequence[Agent], attempt: int, total: int
) -> Verdict:
    """Judge attempt ``attempt`` of ``total`` (printed when the group is verbose)."""
    name, mentions = match_speaker(answer, agents)
    out = _console() if group.select_speaker_auto_verbose else None
    if name is not None:
        if out is not None:
            out.print(
                f">>>>>>>> Select speaker attempt {attempt} of {total} successfully selected: "
                f"{name}",
                flush=True,
            )
        return Verdict(name, False, "")
    several = len(mentions) > 1
    if out is not None:
        why = "included multiple agent names" if several else "did not include any agent names"
        out.print(f">>>>>>>> Select speaker attempt {attempt} of {total} failed as it {why}.")
    template = (
        group.select_speaker_auto_multiple_template
        if several
        else group.select_speaker_auto_none_template
    )
    return Verdict(None, several, template.format(agentlist=f"{[a.name for a in agents]}"))


def _console() -> Any:
    from ..io import IOStream  # imported when first printing: ``import parley`` stays light

    return IOStream.get_default()


class ModelSelection:
    """Asks a model for the next speaker. Owns the private agent that makes the requests: it
    is built at the first selection and rebuilt only when the manager, the manager's client or
    the group's ``select_speaker_auto_llm_config`` changes."""

    __slots__ = ("_agent", "_key")

    def __init__(self) -> None:
        self._key: tuple[Any, ...] | None = None
        self._agent: ConversableAgent | None = None

    async def choose(
        self,
        group: GroupChat,
        last_speaker: Agent,
        manager: AgentCore,
        agents: list[Agent],
        transcript: list[dict[str, Any]],
    ) -> Agent | None:
        """The speaker the model names among ``agents`` after reading ``transcript`` (as
        ``selector_history`` makes it); after the retries, the next agent in order. None when
        there is no model to ask."""
        agent = self._selection_agent(group, manager)
        if agent is None:
            return None
        agent.update_system_message(group.select_speaker_msg(agents))
        history = list(transcript)
        role = group.role_for_select_speaker_messages
        prompt = group.select_speaker_prompt(agents)
        if prompt is not None:
            history.append({"role": role, "content": prompt})
        total = 1 + group.max_retries_for_selecting_speaker
        out = _console() if group.select_speaker_auto_verbose else None
        for attempt in range(1, total + 1):
            if out is not None and history:
                out.print(render_message(history[-1], CHECKER_NAME, SELECTOR_NAME), flush=True)
            answer = await agent.a_generate_reply(messages=history, sender=None)
            text = _text(answer.get("content") if isinstance(answer, dict) else answer)
            if out is not None:
                out.print(
                    render_message({"content": text}, SELECTOR_NAME, CHECKER_NAME), flush=True
                )
            verdict = judge_answer(group, text, agents, attempt, total)
            if verdict.name is not None:
                return next(a for a in agents if a.name == verdict.name)
            history.append({"role": "assistant", "content": text})
            history.append({"role": role, "content": verdict.follow_up})
        fallback = group.next_agent(last_speaker, agents)
        logger.warning(
            "speaker selection: no single agent name in %d answer(s) of the model; %s speaks "
            "next (round robin)",
            total,
            fallback.name,
        )
        return fallback

    def _selection_agent(self, group: GroupChat, manager: AgentCore) -> ConversableAgent | None:
        own = group.select_speaker_auto_llm_config or None
        client = None if own else getattr(manager, "client", None)
        key = (manager, own, client)
        if self._key is None or not all(a is b for a, b in zip(self._key, key, strict=True)):
            self._agent = _build_agent(group, manager, own, client)
            self._key = key
        return self._agent


def _build_agent(
    group: GroupChat, manager: AgentCore, own: dict[str, Any] | None, client: Any
) -> ConversableAgent | None:
    """The agent that asks the model, or None without a model: its own client for
    ``select_speaker_auto_llm_config``, else the manager's (shared, so usage is counted)."""
    if own:
        agent = ConversableAgent(SELECTOR_NAME, llm_config=own, human_input_mode="NEVER")
    elif client is not None:
        agent = ConversableAgent(SELECTOR_NAME, llm_config=False, human_input_mode="NEVER")
        agent.client, agent.llm_config = client, manager.llm_config
    else:
        return None
    register_clients(agent.client, group.select_speaker_auto_model_client_cls)
    # Only the model answers: no termination check (its counter would run out after 100
    # selections), no tools, no code.
    agent.register_reply(
        [Agent, None], ConversableAgent.a_generate_oai_reply, remove_other_reply_funcs=True
    )
    transforms = group.select_speaker_transform_messages
    if transforms is not None:
        transforms.add_to_agent(agent)
        agent.register_hook("a_process_all_messages_before_reply", _repair_hook)
    return agent


async def _repair_hook(messages: list[Message]) -> list[Message]:
    # Runs after the message transforms. parley's own transforms keep tool calls with their
    # results (agentchat/contrib/capabilities/_units.py); this is for user-written ones, which
    # may cut anywhere. Where nothing is broken it returns the same messages, shared.
    return pair_tool_calls(messages)[0]


@functools.lru_cache(maxsize=256)
def _api_name(name: str) -> str:
    # A chat has a handful of names; each is checked once, not once per message per round.
    return sanitize_name(name)


def selector_history(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The transcript as the selection model sees it: names the API accepts, the last call
    blanked (it is about to be executed, not answered), every call paired with its results.
    The transcript's dicts are shared, not copied, where nothing changes."""
    history: list[dict[str, Any]] = []
    tools = False
    for m in messages:
        name, role = m.get("name"), m.get("role")
        if isinstance(name, str) and role != "function":
            clean = _api_name(name)
            if clean != name:
                m = {**m, "name": clean}
        if not tools:
            tools = role == "tool" or bool(m.get("tool_calls") or m.get("tool_responses"))
        history.append(m)
    if history and (history[-1].get("function_call") or history[-1].get("tool_calls")):
        last = dict(history[-1])
        last.pop("function_call", None)
        last.pop("tool_calls", None)
        last["content"] = _text(last.get("content"))
        history[-1] = last
    # Pairing is needed only where a tool call or result is (most chats have none).
    return pair_tool_calls(history)[0] if tools else history


def register_clients(client: Any, classes: Any) -> None:
    """Register the custom model client classes (``select_speaker_auto_model_client_cls``)
    that the selection config names by ``model_client_cls``."""
    for name in client.pending_model_clients():
        client.register_model_client(client_class(name, classes))


def client_class(name: str, classes: Any) -> type:
    """The class among ``classes`` (one class, or a list) that the config's
    ``model_client_cls`` ``name`` designates."""
    if not classes:
        raise ValueError(
            f"The speaker selection config names the custom model client {name!r}, but no "
            "class was given: pass GroupChat(select_speaker_auto_model_client_cls=...)."
        )
    if not isinstance(classes, list):
        return classes  # type: ignore[no-any-return]
    matching: set[type] = {c for c in classes if c.__name__ == name}
    if len(matching) > 1:
        raise RuntimeError(f"More than one unique 'model_client_cls' with __name__ {name!r}.")
    if not matching:
        raise ValueError(
            f"No class in select_speaker_auto_model_client_cls is named {name!r}, the "
            "model client class named in the speaker selection config."
        )
    return next(iter(matching))
