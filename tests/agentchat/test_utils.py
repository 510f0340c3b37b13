"""``parley.agentchat.utils``: ``consolidate_chat_info`` and ``parse_tags_from_content``
(AutoGen's behaviour, and parley's fix of ``parse_tags_from_content``: README, "Differences from
AutoGen 0.2, on purpose")."""

from __future__ import annotations

import copy
import re
from types import SimpleNamespace
from typing import Any

import pytest

from parley import ConversableAgent
from parley.agentchat import utils
from parley.agentchat.utils import consolidate_chat_info, parse_tags_from_content
from parley.io import IOScripted, IOStream

SENDER_MISSING = "sender must be provided."
RECIPIENT_MISSING = "recipient must be provided."
BAD_METHOD = (
    "summary_method must be a string chosen from 'reflection_with_llm' or 'last_msg' or a "
    "callable, or None."
)
NO_CLIENT = (
    "llm client must be set in either the recipient or sender when summary_method is "
    "reflection_with_llm."
)

# "An LLM client" is an agent's `client` attribute that is not None.
WITH_LLM = SimpleNamespace(name="with_llm", client=object())
NO_LLM = SimpleNamespace(name="no_llm", client=None)


def test_public_names() -> None:
    assert set(utils.__all__) == {
        "consolidate_chat_info",
        "gather_usage_summary",
        "parse_tags_from_content",
    }


# -- consolidate_chat_info ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "chat",
    [
        {"sender": NO_LLM, "recipient": NO_LLM},
        {"sender": NO_LLM, "recipient": NO_LLM, "summary_method": None},
        {"sender": NO_LLM, "recipient": NO_LLM, "summary_method": "last_msg"},
        {"sender": NO_LLM, "recipient": NO_LLM, "summary_method": lambda *a: "s"},
        {"sender": WITH_LLM, "recipient": NO_LLM, "summary_method": "reflection_with_llm"},
        {"sender": NO_LLM, "recipient": WITH_LLM, "summary_method": "reflection_with_llm"},
    ],
)
def test_valid_chats_pass_and_are_not_changed(chat: dict[str, Any]) -> None:
    before = dict(chat)
    consolidate_chat_info(chat)
    consolidate_chat_info([chat, chat])
    assert chat == before


@pytest.mark.parametrize(
    ("chat", "uniform_sender", "message"),
    [
        ({"recipient": NO_LLM}, None, SENDER_MISSING),
        ({"sender": None, "recipient": NO_LLM}, None, SENDER_MISSING),
        ({"sender": NO_LLM}, None, RECIPIENT_MISSING),
        ({}, NO_LLM, RECIPIENT_MISSING),
        ({"sender": NO_LLM, "recipient": NO_LLM, "summary_method": "nope"}, None, BAD_METHOD),
        ({"sender": NO_LLM, "recipient": NO_LLM, "summary_method": 3}, None, BAD_METHOD),
        (
            {"sender": NO_LLM, "recipient": NO_LLM, "summary_method": "reflection_with_llm"},
            None,
            NO_CLIENT,
        ),
        # The uniform sender is the sender, whatever the entry says.
        (
            {"sender": WITH_LLM, "recipient": NO_LLM, "summary_method": "reflection_with_llm"},
            NO_LLM,
            NO_CLIENT,
        ),
        # An object without a client attribute has no client.
        (
            {"sender": object(), "recipient": object(), "summary_method": "reflection_with_llm"},
            None,
            NO_CLIENT,
        ),
    ],
)
def test_the_four_assertion_texts(chat: dict[str, Any], uniform_sender: Any, message: str) -> None:
    with pytest.raises(AssertionError) as info:
        consolidate_chat_info(chat, uniform_sender=uniform_sender)
    assert str(info.value) == message


def test_a_uniform_sender_stands_in_for_missing_senders() -> None:
    consolidate_chat_info([{"recipient": NO_LLM}, {"recipient": NO_LLM}], uniform_sender=NO_LLM)
    consolidate_chat_info(
        {"recipient": NO_LLM, "summary_method": "reflection_with_llm"}, uniform_sender=WITH_LLM
    )


