"""Group chats end to end: rounds, termination, tools, introductions, clearing, resuming."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Annotated, Any

import pytest

from parley import AssistantAgent, ConversableAgent, GroupChat, GroupChatManager, UserProxyAgent
from parley.exceptions import InvalidMessageError
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

from ._spec_support import VARIANTS, call

SELECTING = "You coordinate a conversation"


def agent(name: str, **kwargs: Any) -> ConversableAgent:
    kwargs.setdefault("human_input_mode", "NEVER")
    kwargs.setdefault("default_auto_reply", f"{name} here")
    return ConversableAgent(name, **kwargs)


def responder(
    pick: Callable[[list[str]], str], reply: Callable[[dict[str, Any]], Any]
) -> Callable[[dict[str, Any]], Any]:
    """Selection requests are answered with ``pick(candidate names)``, others by ``reply``."""

    def respond(request: dict[str, Any]) -> Any:
        system = str(request["messages"][0]["content"])
        if system.startswith(SELECTING):
            names = json.loads(
                system.rsplit("choosing one of ", 1)[1].split("]")[0].replace("'", '"') + "]"
            )
            return pick(names)
        return reply(request)

    return respond


def lines(group: GroupChat) -> list[tuple[str, Any]]:
    return [(m.get("name", ""), m["content"]) for m in group.messages]


async def start(variant: str, sender: Any, manager: GroupChatManager, **kwargs: Any) -> Any:
    kwargs.setdefault("message", "go")
    return await call(variant, sender, "initiate_chat", manager, **kwargs)


# -- rounds ----------------------------------------------------------------------------------


@VARIANTS
async def test_round_robin_rounds(variant: str) -> None:
    a, b, c = agent("a"), agent("b"), agent("c")
    user = agent("user")
    group = GroupChat([a, b, c], [], max_round=4, speaker_selection_method="round_robin")
    manager = GroupChatManager(group)
    io = IOScripted()
    with IOStream.set_default(io):
        result = await start(variant, user, manager, message="task")
    assert lines(group) == [("user", "task"), ("a", "a here"), ("b", "b here"), ("c", "c here")]
    assert manager.last_speaker is c
    assert "Next speaker: a" in io.text
    assert "Next speaker: c" in io.text
    # Everyone but the speaker saw each message; the initiator only its own first one.
    assert [m["content"] for m in a.chat_messages[manager]] == [
        "task",
        "a here",
        "b here",
        "c here",
    ]
    assert [(m["role"], m["name"]) for m in b.chat_messages[manager]] == [
        ("user", "user"),
        ("user", "a"),
        ("assistant", "b"),
        ("user", "c"),
    ]
    assert [m["content"] for m in result.chat_history] == ["task"]
    assert result.summary == "task"


@VARIANTS
async def test_a_member_initiator_sees_the_whole_chat(variant: str) -> None:
    user, a, b = agent("user"), agent("a"), agent("b")
    group = GroupChat([user, a, b], [], max_round=3, speaker_selection_method="round_robin")
    manager = GroupChatManager(group)
    with IOStream.set_default(IOScripted()):
        result = await start(variant, user, manager)
    assert [(m["role"], m["name"], m["content"]) for m in result.chat_history] == [
        ("assistant", "user", "go"),
        ("user", "a", "a here"),
        ("user", "b", "b here"),
    ]
    assert result.summary == "b here"


@VARIANTS
async def test_auto_selection_in_a_chat(variant: str, fake_llm: FakeLLMServer) -> None:
    order = iter(["planner", "critic", "planner"])
    fake_llm.responder = responder(
        lambda names: next(order), lambda r: f"{len(r['messages'])} msgs"
    )
    planner = AssistantAgent("planner", llm_config=fake_llm.llm_config())
    critic = AssistantAgent("critic", llm_config=fake_llm.llm_config())
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
    group = GroupChat([user, planner, critic], [], max_round=4)
    manager = GroupChatManager(group, llm_config=fake_llm.llm_config())
    with IOStream.set_default(IOScripted()):
        result = await start(variant, user, manager, message="plan a trip")
    assert [n for n, _ in lines(group)] == ["user", "planner", "critic", "planner"]
    # the planner's second call sees the whole chat, named
    last = fake_llm.requests[-1]["messages"]
    assert [(m["role"], m.get("name")) for m in last[1:]] == [
        ("user", "user"),
        ("assistant", "planner"),
        ("user", "critic"),
    ]
    # selection costs are counted on the manager (it shares its client with the selector)
    assert manager.client.total_usage_summary is not None
    assert result.cost["usage_including_cached_inference"]["total_cost"] == 0


async def test_sync_and_async_runs_agree(fake_llm: FakeLLMServer) -> None:
    def run(variant: str) -> Any:
        order = iter(["b", "c", "b", "c"])
        fake_llm.responder = responder(lambda names: next(order), lambda r: f"{len(r['messages'])}")
        b = AssistantAgent("b", llm_config=fake_llm.llm_config())
        c = AssistantAgent("c", llm_config=fake_llm.llm_config())
        user = agent("user")
        group = GroupChat([user, b, c], [], max_round=5)
        manager = GroupChatManager(group, llm_config=fake_llm.llm_config(), silent=True)
        return user, manager, group

    user, manager, sync_group = run("sync")
    await asyncio.to_thread(user.initiate_chat, manager, message="x", silent=True)
    sync_requests = [r["messages"] for r in fake_llm.requests]
    fake_llm.reset()
    user, manager, async_group = run("async")
    await user.a_initiate_chat(manager, message="x", silent=True)
    assert lines(sync_group) == lines(async_group)
    assert sync_requests == [r["messages"] for r in fake_llm.requests]


async def test_a_manager_with_silent_prints_no_rounds() -> None:
    a, b = agent("a"), agent("b")
    group = GroupChat([a, b], [], max_round=3, speaker_selection_method="round_robin")
    io = IOScripted()
    with IOStream.set_default(io):
        await agent("user").a_initiate_chat(GroupChatManager(group, silent=True), message="hi")
    assert "Next speaker" not in io.text
    assert "a (to chat_manager)" not in io.text
    assert "user (to chat_manager)" in io.text


async def test_the_chat_cache_reaches_every_member() -> None:
    seen: list[Any] = []

    def note(recipient: Any, messages: Any = None, sender: Any = None, config: Any = None) -> Any:
        seen.append(recipient.client_cache)
        return True, "noted"

    a, b = agent("a"), agent("b")
    a.register_reply([ConversableAgent, None], note)
    group = GroupChat([a, b], [], max_round=2, speaker_selection_method="round_robin")
    cache = object()
    with IOStream.set_default(IOScripted()):
        await agent("user").a_initiate_chat(GroupChatManager(group), message="hi", cache=cache)
    assert seen == [cache]
    assert a.client_cache is None


# -- termination -----------------------------------------------------------------------------


@VARIANTS
async def test_the_managers_termination_test_ends_the_chat(variant: str) -> None:
    a, b, c = agent("a"), agent("b", default_auto_reply="done TERMINATE"), agent("c")
    group = GroupChat([a, b, c], [], max_round=10, speaker_selection_method="round_robin")
    manager = GroupChatManager(group, is_termination_msg=lambda m: "TERMINATE" in m["content"])
    with IOStream.set_default(IOScripted()):
        result = await start(variant, agent("user"), manager)
    assert lines(group)[-1] == ("b", "done TERMINATE")
    assert len(group.messages) == 3
    assert c.chat_messages[manager][-1]["content"] == "done TERMINATE"  # broadcast first
    assert result.summary == "go"


async def test_a_termination_test_for_text_survives_tool_calls(fake_llm: FakeLLMServer) -> None:
    a, b = agent("a"), agent("b", function_map={"f": lambda: "ok"})
    a.register_reply(
        [ConversableAgent, None],
        lambda *_, **__: (
            True,
            {
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
        ),
    )
    group = GroupChat([a, b], [], max_round=3, speaker_selection_method="round_robin")
    manager = GroupChatManager(
        group, is_termination_msg=lambda m: m["content"].endswith("TERMINATE")
    )
    with IOStream.set_default(IOScripted()):
        await agent("user").a_initiate_chat(manager, message="go")
    assert lines(group) == [("user", "go"), ("a", ""), ("b", "ok")]


@VARIANTS
async def test_a_member_that_stops_replying_ends_the_chat(variant: str) -> None:
    a, b = agent("a", max_consecutive_auto_reply=1), agent("b")
    group = GroupChat([a, b], [], max_round=10, speaker_selection_method="round_robin")
    with IOStream.set_default(IOScripted()):
        await start(variant, agent("user"), GroupChatManager(group))
    assert [n for n, _ in lines(group)] == ["user", "a", "b"]


async def test_termination_inside_a_group_with_an_llm(fake_llm: FakeLLMServer) -> None:
    """The selector answering TERMINATE neither crashes nor ends the chat; the speaker's
    TERMINATE does (AutoGen #842, #1064)."""
    replies = iter(["working", "TERMINATE"])
    fake_llm.responder = responder(lambda names: "TERMINATE", lambda r: next(replies))
    writer = AssistantAgent("writer", llm_config=fake_llm.llm_config())
    editor = AssistantAgent("editor", llm_config=fake_llm.llm_config())
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
    group = GroupChat([user, writer, editor], [], max_round=10, max_retries_for_selecting_speaker=0)
    manager = GroupChatManager(group, llm_config=fake_llm.llm_config())
    with IOStream.set_default(IOScripted()):
        await user.a_initiate_chat(manager, message="write")
    assert lines(group) == [("user", "write"), ("writer", "working"), ("editor", "TERMINATE")]


async def test_no_eligible_speaker_ends_the_chat(caplog: pytest.LogCaptureFixture) -> None:
    a, b = agent("a"), agent("b")
    group = GroupChat(
        [a, b], [], speaker_selection_method=lambda last, g: a if last is not a else None
    )
    with IOStream.set_default(IOScripted()), caplog.at_level(logging.WARNING):
        await agent("user").a_initiate_chat(GroupChatManager(group), message="hi")
    assert [n for n, _ in lines(group)] == ["user", "a"]
    assert "No eligible speaker" in caplog.text


async def test_an_invalid_method_fails_the_chat() -> None:
    group = GroupChat([agent("a"), agent("b")], [], speaker_selection_method="foo")
    with IOStream.set_default(IOScripted()), pytest.raises(ValueError, match="foo"):
        await agent("user").a_initiate_chat(GroupChatManager(group), message="hi")


@VARIANTS
async def test_the_admin_takes_over_on_keyboard_interrupt(variant: str) -> None:
    def interrupt(last: Any, group: GroupChat) -> Any:
        raise KeyboardInterrupt

    admin, a = agent("Admin", default_auto_reply="admin speaking"), agent("a")
    group = GroupChat([admin, a], [], max_round=2, speaker_selection_method=interrupt)
    with IOStream.set_default(IOScripted()):
        await start(variant, agent("user"), GroupChatManager(group))
    assert lines(group) == [("user", "go"), ("Admin", "admin speaking")]


async def test_a_subclass_select_speaker_override_is_used() -> None:
    class Fixed(GroupChat):
        def select_speaker(self, last_speaker: Any, selector: Any) -> Any:
            return self.agents[-1]

    a, b = agent("a"), agent("b")
    group = Fixed([a, b], [], max_round=3)
    with IOStream.set_default(IOScripted()):
        await agent("user").a_initiate_chat(GroupChatManager(group), message="hi")
    assert [n for n, _ in lines(group)] == ["user", "b", "b"]


# -- tools ----------------------------------------------------------------------------------


@VARIANTS
async def test_a_tool_call_reaches_its_executor(variant: str, fake_llm: FakeLLMServer) -> None:
    calls: list[int] = []

    def reply(request: dict[str, Any]) -> Any:
        if request["messages"][-1]["role"] == "tool":
            return "the sum is 5. TERMINATE"
        return {"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]}

    # The model would pick the critic; the tool call must still go to the executor.
    fake_llm.responder = responder(lambda names: "critic" if "critic" in names else names[0], reply)
    coder = AssistantAgent("coder", llm_config=fake_llm.llm_config())
    critic = AssistantAgent("critic", llm_config=fake_llm.llm_config())
    executor = UserProxyAgent("executor", human_input_mode="NEVER", code_execution_config=False)

    @executor.register_for_execution()
    @coder.register_for_llm(description="Add two numbers.")
    def add(a: Annotated[int, "a"], b: Annotated[int, "b"]) -> int:
        calls.append(a + b)
        return a + b

    group = GroupChat(
        [executor, coder, critic],
        [],
        max_round=5,
        speaker_selection_method=lambda last, g: (
            coder if last is executor and not calls else "auto"
        ),
    )
    manager = GroupChatManager(
        group,
        llm_config=fake_llm.llm_config(),
        is_termination_msg=lambda m: "TERMINATE" in (m.get("content") or ""),
    )
    with IOStream.set_default(IOScripted()):
        await start(variant, executor, manager, message="2+3?")
    assert calls == [5]
    assert [n for n, _ in lines(group)] == ["executor", "coder", "executor", "critic"]
    critic_request = fake_llm.requests[-1]["messages"]
    assert [m["role"] for m in critic_request] == ["system", "user", "assistant", "tool"]


# -- introductions and clearing ----------------------------------------------------------------


async def test_introductions_are_sent_to_every_member_first() -> None:
    a, b = agent("a", description="the A"), agent("b", description="the B")
    group = GroupChat(
        [a, b], [], max_round=2, speaker_selection_method="round_robin", send_introductions=True
    )
    manager = GroupChatManager(group)
    with IOStream.set_default(IOScripted()):
        await agent("user").a_initiate_chat(manager, message="hi")
    intro = group.introductions_msg()
    assert a.chat_messages[manager][0]["content"] == intro
    assert b.chat_messages[manager][0]["content"] == intro
    assert "a: the A\nb: the B" in intro
    assert lines(group) == [("user", "hi"), ("a", "a here")]


@VARIANTS
async def test_clear_history_commands(variant: str) -> None:
    a, b = agent("a"), agent("b")
    human = agent("human", human_input_mode="ALWAYS")
    group = GroupChat(
        [a, b, human],
        [],
        max_round=7,
        speaker_selection_method="round_robin",
        enable_clear_history=True,
    )
    manager = GroupChatManager(group)
    io = IOScripted(["please clear history now", "ok CLEAR HISTORY a 1."])
    with IOStream.set_default(io):
        await start(variant, agent("user"), manager)
    assert "Clearing history for all agents." in io.text
    assert "Clearing history for a except last 1 messages." in io.text
    assert lines(group) == [
        ("human", "please now"),
        ("a", "a here"),
        ("b", "b here"),
        ("human", "ok"),
    ]
    # a's history was cut to one message before "ok" arrived
    assert [m["content"] for m in a.chat_messages[manager]] == ["b here", "ok"]


def test_clearing_keeps_a_tool_call_with_its_results() -> None:
    a, b = agent("a"), agent("b")
    group = GroupChat([a, b], [])
    call_msg = {
        "role": "assistant",
        "name": "a",
        "content": "",
        "tool_calls": [
            {"id": "1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    }
    result_msg = {
        "role": "tool",
        "name": "b",
        "content": "ok",
        "tool_responses": [{"tool_call_id": "1", "role": "tool", "content": "ok"}],
    }
    group.messages[:] = [{"role": "user", "name": "a", "content": "x"}, call_msg, result_msg]
    with IOStream.set_default(IOScripted()):
        text = GroupChatManager(group).clear_agents_history({"content": "clear history 1"}, group)
    assert text == ""
    assert group.messages == [call_msg, result_msg]


# -- resume ---------------------------------------------------------------------------------


def team() -> tuple[
    ConversableAgent, ConversableAgent, ConversableAgent, GroupChat, GroupChatManager
]:
    user, a, b = agent("user"), agent("a"), agent("b")
    group = GroupChat([user, a, b], [], max_round=3, speaker_selection_method="round_robin")
    return user, a, b, group, GroupChatManager(group)


@VARIANTS
async def test_resume_continues_a_saved_chat(variant: str) -> None:
    user, _a, _b, group, manager = team()
    with IOStream.set_default(IOScripted()):
        await start(variant, user, manager, message="task")
    saved = manager.messages_to_string(group.messages)

    _user2, a2, b2, group2, manager2 = team()
    io = IOScripted()
    with IOStream.set_default(io):
        last_agent, last_message = await call(variant, manager2, "resume", saved)
        assert last_agent is b2
        assert last_message["content"] == "b here"
        assert lines(group2) == [("user", "task"), ("a", "a here")]
        assert [m["role"] for m in a2.chat_messages[manager2]] == ["user", "assistant"]
        await call(
            variant,
            last_agent,
            "initiate_chat",
            manager2,
            message=last_message,
            clear_history=False,
        )
    assert "Prepared group chat with 3 messages, the last speaker is b" in io.text
    assert [n for n, _ in lines(group2)] == ["user", "a", "b", "user", "a"]
    assert group2.send_introductions is False


async def test_resume_rejects_bad_input() -> None:
    _user, a, _b, _group, manager = team()
    a.chat_messages[manager].append({"role": "user", "content": "kept"})
    with pytest.raises(ValueError, match="no messages"):
        await manager.a_resume([])
    with pytest.raises(ValueError, match="'mallory'"):
        await manager.a_resume([{"role": "user", "name": "mallory", "content": "hi"}])
    with pytest.raises(ValueError, match="not a valid JSON"):
        await manager.a_resume("{not json")
    with pytest.raises(ValueError, match="List"):
        await manager.a_resume(42)  # type: ignore[arg-type]
    assert a.chat_messages[manager] == [{"role": "user", "content": "kept"}]  # nothing cleared


def tool_call(arguments: Any) -> dict[str, Any]:
    call = {"id": "1", "type": "function", "function": {"name": "f", "arguments": arguments}}
    return {"role": "assistant", "name": "a", "content": None, "tool_calls": [call]}


@pytest.mark.parametrize(
    ("position", "bad", "match"),
    [
        (1, {"role": "user", "name": "a", "content": 42}, "content must be a str"),
        (1, tool_call({"x": 1}), r"arguments must be a str \(the arguments as JSON text"),
        (2, {"role": "user", "name": "b", "content": [{"text": "no type"}]}, "content part"),
    ],
)
@VARIANTS
async def test_resume_refuses_a_message_it_could_not_store_and_loses_nothing(
    variant: str, position: int, bad: dict[str, Any], match: str
) -> None:
    user, a, b, group, manager = team()
    with IOStream.set_default(IOScripted()):
        await start(variant, user, manager, message="task")
    before = {
        "transcript": list(group.messages),
        "a": list(a.chat_messages[manager]),
        "b": list(b.chat_messages[manager]),
        "manager": {k.name: list(v) for k, v in manager.chat_messages.items()},
    }
    saved: list[dict[str, Any]] = [
        {"role": "user", "name": "user", "content": "earlier"},
        {"role": "user", "name": "a", "content": "fine"},
        {"role": "user", "name": "b", "content": "fine too"},
    ]
    saved[position] = bad
    with pytest.raises(InvalidMessageError, match=f"saved message {position} .*{match}"):
        await call(variant, manager, "resume", saved)
    # Nothing was cleared: the chat that was there can still go on.
    assert list(group.messages) == before["transcript"]
    assert a.chat_messages[manager] == before["a"]
    assert b.chat_messages[manager] == before["b"]
    assert {k.name: v for k, v in manager.chat_messages.items()} == before["manager"]


async def test_resume_removes_the_termination_string(caplog: pytest.LogCaptureFixture) -> None:
    saved = [
        {"role": "user", "name": "user", "content": "task"},
        {"role": "user", "name": "a", "content": "done TERMINATE"},
    ]
    *_, manager = team()
    with IOStream.set_default(IOScripted()):
        _, last = await manager.a_resume(saved, remove_termination_string="TERMINATE", silent=True)
        assert last["content"] == "done "
        _, last = await manager.a_resume(
            saved, remove_termination_string=lambda s: s.upper(), silent=True
        )
        assert last["content"] == "DONE TERMINATE"
        with caplog.at_level(logging.WARNING):
            await manager.a_resume(
                [*saved[:1], {"role": "user", "name": "a", "content": "TERMINATE"}]
            )
    assert "meets termination criteria" in caplog.text
    assert saved[1]["content"] == "done TERMINATE"  # the caller's list is not modified


async def test_resume_attributes_unnamed_messages_to_the_manager() -> None:
    _user, _a, _b, group, manager = team()
    with IOStream.set_default(IOScripted()):
        last_agent, _ = await manager.a_resume(
            [{"role": "user", "content": "from a ChatResult"}, {"role": "user", "content": "x"}],
            silent=True,
        )
    assert last_agent is manager
    assert group.messages == [
        {"role": "user", "content": "from a ChatResult", "name": "chat_manager"}
    ]


async def test_resume_repairs_a_sliced_tool_exchange(
    fake_llm: FakeLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    """A saved transcript cut between a tool call and its result still gives valid requests
    (AutoGen #3164)."""
    fake_llm.responder = responder(lambda names: "writer", lambda r: "fine")
    writer = AssistantAgent("writer", llm_config=fake_llm.llm_config())
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
    group = GroupChat([user, writer], [], max_round=2)
    manager = GroupChatManager(group, llm_config=fake_llm.llm_config())
    saved = [
        {
            "role": "tool",
            "name": "user",
            "content": "42",
            "tool_responses": [{"tool_call_id": "gone", "role": "tool", "content": "42"}],
        },
        {"role": "user", "name": "user", "content": "and now?"},
    ]
    with IOStream.set_default(IOScripted()), caplog.at_level(logging.WARNING):
        last_agent, last = await manager.a_resume(saved, silent=True)
        await last_agent.a_initiate_chat(manager, message=last, clear_history=False)
    assert "separated from its results" in caplog.text
    assert lines(group)[-1] == ("writer", "fine")
    roles = [m["role"] for m in fake_llm.requests[-1]["messages"]]
    assert "tool" not in roles


async def test_the_transition_graph_holds_in_a_chat(fake_llm: FakeLLMServer) -> None:
    """The model keeps naming 'a'; it only speaks where the graph allows it."""
    fake_llm.responder = responder(lambda names: "a", lambda r: "unused")
    a, b, c = agent("a"), agent("b"), agent("c")
    group = GroupChat(
        [a, b, c],
        [],
        max_round=7,
        allowed_or_disallowed_speaker_transitions={a: [b, c], b: [c], c: [a]},
        speaker_transitions_type="allowed",
    )
    manager = GroupChatManager(group, llm_config=fake_llm.llm_config())
    with IOStream.set_default(IOScripted()):
        await agent("user").a_initiate_chat(manager, message="go")
    assert [n for n, _ in lines(group)] == ["user", "a", "b", "c", "a", "b", "c"]
    # asked once after the user, three times after each 'a' (b and c only are eligible there)
    assert len(fake_llm.requests) == 1 + 3 + 3


async def test_reflection_summarises_the_whole_transcript(fake_llm: FakeLLMServer) -> None:
    fake_llm.responder = lambda request: "the summary"
    a, b = agent("a"), agent("b")
    group = GroupChat([a, b], [], max_round=3, speaker_selection_method="round_robin")
    manager = GroupChatManager(group, llm_config=fake_llm.llm_config())
    with IOStream.set_default(IOScripted()):
        result = await agent("user").a_initiate_chat(
            manager, message="go", summary_method="reflection_with_llm"
        )
    assert result.summary == "the summary"
    (request,) = fake_llm.requests
    assert [(m["role"], m.get("name")) for m in request["messages"]] == [
        ("user", "user"),
        ("user", "a"),
        ("user", "b"),
        ("system", None),
    ]
