"""OpenAI-shaped messages as Anthropic's Messages API takes them (pure translation)."""

from __future__ import annotations

import copy
import itertools
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.oai.providers._anthropic_messages import CONTINUE, to_anthropic, tool_choice, tools

PNG = "iVBORw0KGgo="


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def test_system_is_set_apart_and_same_role_messages_merge() -> None:
    system, messages = to_anthropic(
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "One.", "name": "alice"},
            {"role": "user", "content": "Two.", "name": "bob"},
            {"role": "assistant", "content": "Three."},
        ],
        with_tools=False,
    )
    assert system == "Be brief."
    assert messages == [
        {"role": "user", "content": [_text("One."), _text("Two.")]},  # names dropped
        {"role": "assistant", "content": [_text("Three.")]},
        {"role": "user", "content": [_text(CONTINUE)]},
    ]


def test_images_become_base64_or_url_blocks() -> None:
    _, messages = to_anthropic(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Compare"},
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                    {"type": "image_url", "image_url": {"url": "https://example.com/a.jpg"}},
                ],
            }
        ],
        with_tools=False,
    )
    assert messages[0]["content"] == [
        _text("Compare"),
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/a.jpg"}},
    ]


def _call(call_id: str, name: str = "add", arguments: str = '{"a": 1}') -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_consecutive_tool_results_share_one_user_turn() -> None:
    _, messages = to_anthropic(
        [
            {"role": "user", "content": "Add twice."},
            {"role": "assistant", "content": None, "tool_calls": [_call("a"), _call("b")]},
            {"role": "tool", "tool_call_id": "a", "content": "1"},
            {"role": "tool", "tool_call_id": "b", "content": "2"},
        ],
        with_tools=True,
    )
    assert messages[-1] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "a", "content": "1"},
            {"type": "tool_result", "tool_use_id": "b", "content": "2"},
        ],
    }
    assert [b["type"] for b in messages[1]["content"]] == ["tool_use", "tool_use"]


def test_without_tools_calls_and_results_are_written_as_text() -> None:
    _, messages = to_anthropic(
        [
            {"role": "user", "content": "Add."},
            {"role": "assistant", "content": None, "tool_calls": [_call("a")]},
            {"role": "tool", "tool_call_id": "a", "content": "1"},
        ],
        with_tools=False,
    )
    assert messages[1:] == [
        {"role": "assistant", "content": [_text('(called the tool add with {"a": 1})')]},
        {"role": "user", "content": [_text("(the tool add returned: 1)")]},
    ]


def test_a_call_left_unanswered_is_text() -> None:
    _, messages = to_anthropic(
        [
            {"role": "user", "content": "Add."},
            {"role": "assistant", "content": "Sure.", "tool_calls": [_call("a")]},
        ],
        with_tools=True,
    )
    assert [b["type"] for b in messages[1]["content"]] == ["text", "text"]
    assert messages[-1] == {"role": "user", "content": [_text(CONTINUE)]}


def test_tools_and_tool_choice() -> None:
    params = {
        "tools": [
            {
                "type": "function",
                "function": {"name": "f", "description": "F.", "parameters": {"type": "object"}},
            }
        ]
    }
    assert tools(params) == [{"name": "f", "description": "F.", "input_schema": {"type": "object"}}]
    assert tool_choice("auto") == {"type": "auto"}
    assert tool_choice("required", False) == {"type": "any", "disable_parallel_tool_use": True}
    assert tool_choice({"type": "function", "function": {"name": "f"}}) == {
        "type": "tool",
        "name": "f",
    }
    assert tool_choice(None) is None
    with pytest.raises(ValueError, match="unsupported tool_choice"):
        tool_choice("sometimes")


# -- the invariants, on any conversation ------------------------------------------------------

_ids = st.sampled_from(["t1", "t2", "t3"])
_texts = st.sampled_from(["", "  ", "hello", "bye"])


@st.composite
def _message(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["system", "user", "assistant", "calls", "tool"]))
    if kind == "calls":
        ids = draw(st.lists(_ids, min_size=1, max_size=2, unique=True))
        return {"role": "assistant", "content": draw(_texts), "tool_calls": [_call(i) for i in ids]}
    if kind == "tool":
        return {"role": "tool", "tool_call_id": draw(_ids), "content": draw(_texts)}
    return {"role": kind, "content": draw(_texts), "name": "someone"}


@given(st.lists(_message(), max_size=12), st.booleans())
def test_any_conversation_meets_anthropics_rules(
    conversation: list[dict[str, Any]], with_tools: bool
) -> None:
    before = copy.deepcopy(conversation)
    _, messages = to_anthropic(conversation, with_tools=with_tools)
    assert conversation == before  # the caller's messages are not changed
    roles = [m["role"] for m in messages]
    assert roles[0] == roles[-1] == "user"
    assert all(a != b for a, b in itertools.pairwise(roles))
    for i, m in enumerate(messages):
        blocks = m["content"]
        assert blocks
        assert all(b["text"].strip() for b in blocks if b["type"] == "text")
        uses = [b["id"] for b in blocks if b["type"] == "tool_use"]
        results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
        assert with_tools or not (uses or results)
        if uses:
            answered = [b.get("tool_use_id") for b in messages[i + 1]["content"]]
            assert set(uses) <= set(answered)
        if results:
            assert set(results) <= {b.get("id") for b in messages[i - 1]["content"]}
            kinds = [b["type"] == "tool_result" for b in blocks]
            assert kinds == sorted(kinds, reverse=True)  # results first
    sent = json.dumps(messages)
    for m in conversation:
        if m["role"] in ("user", "assistant") and m["content"].strip():
            assert m["content"] in sent  # nothing said is lost
