"""The pieces of one cycle of :class:`~parley.agents.AutonomousAgent` that need no agent: the
model's reply read into thoughts and a command, the human's authorisation answer, the plan as
shown to the human, and the record a cycle leaves."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ._json_repair import ReplyFormatError, parse_json_reply

__all__ = [
    "Authorise",
    "CycleRecord",
    "Feedback",
    "ModelReply",
    "StopReason",
    "StopRun",
    "parse_authorisation",
    "plan_text",
    "read_reply",
]

StopReason = Literal[
    "task_complete", "human_stop", "cycle_limit", "budget", "invalid_reply", "no_goals"
]


@dataclass(frozen=True)
class CycleRecord:
    """What one cycle did, kept in ``agent.cycles``.

    ``thoughts`` is the model's ``thoughts`` object; ``command`` and ``args`` what it asked to
    run; ``result`` the command's result text (or why it did not run); ``feedback`` the
    human's free-text feedback when they gave some instead of authorising; ``cost`` the USD
    cost of the cycle's model calls (0 when cached or unpriced).
    """

    thoughts: Mapping[str, Any]
    command: str
    args: Mapping[str, Any]
    result: str
    feedback: str | None = None
    cost: float = 0.0


@dataclass(frozen=True)
class ModelReply:
    """A reply read from the model: its thoughts, the command it chose, and the reply as
    canonical JSON (what the short-term history keeps)."""

    thoughts: Mapping[str, Any]
    command: str
    args: Mapping[str, Any] = field(default_factory=dict)

    def as_json(self) -> str:
        return json.dumps(
            {"thoughts": dict(self.thoughts), "command": {"name": self.command, "args": self.args}},
            ensure_ascii=False,
        )


def read_reply(text: str) -> ModelReply:
    """The thoughts and command in a model's reply; :class:`ReplyFormatError` saying what is
    wrong when there are none.

    Lenient where the meaning is clear: ``thoughts`` may be missing or a plain string, and
    ``{"command": "name", "args": {...}}`` is read as ``{"command": {"name", "args"}}``.
    """
    reply = parse_json_reply(text)
    thoughts = reply.get("thoughts")
    if thoughts is None:
        thoughts = {}
    elif isinstance(thoughts, str):
        thoughts = {"text": thoughts}
    elif not isinstance(thoughts, dict):
        raise ReplyFormatError('"thoughts" must be an object with "text", "reasoning", ...')
    command = reply.get("command")
    args: Any = None
    if isinstance(command, dict):
        name, args = command.get("name"), command.get("args")
    elif isinstance(command, str):
        name, args = command, reply.get("args")
    elif command is None:
        raise ReplyFormatError('the reply has no "command": {"name": ..., "args": {...}}')
    else:
        raise ReplyFormatError('"command" must be an object: {"name": ..., "args": {...}}')
    if not isinstance(name, str) or not name.strip():
        raise ReplyFormatError('the command has no "name" (a string naming one of the commands)')
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise ReplyFormatError(f'the "args" of command {name!r} must be an object of arguments')
    return ModelReply(thoughts, name.strip(), args)


def plan_text(name: str, reply: ModelReply) -> str:
    """The model's thoughts and next command, as the human sees them before authorising."""
    t = reply.thoughts
    lines = [f"{name.upper()} THOUGHTS: {_text(t.get('text'))}"]
    for key in ("reasoning", "plan", "criticism", "speak"):
        value = t.get(key)
        if value in (None, "", []):
            continue
        if key == "plan":
            lines.append("PLAN:")
            steps = value if isinstance(value, list) else str(value).splitlines()
            steps = [str(s).strip() for s in steps]
            lines.extend(f"  - {s.removeprefix('- ').strip()}" for s in steps if s)
        else:
            lines.append(f"{key.upper()}: {_text(value)}")
    args = json.dumps(dict(reply.args), ensure_ascii=False)
    lines.append(f"NEXT ACTION: COMMAND = {reply.command}  ARGUMENTS = {args}")
    return "\n".join(lines)


def _text(value: Any) -> str:
    return "" if value is None else value if isinstance(value, str) else json.dumps(value)


@dataclass(frozen=True)
class Authorise:
    """The human authorised this command and the ``cycles - 1`` after it."""

    cycles: int


@dataclass(frozen=True)
class StopRun:
    """The human stopped the run."""


@dataclass(frozen=True)
class Feedback:
    """The human answered with text for the model instead of authorising."""

    text: str


_Y = re.compile(r"y(?:es)?", re.IGNORECASE)
_Y_N = re.compile(r"y(?:es)?\s*-\s*(\d+)", re.IGNORECASE)
_NO = re.compile(r"n(?:o)?|exit", re.IGNORECASE)


def parse_authorisation(answer: str) -> Authorise | StopRun | Feedback:
    """``y`` (or an empty answer: a review function's approval) authorises the command, ``y -N``
    the next N commands, ``n`` (or ``exit``) stops; anything else is feedback."""
    text = answer.strip()
    if not text or _Y.fullmatch(text):
        return Authorise(1)
    many = _Y_N.fullmatch(text)
    if many:
        return Authorise(max(1, int(many.group(1))))
    if _NO.fullmatch(text):
        return StopRun()
    return Feedback(text)