def test_a_queue_fails_on_its_first_bad_entry() -> None:
    with pytest.raises(AssertionError, match=re.escape(RECIPIENT_MISSING)):
        consolidate_chat_info([{"sender": NO_LLM, "recipient": NO_LLM}, {"sender": NO_LLM}])


def test_initiate_chat_and_initiate_chats_report_autogen_texts() -> None:
    a = ConversableAgent("a", human_input_mode="NEVER", default_auto_reply="ok")
    b = ConversableAgent("b", human_input_mode="NEVER", default_auto_reply="ok")
    with IOStream.set_default(IOScripted()):
        with pytest.raises(AssertionError) as info:
            a.initiate_chat(b, message="hi", summary_method="reflection_with_llm")
        assert str(info.value) == NO_CLIENT
        with pytest.raises(AssertionError) as info:
            a.initiate_chat(b, message="hi", summary_method="everything")
        assert str(info.value) == BAD_METHOD
        with pytest.raises(AssertionError) as info:
            a.initiate_chats([{"message": "hi"}])
        assert str(info.value) == RECIPIENT_MISSING
    assert a.chat_messages == {}  # refused before anything was sent


# -- parse_tags_from_content ----------------------------------------------------------------------


def attrs(tag: str, content: Any) -> list[dict[str, str]]:
    return [found["attr"] for found in parse_tags_from_content(tag, content)]


@pytest.mark.parametrize(
    ("tag", "text", "expected"),
    [
        # The documented (verified) examples of AutoGen.
        ("img", "<img http://a.com/x.png>", [{"src": "http://a.com/x.png"}]),
        ("img", "<img a b c>", [{"src": "a b c"}]),
        (
            "audio",
            '<audio text="Hello I\'m a robot" prompt="whisper">',
            [{"text": "Hello I'm a robot", "prompt": "whisper"}],
        ),
        ("img", "<img k=v x.png>", [{"src": "k=v x.png"}]),
        ("img", "<img>", []),  # no space after the name
        ("img", "<IMG x>", []),  # the name is case-sensitive
        ("img", "<img   x.png  >", [{"src": "x.png"}]),  # spaces inside are stripped
        ("img", "no tags here", []),
        ("img", "<img 'single'>", [{"src": "'single'"}]),
        ("img", "<img alt='it is'>", [{"alt": "it is"}]),
        ("img", '<img a.png src="b.png">', [{"src": "b.png"}]),  # the attribute replaces it
        ("img", '<img a.png?x="1 2">', [{"a.png?x": "1 2"}]),  # a key is whatever precedes =
        ("img", "<img a=b='c d'>", [{"src": "a=b='c d'"}]),
        # The tag ends at the first ">".
        ("img", '<img alt="a>b">', [{"alt": "a"}]),
    ],
)
def test_tag_grammar(tag: str, text: str, expected: list[dict[str, str]]) -> None:
    assert attrs(tag, text) == expected


@pytest.mark.parametrize(
    ("text", "autogen", "parley"),
    [
        # AutoGen glued the next word into the quoted value, then cut its last character.
        ('<img src="q.png" width=3>', {"src": 'q.png" width='}, {"src": "q.png width=3"}),
        (
            '<img x.png alt="a b" y.png>',
            {"src": "x.png", "alt": 'a b" y.pn'},
            {"src": "x.png y.png", "alt": "a b"},
        ),
        # Spaces inside quotes are kept as written (AutoGen collapsed them).
        ('<img alt="a  b">', {"alt": "a b"}, {"alt": "a  b"}),
        # An unclosed quote runs to the end of the tag (AutoGen cut the last character).
        ('<img alt="abc>', {"alt": "ab"}, {"alt": "abc"}),
    ],
)
def test_quoted_values_are_never_corrupted(
    text: str, autogen: dict[str, str], parley: dict[str, str]
) -> None:
    assert attrs("img", text) == [parley]
    assert attrs("img", text) != [autogen]


def test_the_tag_name_is_matched_literally() -> None:
    # AutoGen built the regex from the name unescaped: "a.b" would also match "<axb ...>".
    assert attrs("a.b", "<axb x> <a.b y>") == [{"src": "y"}]
    assert attrs("img+", "<img+ x> <imgg x>") == [{"src": "x"}]


