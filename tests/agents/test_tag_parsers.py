"""Property tests of the two parsers a TagAgent's loop and optimize rely on: a reply read as a
tool call, and an optimiser's answer read as prompts; and of filling in placeholders."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.agents import TagPrompts
from parley.agents._optimize_judge import parse_score
from parley.agents._optimize_prompt import parse_prompt_tags, prompt_tag
from parley.agents._tag_tools import TOOL_CALL, parse_tool_call

pytestmark = pytest.mark.timeout(60)

names = st.from_regex(r"[A-Z_]+", fullmatch=True)
# Text that cannot itself close or open a tag.
bodies = st.text().filter(lambda s: "</TOOL>" not in s and "<TOOL: " not in s)
spaces = st.text(alphabet=" \t\n\r", max_size=3)


@given(names, bodies, spaces, spaces)
def test_a_whole_reply_call_is_read_back(name: str, body: str, before: str, after: str) -> None:
    call = parse_tool_call(f"{before}<TOOL: {name}>{body}</TOOL>{after}")
    assert call is not None
    assert (call.name, call.text, call.several) == (name, body.strip(), False)


@given(st.text())
def test_parsing_agrees_with_the_protocol_regex(reply: str) -> None:
    call = parse_tool_call(reply)
    match = TOOL_CALL.match(reply.strip())
    assert (call is None) == (match is None)
    if call is not None and match is not None:
        assert call.name == match.group(1)
        assert call.text == match.group(2).strip()


prose = st.text(min_size=1).filter(lambda s: s.strip() != "" and "TOOL" not in s)


@given(prose, names, bodies)
def test_text_around_a_call_makes_it_not_a_call(words: str, name: str, body: str) -> None:
    call = f"<TOOL: {name}>{body}</TOOL>"
    assert parse_tool_call(f"{words} {call}") is None
    assert parse_tool_call(f"{call} {words}") is None


@given(st.lists(st.tuples(names, bodies), min_size=2, max_size=4))
def test_several_calls_in_one_reply_are_flagged(calls: list[tuple[str, str]]) -> None:
    reply = "\n".join(f"<TOOL: {name}>{body}</TOOL>" for name, body in calls)
    parsed = parse_tool_call(reply)
    assert parsed is not None
    assert parsed.several


prompt_names = st.sampled_from(TagPrompts.names())
prompt_texts = st.text().filter(lambda s: "</PROMPT>" not in s)


@given(st.dictionaries(prompt_names, prompt_texts), st.lists(st.text(), max_size=4))
def test_prompt_tags_are_read_back_from_any_surrounding_text(
    prompts: dict[str, str], noise: list[str]
) -> None:
    noise = [n for n in noise if "<PROMPT" not in n]
    blocks = [prompt_tag(name, text) for name, text in prompts.items()]
    mixed = "\n".join(noise[:1] + blocks[:1] + noise[1:] + blocks[1:])
    assert parse_prompt_tags(mixed) == {name: text.strip() for name, text in prompts.items()}


def test_the_last_block_of_a_name_wins_and_quotes_may_be_single() -> None:
    text = "<PROMPT name='task'>a {task}</PROMPT> then <PROMPT name=\"task\">b {task}</PROMPT>"
    assert parse_prompt_tags(text) == {"task": "b {task}"}


@given(st.dictionaries(st.sampled_from(["task", "tool", "result", "x"]), st.text()))
def test_render_fills_only_the_prompts_own_placeholders_once(values: dict[str, str]) -> None:
    prompts = TagPrompts(tool_result="{tool}|{result}|{x}|{task}|{{result}}")
    rendered = prompts.render("tool_result", **values)
    tool, result = values.get("tool", "{tool}"), values.get("result", "{result}")
    assert rendered == f"{tool}|{result}|{{x}}|{{task}}|{{{result}}}"


@given(st.floats(min_value=0, max_value=10, allow_nan=False).map(lambda x: round(x, 2)), st.text())
def test_a_score_line_is_found_after_any_reasoning(score: float, reasoning: str) -> None:
    assert parse_score(f"{reasoning}\nSCORE: {score}") == score


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ("**Score:** 7.5", 7.5),
        ("SCORE = 7/10", 7.0),
        ("SCORE: 3\nlater\nSCORE: 4.", 4.0),
        ("SCORE: 11", None),
        ("SCORE: -1", None),
        ("the score: 5 is fine", None),
        ("no score here", None),
    ],
)
def test_score_lines(text: str, score: float | None) -> None:
    assert parse_score(text) == score
