"""Conformance with AutoGen 0.2: human input modes and the consecutive-auto-reply counter."""

from __future__ import annotations

from typing import Any

import pytest

from parley import ConversableAgent
from parley.io import InputExhaustedError, IOScripted, IOStream
from parley.testing import FakeLLMServer

from ._spec_support import VARIANTS, agent, call, contents, initiate

NO_INPUT = ">>>>>>>> NO HUMAN INPUT RECEIVED."
AUTO_REPLY = ">>>>>>>> USING AUTO REPLY..."


def human(name: str, mode: str, **kwargs: Any) -> ConversableAgent:
    kwargs.setdefault("default_auto_reply", f"{name}-auto")
    return agent(name, human_input_mode=mode, **kwargs)


def partner(name: str = "B", **kwargs: Any) -> ConversableAgent:
    kwargs.setdefault("default_auto_reply", f"{name}-reply")
    return agent(name, **kwargs)


# -- ALWAYS ----------------------------------------------------------------------------------


@VARIANTS
async def test_always_worked_example(variant: str) -> None:
    """(verified) answers "", "hello", "exit": start, B, A(auto), B, hello, B."""
    a, b = human("A", "ALWAYS"), partner()
    with IOStream.set_default(IOScripted(["", "hello", "exit"])) as io:
        result = await initiate(variant, a, b, message="start")
    assert contents(result.chat_history) == [
        "start",
        "B-reply",
        "A-auto",
        "B-reply",
        "hello",
        "B-reply",
    ]
    assert result.human_input == ["", "hello", "exit"]
    assert len(io.prompts) == 3
    assert all("B" in p for p in io.prompts)  # the prompt names the sender
    assert io.text.count(NO_INPUT) == 1
    assert io.text.count(AUTO_REPLY) == 1
    assert io.remaining == []


@VARIANTS
async def test_always_never_checks_the_limit(variant: str) -> None:
    a, b = human("A", "ALWAYS", max_consecutive_auto_reply=1), partner()
    with IOStream.set_default(IOScripted(["", "", "", "exit"])):
        result = await initiate(variant, a, b, message="start")
    assert contents(result.chat_history).count("A-auto") == 3
    assert a._consecutive_auto_reply_counter[b] == 0  # reset by the termination


@VARIANTS
async def test_always_empty_answer_to_a_termination_message_terminates(variant: str) -> None:
    a, b = human("A", "ALWAYS"), partner(default_auto_reply="TERMINATE")
    with IOStream.set_default(IOScripted([""])) as io:
        result = await initiate(variant, a, b, message="start")
    assert contents(result.chat_history) == ["start", "TERMINATE"]
    assert NO_INPUT in io.text
    assert AUTO_REPLY not in io.text


@VARIANTS
async def test_always_text_answer_to_a_termination_message_is_sent(variant: str) -> None:
    a, b = human("A", "ALWAYS"), partner(default_auto_reply="TERMINATE")
    with IOStream.set_default(IOScripted(["keep going", "exit"])):
        result = await initiate(variant, a, b, message="start")
    assert contents(result.chat_history) == ["start", "TERMINATE", "keep going", "TERMINATE"]
    assert result.chat_history is not None
    assert result.chat_history[2] == {"content": "keep going", "role": "assistant", "name": "A"}


# -- TERMINATE -------------------------------------------------------------------------------


@VARIANTS
async def test_terminate_worked_example(variant: str) -> None:
    """(verified) limit 1, answers "", "more please", "", "exit": asked four times, with the
    automatic replies interleaved."""
    a, b = human("A", "TERMINATE", max_consecutive_auto_reply=1), partner()
    with IOStream.set_default(IOScripted(["", "more please", "", "exit"])) as io:
        result = await initiate(variant, a, b, message="start")
    assert contents(result.chat_history) == [
        "start",
        "B-reply",
        "A-auto",  # count 0 < 1: no question
        "B-reply",
        "A-auto",  # asked at the limit, "" -> auto reply
        "B-reply",
        "more please",
        "B-reply",
        "A-auto",
        "B-reply",
        "A-auto",  # asked, ""
        "B-reply",
    ]
    assert result.human_input == ["", "more please", "", "exit"]
    assert len(io.prompts) == 4
    assert all("auto-reply" in p for p in io.prompts)  # at the limit: the prompt offers it
    assert io.text.count(NO_INPUT) == 2
    assert io.text.count(AUTO_REPLY) == 4  # every fall-through, asked or not