def test_results_carry_the_tag_and_the_match_in_order() -> None:
    text = "see <img one.png> and <img two.png>!"
    found = parse_tags_from_content("img", text)
    assert [f["tag"] for f in found] == ["img", "img"]
    assert [f["attr"]["src"] for f in found] == ["one.png", "two.png"]
    first = found[0]["match"]
    assert isinstance(first, re.Match)
    assert first.string is text
    assert text[first.start() : first.end()] == "<img one.png>"
    assert first.group(1) == "one.png"


def test_list_content_searches_only_text_parts() -> None:
    content: list[dict[str, Any]] = [
        {"type": "text", "text": "a <img one.png>"},
        {"type": "image_url", "image_url": {"url": "<img hidden.png>"}},
        {"type": "text", "text": "<img two.png> <img three.png>"},
    ]
    snapshot = copy.deepcopy(content)
    found = parse_tags_from_content("img", content)
    assert [f["attr"]["src"] for f in found] == ["one.png", "two.png", "three.png"]
    assert found[1]["match"].string == "<img two.png> <img three.png>"  # the part's own text
    assert content == snapshot


@pytest.mark.parametrize("content", [None, 5, {"type": "text", "text": "<img x>"}, b"<img x>"])
def test_other_content_types_are_a_value_error(content: Any) -> None:
    expected = f"content must be str or list, but got {type(content)}"
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
        parse_tags_from_content("img", content)


def test_a_list_item_that_is_not_a_dict_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError):
        parse_tags_from_content("img", ["<img x.png>"])  # type: ignore[list-item]


# AutoGen 0.2's own tag examples (its test_agentchat_utils), restated: what a 0.2 user sees.
AUTOGEN_TAG_EXAMPLES = [
    (
        "look at <img http://example.com/image.png>",
        [("img", {"src": "http://example.com/image.png"})],
    ),
    (
        "hear <audio http://example.com/au=dio.mp3>",
        [("audio", {"src": "http://example.com/au=dio.mp3"})],
    ),
    (
        "what's here <img url='http://example.com/=image.png'>",
        [("img", {"url": "http://example.com/=image.png"})],
    ),
    (
        "<img http://example.com/image.png> then <audio http://example.com/audio.mp3>",
        [
            ("img", {"src": "http://example.com/image.png"}),
            ("audio", {"src": "http://example.com/audio.mp3"}),
        ],
    ),
    (
        "say it <audio text='Hello I'm a robot' prompt='whisper'>",
        [("audio", {"text": "Hello I'm a robot", "prompt": "whisper"})],
    ),
    (
        "<img http://example.com/image.png width='100'> and <img http://hello.com/image=.png>?",
        [
            ("img", {"src": "http://example.com/image.png", "width": "100"}),
            ("img", {"src": "http://hello.com/image=.png"}),
        ],
    ),
    ("Text with no tags", []),
]


@pytest.mark.parametrize(("message", "expected"), AUTOGEN_TAG_EXAMPLES)
def test_autogens_tag_examples(message: str, expected: list[tuple[str, dict[str, str]]]) -> None:
    import parley as autogen

    for content in (message, [{"type": "text", "text": message}]):
        found = [
            (item["tag"], item["attr"])
            for tag in ("img", "audio", "random")
            # read through the package attribute, as AutoGen code does
            for item in autogen.agentchat.utils.parse_tags_from_content(tag, content)
        ]
        assert found == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # An apostrophe never ends a quoted value, whichever quote opened it.
        ("<audio text='I'm here'>", {"text": "I'm here"}),
        ("<audio text='it's' prompt='don't stop'>", {"text": "it's", "prompt": "don't stop"}),
        ('<audio text="I\'m" x.png>', {"text": "I'm", "src": "x.png"}),
        # Unclosed, with an apostrophe: the value runs to the end.
        ("<audio text='I'm here>", {"text": "I'm here"}),
    ],
)
def test_apostrophes_inside_quoted_values(text: str, expected: dict[str, str]) -> None:
    assert attrs("audio", text) == [expected]
