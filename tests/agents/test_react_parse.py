"""Reading a ReAct step from a model's text: examples of the spellings models use, and
properties that hold for any text."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parley.agents._react_parse import (
    Action,
    FinalAnswer,
    FormatError,
    cut_at_observation,
    parse_step,
)

PROPERTY = settings(max_examples=300, deadline=None)


@pytest.mark.parametrize(
    "text",
    [
        "I should search.\nAction: search\nAction Input: cats",
        "Thought: I should search.\nAction: search\nAction Input: cats",
        "I should search.\naction:search\naction input:cats",
        "I should search.\nACTION :  search  \nACTION INPUT :   cats   ",
        "I should search.\nAction 1: search\nAction Input 1: cats",
        "I should search.\n**Action:** search\n**Action Input:** cats",
        'I should search.\n  Action: `search`\n  Action_Input: "cats"',
        "I should search.\nAction: search.\nAction-Input:\ncats",
        "I should search.\nAction: search[cats]",
    ],
)
def test_spelling_variants_of_an_action(text: str) -> None:
    assert parse_step(text) == Action("I should search.", "search", "cats")


def test_a_multi_line_input_runs_to_the_next_keyword_line() -> None:
    text = (
        "Compute it.\nAction: python_repl\nAction Input:\n```python\nx = 2\nprint(x * 21)\n```\n"
        "Thought: this line is not part of the input"
    )
    step = parse_step(text)
    assert isinstance(step, Action)
    assert step.input == "```python\nx = 2\nprint(x * 21)\n```"


def test_a_json_input_keeps_its_quotes() -> None:
    step = parse_step('Add.\nAction: add\nAction Input: {"a": 1, "b": 2}')
    assert step == Action("Add.", "add", '{"a": 1, "b": 2}')
    assert parse_step('x\nAction: echo\nAction Input: "a "quoted" word"') == Action(
        "x", "echo", '"a "quoted" word"'
    )


@pytest.mark.parametrize(
    "text",
    [
        "I know it now.\nFinal Answer: 42",
        "I know it now.\nfinal answer:42",
        "Thought: I know it now.\n**Final Answer:** 42",
        "I know it now.\nFINAL_ANSWER : 42\nQuestion: what next?",
    ],
)
def test_spelling_variants_of_a_final_answer(text: str) -> None:
    assert parse_step(text) == FinalAnswer("I know it now.", "42")


def test_the_earlier_of_action_and_final_answer_wins() -> None:
    assert isinstance(parse_step("a\nFinal Answer: 1\nAction: s\nAction Input: x"), FinalAnswer)
    assert isinstance(parse_step("a\nAction: s\nAction Input: x\nFinal Answer: 1"), Action)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("I am just chatting.", "no 'Action:' line and no 'Final Answer:'"),
        ("", "no 'Action:' line and no 'Final Answer:'"),
        ("hm\nAction: search", "not followed by an 'Action Input:'"),
        ("hm\nAction Input: cats", "'Action Input:' line came without an 'Action:'"),
        ("hm\nAction: ``\nAction Input: cats", "names no tool"),
        ("hm\nFinal Answer:   ", "'Final Answer:' is empty"),
    ],
)
def test_format_errors_say_what_is_wrong(text: str, problem: str) -> None:
    step = parse_step(text)
    assert isinstance(step, FormatError)
    assert problem in step.problem


def test_cut_at_observation() -> None:
    text = "go\nAction: s\nAction Input: x\nObservation: made up\nThought: more"
    assert cut_at_observation(text) == "go\nAction: s\nAction Input: x\n"
    assert cut_at_observation("no observation here") == "no observation here"
    assert cut_at_observation("a\n  **observation:** b") == "a\n"


# -- properties ------------------------------------------------------------------------------

KEYWORD_LINE = re.compile(
    r"^[ \t]*(?:[*_#>`-]+[ \t]*)?(?:thought|action|observation|final|question)",
    re.IGNORECASE | re.MULTILINE,
)
names = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,20}", fullmatch=True)
# Inputs and thoughts: any text without a line a parser must read as a keyword.
free_text = st.text(
    # str.splitlines' line breaks other than "\n" are left out: the parser reads "\n" lines.
    st.characters(codec="utf-8", exclude_characters="\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"),
    max_size=80,
).filter(lambda t: not KEYWORD_LINE.search(t))
inputs = free_text.map(str.strip).filter(lambda t: bool(t) and not t.startswith('"'))
thoughts = free_text.map(str.strip)


def spelled(keyword: str, draw_case: int, spaces: str, number: str) -> str:
    word = [keyword, keyword.upper(), keyword.lower()][draw_case]
    return f"{spaces}{word}{number}{spaces}:{spaces}"


spelling = st.tuples(
    st.integers(0, 2), st.sampled_from(["", " ", "  ", "\t"]), st.sampled_from(["", " 1", " 12"])
)


@PROPERTY
@given(thought=thoughts, tool=names, tool_input=inputs, a=spelling, b=spelling)
def test_any_spelling_of_an_action_reads_back(
    thought: str, tool: str, tool_input: str, a: tuple[int, str, str], b: tuple[int, str, str]
) -> None:
    text = f"{thought}\n{spelled('Action', *a)}{tool}\n{spelled('Action Input', *b)}{tool_input}"
    assert parse_step(text) == Action(thought, tool, tool_input)


@PROPERTY
@given(thought=thoughts, answer=inputs, a=spelling)
def test_any_spelling_of_a_final_answer_reads_back(
    thought: str, answer: str, a: tuple[int, str, str]
) -> None:
    text = f"{thought}\n{spelled('Final Answer', *a)}{answer}"
    assert parse_step(text) == FinalAnswer(thought, answer)


@PROPERTY
@given(tool=names, tool_input=inputs, answer=inputs, answer_first=st.booleans())
def test_the_first_of_action_and_final_answer_counts(
    tool: str, tool_input: str, answer: str, answer_first: bool
) -> None:
    action = f"Action: {tool}\nAction Input: {tool_input}"
    final = f"Final Answer: {answer}"
    text = "\n".join([final, action] if answer_first else [action, final])
    expected = FinalAnswer("", answer) if answer_first else Action("", tool, tool_input)
    assert parse_step(text) == expected


@PROPERTY
@given(st.text(max_size=300))
def test_any_text_is_read_as_one_of_the_three(text: str) -> None:
    step = parse_step(text)
    assert isinstance(step, (Action, FinalAnswer, FormatError))
    if isinstance(step, Action):
        assert step.tool
    if isinstance(step, FinalAnswer):
        assert step.answer


@PROPERTY
@given(st.text(max_size=200), st.text(max_size=200))
def test_cutting_keeps_a_prefix_without_an_observation_line(before: str, after: str) -> None:
    text = f"{before}\nObservation: {after}"
    cut = cut_at_observation(text)
    assert text.startswith(cut)
    assert len(cut) <= len(before) + 1
    assert cut_at_observation(cut) == cut
