"""The conversation core: one async implementation behind sync and async APIs."""

from __future__ import annotations

import asyncio
import copy
import json
import sys
from typing import Any

import pytest

from parley import AssistantAgent, ConversableAgent, UserProxyAgent
from parley.agentchat import APPROVE, EXIT, ReviewRequest
from parley.agentchat._messages import InvalidAgentNameError
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer
from tests._overlap import OVERLAP_TIMEOUT, AllInFlight


def bot(name: str, server: FakeLLMServer, **kwargs: Any) -> ConversableAgent:
    kwargs.setdefault("human_input_mode", "NEVER")
    return ConversableAgent(name, llm_config=server.llm_config(), **kwargs)


def counting_responder(request: dict[str, Any]) -> str:
    return f"reply {len(request['messages'])}"


def transcript(result: Any) -> list[tuple[str, str, Any]]:
    return [(m["role"], m.get("name", ""), m["content"]) for m in result.chat_history]


def test_sync_and_async_chats_produce_the_same_transcript(fake_llm: FakeLLMServer) -> None:
    fake_llm.responder = counting_responder
    a, b = bot("alice", fake_llm), bot("bob", fake_llm)
    sync_result = a.initiate_chat(b, message="hello", max_turns=3, silent=True)
    sync_requests = fake_llm.requests
    fake_llm.reset()
    fake_llm.responder = counting_responder
    a2, b2 = bot("alice", fake_llm), bot("bob", fake_llm)
    async_result = asyncio.run(a2.a_initiate_chat(b2, message="hello", max_turns=3, silent=True))
    assert transcript(sync_result) == transcript(async_result)
    assert len(sync_result.chat_history) == 6
    assert [r["messages"] for r in sync_requests] == [r["messages"] for r in fake_llm.requests]


async def test_sync_api_inside_a_running_loop(fake_llm: FakeLLMServer) -> None:
    fake_llm.responder = counting_responder
    a, b = bot("alice", fake_llm), bot("bob", fake_llm)
    result = a.initiate_chat(b, message="from a notebook cell", max_turns=2, silent=True)
    assert len(result.chat_history) == 4


async def test_fifty_concurrent_async_chats(fake_llm: FakeLLMServer) -> None:
    # Every chat's first call is held until all fifty are in flight: chats run one after
    # another would never get there, and fail after OVERLAP_TIMEOUT.
    fake_llm.responder = AllInFlight(50, lambda req: f"turn {len(req['messages'])}")
    pairs = [(bot(f"a{i}", fake_llm), bot(f"b{i}", fake_llm)) for i in range(50)]
    results = await asyncio.gather(
        *(
            a.a_initiate_chat(b, message=f"chat {i}", max_turns=3, silent=True)
            for i, (a, b) in enumerate(pairs)
        )
    )
    assert all(len(r.chat_history) == 6 for r in results)
    assert [r.chat_history[0]["content"] for r in results] == [f"chat {i}" for i in range(50)]


def test_long_chat_does_not_recurse(fake_llm: FakeLLMServer) -> None:
    a = ConversableAgent(
        "a", human_input_mode="NEVER", default_auto_reply="ping", max_consecutive_auto_reply=800
    )
    b = ConversableAgent(
        "b", human_input_mode="NEVER", default_auto_reply="pong", max_consecutive_auto_reply=800
    )
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(400)  # AutoGen's send/receive recursion would need thousands of frames
    try:
        result = a.initiate_chat(b, message="start", silent=True)
    finally:
        sys.setrecursionlimit(limit)
    assert len(result.chat_history) == 1 + 800 + 800


def test_async_reply_function_runs_in_a_sync_chat() -> None:
    async def shout(
        agent: Any, messages: Any = None, sender: Any = None, config: Any = None
    ) -> tuple[bool, str]:
        await asyncio.sleep(0)
        return True, messages[-1]["content"].upper()

    a = ConversableAgent("a", human_input_mode="NEVER")
    b = ConversableAgent("b", human_input_mode="NEVER")
    b.register_reply([ConversableAgent, None], shout)
    result = a.initiate_chat(b, message="quiet please", max_turns=1, silent=True)
    assert result.chat_history[-1]["content"] == "QUIET PLEASE"


