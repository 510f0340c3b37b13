"""Nested chats: ``register_nested_chats`` runs a queue of chats and answers with a summary."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from parley import AssistantAgent, ConversableAgent, GroupChat, GroupChatManager
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

from ._spec_support import VARIANTS, call


def agent(name: str, **kwargs: Any) -> ConversableAgent:
    kwargs.setdefault("human_input_mode", "NEVER")
    kwargs.setdefault("default_auto_reply", f"{name}-reply")
    return ConversableAgent(name, **kwargs)


def contents(history: list[dict[str, Any]]) -> list[Any]:
    return [m["content"] for m in history]


@VARIANTS
async def test_a_nested_chat_answers_with_its_summary(variant: str) -> None:
    writer, critic, reviewer = (
        agent("writer"),
        agent("critic"),
        agent("reviewer", default_auto_reply="looks good"),
    )
    critic.register_nested_chats(
        [{"recipient": reviewer, "max_turns": 1, "summary_method": "last_msg"}], trigger=writer
    )
    io = IOScripted()
    with IOStream.set_default(io):
        result = await call(variant, writer, "initiate_chat", critic, message="draft", max_turns=1)
    assert contents(result.chat_history) == ["draft", "looks good"]
    # the nested chat started from the triggering message, with the owner as its sender
    assert contents(reviewer.chat_messages[critic]) == ["draft", "looks good"]
    assert "Starting a new chat...." in io.text


async def test_registered_right_after_the_termination_check() -> None:
    owner = agent("owner")
    owner.register_nested_chats([{"recipient": agent("r")}], trigger=agent("t"))
    names = [getattr(e.func, "__name__", "") for e in owner._reply_func_list]
    assert names[0] == "check_termination_and_human_reply"
    assert names[1] == "summary_from_nested_chats"
    assert names[2] == "generate_function_call_reply"


async def test_nested_chats_fire_before_tool_execution() -> None:
    """AutoGen's position 2 (after the termination check) comes before the tool replies."""
    writer, reviewer = agent("writer"), agent("reviewer", default_auto_reply="reviewed")
    owner = agent("owner", function_map={"f": lambda: "ran f"})
    owner.register_nested_chats(
        [{"recipient": reviewer, "message": "review", "max_turns": 1}], trigger=writer
    )
    call_message = {
        "content": None,
        "tool_calls": [
            {"id": "1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    }
    with IOStream.set_default(IOScripted()):
        result = await writer.a_initiate_chat(owner, message=call_message, max_turns=1)
    assert result.chat_history[-1]["content"] == "reviewed"


@VARIANTS
async def test_a_queue_of_nested_chats_with_carryover(variant: str) -> None:
    writer, owner = agent("writer"), agent("owner")
    first, second = agent("first"), agent("second")

    def second_message(recipient: Any, messages: Any, sender: Any, config: Any) -> str:
        assert recipient is owner
        assert sender is writer
        assert config is None
        return f"check: {messages[-1]['content']}"

    owner.register_nested_chats(
        [
            {"recipient": first, "max_turns": 1},
            {"recipient": second, "message": second_message, "max_turns": 1},
        ],
        trigger=writer,
    )
    with IOStream.set_default(IOScripted()):
        result = await call(variant, writer, "initiate_chat", owner, message="essay", max_turns=1)
    assert contents(second.chat_messages[owner]) == [
        "check: essay\nContext: \nfirst-reply",
        "second-reply",
    ]
    assert result.summary == "second-reply"


async def test_later_chats_without_a_message_are_dropped() -> None:
    writer, owner, first, second = agent("writer"), agent("owner"), agent("first"), agent("second")
    owner.register_nested_chats(
        [{"recipient": first, "max_turns": 1}, {"recipient": second, "max_turns": 1}],
        trigger=writer,
    )
    with IOStream.set_default(IOScripted()):
        result = await writer.a_initiate_chat(owner, message="hi", max_turns=1)
    assert second.chat_messages == {}
    assert result.summary == "first-reply"


async def test_no_chat_to_run_means_no_reply() -> None:
    writer, owner, other = agent("writer"), agent("owner"), agent("other")
    owner.register_nested_chats([{"recipient": other, "message": lambda *_: ""}], trigger=writer)
    with IOStream.set_default(IOScripted()):
        result = await writer.a_initiate_chat(owner, message="hi")
    assert contents(result.chat_history) == ["hi"]
    assert other.chat_messages == {}


async def test_other_senders_get_the_normal_reply() -> None:
    writer, owner, other = agent("writer"), agent("owner"), agent("other")
    owner.register_nested_chats([{"recipient": agent("r"), "max_turns": 1}], trigger=writer)
    with IOStream.set_default(IOScripted()):
        result = await other.a_initiate_chat(owner, message="hi", max_turns=1)
    assert contents(result.chat_history) == ["hi", "owner-reply"]


async def test_silent_nested_chats_print_no_header() -> None:
    writer, owner = agent("writer"), agent("owner")
    owner.register_nested_chats(
        [{"recipient": agent("r"), "max_turns": 1, "silent": True}], trigger=writer
    )
    io = IOScripted()
    with IOStream.set_default(io):
        await writer.a_initiate_chat(owner, message="hi", max_turns=1)
    assert "Starting a new chat" not in io.text
    assert not any(p.startswith(("owner (to r)", "r (to owner)")) for p in io.printed)


@VARIANTS
async def test_async_nested_chats(variant: str) -> None:
    writer, owner = agent("writer"), agent("owner")
    a, b, c = agent("a"), agent("b"), agent("c")
    owner.register_nested_chats(
        [
            {"recipient": a, "message": "x", "max_turns": 1, "chat_id": 1},
            {"recipient": b, "message": "y", "max_turns": 1, "chat_id": 2},
            {"recipient": c, "message": "z", "max_turns": 1, "chat_id": 3, "prerequisites": [1, 2]},
        ],
        trigger=writer,
        use_async=True,
    )
    with IOStream.set_default(IOScripted()):
        result = await call(variant, writer, "initiate_chat", owner, message="go", max_turns=1)
    assert result.summary == "c-reply"
    assert contents(c.chat_messages[owner])[0] == "z\nContext: \na-reply\nb-reply"


def test_registration_errors() -> None:
    owner, writer, r = agent("owner"), agent("writer"), agent("r")
    with pytest.raises(ValueError, match="chat_id is required"):
        owner.register_nested_chats([{"recipient": r}], trigger=writer, use_async=True)
    with pytest.raises(ValueError, match="callable and a coroutine"):
        owner.register_nested_chats(
            [{"recipient": r, "chat_id": 1}],
            trigger=writer,
            use_async=True,
            reply_func_from_nested_chats=lambda *a: (True, "x"),
        )
    with pytest.raises(ValueError, match="must be a callable"):
        owner.register_nested_chats(
            [{"recipient": r}], trigger=writer, reply_func_from_nested_chats="other"
        )


@VARIANTS
async def test_a_custom_reply_function(variant: str) -> None:
    writer, owner, r = agent("writer"), agent("owner"), agent("r")
    seen: list[Any] = []

    def custom(chat_queue: Any, recipient: Any, messages: Any, sender: Any, config: Any) -> Any:
        seen.append((chat_queue, recipient, sender, config))
        return True, f"custom after {messages[-1]['content']}"

    queue = [{"recipient": r}]
    owner.register_nested_chats(
        queue, trigger=writer, reply_func_from_nested_chats=custom, config={"k": 1}
    )
    with IOStream.set_default(IOScripted()):
        result = await call(variant, writer, "initiate_chat", owner, message="hi", max_turns=1)
    assert result.summary == "custom after hi"
    assert seen == [(queue, owner, writer, {"k": 1})]


async def test_the_static_helpers_remain() -> None:
    owner, writer, r = agent("owner"), agent("writer"), agent("r", default_auto_reply="fine")
    messages = [{"role": "user", "content": "start"}]
    chats = await asyncio.to_thread(
        ConversableAgent._get_chats_to_run, [{"recipient": r}], owner, messages, writer, None
    )
    assert chats == [{"recipient": r, "sender": owner, "message": "start"}]
    with IOStream.set_default(IOScripted()):
        reply = await asyncio.to_thread(
            ConversableAgent._summary_from_nested_chats,
            [{"recipient": r, "max_turns": 1}],
            owner,
            messages,
            writer,
        )
    assert reply == (True, "fine")


async def test_a_nested_chat_inside_a_group_chat(fake_llm: FakeLLMServer) -> None:
    """A member that thinks by running a nested chat with a reviewer LLM."""
    fake_llm.responder = lambda request: "reviewed: " + str(request["messages"][-1]["content"])
    reviewer = AssistantAgent("reviewer", llm_config=fake_llm.llm_config())
    thinker, other, user = agent("thinker"), agent("other"), agent("user")
    group = GroupChat([thinker, other], [], max_round=3, speaker_selection_method="round_robin")
    manager = GroupChatManager(group)
    thinker.register_nested_chats(
        [{"recipient": reviewer, "max_turns": 1, "summary_method": "last_msg"}], trigger=manager
    )
    with IOStream.set_default(IOScripted()):
        await user.a_initiate_chat(manager, message="idea")
    assert [(m["name"], m["content"]) for m in group.messages] == [
        ("user", "idea"),
        ("thinker", "reviewed: idea"),
        ("other", "other-reply"),
    ]
