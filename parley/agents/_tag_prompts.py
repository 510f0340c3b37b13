"""``TagPrompts``: every text a :class:`~parley.agents.TagAgent` shows its model, by name.

Each decision point of the loop (how the task is put, what a tool result looks like, what the
model is told after a reply that is not a tool call...) is one field, so a user can replace any
of them and :func:`parley.agents.optimize` can rewrite them. A field may hold placeholders in
braces; only the placeholders that field knows are filled in, so other braces (a JSON example)
stay as written and need no escaping.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = ["PLACEHOLDERS", "TagPrompts"]


@dataclass(frozen=True)
class _Slots:
    """The placeholders of one prompt: those it must contain and those it may."""

    required: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()

    @property
    def known(self) -> tuple[str, ...]:
        return self.required + self.optional


# What each placeholder stands for, per prompt (shown in errors and to the optimiser).
PLACEHOLDERS: Mapping[str, _Slots] = {
    "manifesto": _Slots(optional=("name",)),
    "protocol": _Slots(required=("tools",)),
    "task": _Slots(required=("task",)),
    "tool_result": _Slots(required=("result",), optional=("tool",)),
    "protocol_reminder": _Slots(optional=("tools",)),
    "one_tool_per_reply": _Slots(),
    "unknown_tool": _Slots(required=("tool",), optional=("tools",)),
    "tool_error": _Slots(required=("error",), optional=("tool",)),
    "limit_reached": _Slots(optional=("steps",)),
    "told_user": _Slots(),
    "no_answer": _Slots(),
    "no_readme": _Slots(),
}

_MEANING = {
    "name": "the agent's name",
    "tools": "the tools (the list with descriptions in protocol, their names elsewhere)",
    "task": "the task the agent was given",
    "result": "what the tool returned",
    "tool": "the tool's name",
    "error": "what went wrong in the tool",
    "steps": "the step limit",
}


@dataclass(frozen=True)
class TagPrompts:
    """The named prompts of a :class:`~parley.agents.TagAgent`; frozen, validated on creation.

    The system message is ``manifesto`` followed by ``protocol`` (which lists the tools). Copy
    with changes with :meth:`replace`; a text that lacks a placeholder its prompt needs raises
    ``ValueError`` naming it. Placeholders (in braces) each prompt knows:

    - ``manifesto``: who the agent is and what it is for; may use ``{name}``.
    - ``protocol``: how to call tools; must contain ``{tools}`` (the tool list).
    - ``task``: how a task is put; must contain ``{task}``.
    - ``tool_result``: a tool's result; must contain ``{result}``, may use ``{tool}``.
    - ``protocol_reminder``: the answer to a reply that is not a tool call; may use ``{tools}``.
    - ``one_tool_per_reply``: the answer to a reply with several tool calls.
    - ``unknown_tool``: the answer to an unknown tool name; must contain ``{tool}``, may use
      ``{tools}`` (the names).
    - ``tool_error``: the answer when a tool raised; must contain ``{error}``, may use
      ``{tool}``.
    - ``limit_reached``: the run's reply when the step limit ends it; may use ``{steps}``.
    - ``told_user``, ``no_answer``, ``no_readme``: the results of ``TELL_USER``, of an
      ``ASK_USER`` left unanswered, and of ``READ_README`` when no file was named.
    """

    manifesto: str = (
        "You are {name}. You complete the task you are given one step at a time, using the "
        "tools below: find out what you do not know, check what you are unsure of, and finish "
        "with a clear and complete answer."
    )
    protocol: str = (
        "How you work:\n"
        "- Each reply you write is exactly one tool call and nothing else: "
        "<TOOL: NAME>input</TOOL>\n"
        "- NAME is one of the tools listed below; input is the text the tool receives (it may "
        "span several lines).\n"
        "- The tool's result comes back to you in the next message.\n"
        "- When the task is done, reply <TOOL: END_RUN>your final answer</TOOL>; that answer is "
        "what the user receives.\n"
        "\n"
        "Tools:\n"
        "{tools}"
    )
    task: str = "Your task:\n{task}\n\nReply with one tool call."
    tool_result: str = "Result of {tool}:\n{result}"
    protocol_reminder: str = (
        "That reply was not a tool call, so nothing was done. Write each reply as exactly one "
        "tool call with nothing around it: <TOOL: NAME>input</TOOL>. When you have the answer, "
        "reply <TOOL: END_RUN>your final answer</TOOL>."
    )
    one_tool_per_reply: str = (
        "That reply held more than one tool call, so none of them was run. Call one tool per "
        "reply and wait for its result."
    )
    unknown_tool: str = "There is no tool named {tool}. The tools are: {tools}."
    tool_error: str = "The tool {tool} failed: {error}"
    limit_reached: str = "I stopped after {steps} steps without finishing the task."
    told_user: str = "The user was shown your message."
    no_answer: str = "The user gave no answer."
    no_readme: str = "There is no README to read: the user did not name one for this agent."

    _NAMES: ClassVar[tuple[str, ...]] = tuple(PLACEHOLDERS)

    def __post_init__(self) -> None:
        for name in self._NAMES:
            text = getattr(self, name)
            if not isinstance(text, str):
                raise TypeError(f"TagPrompts.{name} must be a str, got {type(text).__name__}")
            for placeholder in PLACEHOLDERS[name].required:
                if "{" + placeholder + "}" not in text:
                    raise ValueError(
                        f"TagPrompts.{name} must contain the placeholder {{{placeholder}}} "
                        f"({_MEANING[placeholder]}); got {_preview(text)}"
                    )

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The names of the prompts, in the order of the loop."""
        return cls._NAMES

    @staticmethod
    def placeholders(name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """``(required, optional)`` placeholders of the prompt ``name``."""
        slots = PLACEHOLDERS[_check_name(name)]
        return slots.required, slots.optional

    def replace(self, **changes: str) -> TagPrompts:
        """A copy with some prompts replaced (validated like a new one)."""
        for name in changes:
            _check_name(name)
        return dataclasses.replace(self, **changes)

    def as_dict(self) -> dict[str, str]:
        """Every prompt by name (a new dict)."""
        return {name: getattr(self, name) for name in self._NAMES}

    def render(self, prompt: str, /, **values: Any) -> str:
        """The prompt named ``prompt`` with its placeholders filled from ``values``."""
        known = PLACEHOLDERS[_check_name(prompt)].known
        text: str = getattr(self, prompt)
        wanted = [p for p in known if p in values]
        if not wanted:
            return text
        # One pass, so a value that itself contains "{task}" is never filled in again.
        pattern = re.compile(r"\{(" + "|".join(wanted) + r")\}")
        return pattern.sub(lambda m: str(values[m.group(1)]), text)


def _check_name(name: str) -> str:
    if name not in PLACEHOLDERS:
        raise ValueError(
            f"TagPrompts has no prompt named {name!r}; the prompts are: {', '.join(PLACEHOLDERS)}"
        )
    return name


def _preview(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")