def test_sync_reply_function_runs_in_an_async_chat() -> None:
    def echo(
        agent: Any, messages: Any = None, sender: Any = None, config: Any = None
    ) -> tuple[bool, str]:
        return True, f"echo: {messages[-1]['content']} ({config['n']})"

    a = ConversableAgent("a", human_input_mode="NEVER")
    b = ConversableAgent("b", human_input_mode="NEVER")
    b.register_reply(ConversableAgent, echo, config={"n": 1})
    result = asyncio.run(a.a_initiate_chat(b, message="x", max_turns=1, silent=True))
    assert result.chat_history[-1]["content"] == "echo: x (1)"


def test_reply_function_order_triggers_and_exclusion() -> None:
    calls: list[str] = []

    def make(name: str, final: bool) -> Any:
        def reply(
            agent: Any, messages: Any = None, sender: Any = None, config: Any = None
        ) -> tuple[bool, Any]:
            calls.append(name)
            return final, name

        return reply

    agent = ConversableAgent("agent", human_input_mode="NEVER")
    first, second, only_bob = make("first", False), make("second", True), make("only_bob", True)
    agent.register_reply([ConversableAgent, None], second)
    agent.register_reply([ConversableAgent, None], first)  # position 0: tried before `second`
    agent.register_reply("bob", only_bob)
    alice, bob = ConversableAgent("alice"), ConversableAgent("bob")
    assert (
        agent.generate_reply(messages=[{"content": "hi", "role": "user"}], sender=alice) == "second"
    )
    assert calls == ["first", "second"]
    assert (
        agent.generate_reply(messages=[{"content": "hi", "role": "user"}], sender=bob) == "only_bob"
    )
    assert (
        agent.generate_reply(messages=[{"content": "hi"}], sender=bob, exclude=[only_bob])
        == "second"
    )
    agent.replace_reply_func(second, make("replacement", True))
    assert agent.generate_reply(messages=[{"content": "hi"}], sender=alice) == "replacement"
    with pytest.raises(ValueError, match=r"\[None\]"):
        agent.register_reply(None, first)


