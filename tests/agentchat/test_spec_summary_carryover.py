"""Conformance with AutoGen 0.2: the first message and carryover, and chat summaries."""

from __future__ import annotations

import copy
import logging
from typing import Any

import pytest

from parley import ConversableAgent, InvalidCarryOverType
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

from ._spec_support import VARIANTS, agent, call, contents, initiate

SUFFIX = "\nContext: \n"


# -- 2.8 generate_init_message and carryover -----------------------------------------------


@VARIANTS
async def test_without_carryover_the_message_is_unchanged(variant: str) -> None:
    a = agent("A")
    message = {"content": "hi", "name": "x"}
    assert await call(variant, a, "generate_init_message", "hi") == "hi"
    assert await call(variant, a, "generate_init_message", message) == message
    for empty in ("", [], None):
        assert await call(variant, a, "generate_init_message", "hi", carryover=empty) == "hi"


@VARIANTS
async def test_generate_init_message_none_asks_the_human(variant: str) -> None:
    a = agent("A")
    with IOStream.set_default(IOScripted(["typed"])) as io:
        result = await call(variant, a, "generate_init_message", None, carryover="c")
    assert result == "typed" + SUFFIX + "c"
    assert io.prompts == [">"]
    assert a._human_input == ["typed"]


@VARIANTS
@pytest.mark.parametrize(
    ("carryover", "text"),
    [
        ("plain text", "plain text"),
        (["one", "two"], "one\ntwo"),
        ([{"content": "from a dict"}, {"content": 3}], "from a dict\n3"),
        ([5, {"role": "user"}, "s"], "5\n{'role': 'user'}\ns"),
    ],
)
async def test_carryover_text(variant: str, carryover: Any, text: str) -> None:
    a = agent("A")
    assert await call(variant, a, "generate_init_message", "task", carryover=carryover) == (
        "task" + SUFFIX + text
    )


@VARIANTS
async def test_a_dict_message_gets_a_copy_with_the_suffix(variant: str) -> None:
    a = agent("A")
    message = {"content": "task", "name": "x"}
    result = await call(variant, a, "generate_init_message", message, carryover="c")
    assert result == {"content": "task" + SUFFIX + "c", "name": "x"}
    assert message == {"content": "task", "name": "x"}


@VARIANTS
async def test_a_multimodal_message_gets_a_new_first_text_part(variant: str) -> None:
    a = agent("A")
    parts = [
        {"type": "text", "text": "what is this?"},
        {"type": "image_url", "image_url": {"url": "http://example.invalid/i.png"}},
    ]
    message = {"content": parts}
    original = copy.deepcopy(message)
    result = await call(variant, a, "generate_init_message", message, carryover=["x", "y"])
    assert result == {"content": [{"type": "text", "text": SUFFIX + "x\ny"}, *parts]}
    assert message == original


@VARIANTS
async def test_a_dict_with_other_content_is_returned_unchanged(variant: str) -> None:
    a = agent("A")
    message = {"content": None, "function_call": {"name": "f", "arguments": "{}"}}
    assert await call(variant, a, "generate_init_message", message, carryover="c") == message


@VARIANTS
async def test_an_invalid_carryover_type(variant: str) -> None:
    a = agent("A")
    with pytest.raises(InvalidCarryOverType):
        await call(variant, a, "generate_init_message", "task", carryover=5)
    with pytest.raises(InvalidCarryOverType):
        await call(variant, a, "generate_init_message", "task", carryover={"content": "x"})


@VARIANTS
async def test_an_unsupported_message_type_with_carryover(variant: str) -> None:
    a = agent("A")
    with pytest.raises(InvalidCarryOverType):
        await call(variant, a, "generate_init_message", 42, carryover="c")