@VARIANTS
async def test_terminate_asks_only_at_the_limit(variant: str) -> None:
    a, b = human("A", "TERMINATE", max_consecutive_auto_reply=2), partner()
    with IOStream.set_default(IOScripted(["exit"])) as io:
        result = await initiate(variant, a, b, message="start")
    assert contents(result.chat_history) == [
        "start",
        "B-reply",
        "A-auto",
        "B-reply",
        "A-auto",
        "B-reply",
    ]
    assert len(io.prompts) == 1


@VARIANTS
@pytest.mark.parametrize(
    ("answers", "expected"),
    [
        ([""], ["start", "TERMINATE"]),
        (["exit"], ["start", "TERMINATE"]),
        (["not yet", "exit"], ["start", "TERMINATE", "not yet", "TERMINATE"]),
    ],
)
async def test_terminate_asks_on_a_termination_message_below_the_limit(
    variant: str, answers: list[str], expected: list[str]
) -> None:
    a, b = human("A", "TERMINATE"), partner(default_auto_reply="TERMINATE")
    with IOStream.set_default(IOScripted(answers)) as io:
        result = await initiate(variant, a, b, message="start")
    assert contents(result.chat_history) == expected
    assert result.human_input == answers
    assert io.remaining == []
    assert not any("auto-reply" in p for p in io.prompts)  # no auto reply is offered
    assert AUTO_REPLY not in io.text


@VARIANTS
async def test_terminate_empty_answer_to_a_termination_message_at_the_limit(
    variant: str,
) -> None:
    a = human("A", "TERMINATE", max_consecutive_auto_reply=1)
    b = partner()
    b.register_reply([ConversableAgent, None], _second_reply_terminates())
    with IOStream.set_default(IOScripted([""])) as io:
        result = await initiate(variant, a, b, message="start")
    # A auto-replies once (count 1 = limit), then B's TERMINATE reaches A at the limit.
    assert contents(result.chat_history) == ["start", "one", "A-auto", "TERMINATE"]
    assert len(io.prompts) == 1
    assert "auto-reply" not in io.prompts[0]


def _second_reply_terminates() -> Any:
    replies = iter(["one", "TERMINATE", "three"])
    return lambda *_, **__: (True, next(replies))


@VARIANTS
async def test_lower_case_mode_behaves_as_terminate(variant: str) -> None:
    """Edge case: human_input_mode is not validated; "always" acts as TERMINATE."""
    a = human("A", "always")
    b = partner(max_consecutive_auto_reply=2)
    with IOStream.set_default(IOScripted()) as io:  # asking would raise InputExhaustedError
        result = await initiate(variant, a, b, message="start")
    assert contents(result.chat_history) == ["start", "B-reply", "A-auto", "B-reply", "A-auto"]
    assert io.prompts == []
    assert AUTO_REPLY in io.text  # not NEVER
    b.update_max_consecutive_auto_reply(100)
    b._default_auto_reply = "TERMINATE"
    with IOStream.set_default(IOScripted([""])) as io:
        await initiate(variant, a, b, message="start")
    assert len(io.prompts) == 1


@VARIANTS
async def test_human_input_mode_may_be_changed_at_runtime(variant: str) -> None:
    a, b = human("A", "NEVER"), partner()
    a.human_input_mode = "ALWAYS"
    with IOStream.set_default(IOScripted(["exit"])) as io:
        result = await initiate(variant, a, b, message="start")
    assert contents(result.chat_history) == ["start", "B-reply"]
    assert len(io.prompts) == 1


# -- NEVER -----------------------------------------------------------------------------------


