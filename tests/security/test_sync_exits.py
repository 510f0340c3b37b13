"""``SystemExit`` / ``KeyboardInterrupt`` raised by user code inside a chat.

Before the fix they killed parley's background event-loop thread: the caller waited forever,
and so did every other sync chat. Now they reach the caller that ran the chat as themselves, and
the runtime stays up for everyone else. Each chat here runs in a thread joined with a deadline,
so a regression fails the test instead of hanging the suite.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import threading
from collections.abc import Callable
from typing import Any

import pytest

import parley
from parley import AssistantAgent, ConversableAgent, UserProxyAgent
from parley.testing import FakeLLMServer

DEADLINE = 20.0


def outcome(fn: Callable[[], Any], deadline: float = DEADLINE) -> BaseException | Any:
    """Run ``fn`` in a thread; its result or the exception it raised. Fails if it hangs."""
    box: list[Any] = []

    def target() -> None:
        try:
            box.append(fn())
        except BaseException as error:  # SystemExit and KeyboardInterrupt are the point here
            box.append(error)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(deadline)
    if thread.is_alive():
        pytest.fail(f"the chat did not return within {deadline} s: it hangs")
    return box[0]


def pair_with_reply(reply: Callable[..., Any]) -> tuple[ConversableAgent, ConversableAgent]:
    sender = ConversableAgent("sender", llm_config=False, human_input_mode="NEVER")
    receiver = ConversableAgent("receiver", llm_config=False, human_input_mode="NEVER")
    receiver.register_reply([ConversableAgent, None], reply)
    return sender, receiver


def exits(*_: Any, **__: Any) -> Any:
    sys.exit(3)


def interrupts(*_: Any, **__: Any) -> Any:
    raise KeyboardInterrupt


async def async_exits(*_: Any, **__: Any) -> Any:
    sys.exit(4)


async def async_interrupts(*_: Any, **__: Any) -> Any:
    raise KeyboardInterrupt


def a_working_chat() -> str:
    sender = ConversableAgent("a", llm_config=False, human_input_mode="NEVER")
    receiver = ConversableAgent(
        "b", llm_config=False, human_input_mode="NEVER", default_auto_reply="still here"
    )
    result = sender.initiate_chat(receiver, message="ping", max_turns=1, silent=True)
    return str(result.summary)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (exits, SystemExit),
        (interrupts, KeyboardInterrupt),
        (async_exits, SystemExit),
        (async_interrupts, KeyboardInterrupt),
    ],
)
def test_reaches_the_sync_caller_as_itself(reply: Callable[..., Any], expected: type) -> None:
    sender, receiver = pair_with_reply(reply)
    error = outcome(lambda: sender.initiate_chat(receiver, message="hi", max_turns=1, silent=True))
    assert type(error) is expected
    if expected is SystemExit:
        assert error.code in (3, 4)
    # The runtime survived: the next chat, in this thread or another, completes.
    assert outcome(a_working_chat) == "still here"
    assert a_working_chat() == "still here"


@pytest.mark.parametrize(("reply", "expected"), [(exits, SystemExit), (async_exits, SystemExit)])
def test_reaches_the_async_caller_as_itself(reply: Callable[..., Any], expected: type) -> None:
    sender, receiver = pair_with_reply(reply)

    async def chat() -> Any:
        return await sender.a_initiate_chat(receiver, message="hi", max_turns=1, silent=True)

    assert type(outcome(lambda: asyncio.run(chat()))) is expected
    assert outcome(a_working_chat) == "still here"


def test_argparse_in_a_tool_on_bad_model_input(fake_llm: FakeLLMServer) -> None:
    """The reported case: a tool parses the model's text with argparse, which exits on error."""
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)

    def search(query: str) -> str:
        parser = argparse.ArgumentParser(prog="search", exit_on_error=True)
        parser.add_argument("--limit", type=int, required=True)
        return str(parser.parse_args(query.split()))

    parley.register_function(search, caller=assistant, executor=user, description="Search.")
    fake_llm.add_reply(tool_calls=[{"name": "search", "arguments": {"query": "--limit many"}}])
    error = outcome(lambda: user.initiate_chat(assistant, message="find it", silent=True))
    assert isinstance(error, SystemExit)
    assert error.code == 2
    assert outcome(a_working_chat) == "still here"


def test_other_chats_carry_on(fake_llm: FakeLLMServer) -> None:
    """A chat running in another thread when one exits is not disturbed."""
    fake_llm.add_reply("slow answer", delay=1.0)
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
    results: list[Any] = []
    other = threading.Thread(
        target=lambda: results.append(
            outcome(lambda: user.initiate_chat(assistant, message="q", max_turns=1, silent=True))
        ),
        daemon=True,
    )
    other.start()
    while not fake_llm.requests:  # the other chat is now waiting for its answer
        threading.Event().wait(0.01)
    sender, receiver = pair_with_reply(exits)
    assert isinstance(
        outcome(lambda: sender.initiate_chat(receiver, message="hi", max_turns=1, silent=True)),
        SystemExit,
    )
    other.join(DEADLINE)
    assert not other.is_alive()
    assert results[0].summary == "slow answer"
