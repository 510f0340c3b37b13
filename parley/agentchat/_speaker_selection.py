"""Choosing the next speaker of a group chat (spec 5.3 and 5.4).

``select_speaker`` is the one implementation behind ``GroupChat.select_speaker`` and its async
twin: a callable method first, then the function-call filter, the repeat rule and the
transition graph narrow the candidates, and the method ("manual", "round_robin", "random",
"auto") picks among them.

"auto" asks a model. Its answer is matched to a name robustly (the exact name, the name in
quotes or markdown, a unique case-insensitive match, then names mentioned in the text); when
no single name comes out, the model is asked again with a correction prompt, and when the
retries are used up the next agent in round-robin order speaks. An answer that names nobody,
such as "TERMINATE", therefore never crashes the chat (AutoGen #842, #1064).

Unlike AutoGen, which built two throw-away agents and a private chat for every selection, the
selection model is called directly through one reusable private agent (so message transforms
and custom model clients still apply). When the group has no ``select_speaker_auto_llm_config``
that agent uses the manager's own client, so selection costs show up in the manager's usage.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._calls import call_user
from ..code_utils import content_str
from ..exceptions import NoEligibleSpeaker
from ._group_history import pair_tool_calls
from ._messages import render_message, sanitize_name
from ._registry import _is_agent

if TYPE_CHECKING:
    from .groupchat import GroupChat

__all__ = ["match_speaker", "mentioned_agents", "select_speaker"]

logger = logging.getLogger(__name__)

_SELECTOR_NAME = "speaker_selection_agent"
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


async def select_speaker(groupchat: GroupChat, last_speaker: Any, selector: Any) -> Any:
    """The next speaker (spec 5.3); ``NoEligibleSpeaker`` when nobody may speak."""
    chosen, eligible, method = await _narrow(groupchat, last_speaker)
    if chosen is not None:
        return chosen
    if method == "manual":
        picked = await asyncio.to_thread(groupchat.manual_select_speaker, eligible)
        # Nothing chosen by the human: the next agent in order (among the eligible ones).
        return picked if picked is not None else groupchat.next_agent(last_speaker, eligible)
    if method == "round_robin":
        return groupchat.next_agent(last_speaker, eligible)
    if method == "random":
        return groupchat.random_select_speaker(eligible)
    return await _auto(groupchat, last_speaker, selector, eligible)


async def _narrow(groupchat: GroupChat, last_speaker: Any) -> tuple[Any, list[Any] | None, str]:
    """(an agent chosen without the method, or None; the eligible agents or None for all;
    the method name for this round)."""
    method: Any = groupchat.speaker_selection_method
    agents = list(groupchat.agents)
    if callable(method):
        chosen = await call_user(method, last_speaker, groupchat)
        if chosen is None:
            raise NoEligibleSpeaker(
                "Custom speaker selection function returned None. Terminating conversation."
            )
        if isinstance(chosen, str):
            method = chosen
        elif _is_agent(chosen):
            if chosen in agents:
                return chosen, agents, "custom"
            raise ValueError(
                f"Custom speaker selection function returned an agent {chosen.name!r} that is "
                "not in the group chat."
            )
        else:
            raise ValueError(
                "Custom speaker selection function returned an object of type "
                f"{type(chosen).__name__}: it must return an agent of the group, a selection "
                "method name or None."
            )
    if (
        not isinstance(method, str)
        or method.lower() not in groupchat._VALID_SPEAKER_SELECTION_METHODS
    ):
        raise ValueError(
            f"GroupChat speaker_selection_method is set to {method!r}. It should be one of "
            f"{groupchat._VALID_SPEAKER_SELECTION_METHODS} (case insensitive) or a callable."
        )
    method = method.lower()
    repeat = groupchat.allow_repeat_speaker
    allow_repeat = repeat if isinstance(repeat, bool) or repeat is None else last_speaker in repeat
    if len(agents) < 2:
        raise ValueError(
            f"GroupChat is underpopulated with {len(agents)} agents. Add more agents to the "
            "GroupChat or use a two-agent chat instead."
        )
    if len(agents) == 2 and method != "round_robin" and allow_repeat:
        groupchat._warn_once(
            "two",
            "GroupChat is underpopulated with two agents. Consider "
            "speaker_selection_method='round_robin', allow_repeat_speaker=False, or a "
            "two-agent chat.",
        )

    calls = _called_functions(groupchat.messages[-1]) if groupchat.messages else []
    if groupchat.func_call_filter and calls:
        able = [a for a in agents if _can_execute(a, calls)]
        if len(able) == 1:
            return able[0], able, method
        if not able:
            able = [a for a in agents if getattr(a, "function_map", None)]
            if len(able) == 1:
                return able[0], able, method
            if not able:
                raise ValueError(
                    f"No agent can execute the function {', '.join(calls)}. Please check the "
                    "function_map of the agents."
                )
        agents = able
    if allow_repeat is False:
        agents = [a for a in agents if a is not last_speaker]

    transitions = groupchat.allowed_speaker_transitions_dict
    if last_speaker not in transitions:
        if last_speaker in groupchat.agents:
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


def _called_functions(message: dict[str, Any]) -> list[str]:
    names = []
    fc = message.get("function_call")
    if fc:
        names.append(str(fc.get("name", "")))
    for tc in message.get("tool_calls") or ():
        if tc.get("type", "function") == "function":
            names.append(str((tc.get("function") or {}).get("name", "")))
    return names


def _can_execute(agent: Any, names: list[str]) -> bool:
    check = getattr(agent, "can_execute_function", None)
    return bool(check(names)) if check is not None else False


# -- auto ---------------------------------------------------------------------------------


def _selector_history(groupchat: GroupChat) -> list[Any]:
    """The transcript as the selection model sees it: names the API accepts, the last call
    blanked (it is about to be executed, not answered), every call paired with its results."""
    history: list[Any] = []
    for m in groupchat.messages:
        name = m.get("name")
        if isinstance(name, str) and sanitize_name(name) != name and m.get("role") != "function":
            m = {**m, "name": sanitize_name(name)}
        history.append(m)
    if history and (history[-1].get("function_call") or history[-1].get("tool_calls")):
        last = dict(history[-1])
        last.pop("function_call", None)
        last.pop("tool_calls", None)
        last["content"] = _text(last.get("content"))
        history[-1] = last
    return pair_tool_calls(history)[0]


async def _repair_hook(messages: list[Any]) -> list[Any]:
    # Runs after any message transforms: a transform that keeps the last N messages must not
    # hand the model a tool result without its call.
    return pair_tool_calls(messages)[0]


async def _auto(
    groupchat: GroupChat, last_speaker: Any, selector: Any, eligible: list[Any] | None
) -> Any:
    from ..io import IOStream

    agents = eligible if eligible is not None else list(groupchat.agents)
    agent = groupchat._selection_agent(selector)
    if agent is None:
        groupchat._warn_once(
            "no llm",
            "speaker_selection_method='auto' but the manager has no llm_config (and the group "
            "no select_speaker_auto_llm_config): speakers take turns in order instead",
        )
        return groupchat.next_agent(last_speaker, agents)
    agent.update_system_message(groupchat.select_speaker_msg(agents))
    history = _selector_history(groupchat)
    role = groupchat.role_for_select_speaker_messages
    prompt = groupchat.select_speaker_prompt(agents)
    if prompt is not None:
        history.append({"role": role, "content": prompt})
    agentlist = f"{[a.name for a in agents]}"
    total = 1 + groupchat.max_retries_for_selecting_speaker
    verbose = groupchat.select_speaker_auto_verbose
    out = IOStream.get_default()
    for attempt in range(1, total + 1):
        if verbose and history:
            out.print(render_message(history[-1], "checking_agent", _SELECTOR_NAME), flush=True)
        answer = await agent.a_generate_reply(messages=history, sender=None)
        text = _text(answer.get("content") if isinstance(answer, dict) else answer)
        if verbose:
            out.print(
                render_message({"content": text}, _SELECTOR_NAME, "checking_agent"), flush=True
            )
        name, mentions = match_speaker(text, agents)
        if name is not None:
            if verbose:
                out.print(
                    f">>>>>>>> Select speaker attempt {attempt} of {total} successfully "
                    f"selected: {name}",
                    flush=True,
                )
            return next(a for a in agents if a.name == name)
        several = len(mentions) > 1
        if verbose:
            why = "included multiple agent names" if several else "did not include any agent names"
            out.print(f">>>>>>>> Select speaker attempt {attempt} of {total} failed as it {why}.")
        template = (
            groupchat.select_speaker_auto_multiple_template
            if several
            else groupchat.select_speaker_auto_none_template
        )
        history.append({"role": "assistant", "content": text})
        history.append({"role": role, "content": template.format(agentlist=agentlist)})
    fallback = groupchat.next_agent(last_speaker, agents)
    logger.warning(
        "speaker selection: no single agent name in %d answer(s) of the model; %s speaks next "
        "(round robin)",
        total,
        fallback.name,
    )
    return fallback


# -- the private selection agent ------------------------------------------------------------


def build_selection_agent(groupchat: GroupChat, selector: Any, own: Any, client: Any) -> Any:
    """The agent that asks the model, or None without a model: its own client for
    ``select_speaker_auto_llm_config``, else the manager's (shared, so usage is counted)."""
    from . import _replies
    from ._registry import ReplyEntry
    from .agent import Agent
    from .conversable_agent import ConversableAgent

    if own:
        agent = ConversableAgent(_SELECTOR_NAME, llm_config=own, human_input_mode="NEVER")
    elif client is not None:
        agent = ConversableAgent(_SELECTOR_NAME, llm_config=False, human_input_mode="NEVER")
        agent.client, agent.llm_config = client, selector.llm_config
    else:
        return None
    register_clients(agent.client, groupchat.select_speaker_auto_model_client_cls)
    # Only the model answers: no termination check (its counter would run out after 100
    # selections), no tools, no code.
    agent._reply_func_list[:] = [
        ReplyEntry(
            [Agent, None],
            ConversableAgent.generate_oai_reply,
            _replies.generate_oai_reply,
            builtin=True,
        )
    ]
    transforms = groupchat.select_speaker_transform_messages
    if transforms is not None:
        transforms.add_to_agent(agent)
        agent.register_hook("process_all_messages_before_reply", _repair_hook)
    return agent


def register_clients(client: Any, classes: Any) -> None:
    """Activate the custom model clients the selection config names (spec 5.4)."""
    pending = [s.placeholder for s in getattr(client, "_slots", ()) if s.client is None]
    for name in pending:
        if not classes:
            raise ValueError(
                f"The speaker selection config names the custom model client {name!r}, but no "
                "class was given: pass GroupChat(select_speaker_auto_model_client_cls=...)."
            )
        if isinstance(classes, list):
            matching = {c for c in classes if c.__name__ == name}
            if len(matching) > 1:
                raise RuntimeError(
                    f"More than one unique 'model_client_cls' with __name__ {name!r}."
                )
            if not matching:
                raise ValueError(
                    f"No class in select_speaker_auto_model_client_cls is named {name!r}, the "
                    "model client class named in the speaker selection config."
                )
            cls = next(iter(matching))
        else:
            cls = classes
        client.register_model_client(cls)