def test_without_carryover_any_message_type_is_passed_through() -> None:
    """Carryover rules apply only when carryover is truthy; the message is then converted by
    send() with dict() (0.1)."""
    a, b = agent("A"), agent("B", default_auto_reply="ok")
    pairs = [("content", "from pairs")]
    assert a.generate_init_message(pairs) == pairs
    with IOStream.set_default(IOScripted()):
        result = a.initiate_chat(b, message=pairs, max_turns=1)
    assert contents(result.chat_history) == ["from pairs", "ok"]


def test_invalid_carry_over_type_is_exported_with_a_message() -> None:
    error = InvalidCarryOverType()
    assert isinstance(error, Exception)
    assert isinstance(error.message, str)
    assert error.message


# -- 2.9 summaries: general ----------------------------------------------------------------


@VARIANTS
async def test_summary_method_none_gives_an_empty_summary(variant: str) -> None:
    a, b = agent("A"), agent("B", default_auto_reply="reply")
    with IOStream.set_default(IOScripted()):
        result = await initiate(variant, a, b, message="hi", max_turns=1, summary_method=None)
    assert result.summary == ""


@VARIANTS
async def test_a_callable_summary_gets_sender_recipient_and_summary_args(variant: str) -> None:
    a, b = agent("A"), agent("B", default_auto_reply="reply")
    calls: list[Any] = []
    cache = object()

    def summary(sender: Any, recipient: Any, summary_args: dict[str, Any]) -> Any:
        calls.append((sender, recipient, dict(summary_args)))
        return {"anything": "goes"}

    args = {"extra": 1}
    with IOStream.set_default(IOScripted()):
        result = await initiate(
            variant,
            a,
            b,
            message="hi",
            max_turns=1,
            summary_method=summary,
            summary_args=args,
            cache=cache,
        )
    assert calls == [(a, b, {"extra": 1, "cache": cache})]
    assert result.summary == {"anything": "goes"}
    assert args == {"extra": 1}  # parley difference: the caller's dict is not mutated


@VARIANTS
async def test_an_explicit_summary_cache_wins(variant: str) -> None:
    a, b = agent("A"), agent("B", default_auto_reply="reply")
    seen: list[Any] = []
    mine, chats = object(), object()
    with IOStream.set_default(IOScripted()):
        await initiate(
            variant,
            a,
            b,
            message="hi",
            max_turns=1,
            summary_method=lambda s, r, args: seen.append(args["cache"]) or "",
            summary_args={"cache": mine},
            cache=chats,
        )
    assert seen == [mine]


@VARIANTS
async def test_the_default_summary_args_are_not_shared_between_calls(variant: str) -> None:
    """(verified flaw) AutoGen's default ``{}`` kept the first call's cache; parley copies."""
    a, b = agent("A"), agent("B", default_auto_reply="reply")
    seen: list[Any] = []

    def summary(sender: Any, recipient: Any, summary_args: dict[str, Any]) -> str:
        seen.append(summary_args.get("cache"))
        return ""

    cache = object()
    with IOStream.set_default(IOScripted()):
        await initiate(
            variant, a, b, message="hi", max_turns=1, summary_method=summary, cache=cache
        )
        await initiate(variant, a, b, message="hi", max_turns=1, summary_method=summary)
    assert seen == [cache, None]


# -- last_msg -----------------------------------------------------------------------------------


@VARIANTS
@pytest.mark.parametrize(
    ("last", "summary"),
    [
        ("all good", "all good"),
        ("done TERMINATE", "done "),
        ("TERMINATE", ""),
        ("aTERMINATEbTERMINATE", "ab"),
        ("  spaced  ", "  spaced  "),
        (
            [
                {"type": "text", "text": "part one TERMINATE"},
                {"type": "image_url", "image_url": {"url": "http://example.invalid/i.png"}},
                {"type": "text", "text": "part two"},
            ],
            "part one \npart two",
        ),
    ],
)
async def test_last_msg_summary(variant: str, last: Any, summary: str) -> None:
    a, b = agent("A"), agent("B", default_auto_reply={"content": last})
    with IOStream.set_default(IOScripted()):
        result = await initiate(variant, a, b, message="hi", max_turns=1)
    assert result.summary == summary