@VARIANTS
async def test_worked_example_never_limits_2_and_3(variant: str) -> None:
    """(verified) A (NEVER, limit 2) starts with B (NEVER, limit 3): 6 messages."""
    a = agent("A", max_consecutive_auto_reply=2, default_auto_reply="A-auto")
    b = agent("B", max_consecutive_auto_reply=3, default_auto_reply="B-auto")
    with IOStream.set_default(IOScripted()) as io:
        result = await initiate(variant, a, b, message="start")
    assert contents(result.chat_history) == [
        "start",
        "B-auto",
        "A-auto",
        "B-auto",
        "A-auto",
        "B-auto",
    ]
    assert io.prompts == []
    assert AUTO_REPLY not in io.text
    assert NO_INPUT not in io.text
    assert a._consecutive_auto_reply_counter[b] == 0  # refused: termination resets it
    assert b._consecutive_auto_reply_counter[a] == 3


@VARIANTS
async def test_never_terminates_on_a_termination_message(variant: str) -> None:
    a, b = agent("A", default_auto_reply="A-auto"), partner(default_auto_reply="TERMINATE")
    with IOStream.set_default(IOScripted()) as io:
        result = await initiate(variant, a, b, message="start")
    assert contents(result.chat_history) == ["start", "TERMINATE"]
    assert io.prompts == []


def test_the_default_termination_test_is_exact() -> None:
    """2.3: ``content_str(content) == "TERMINATE"``, no stripping, no substring match."""
    a = agent("A")
    b = agent("B")
    msgs: list[dict[str, Any]] = []
    for text, stops in [
        ("TERMINATE", True),
        ("TERMINATE ", False),
        ("done TERMINATE", False),
        ("terminate", False),
    ]:
        msgs = [{"content": text, "role": "user"}]
        with IOStream.set_default(IOScripted()):
            final, _ = a.check_termination_and_human_reply(msgs, b)
        assert final is stops, text
    multimodal = [{"content": [{"type": "text", "text": "TERMINATE"}], "role": "user"}]
    assert a.check_termination_and_human_reply(multimodal, b) == (True, None)


@VARIANTS
async def test_a_crashing_termination_predicate_does_not_end_the_chat(variant: str) -> None:
    """parley difference: a predicate that fails on content None (a tool call) or a list
    does not crash the chat (AutoGen let the exception through)."""
    tool_call = {
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    }
    a = agent(
        "A",
        max_consecutive_auto_reply=1,
        is_termination_msg=lambda m: m["content"].endswith("TERMINATE"),
    )
    a.register_reply([ConversableAgent, None], lambda *_, **__: (True, "plain"), position=1)
    b = partner(default_auto_reply=tool_call, max_consecutive_auto_reply=1)
    with IOStream.set_default(IOScripted()):
        result = await initiate(variant, a, b, message="start")
    assert contents(result.chat_history) == ["start", None, "plain"]


# -- max_consecutive_auto_reply == 0 ------------------------------------------------------------


@VARIANTS
async def test_limit_zero_never_mode_never_replies(variant: str) -> None:
    a = agent("A")
    b = partner(max_consecutive_auto_reply=0)
    with IOStream.set_default(IOScripted()):
        result = await initiate(variant, a, b, message="start")
    assert contents(result.chat_history) == ["start"]


@VARIANTS
@pytest.mark.parametrize("mode", ["TERMINATE", "ALWAYS"])
async def test_limit_zero_sends_an_empty_answer_as_an_empty_message(
    variant: str, mode: str
) -> None:
    a, b = human("A", mode, max_consecutive_auto_reply=0), partner()
    with IOStream.set_default(IOScripted(["", "exit"])) as io:
        result = await initiate(variant, a, b, message="start")
    assert contents(result.chat_history) == ["start", "B-reply", "", "B-reply"]
    assert result.chat_history is not None
    assert result.chat_history[2] == {"content": "", "role": "assistant", "name": "A"}
    assert len(io.prompts) == 2
    assert NO_INPUT in io.text
    assert AUTO_REPLY not in io.text
    assert a._consecutive_auto_reply_counter[b] == 0


