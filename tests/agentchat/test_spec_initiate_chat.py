"""Conformance with AutoGen 0.2: ``initiate_chat`` / ``a_initiate_chat`` and ``ChatResult``."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

import pytest

from parley import ChatResult, ConversableAgent, gather_usage_summary
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

from ._spec_support import VARIANTS, agent, contents, initiate


def limited(a_limit: int = 2, b_limit: int = 3) -> tuple[ConversableAgent, ConversableAgent]:
    a = agent("A", max_consecutive_auto_reply=a_limit, default_auto_reply="A-auto")
    b = agent("B", max_consecutive_auto_reply=b_limit, default_auto_reply="B-auto")
    return a, b


# -- the result -----------------------------------------------------------------------------


@VARIANTS
async def test_the_chat_result(variant: str) -> None:
    a, b = limited()
    with IOStream.set_default(IOScripted()):
        result = await initiate(variant, a, b, message="start")
    assert isinstance(result, ChatResult)
    assert result.chat_id is None
    assert result.chat_history == a.chat_messages[b]
    assert len(result.chat_history) == 6
    assert result.summary == "B-auto"
    assert result.cost == gather_usage_summary([a, b])
    assert result.cost == {
        "usage_including_cached_inference": {"total_cost": 0},
        "usage_excluding_cached_inference": {"total_cost": 0},
    }
    assert result.human_input == []


def test_chat_result_is_a_plain_dataclass() -> None:
    fields = [f.name for f in dataclasses.fields(ChatResult)]
    # AutoGen's fields in AutoGen's order (positional construction works), then parley's.
    assert fields == [
        "chat_id",
        "chat_history",
        "summary",
        "cost",
        "human_input",
        "termination_reason",
        "usage",
        "run_id",
        "parsed",
    ]
    empty = ChatResult()
    assert all(getattr(empty, name) is None for name in fields)
    assert ChatResult(summary="x", chat_history=[]) == ChatResult(summary="x", chat_history=[])
    assert ChatResult(summary="x") != ChatResult(summary="y")
    empty.summary = "changed"  # mutable
    assert empty.summary == "changed"
    positional = ChatResult(7, [], "s", {}, ["h"])
    assert (positional.chat_id, positional.summary, positional.human_input) == (7, "s", ["h"])


@VARIANTS
async def test_chat_history_is_a_copy(variant: str) -> None:
    """parley difference: AutoGen returned the live list, which a later chat cleared."""
    a, b = limited()
    with IOStream.set_default(IOScripted()):
        first = await initiate(variant, a, b, message="first")
        second = await initiate(variant, a, b, message="second")
    assert first.chat_history is not second.chat_history
    assert first.chat_history is not a.chat_messages[b]
    assert contents(first.chat_history)[0] == "first"
    assert contents(second.chat_history)[0] == "second"
    a.clear_history()
    assert len(first.chat_history or []) == 6


# -- validation -------------------------------------------------------------------------------


@VARIANTS
async def test_an_unknown_summary_method_is_an_assertion_error(variant: str) -> None:
    a, b = limited()
    with IOStream.set_default(IOScripted()), pytest.raises(AssertionError):
        await initiate(variant, a, b, message="hi", summary_method="summary")
    assert not a.chat_messages[b]  # validated before anything is sent


@VARIANTS
async def test_reflection_without_any_client_is_an_assertion_error(variant: str) -> None:
    a, b = limited()
    with IOStream.set_default(IOScripted()), pytest.raises(AssertionError):
        await initiate(variant, a, b, message="hi", summary_method="reflection_with_llm")
    assert not a.chat_messages[b]


@VARIANTS
async def test_async_reply_functions_run_in_a_sync_chat_too(variant: str) -> None:
    """parley difference: AutoGen's sync initiate_chat raised RuntimeError for an async reply
    function not flagged ``ignore_async_in_sync_chat``; parley runs it. A flagged one is
    skipped in a sync chat, as in AutoGen, and runs in an async chat."""
    a, b = limited()
    calls: list[str] = []

    async def unflagged(*_: Any, **__: Any) -> Any:
        calls.append("unflagged")
        return False, None

    async def flagged(*_: Any, **__: Any) -> Any:
        calls.append("flagged")
        return True, "from flagged"

    b.register_reply([ConversableAgent, None], flagged, ignore_async_in_sync_chat=True)
    b.register_reply([ConversableAgent, None], unflagged)
    with IOStream.set_default(IOScripted()):
        result = await initiate(variant, a, b, message="start", max_turns=1)
    if variant == "sync":
        assert contents(result.chat_history) == ["start", "B-auto"]
        assert calls == ["unflagged"]
    else:
        assert contents(result.chat_history) == ["start", "from flagged"]
        assert calls == ["unflagged", "flagged"]


# -- cache ------------------------------------------------------------------------------------


@VARIANTS
async def test_the_cache_is_installed_for_the_chat_and_restored(variant: str) -> None:
    a, b = limited()
    cache, before_a, before_b = object(), object(), object()
    a.client_cache, b.client_cache = before_a, before_b
    seen: list[Any] = []

    def spy(recipient: Any, *_: Any, **__: Any) -> Any:
        seen.append((recipient.client_cache, recipient.previous_cache))
        return False, None

    b.register_reply([ConversableAgent, None], spy)
    with IOStream.set_default(IOScripted()):
        await initiate(variant, a, b, message="start", cache=cache, max_turns=1)
    assert seen == [(cache, before_b)]
    assert a.client_cache is before_a
    assert b.client_cache is before_b
    assert a.previous_cache is None
    assert b.previous_cache is None


@VARIANTS
async def test_the_cache_is_restored_when_the_chat_fails(variant: str) -> None:
    a, b = limited()

    def boom(*_: Any, **__: Any) -> Any:
        raise RuntimeError("boom")

    b.register_reply([ConversableAgent, None], boom)
    with IOStream.set_default(IOScripted()), pytest.raises(RuntimeError, match="boom"):
        await initiate(variant, a, b, message="start", cache=object())
    assert a.client_cache is None
    assert b.client_cache is None


@VARIANTS
async def test_the_llm_reply_uses_the_chat_cache(
    variant: str, fake_llm: FakeLLMServer, tmp_path: Any
) -> None:
    from parley.cache import Cache

    fake_llm.add_reply("cached answer")
    a = agent("A")
    b = agent("B", llm_config=fake_llm.llm_config())
    with (
        IOStream.set_default(IOScripted()),
        Cache.disk(cache_seed=7, cache_path_root=str(tmp_path)) as cache,
    ):
        first = await initiate(variant, a, b, message="hi", max_turns=1, cache=cache)
        second = await initiate(variant, a, b, message="hi", max_turns=1, cache=cache)
    assert contents(first.chat_history) == contents(second.chat_history)
    assert contents(second.chat_history) == ["hi", "cached answer"]
    assert len(fake_llm.requests) == 1


# -- max_turns ----------------------------------------------------------------------------------


@VARIANTS
@pytest.mark.parametrize(("max_turns", "length"), [(1, 2), (2, 4), (5, 6)])
async def test_max_turns(variant: str, max_turns: int, length: int) -> None:
    """(verified) limits 2 and 3: max_turns=2 gives 4 messages; max_turns=5 stops after 6
    because the sender's own limit fires."""
    a, b = limited()
    with IOStream.set_default(IOScripted()):
        result = await initiate(variant, a, b, message="start", max_turns=max_turns)
    assert len(result.chat_history or []) == length
    assert a.reply_at_receive[b] is False
    assert b.reply_at_receive[a] is False