@VARIANTS
async def test_last_msg_summary_of_a_tool_call_is_empty(variant: str) -> None:
    call_ = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    a = agent("A")
    b = agent("B", default_auto_reply={"content": None, "tool_calls": [call_]})
    with IOStream.set_default(IOScripted()):
        result = await initiate(variant, a, b, message="hi", max_turns=1)
    assert result.summary == ""


@VARIANTS
async def test_last_msg_is_the_recipients_last_message(variant: str) -> None:
    """The summary is the last message of the conversation, whoever sent it."""
    a = agent("A", default_auto_reply="A last", max_consecutive_auto_reply=1)
    b = agent("B", default_auto_reply="B reply", max_consecutive_auto_reply=1)
    with IOStream.set_default(IOScripted()):
        result = await initiate(variant, a, b, message="hi")
    assert contents(result.chat_history) == ["hi", "B reply", "A last"]
    assert result.summary == "A last"


@VARIANTS
async def test_terminate_default_reply_ends_the_chat_with_an_empty_summary(variant: str) -> None:
    """(verified) default_auto_reply="TERMINATE" on the recipient ends the chat after its
    first reply, and the last_msg summary is ""."""
    a = agent("A", default_auto_reply="never sent")
    b = agent("B", default_auto_reply="TERMINATE")
    with IOStream.set_default(IOScripted()):
        result = await initiate(variant, a, b, message="hi")
    assert contents(result.chat_history) == ["hi", "TERMINATE"]
    assert result.summary == ""


@VARIANTS
async def test_last_msg_problems_log_a_warning(
    variant: str, caplog: pytest.LogCaptureFixture
) -> None:
    """parley difference: a logged warning where AutoGen emitted a UserWarning."""
    a, b = agent("A"), agent("B")
    with IOStream.set_default(IOScripted()), caplog.at_level(logging.WARNING):
        result = await initiate(variant, a, b, message="hi", max_turns=0)
    assert result.summary == ""
    assert [r for r in caplog.records if r.levelno == logging.WARNING]


# -- reflection_with_llm -----------------------------------------------------------------------


def llm_pair(
    server: FakeLLMServer, *, sender_llm: bool = False, recipient_llm: bool = True, **kwargs: Any
) -> tuple[ConversableAgent, ConversableAgent]:
    a = agent(
        "A",
        system_message="SENDER SYSTEM",
        llm_config=server.llm_config(model="sender-model") if sender_llm else False,
        default_auto_reply="A-auto",
    )
    b = agent(
        "B",
        system_message="RECIPIENT SYSTEM",
        llm_config=server.llm_config(model="recipient-model") if recipient_llm else False,
        default_auto_reply="B-auto",
        **kwargs,
    )
    return a, b


