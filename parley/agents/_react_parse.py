"""Reading one ReAct step from a model's text: an Action with its input, a Final Answer, or
the reason the text is neither.

Pure functions, no I/O. Models vary their spelling ("Action 1:", "ACTION :", "**Action:**",
"Action Input:" on its own line with the input below), so the keywords are matched at the start
of a line, ignoring case, spacing, a step number and Markdown decoration; what a keyword
introduces runs to the next keyword line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Action", "FinalAnswer", "FormatError", "cut_at_observation", "parse_step"]


@dataclass(frozen=True)
class Action:
    """The model asks to run ``tool`` on ``input``."""

    thought: str
    tool: str
    input: str


@dataclass(frozen=True)
class FinalAnswer:
    """The model is done; ``answer`` is its reply."""

    thought: str
    answer: str


@dataclass(frozen=True)
class FormatError:
    """The text is neither an action nor a final answer; ``problem`` says why (for the model)."""

    thought: str
    problem: str


# Start of a keyword line: indentation and Markdown decoration ("**", "- ", "> ", "### ").
_LEAD = r"^[ \t]*(?:[*_#>`-]+[ \t]*)?"
# After the keyword: a step number ("Action 2:"), closing decoration, the colon, and the
# decoration a bold "**Action:**" puts after it.
_TAIL = r"(?:[ \t]*\d+)?[*_`]*[ \t]*:(?:\*\*)?[ \t]*"
_SEP = r"[ \t_-]*"


def _keyword(word: str) -> re.Pattern[str]:
    return re.compile(_LEAD + word + _TAIL, re.IGNORECASE | re.MULTILINE)


_ACTION = _keyword(rf"action(?!{_SEP}input)")
_ACTION_INPUT = _keyword(rf"action{_SEP}input")
_FINAL_ANSWER = _keyword(rf"final{_SEP}answer")
_THOUGHT = _keyword("thought")
_OBSERVATION = _keyword("observation")
# Where the text a keyword introduces ends: the next line that starts a new part of the format.
_NEXT_PART = _keyword(rf"(?:thought|action(?:{_SEP}input)?|observation|final{_SEP}answer|question)")
# The ReAct paper's one-line form: "Action: search[Paris]".
_BRACKETED = re.compile(r"^(?P<tool>[^\[\]]+?)\s*\[(?P<input>.*)\]\s*$", re.DOTALL)
# Quotes, backticks and emphasis models put around a tool's name.
_NAME_WRAPPING = " \t\"'`*"


def cut_at_observation(text: str) -> str:
    """``text`` up to the first line that starts an Observation: the model must not write the
    tool's result itself (a server that ignores the ``stop`` sequences lets it)."""
    match = _OBSERVATION.search(text)
    return text if match is None else text[: match.start()]


def parse_step(text: str) -> Action | FinalAnswer | FormatError:
    """The step ``text`` asks for. When it has both an Action and a Final Answer, the one that
    comes first counts: a model that answers and then rambles on has still answered."""
    action = _ACTION.search(text)
    final = _FINAL_ANSWER.search(text)
    first = min(
        (m for m in (action, final) if m is not None), key=lambda m: m.start(), default=None
    )
    thought = _thought(text[: first.start()] if first is not None else text)
    if first is None:
        if _ACTION_INPUT.search(text):
            return FormatError(thought, "an 'Action Input:' line came without an 'Action:' line")
        return FormatError(thought, "the reply has no 'Action:' line and no 'Final Answer:' line")
    if first is final:
        answer = _part(text, final.end())
        if not answer:
            return FormatError(thought, "the 'Final Answer:' is empty")
        return FinalAnswer(thought, answer)
    assert action is not None
    line_end = text.find("\n", action.end())
    tool = text[action.end() : len(text) if line_end < 0 else line_end].strip()
    given = _ACTION_INPUT.search(text, action.end())
    if given is None:
        bracketed = _BRACKETED.match(tool)
        if bracketed is None:
            return FormatError(thought, "the 'Action:' line is not followed by an 'Action Input:'")
        tool, tool_input = bracketed["tool"], bracketed["input"].strip()
    else:
        tool_input = _unquote(_part(text, given.end()))
    tool = tool.strip(_NAME_WRAPPING).rstrip(".").strip(_NAME_WRAPPING)
    if not tool:
        return FormatError(thought, "the 'Action:' line names no tool")
    return Action(thought, tool, tool_input)


def _part(text: str, start: int) -> str:
    """The text from ``start`` to the next keyword line (or the end), stripped."""
    following = _NEXT_PART.search(text, start)
    return text[start : len(text) if following is None else following.start()].strip()


def _thought(text: str) -> str:
    # The prompt ends with "Thought:", so the model's text usually starts with the thought
    # itself; some models repeat the keyword.
    text = text.strip()
    match = _THOUGHT.match(text)
    return (text[match.end() :] if match else text).strip()


def _unquote(value: str) -> str:
    # 'Action Input: "Paris"' means Paris; a JSON string or object keeps its quotes.
    if len(value) >= 2 and value[0] == value[-1] == '"' and '"' not in value[1:-1]:
        return value[1:-1].strip()
    return value
