"""The texts :class:`~parley.agents.AutonomousAgent` sends: the system prompt (who it is, its
goals, constraints, commands, resources, how to judge itself, the reply format), the time,
memories it is reminded of, the recent history that fits the token budget, and the trigger.

The fixed wording lives in :class:`AutonomousPrompts`; replace any part with
``dataclasses.replace(AutonomousPrompts(), constraints=(...))`` and pass it as ``prompts=``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..agentchat._agent_configs import LLMConfigView
from ..token_count_utils import count_token
from ._autonomous_commands import Command

__all__ = [
    "DEFAULT_ROLE",
    "AutonomousPrompts",
    "fit_history",
    "memory_message",
    "memory_query",
    "model_name",
    "system_prompt",
    "time_message",
]

DEFAULT_ROLE = "an autonomous assistant that reaches its goals step by step, on its own"

_REPLY_SHAPE = {
    "thoughts": {
        "text": "what you think now",
        "reasoning": "why",
        "plan": "- short bulleted list\n- of the next steps",
        "criticism": "what you could do better",
        "speak": "one sentence for the user",
    },
    "command": {"name": "the command's name", "args": {"argument": "value"}},
}
# Every message costs a few tokens of chat format around its content.
_PER_MESSAGE_TOKENS = 4
_CUT_NOTE = "\n... (cut: too long for the short-term memory)"


@dataclass(frozen=True)
class AutonomousPrompts:
    """The fixed wording of an :class:`~parley.agents.AutonomousAgent`'s prompts.

    ``intro`` is formatted with ``name`` and ``role``; ``time`` with ``now``; ``invalid_reply``
    with ``error``. ``constraints``, ``resources`` and ``evaluation`` are numbered lists (the
    resources that depend on the agent's setup, memory and Python, are added to them).
    """

    intro: str = (
        "You are {name}, {role}.\n"
        "Decide every step yourself and never wait for the user's help: pick simple "
        "strategies that stay within the law."
    )
    constraints: tuple[str, ...] = (
        "Your short-term memory is small (about {token_limit} tokens of recent history), so "
        "write anything important to a file as soon as you have it.",
        "If you half-remember something you did earlier, thinking of similar events may bring "
        "it back to you.",
        "No one will help you: act only through the commands.",
        "Use nothing but the commands listed below, with their exact names and arguments.",
    )
    resources: tuple[str, ...] = ("Files in your workspace directory: read, write, list.",)
    evaluation: tuple[str, ...] = (
        "Review what you do, all the time, to be sure you are doing your best.",
        "Criticise your overall approach, constructively and often.",
        "Learn from your earlier decisions and strategies to improve the next ones.",
        "Each command costs money and time: reach the goals in as few steps as you can.",
    )
    reply_format: str = (
        "Reply with a single JSON object and nothing else (no text before or after it, no "
        "Markdown). It must be valid JSON (double quotes, no trailing commas) with exactly "
        "this structure:"
    )
    trigger: str = (
        "Choose your next command and reply with the JSON object in the required format only."
    )
    time: str = "The current time and date is {now}."
    memory_intro: str = "This reminds you of these events from your past:"
    invalid_reply: str = (
        "Your last reply could not be used: {error}. Reply again with only the JSON object of "
        "the required format."
    )


def model_name(llm_config: Mapping[str, Any] | None) -> str:
    """The model tokens are counted for: the first config's, or gpt-4's tokenizer."""
    return LLMConfigView(llm_config).model or "gpt-4"


def _numbered(items: Sequence[str]) -> str:
    return "\n".join(f"{i}. {item}" for i, item in enumerate(items, 1))


def _argument_list(parameters: Mapping[str, Any]) -> str:
    props = parameters.get("properties")
    if not isinstance(props, Mapping):
        return "(not described)"  # a function registered without a schema
    required = set(parameters.get("required") or ())
    shown = {}
    for name, schema in props.items():
        schema = schema if isinstance(schema, Mapping) else {}
        kind = schema.get("type", "any")
        note = schema.get("description")
        optional = "" if name in required else ", optional"
        shown[name] = f"<{kind}{optional}{': ' + note if note else ''}>"
    return json.dumps(shown, ensure_ascii=False)


def system_prompt(
    prompts: AutonomousPrompts,
    *,
    name: str,
    role: str,
    goals: Sequence[str],
    commands: Mapping[str, Command],
    token_limit: int,
    has_memory: bool,
) -> str:
    """The system prompt of a run."""
    constraints = [c.format(token_limit=token_limit) for c in prompts.constraints]
    resources = list(prompts.resources)
    if has_memory:
        resources.append("A long-term memory of your earlier steps.")
    if "execute_python" in commands:
        resources.append("Running Python code (execute_python, execute_python_file).")
    listed = [
        f"{c.name}: {c.description.strip().rstrip('.') or c.name}. "
        f"Args: {_argument_list(c.parameters)}"
        for c in commands.values()
    ]
    shape = json.dumps(_REPLY_SHAPE, indent=4)
    return "\n\n".join(
        [
            prompts.intro.format(name=name, role=role),
            "GOALS:\n" + _numbered(goals),
            "CONSTRAINTS:\n" + _numbered(constraints),
            "COMMANDS:\n" + (_numbered(listed) if listed else "(none)"),
            "RESOURCES:\n" + _numbered(resources),
            "PERFORMANCE EVALUATION:\n" + _numbered(prompts.evaluation),
            f"REPLY FORMAT:\n{prompts.reply_format}\n{shape}",
        ]
    )


def time_message(prompts: AutonomousPrompts, now: datetime) -> dict[str, Any]:
    return {"role": "system", "content": prompts.time.format(now=now.strftime("%c %Z").strip())}


def memory_message(prompts: AutonomousPrompts, memories: Sequence[str]) -> dict[str, Any] | None:
    """The memories recalled for this cycle as one system message (None when there are none)."""
    if not memories:
        return None
    body = "\n\n".join(f"- {m}" for m in memories)
    return {"role": "system", "content": f"{prompts.memory_intro}\n\n{body}"}


def memory_query(history: Sequence[Mapping[str, Any]], goals: Sequence[str]) -> str:
    """What recalls memories: the last few messages of the history, or the goals at first."""
    recent = [str(m.get("content") or "") for m in history[-4:]]
    return "\n".join(recent) if recent else "\n".join(goals)


def fit_history(
    history: Sequence[dict[str, Any]], token_limit: int, model: str
) -> list[dict[str, Any]]:
    """The newest messages of ``history`` that fit in ``token_limit`` tokens, in order.

    The newest message is always kept (its content cut to fit the budget if it is too long):
    the model must see the result of its last command.
    """
    kept: list[dict[str, Any]] = []
    used = 0
    for message in reversed(history):
        content = str(message.get("content") or "")
        tokens = count_token(content, model) + _PER_MESSAGE_TOKENS
        if used + tokens > token_limit:
            if not kept:
                kept.append(_cut(message, content, token_limit / tokens))
            break
        used += tokens
        kept.append(message)
    kept.reverse()
    return kept


def _cut(message: dict[str, Any], content: str, share: float) -> dict[str, Any]:
    """``message`` with its content cut to about ``share`` of its length (a copy)."""
    keep = max(0, int(len(content) * share) - len(_CUT_NOTE))
    return {**message, "content": content[:keep] + _CUT_NOTE}