@VARIANTS
async def test_max_turns_true_counts_as_one(variant: str) -> None:
    a, b = limited()
    with IOStream.set_default(IOScripted()):
        result = await initiate(variant, a, b, message="start", max_turns=True)
    assert contents(result.chat_history) == ["start", "B-auto"]


@VARIANTS
@pytest.mark.parametrize("max_turns", [0, -3, False])
async def test_max_turns_zero_or_negative_sends_nothing(
    variant: str, max_turns: int, caplog: pytest.LogCaptureFixture
) -> None:
    """Edge case: with clear_history=True the last_msg summary is "" plus a warning (a logged
    warning in parley, a UserWarning in AutoGen)."""
    a, b = limited()
    with IOStream.set_default(IOScripted()) as io, caplog.at_level(logging.WARNING):
        result = await initiate(variant, a, b, message="start", max_turns=max_turns)
    assert result.chat_history == []
    assert result.summary == ""
    assert io.text == ""
    assert any(r.levelno == logging.WARNING for r in caplog.records)


@VARIANTS
async def test_max_turns_zero_between_strangers_without_clearing(
    variant: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Edge case: AutoGen raised KeyError from the last_msg summary here; parley treats it like
    the other last_msg summary problems (a logged warning and "")."""
    a, b = limited()
    with IOStream.set_default(IOScripted()), caplog.at_level(logging.WARNING):
        result = await initiate(variant, a, b, message="start", max_turns=0, clear_history=False)
    assert result.summary == ""
    assert result.chat_history == []
    assert any(r.levelno == logging.WARNING for r in caplog.records)


@VARIANTS
async def test_max_turns_stops_when_the_sender_has_nothing_to_say(variant: str) -> None:
    a = agent("A", default_auto_reply="A-auto")
    b = agent("B", default_auto_reply="TERMINATE")
    with IOStream.set_default(IOScripted()):
        result = await initiate(variant, a, b, message="start", max_turns=5)
    assert contents(result.chat_history) == ["start", "TERMINATE"]


@VARIANTS
async def test_a_turn_is_one_message_and_one_reply(variant: str) -> None:
    a = agent("A", default_auto_reply="A-auto")
    b = agent("B", default_auto_reply="B-auto")
    with IOStream.set_default(IOScripted()):
        result = await initiate(variant, a, b, message="start", max_turns=3)
    assert contents(result.chat_history) == [
        "start",
        "B-auto",
        "A-auto",
        "B-auto",
        "A-auto",
        "B-auto",
    ]


@VARIANTS
async def test_without_max_turns_both_sides_reply_at_receive(variant: str) -> None:
    a, b = limited()
    with IOStream.set_default(IOScripted()):
        await initiate(variant, a, b, message="start")
    assert a.reply_at_receive[b] is True
    assert b.reply_at_receive[a] is True


# -- history --------------------------------------------------------------------------------------


@VARIANTS
async def test_clear_history_true_clears_both_sides(variant: str) -> None:
    a, b = limited()
    c = agent("C")
    with IOStream.set_default(IOScripted()):
        c.send("unrelated", a, request_reply=False)
        await initiate(variant, a, b, message="first")
        result = await initiate(variant, a, b, message="second")
    assert contents(result.chat_history)[0] == "second"
    assert len(b.chat_messages[a]) == 6
    assert contents(a.chat_messages[c]) == ["unrelated"]  # other conversations are kept


@VARIANTS
async def test_clear_history_false_continues_the_thread(variant: str) -> None:
    a, b = limited()
    with IOStream.set_default(IOScripted()):
        await initiate(variant, a, b, message="first")
        result = await initiate(variant, a, b, message="second", clear_history=False)
    history = contents(result.chat_history)
    assert len(history) == 12
    assert history[0] == "first"
    assert history[6] == "second"
    assert len(b.chat_messages[a]) == 12


# -- silent -------------------------------------------------------------------------------------------


@VARIANTS
@pytest.mark.parametrize("max_turns", [None, 2])
async def test_silent_is_forwarded_to_every_message(variant: str, max_turns: int | None) -> None:
    a, b = limited()
    with IOStream.set_default(IOScripted()) as io:
        result = await initiate(variant, a, b, message="start", silent=True, max_turns=max_turns)
    assert len(result.chat_history or []) > 2
    assert io.text == ""


@VARIANTS
async def test_not_silent_prints_every_message(variant: str) -> None:
    a, b = limited()
    with IOStream.set_default(IOScripted()) as io:
        await initiate(variant, a, b, message="start")
    assert io.text.count("-" * 80) == 6
    assert io.text.count("A (to B):") == 3
    assert io.text.count("B (to A):") == 3


# -- the first message ----------------------------------------------------------------------------


@VARIANTS
async def test_message_none_asks_the_human(variant: str) -> None:
    """(verified) message=None prompts with ">" and records the answer in human_input."""
    a, b = limited()
    with IOStream.set_default(IOScripted(["typed task"])) as io:
        result = await initiate(variant, a, b, max_turns=1)
    assert io.prompts == [">"]
    assert contents(result.chat_history) == ["typed task", "B-auto"]
    assert result.human_input == ["typed task"]


@VARIANTS
async def test_a_dict_message(variant: str) -> None:
    a, b = limited()
    message = {"content": "hi", "name": "custom", "role": "system", "context": {"k": 1}}
    with IOStream.set_default(IOScripted()):
        result = await initiate(variant, a, b, message=message, max_turns=1)
    assert result.chat_history is not None
    assert result.chat_history[0] == {
        "content": "hi",
        "name": "custom",
        "context": {"k": 1},
        "role": "assistant",
    }
    assert message == {"content": "hi", "name": "custom", "role": "system", "context": {"k": 1}}


@VARIANTS
async def test_a_callable_message_gets_sender_recipient_and_context(variant: str) -> None:
    """(verified) carryover is not appended for a callable; it reads context itself."""
    a, b = limited()
    calls: list[tuple[Any, Any, dict[str, Any]]] = []

    def message(sender: Any, recipient: Any, context: dict[str, Any]) -> str:
        calls.append((sender, recipient, dict(context)))
        return f"task ({context['carryover']})"

    with IOStream.set_default(IOScripted()):
        result = await initiate(
            variant, a, b, message=message, max_turns=1, carryover="earlier", topic="x"
        )
    assert calls == [(a, b, {"carryover": "earlier", "topic": "x"})]
    assert contents(result.chat_history) == ["task (earlier)", "B-auto"]


@VARIANTS
async def test_a_callable_message_may_return_a_dict(variant: str) -> None:
    a, b = limited()
    with IOStream.set_default(IOScripted()):
        result = await initiate(
            variant, a, b, message=lambda s, r, c: {"content": "from dict"}, max_turns=1
        )
    assert contents(result.chat_history) == ["from dict", "B-auto"]


@VARIANTS
async def test_carryover_is_appended_to_a_string_message(variant: str) -> None:
    a, b = limited()
    with IOStream.set_default(IOScripted()):
        result = await initiate(
            variant, a, b, message="task", max_turns=1, carryover=["one", {"content": "two"}]
        )
    assert contents(result.chat_history)[0] == "task\nContext: \none\ntwo"


@VARIANTS
async def test_extra_keyword_arguments_are_accepted(variant: str) -> None:
    a, b = limited()
    with IOStream.set_default(IOScripted()):
        result = await initiate(variant, a, b, message="hi", max_turns=1, verbose=True, foo=1)
    assert contents(result.chat_history) == ["hi", "B-auto"]


def test_parameters_may_be_passed_positionally() -> None:
    a, b = limited()
    with IOStream.set_default(IOScripted()) as io:
        result = a.initiate_chat(b, True, True, None, 1, "last_msg", {}, "positional")
    assert contents(result.chat_history) == ["positional", "B-auto"]
    assert io.text == ""
    assert ConversableAgent.DEFAULT_SUMMARY_METHOD == "last_msg"


async def test_async_parameters_may_be_passed_positionally() -> None:
    a, b = limited()
    with IOStream.set_default(IOScripted()):
        result = await a.a_initiate_chat(b, True, True, None, 1, None, {}, "positional")
    assert contents(result.chat_history) == ["positional", "B-auto"]
    assert result.summary == ""


@VARIANTS
async def test_an_llm_chat_end_to_end(variant: str, fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("4").add_reply("TERMINATE")
    user = agent("user", default_auto_reply="thanks")
    assistant = agent("assistant", llm_config=fake_llm.llm_config(model="gpt-4"))
    with IOStream.set_default(IOScripted()):
        result = await initiate(variant, user, assistant, message="2+2?")
    assert contents(result.chat_history) == ["2+2?", "4", "thanks", "TERMINATE"]
    assert result.summary == ""
    request = fake_llm.requests[1]
    assert request["messages"][0] == {
        "content": "You are a helpful AI Assistant.",
        "role": "system",
    }
    assert [m["role"] for m in request["messages"][1:]] == ["user", "assistant", "user"]
    including = result.cost["usage_including_cached_inference"]  # type: ignore[index]
    assert including["total_cost"] > 0
    assert including["gpt-4"]["total_tokens"] > 0