def test_hooks_sync_and_async_at_every_point() -> None:
    seen: list[str] = []

    def upper_last(content: str) -> str:
        seen.append("last_received")
        return content.upper()

    async def add_note(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        seen.append("all_messages")
        return [*messages, {"role": "user", "content": "(note)"}]

    def sign(sender: Any, message: Any, recipient: Any, silent: bool) -> Any:
        seen.append("before_send")
        return message + " -- signed" if isinstance(message, str) else message

    def answer(
        agent: Any, messages: Any = None, sender: Any = None, config: Any = None
    ) -> tuple[bool, str]:
        return True, " | ".join(m["content"] for m in messages)

    a = ConversableAgent("a", human_input_mode="NEVER")
    b = ConversableAgent("b", human_input_mode="NEVER")
    b.register_hook("process_last_received_message", upper_last)
    b.register_hook("a_process_all_messages_before_reply", add_note)
    a.register_hook("process_message_before_send", sign)
    b.register_reply(ConversableAgent, answer)
    for run in (
        lambda: a.initiate_chat(b, message="hi", max_turns=1, silent=True),
        lambda: asyncio.run(a.a_initiate_chat(b, message="hi", max_turns=1, silent=True)),
    ):
        seen.clear()
        result = run()
        assert result.chat_history[-1]["content"] == "HI -- SIGNED | (note)"
        assert (
            result.chat_history[0]["content"] == "hi -- signed"
        )  # stored history unchanged by hooks
        assert b.chat_messages[a][0]["content"] == "hi -- signed"
        assert seen == ["before_send", "last_received", "all_messages"]
    with pytest.raises(AssertionError):
        b.register_hook("process_last_received_message", upper_last)
    with pytest.raises(AssertionError):
        b.register_hook("no_such_point", upper_last)


def test_termination_predicates_that_expect_strings_do_not_crash(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply(tool_calls=[{"name": "add", "arguments": {"a": 1, "b": 2}}])
    fake_llm.add_reply("The sum is 3. TERMINATE")
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    user = UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config=False,
        function_map={"add": lambda a, b: a + b},
        is_termination_msg=lambda m: (
            m["content"].rstrip().endswith("TERMINATE")
        ),  # None on tool calls
    )
    result = user.initiate_chat(assistant, message="add 1 and 2", silent=True)
    assert result.chat_history[-1]["content"] == "The sum is 3. TERMINATE"
    assert [m["role"] for m in result.chat_history] == ["assistant", "assistant", "tool", "user"]


def test_tool_calls_round_trip_through_the_model(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply(
        tool_calls=[
            {"name": "add", "arguments": {"a": 1, "b": 2}},
            {"name": "missing_tool", "arguments": {}},
            {"name": "add", "arguments": '{"a": 1,'},
        ]
    )
    fake_llm.add_reply("TERMINATE")
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    user = UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config=False,
        function_map={"add": lambda a, b: a + b},
    )
    user.initiate_chat(assistant, message="add", silent=True)
    second = fake_llm.requests[1]["messages"]
    tool_messages = [m for m in second if m["role"] == "tool"]
    calls = second[-4]["tool_calls"]
    assert [m["tool_call_id"] for m in tool_messages] == [c["id"] for c in calls]
    assert tool_messages[0]["content"] == "3"
    assert "Function missing_tool not found" in tool_messages[1]["content"]
    assert "must be in JSON format" in tool_messages[2]["content"]


def test_async_tools_run_concurrently(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply(tool_calls=[{"name": "slow", "arguments": {"n": i}} for i in range(5)])
    fake_llm.add_reply("TERMINATE")

    # Each call waits until all five have started: run one at a time, the first would wait
    # out OVERLAP_TIMEOUT and answer an error instead of its result.
    all_started = asyncio.Barrier(5)

    async def slow(n: int) -> str:
        await asyncio.wait_for(all_started.wait(), OVERLAP_TIMEOUT)
        return f"done {n}"

    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    user = UserProxyAgent(
        "user", human_input_mode="NEVER", code_execution_config=False, function_map={"slow": slow}
    )
    user.initiate_chat(assistant, message="go", silent=True)
    results = [m["content"] for m in fake_llm.requests[1]["messages"] if m["role"] == "tool"]
    assert results == [f"done {i}" for i in range(5)]


def test_names_the_api_would_reject_fail_clearly_before_sending(fake_llm: FakeLLMServer) -> None:
    """Where the name reaches the API (a group chat: names tell the members apart)."""
    from parley import GroupChat, GroupChatManager

    pm = ConversableAgent("Product Manager", human_input_mode="NEVER")
    assistant = bot("assistant", fake_llm)
    manager = GroupChatManager(GroupChat([pm, assistant], messages=[], max_round=2))
    with pytest.raises(InvalidAgentNameError, match=r"'Product Manager'.*'Product_Manager'"):
        pm.initiate_chat(manager, message="hi", max_turns=1, silent=True)
    assert fake_llm.requests == []


def test_llm_config_is_never_mutated_and_agents_stay_independent(fake_llm: FakeLLMServer) -> None:
    llm_config = fake_llm.llm_config(temperature=0)
    before = copy.deepcopy(llm_config)
    a = ConversableAgent("a", llm_config=llm_config)
    b = ConversableAgent("b", llm_config=llm_config)
    a.llm_config["temperature"] = 1  # type: ignore[index]
    assert llm_config == before
    assert b.llm_config["temperature"] == 0  # type: ignore[index]
    assert a.chat_messages is not b.chat_messages


def test_review_function_plays_the_human(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("draft 1").add_reply("draft 2").add_reply("final TERMINATE")
    requests: list[ReviewRequest] = []

    def review(request: ReviewRequest) -> str:
        requests.append(request)
        if request.message["content"] == "draft 1":
            return "make it shorter"
        if request.message["content"] == "draft 2":
            return APPROVE
        return EXIT

    writer = bot("writer", fake_llm)
    editor = ConversableAgent("editor", human_input_mode="ALWAYS", default_auto_reply="looks fine")
    editor.register_human_review(review)
    result = editor.initiate_chat(writer, message="write", silent=True)
    contents = [m["content"] for m in result.chat_history]
    assert contents == [
        "write",
        "draft 1",
        "make it shorter",
        "draft 2",
        "looks fine",
        "final TERMINATE",
    ]
    assert [r.sender for r in requests] == ["writer"] * 3
    assert result.human_input == ["make it shorter", "", "exit"]


async def test_review_function_may_be_async(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("proposal")

    async def review(request: ReviewRequest) -> str:
        await asyncio.sleep(0)
        return EXIT

    user = ConversableAgent("user", human_input_mode="ALWAYS")
    user.register_human_review(review)
    result = await user.a_initiate_chat(bot("bot", fake_llm), message="go", silent=True)
    assert [m["content"] for m in result.chat_history] == ["go", "proposal"]


def test_sync_overrides_in_subclasses_are_called(fake_llm: FakeLLMServer) -> None:
    received: list[str] = []

    class Logging(ConversableAgent):
        def receive(
            self, message: Any, sender: Any, request_reply: Any = None, silent: Any = False
        ) -> None:
            received.append(message if isinstance(message, str) else json.dumps(message))
            super().receive(message, sender, request_reply, silent)

        def generate_reply(self, messages: Any = None, sender: Any = None, **kwargs: Any) -> Any:
            return "overridden"

    a = ConversableAgent("a", human_input_mode="NEVER", default_auto_reply="x")
    b = Logging("b", human_input_mode="NEVER")
    result = asyncio.run(a.a_initiate_chat(b, message="hello", max_turns=2, silent=True))
    assert received[0] == "hello"
    assert [m["content"] for m in result.chat_history] == ["hello", "overridden", "x", "overridden"]


def test_printing_goes_to_the_current_iostream() -> None:
    a = ConversableAgent("alice", human_input_mode="NEVER", default_auto_reply="bye")
    b = ConversableAgent("bob", human_input_mode="NEVER", default_auto_reply="hi alice")
    screen = IOScripted()
    with IOStream.set_default(screen):
        a.initiate_chat(b, message="hi bob", max_turns=1)
    assert "alice (to bob):\n\nhi bob\n" in screen.text
    assert "bob (to alice):\n\nhi alice\n" in screen.text
    assert "-" * 80 in screen.text


def test_ignore_async_in_sync_chat_is_honoured_only_in_sync_chats() -> None:
    calls: list[str] = []

    async def a_log(
        agent: Any, messages: Any = None, sender: Any = None, config: Any = None
    ) -> tuple[bool, None]:
        calls.append("async")
        return False, None

    def log(
        agent: Any, messages: Any = None, sender: Any = None, config: Any = None
    ) -> tuple[bool, None]:
        calls.append("sync")
        return False, None

    a = ConversableAgent("a", human_input_mode="NEVER")
    b = ConversableAgent("b", human_input_mode="NEVER", default_auto_reply="ok")
    b.register_reply(ConversableAgent, log)
    b.register_reply(ConversableAgent, a_log, ignore_async_in_sync_chat=True)
    a.initiate_chat(b, message="x", max_turns=1, silent=True)
    assert calls == ["sync"]
    calls.clear()
    asyncio.run(a.a_initiate_chat(b, message="x", max_turns=1, silent=True))
    assert calls == ["async", "sync"]


def test_reply_positions_count_as_in_autogen() -> None:
    # AutoGen lists every built-in twice (async and sync twins): position 2 is right after the
    # termination check, so it answers before the tool-call reply; a large position comes last.
    tool_call = {
        "content": None,
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    }

    def mine(
        agent: Any, messages: Any = None, sender: Any = None, config: Any = None
    ) -> tuple[bool, str]:
        return True, "mine"

    early = ConversableAgent(
        "early", human_input_mode="NEVER", function_map={"f": lambda: "tool ran"}
    )
    early.register_reply([ConversableAgent, None], mine, position=2)
    late = ConversableAgent(
        "late", human_input_mode="NEVER", function_map={"f": lambda: "tool ran"}
    )
    late.register_reply([ConversableAgent, None], mine, position=100)
    sender = ConversableAgent("sender")
    assert early.generate_reply(messages=[tool_call], sender=sender) == "mine"
    assert late.generate_reply(messages=[tool_call], sender=sender)["content"] == "tool ran"  # type: ignore[index]
