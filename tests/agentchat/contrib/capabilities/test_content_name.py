"""TextMessageContentName (website/docs/tutorial/long-contexts.md)."""

from __future__ import annotations

from typing import Any

import pytest

from parley.agentchat.contrib.capabilities.transforms import TextMessageContentName

MESSAGES = [
    {"role": "user", "name": "bob", "content": "hi"},
    {"role": "user", "name": "amy", "content": "amy:\nyo"},
    {"role": "user", "content": "noname"},
]


def contents(messages: list[dict[str, Any]]) -> list[Any]:
    return [m["content"] for m in messages]


def test_autogens_example() -> None:
    transform = TextMessageContentName()
    out = transform.apply_transform(MESSAGES)
    assert contents(out) == ["bob:\nhi", "amy:\nyo", "noname"]
    assert transform.get_logs(MESSAGES, out) == ("1 message(s) changed to incorporate name.", True)
    assert MESSAGES[0]["content"] == "hi"  # the caller's dict is unchanged


def test_end_and_no_deduplication() -> None:
    out = TextMessageContentName(position="end", format_string=" ({name})").apply_transform(
        [{"role": "user", "name": "bob", "content": "hi (bob)"}, *MESSAGES]
    )
    assert contents(out) == ["hi (bob)", "hi (bob)", "amy:\nyo (amy)", "noname"]
    out = TextMessageContentName(deduplicate=False).apply_transform(MESSAGES)
    assert contents(out) == ["bob:\nhi", "amy:\namy:\nyo", "noname"]


def test_nothing_changed() -> None:
    transform = TextMessageContentName()
    messages = [{"role": "user", "name": "bob", "content": ""}, {"role": "user", "content": "x"}]
    out = transform.apply_transform(messages)
    assert contents(out) == ["", "x"]
    assert transform.get_logs(messages, out) == ("No messages changed to incorporate name.", False)


def test_filter() -> None:
    transform = TextMessageContentName(filter_dict={"name": ["amy"]})
    assert contents(transform.apply_transform(MESSAGES))[:2] == ["bob:\nhi", "amy:\nyo"]
    transform = TextMessageContentName(filter_dict={"name": ["bob"]})
    assert contents(transform.apply_transform(MESSAGES))[0] == "hi"


def test_multimodal_content_is_labelled() -> None:
    # AutoGen raised AttributeError/TypeError on list content.
    image = {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}
    messages = [
        {"role": "user", "name": "bob", "content": [{"type": "text", "text": "look"}, image]},
        {"role": "user", "name": "amy", "content": [image, {"type": "text", "text": "here"}]},
    ]
    start = TextMessageContentName().apply_transform(messages)
    assert start[0]["content"] == [{"type": "text", "text": "bob:\nlook"}, image]
    assert start[1]["content"] == [
        {"type": "text", "text": "amy:\n"},
        image,
        {"type": "text", "text": "here"},
    ]
    end = TextMessageContentName(position="end", format_string="\n-{name}").apply_transform(
        messages
    )
    assert end[0]["content"] == [
        {"type": "text", "text": "look"},
        image,
        {"type": "text", "text": "\n-bob"},
    ]
    assert end[1]["content"] == [image, {"type": "text", "text": "here\n-amy"}]
    again = TextMessageContentName().apply_transform(start)
    assert [m["content"] for m in again] == [m["content"] for m in start]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"position": "middle"},
        {"format_string": "no name"},
        {"format_string": 3},
        {"deduplicate": "yes"},
    ],
)
def test_bad_arguments_raise_assertion_error(kwargs: dict[str, Any]) -> None:
    with pytest.raises(AssertionError):
        TextMessageContentName(**kwargs)