@VARIANTS
@pytest.mark.parametrize("mode", ["TERMINATE", "ALWAYS"])
async def test_limit_zero_empty_answer_to_a_termination_message_terminates(
    variant: str, mode: str
) -> None:
    a = human("A", mode, max_consecutive_auto_reply=0)
    b = partner(default_auto_reply="TERMINATE")
    with IOStream.set_default(IOScripted([""])):
        result = await initiate(variant, a, b, message="start")
    assert contents(result.chat_history) == ["start", "TERMINATE"]


# -- outcomes -------------------------------------------------------------------------------


@VARIANTS
@pytest.mark.parametrize("answer", ["Exit", " exit", "exit ", "EXIT"])
async def test_exit_is_compared_exactly(variant: str, answer: str) -> None:
    a, b = human("A", "ALWAYS"), partner()
    with IOStream.set_default(IOScripted([answer, "exit"])):
        result = await initiate(variant, a, b, message="start")
    assert contents(result.chat_history) == ["start", "B-reply", answer, "B-reply"]


@VARIANTS
async def test_a_human_reply_to_a_tool_call_answers_every_call(variant: str) -> None:
    calls = [
        {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
        {"type": "function", "function": {"name": "g", "arguments": "{}"}},
    ]
    a, b = human("A", "ALWAYS"), partner()
    msgs = [{"content": None, "tool_calls": calls, "role": "assistant"}]
    with IOStream.set_default(IOScripted(["stop that"])):
        final, reply = await call(variant, a, "check_termination_and_human_reply", msgs, b)
    assert final is True
    assert reply == {
        "role": "user",
        "content": "stop that",
        "tool_responses": [
            {"role": "tool", "tool_call_id": "call_1", "content": "USER INTERRUPTED"},
            {"role": "tool", "tool_call_id": "", "content": "USER INTERRUPTED"},
        ],
    }


@VARIANTS
async def test_a_human_reply_to_a_function_call_answers_it(variant: str) -> None:
    a, b = human("A", "ALWAYS"), partner()
    msgs = [{"content": None, "function_call": {"name": "f", "arguments": "{}"}}]
    with IOStream.set_default(IOScripted(["no"])):
        final, reply = await call(variant, a, "check_termination_and_human_reply", msgs, b)
    assert (final, reply) == (
        True,
        {
            "role": "user",
            "content": "no",
            "tool_responses": [{"role": "function", "name": "f", "content": "USER INTERRUPTED"}],
        },
    )


@VARIANTS
async def test_the_interrupted_reply_is_stored_with_its_tool_responses(variant: str) -> None:
    call_ = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    a = human("A", "ALWAYS")
    b = partner(default_auto_reply={"content": None, "tool_calls": [call_]})
    with IOStream.set_default(IOScripted(["stop that", "exit"])):
        result = await initiate(variant, a, b, message="start")
    interrupted = [{"role": "tool", "tool_call_id": "call_1", "content": "USER INTERRUPTED"}]
    assert result.chat_history is not None
    assert result.chat_history[2] == {
        "content": "stop that",
        "tool_responses": interrupted,
        "role": "assistant",
        "name": "A",
    }
    assert b.chat_messages[a][2] == {
        "content": "stop that",
        "tool_responses": interrupted,
        "role": "user",
        "name": "A",
    }


@VARIANTS
async def test_the_twins_of_the_check_behave_alike(variant: str) -> None:
    a = human("A", "TERMINATE", max_consecutive_auto_reply=1)
    b = partner()
    msgs = [{"content": "hi", "role": "user"}]
    with IOStream.set_default(IOScripted(["", "typed", "exit"])):
        assert await call(variant, a, "check_termination_and_human_reply", msgs, b) == (
            False,
            None,
        )
        assert a._consecutive_auto_reply_counter[b] == 1
        assert await call(variant, a, "check_termination_and_human_reply", msgs, b) == (
            False,
            None,
        )
        assert a._consecutive_auto_reply_counter[b] == 2  # asked, "" -> still counted
        assert await call(variant, a, "check_termination_and_human_reply", msgs, b) == (
            True,
            {"role": "user", "content": "typed"},
        )
        assert a._consecutive_auto_reply_counter[b] == 0  # a human reply resets it
        a._consecutive_auto_reply_counter[b] = 5
        assert await call(variant, a, "check_termination_and_human_reply", msgs, b) == (
            True,
            None,
        )
        assert a._consecutive_auto_reply_counter[b] == 0  # so does termination


async def test_async_check_without_messages_or_sender_uses_an_empty_message() -> None:
    a = agent("A")
    assert await a.a_check_termination_and_human_reply() == (False, None)


# -- the counter ----------------------------------------------------------------------------


@VARIANTS
async def test_llm_replies_count_toward_the_limit(variant: str, fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("llm 1").add_reply("llm 2")
    a = agent("A", max_consecutive_auto_reply=2, llm_config=fake_llm.llm_config())
    b = partner()
    with IOStream.set_default(IOScripted()):
        result = await initiate(variant, a, b, message="start")
    assert contents(result.chat_history) == [
        "start",
        "B-reply",
        "llm 1",
        "B-reply",
        "llm 2",
        "B-reply",
    ]
    assert len(fake_llm.requests) == 2


@VARIANTS
async def test_tool_replies_count_toward_the_limit(variant: str) -> None:
    call_ = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    a = agent("A", max_consecutive_auto_reply=1, function_map={"f": lambda: "3"})
    b = partner(default_auto_reply={"content": None, "tool_calls": [call_]})
    with IOStream.set_default(IOScripted()):
        result = await initiate(variant, a, b, message="start")
    assert result.chat_history is not None
    assert len(result.chat_history) == 4  # start, call, tool result, call (refused)
    assert result.chat_history[2]["tool_responses"][0]["content"] == "3"


@VARIANTS
async def test_initiate_chat_resets_both_counters(variant: str) -> None:
    a = agent("A", max_consecutive_auto_reply=2, default_auto_reply="A-auto")
    b = agent("B", max_consecutive_auto_reply=3, default_auto_reply="B-auto")
    a._consecutive_auto_reply_counter[b] = 99
    b._consecutive_auto_reply_counter[a] = 99
    with IOStream.set_default(IOScripted()):
        result = await initiate(variant, a, b, message="start")
        assert len(result.chat_history or []) == 6
        result = await initiate(variant, a, b, message="again")  # same again: both reset
        assert len(result.chat_history or []) == 6


def test_reset_counter_for_one_sender_or_all() -> None:
    a, b, c = agent("A"), agent("B"), agent("C")
    a._consecutive_auto_reply_counter[b] = 3
    a._consecutive_auto_reply_counter[c] = 4
    a.reset_consecutive_auto_reply_counter(b)
    assert a._consecutive_auto_reply_counter[b] == 0
    assert a._consecutive_auto_reply_counter[c] == 4
    a.reset_consecutive_auto_reply_counter()
    assert a._consecutive_auto_reply_counter[c] == 0
    a._consecutive_auto_reply_counter[c] = 4
    a.reset()
    assert a._consecutive_auto_reply_counter[c] == 0


def test_limit_methods() -> None:
    a, b, c = agent("A", max_consecutive_auto_reply=5), agent("B"), agent("C")
    assert a.max_consecutive_auto_reply() == 5
    assert a.max_consecutive_auto_reply(b) == 5
    a.update_max_consecutive_auto_reply(1, b)
    assert a.max_consecutive_auto_reply(b) == 1
    assert a.max_consecutive_auto_reply() == 5
    assert a.max_consecutive_auto_reply(c) == 5
    a.update_max_consecutive_auto_reply(7)
    assert a.max_consecutive_auto_reply() == 7
    assert a.max_consecutive_auto_reply(b) == 7  # every per-sender limit seen so far
    assert a.max_consecutive_auto_reply(c) == 7
    assert a.max_consecutive_auto_reply(agent("D")) == 7  # and new senders


def test_default_limit_is_the_class_constant() -> None:
    assert agent("A").max_consecutive_auto_reply() == 100

    class Patient(ConversableAgent):
        MAX_CONSECUTIVE_AUTO_REPLY = 3

    assert Patient("p").max_consecutive_auto_reply() == 3


@VARIANTS
async def test_a_per_sender_limit_applies_in_a_chat(variant: str) -> None:
    a = agent("A", default_auto_reply="A-auto")
    b = partner(max_consecutive_auto_reply=10)
    a.update_max_consecutive_auto_reply(1, b)
    with IOStream.set_default(IOScripted()):
        result = await initiate(variant, a, b, message="start")
    assert contents(result.chat_history) == ["start", "B-reply", "A-auto", "B-reply"]


# -- get_human_input ------------------------------------------------------------------------


def test_get_human_input_reads_the_stream_and_records_everything() -> None:
    a = agent("A")
    with IOStream.set_default(IOScripted(["x", "", "exit"])) as io:
        assert a.get_human_input("first? ") == "x"
        assert a.get_human_input("second? ") == ""
        assert a.get_human_input("third? ") == "exit"
    assert io.prompts == ["first? ", "second? ", "third? "]
    assert a._human_input == ["x", "", "exit"]


async def test_a_get_human_input_uses_get_human_input() -> None:
    a = agent("A")
    with IOStream.set_default(IOScripted(["typed"])) as io:
        assert await a.a_get_human_input("prompt: ") == "typed"
    assert io.prompts == ["prompt: "]
    assert a._human_input == ["typed"]


@VARIANTS
async def test_an_overridden_get_human_input_is_used(variant: str) -> None:
    class Scripted(ConversableAgent):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.answers = iter(["from override", "exit"])
            self.prompts: list[str] = []

        def get_human_input(self, prompt: str) -> str:
            self.prompts.append(prompt)
            return next(self.answers)

    a = Scripted("A", human_input_mode="ALWAYS", code_execution_config=False)
    b = partner()
    with IOStream.set_default(IOScripted()) as io:  # the stream must not be asked
        result = await initiate(variant, a, b, message="start")
    assert contents(result.chat_history) == ["start", "B-reply", "from override", "B-reply"]
    assert len(a.prompts) == 2
    assert io.prompts == []


async def test_an_overridden_a_get_human_input_is_used_in_async_chats() -> None:
    class Scripted(ConversableAgent):
        answers = iter(["async override", "exit"])

        async def a_get_human_input(self, prompt: str) -> str:
            return next(self.answers)

    a = Scripted("A", human_input_mode="ALWAYS", code_execution_config=False)
    b = partner()
    with IOStream.set_default(IOScripted()):
        result = await a.a_initiate_chat(b, message="start")
    assert contents(result.chat_history) == ["start", "B-reply", "async override", "B-reply"]


@VARIANTS
async def test_asking_past_the_script_fails_loudly(variant: str) -> None:
    a, b = human("A", "ALWAYS"), partner()
    with IOStream.set_default(IOScripted([""])), pytest.raises(InputExhaustedError):
        await initiate(variant, a, b, message="start")


# -- ChatResult.human_input -------------------------------------------------------------------


@VARIANTS
async def test_human_input_is_reset_only_when_the_history_is_cleared(variant: str) -> None:
    a, b = human("A", "ALWAYS"), partner()
    with IOStream.set_default(IOScripted(["one", "exit", "two", "exit", "three", "exit"])):
        first = await initiate(variant, a, b, message="start")
        second = await initiate(variant, a, b, message="more", clear_history=False)
        third = await initiate(variant, a, b, message="fresh")
    assert first.human_input == ["one", "exit"]
    assert second.human_input == ["one", "exit", "two", "exit"]
    assert third.human_input == ["three", "exit"]


@VARIANTS
async def test_human_input_records_only_the_initiators_answers(variant: str) -> None:
    a = agent("A", default_auto_reply="A-auto", max_consecutive_auto_reply=1)
    b = human("B", "ALWAYS")
    with IOStream.set_default(IOScripted(["b says", "exit"])):
        result = await initiate(variant, a, b, message="start")
    assert result.human_input == []
    assert b._human_input == ["b says", "exit"]