@VARIANTS
async def test_reflection_asks_the_llm_with_the_prompt_last(
    variant: str, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add_reply("the answer is 4").add_reply("Summary: 4.")
    a, b = llm_pair(fake_llm)
    with IOStream.set_default(IOScripted()):
        result = await initiate(
            variant, a, b, message="2+2?", max_turns=1, summary_method="reflection_with_llm"
        )
    assert result.summary == "Summary: 4."
    assert len(fake_llm.requests) == 2
    request = fake_llm.requests[1]
    messages = request["messages"]
    assert messages[-1] == {"role": "system", "content": ConversableAgent.DEFAULT_SUMMARY_PROMPT}
    # The recipient's view of the conversation, without any agent's system message.
    assert [(m["role"], m["content"]) for m in messages[:-1]] == [
        ("user", "2+2?"),
        ("assistant", "the answer is 4"),
    ]
    assert not any("SYSTEM" in str(m.get("content")) for m in messages)
    assert request["model"] == "recipient-model"


def test_the_default_summary_prompt_is_a_sentence() -> None:
    prompt = ConversableAgent.DEFAULT_SUMMARY_PROMPT
    assert isinstance(prompt, str)
    assert "summar" in prompt.lower()


@VARIANTS
async def test_reflection_with_a_custom_prompt_and_role(
    variant: str, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add_reply("summary")
    a, b = llm_pair(fake_llm, recipient_llm=False, sender_llm=True)
    with IOStream.set_default(IOScripted()):
        result = await initiate(
            variant,
            a,
            b,
            message="hi",
            max_turns=1,
            summary_method="reflection_with_llm",
            summary_args={"summary_prompt": "Sum it up.", "summary_role": "user"},
        )
    assert result.summary == "summary"
    request = fake_llm.last_request
    assert request["messages"][-1] == {"role": "user", "content": "Sum it up."}
    assert request["model"] == "sender-model"  # the recipient has no client: the sender's


@VARIANTS
async def test_reflection_prefers_the_recipients_client(
    variant: str, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add_reply("B answers").add_reply("summary")
    a, b = llm_pair(fake_llm, sender_llm=True)
    with IOStream.set_default(IOScripted()):
        await initiate(
            variant, a, b, message="hi", max_turns=1, summary_method="reflection_with_llm"
        )
    assert fake_llm.last_request["model"] == "recipient-model"


@VARIANTS
async def test_reflection_uses_chat_messages_for_summary(
    variant: str, fake_llm: FakeLLMServer
) -> None:
    class Curated(ConversableAgent):
        def chat_messages_for_summary(self, agent: Any) -> list[dict[str, Any]]:
            return [{"content": "curated", "role": "user", "name": "X"}]

    fake_llm.add_reply("summary")
    a = agent("A")
    b = Curated(
        "B",
        llm_config=fake_llm.llm_config(),
        human_input_mode="NEVER",
        default_auto_reply="B-auto",
    )
    b.register_reply([ConversableAgent, None], lambda *_, **__: (True, "no llm"))
    with IOStream.set_default(IOScripted()):
        await initiate(
            variant, a, b, message="hi", max_turns=1, summary_method="reflection_with_llm"
        )
    assert [m["content"] for m in fake_llm.last_request["messages"]] == [
        "curated",
        ConversableAgent.DEFAULT_SUMMARY_PROMPT,
    ]


@VARIANTS
@pytest.mark.parametrize(
    "summary_args", [{"summary_prompt": 42}, {"summary_role": 7}, {"summary_role": ["system"]}]
)
async def test_reflection_rejects_non_string_prompt_or_role(
    variant: str, fake_llm: FakeLLMServer, summary_args: dict[str, Any]
) -> None:
    fake_llm.add_reply("B answers")
    a, b = llm_pair(fake_llm)
    with (
        IOStream.set_default(IOScripted()),
        pytest.raises(ValueError, match=r"summary_(prompt|role)"),
    ):
        await initiate(
            variant,
            a,
            b,
            message="hi",
            max_turns=1,
            summary_method="reflection_with_llm",
            summary_args=summary_args,
        )


@VARIANTS
async def test_reflection_falsy_prompt_and_role_use_the_defaults(
    variant: str, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add_reply("B answers").add_reply("summary")
    a, b = llm_pair(fake_llm)
    with IOStream.set_default(IOScripted()):
        await initiate(
            variant,
            a,
            b,
            message="hi",
            max_turns=1,
            summary_method="reflection_with_llm",
            summary_args={"summary_prompt": "", "summary_role": None},
        )
    assert fake_llm.last_request["messages"][-1] == {
        "role": "system",
        "content": ConversableAgent.DEFAULT_SUMMARY_PROMPT,
    }


@VARIANTS
async def test_reflection_answered_with_a_tool_call_is_a_message_dict(
    variant: str, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add_reply("B answers")
    fake_llm.add_reply(tool_calls=[{"name": "record", "arguments": {"x": 1}, "id": "call_s"}])
    a, b = llm_pair(fake_llm)
    with IOStream.set_default(IOScripted()):
        result = await initiate(
            variant, a, b, message="hi", max_turns=1, summary_method="reflection_with_llm"
        )
    assert isinstance(result.summary, dict)
    (tool_call,) = result.summary["tool_calls"]
    assert tool_call["id"] == "call_s"
    assert tool_call["function"]["name"] == "record"


@VARIANTS
async def test_reflection_bad_request_gives_an_empty_summary(
    variant: str, fake_llm: FakeLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    fake_llm.add_reply("B answers").add_error(400, "context too long")
    a, b = llm_pair(fake_llm)
    with IOStream.set_default(IOScripted()), caplog.at_level(logging.WARNING):
        result = await initiate(
            variant, a, b, message="hi", max_turns=1, summary_method="reflection_with_llm"
        )
    assert result.summary == ""
    assert contents(result.chat_history) == ["hi", "B answers"]


def test_reflection_bad_request_is_logged_and_gives_an_empty_summary(
    fake_llm: FakeLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    # AutoGen emits a UserWarning; parley logs it (deliberate: warnings-as-errors suites must not
    # fail on a model's refusal) and, as AutoGen, the summary is "".
    fake_llm.add_reply("B answers").add_error(400, "context too long")
    a, b = llm_pair(fake_llm)
    with IOStream.set_default(IOScripted()), caplog.at_level("WARNING"):
        result = a.initiate_chat(b, message="hi", max_turns=1, summary_method="reflection_with_llm")
    assert result.summary == ""
    assert "context too long" in caplog.text


@VARIANTS
async def test_reflection_summary_uses_the_chat_cache(
    variant: str, fake_llm: FakeLLMServer, tmp_path: Any
) -> None:
    from parley.cache import Cache

    fake_llm.add_reply("B answers").add_reply("summary")
    a, b = llm_pair(fake_llm)
    with (
        IOStream.set_default(IOScripted()),
        Cache.disk(cache_seed=3, cache_path_root=str(tmp_path)) as cache,
    ):
        for _ in range(2):
            result = await initiate(
                variant,
                a,
                b,
                message="hi",
                max_turns=1,
                cache=cache,
                summary_method="reflection_with_llm",
            )
            assert result.summary == "summary"
    assert len(fake_llm.requests) == 2  # the second chat and its summary come from the cache


@VARIANTS
async def test_reflection_after_a_tool_call_round_trip(
    variant: str, fake_llm: FakeLLMServer
) -> None:
    """The history goes to the LLM as for a reply (2.12 step 3): bundled tool_responses are
    unrolled, so the request is valid for the API."""
    fake_llm.add_reply(tool_calls=[{"name": "add", "arguments": {"a": 1, "b": 2}, "id": "call_1"}])
    fake_llm.add_reply("The sum is 3.")
    fake_llm.add_reply("Summary: 3")
    user = agent("user", function_map={"add": lambda a, b: a + b}, max_consecutive_auto_reply=1)
    assistant = agent("assistant", llm_config=fake_llm.llm_config())
    with IOStream.set_default(IOScripted()):
        result = await initiate(
            variant, user, assistant, message="1+2?", summary_method="reflection_with_llm"
        )
    assert contents(result.chat_history) == ["1+2?", None, "3", "The sum is 3."]
    messages = fake_llm.last_request["messages"]
    assert {"role": "tool", "tool_call_id": "call_1", "content": "3"} in messages
    assert result.summary == "Summary: 3"


@VARIANTS
async def test_reflection_does_not_change_the_history(
    variant: str, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add_reply("B answers").add_reply("summary")
    a, b = llm_pair(fake_llm)
    with IOStream.set_default(IOScripted()):
        result = await initiate(
            variant, a, b, message="hi", max_turns=1, summary_method="reflection_with_llm"
        )
    assert contents(result.chat_history) == ["hi", "B answers"]
    assert contents(b.chat_messages[a]) == ["hi", "B answers"]
