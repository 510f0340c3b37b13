"""GroupChat(visibility=...): what each member's model is sent, rule by rule.

Every member asks FakeLLMServer (strict: an orphan tool result is refused); the responder
answers by the member's system message ("I am <name>."), and the tests read back what each
member's requests contained.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Annotated, Any

import pytest

from parley import ConversableAgent, GroupChat, GroupChatManager, UserProxyAgent
from parley.agentchat.contrib.capabilities.transform_messages import TransformMessages
from parley.agentchat.contrib.capabilities.transforms import MessageHistoryLimiter
from parley.exceptions import GroupChatConfigError
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

from ._spec_support import VARIANTS, call

SELECTING = "You coordinate a conversation"


def member(name: str, server: FakeLLMServer, **kwargs: Any) -> ConversableAgent:
    return ConversableAgent(
        name,
        system_message=f"I am {name}.",
        llm_config=server.llm_config(),
        human_input_mode="NEVER",
        code_execution_config=False,
        **kwargs,
    )


def asker(request: dict[str, Any]) -> str:
    """The agent a request comes from: ``I am <name>.``, or ``selector``."""
    system = str(request["messages"][0]["content"])
    if system.startswith(SELECTING):
        return "selector"
    return system.removeprefix("I am ").rstrip(".")


def seen(server: FakeLLMServer, name: str) -> list[list[Any]]:
    """Each request of ``name``: its messages after the system message, as their text (a tool
    call as ``call``, a tool result as ``result``)."""
    out = []
    for request in server.requests:
        if asker(request) == name:
            out.append([_shown(m) for m in request["messages"][1:]])
    return out


def _shown(message: dict[str, Any]) -> Any:
    if message.get("tool_calls"):
        return "call"
    if message.get("role") == "tool":
        return "result"
    return message.get("content")


def scripted(replies: dict[str, Iterator[Any]], pick: Callable[[], str] | None = None) -> Any:
    def respond(request: dict[str, Any]) -> Any:
        who = asker(request)
        if who == "selector":
            assert pick is not None
            return pick()
        return next(replies[who])

    return respond


def in_order(*agents: ConversableAgent) -> Callable[[Any, Any], Any]:
    """A speaker selection method that makes ``agents`` speak in this order."""
    queue = list(agents)
    return lambda last, group: queue.pop(0)


async def run_group(
    variant: str,
    server: FakeLLMServer,
    visibility: Any,
    order: str = "abca",
    replies: dict[str, list[str]] | None = None,
) -> GroupChat:
    """A chat of members a, b, c started by an outsider, ``user``; the members speak in
    ``order`` and say what ``replies`` gives them."""
    a, b, c = (member(n, server) for n in "abc")
    by_name = {"a": a, "b": b, "c": c}
    replies = replies or {
        "a": ["plan for @c", "a done"],
        "b": ["b note"],
        "c": ["c answer"],
    }
    server.responder = scripted({n: iter(r) for n, r in replies.items()})
    group = GroupChat(
        [a, b, c],
        [],
        max_round=len(order) + 1,
        speaker_selection_method=in_order(*(by_name[n] for n in order)),
        visibility=visibility,
    )
    await start(variant, GroupChatManager(group), "task")
    return group


async def start(variant: str, manager: GroupChatManager, message: str) -> None:
    """An outsider, ``user``, starts the chat with ``message``."""
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    with IOStream.set_default(IOScripted()):
        await call(variant, user, "initiate_chat", manager, message=message)


# -- the rules ---------------------------------------------------------------------------------


@VARIANTS
async def test_addressed_members_see_their_own_the_next_speakers_and_mentions(
    variant: str, fake_llm: FakeLLMServer
) -> None:
    group = await run_group(variant, fake_llm, "addressed")
    # The manager keeps everything.
    assert [m["content"] for m in group.messages] == [
        "task",
        "plan for @c",
        "b note",
        "c answer",
        "a done",
    ]
    # a: the initial message (a broadcast); later its own message and c's, after which it spoke.
    # b's note went to c, who spoke next.
    assert seen(fake_llm, "a") == [["task"], ["task", "plan for @c", "c answer"]]
    # b spoke after a's plan: that message was addressed to b.
    assert seen(fake_llm, "b") == [["task", "plan for @c"]]
    # c is named in a's plan, and spoke after b's note.
    assert seen(fake_llm, "c") == [["task", "plan for @c", "b note"]]


async def test_the_last_message_goes_to_its_mentions_only(fake_llm: FakeLLMServer) -> None:
    replies = {"a": ["a1", "a done, @b"], "b": ["b note"], "c": ["c answer"]}
    group = await run_group("async", fake_llm, "addressed", replies=replies)
    _, b, c = group.agents
    manager = next(iter(b.chat_messages))
    # Nobody speaks after the last message: only @b receives it.
    assert b.chat_messages[manager][-1]["content"] == "a done, @b"
    assert "a done, @b" not in [m["content"] for m in c.chat_messages[manager]]


@VARIANTS
async def test_allow_lists(variant: str, fake_llm: FakeLLMServer) -> None:
    await run_group(variant, fake_llm, {"c": ["a"], "b": []})
    # a is not in the dict: it sees everything.
    assert seen(fake_llm, "a")[-1] == ["task", "plan for @c", "b note", "c answer"]
    # b sees nobody's messages but the initial one; c sees a's, not b's.
    assert seen(fake_llm, "b") == [["task"]]
    assert seen(fake_llm, "c") == [["task", "plan for @c"]]


@VARIANTS
async def test_a_callable_decides_each_message(variant: str, fake_llm: FakeLLMServer) -> None:
    asked: list[tuple[str, str]] = []

    def rule(message: dict[str, Any], agent: Any) -> bool:
        asked.append((message["name"], agent.name))
        return message["name"] != "a" or agent.name == "b"

    await run_group(variant, fake_llm, rule)
    assert seen(fake_llm, "b") == [["task", "plan for @c"]]
    assert seen(fake_llm, "c") == [["task", "b note"]]
    assert seen(fake_llm, "a")[-1] == ["task", "plan for @c", "b note", "c answer"]
    # Asked for every member but the sender, message by message (the last one included).
    assert asked[:2] == [("user", "a"), ("user", "b")]
    assert ("a", "a") not in asked
    assert asked[-2:] == [("a", "b"), ("a", "c")]


async def test_all_is_the_default_and_changes_nothing(fake_llm: FakeLLMServer) -> None:
    runs = []
    for kwargs in ({}, {"visibility": "all"}):
        fake_llm.reset()
        group = await run_group("async", fake_llm, kwargs.get("visibility", "all"))
        runs.append((fake_llm.requests, [a.chat_messages for a in group.agents]))
    assert [r["messages"] for r in runs[0][0]] == [r["messages"] for r in runs[1][0]]
    assert seen(fake_llm, "c") == [["task", "plan for @c", "b note"]]
    assert GroupChat([member("x", fake_llm), member("y", fake_llm)], []).visibility == "all"


# -- selection -----------------------------------------------------------------------------------


@VARIANTS
async def test_auto_selection_reads_the_whole_transcript(
    variant: str, fake_llm: FakeLLMServer
) -> None:
    a, b, c = (member(n, fake_llm) for n in "abc")
    picks = iter(["a", "b", "c"])
    fake_llm.responder = scripted(
        {"a": iter(["a says"]), "b": iter(["b says"]), "c": iter(["c says"])},
        pick=lambda: next(picks),
    )
    group = GroupChat([a, b, c], [], max_round=4, visibility={"c": []})
    manager = GroupChatManager(group, llm_config=fake_llm.llm_config())
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    with IOStream.set_default(IOScripted()):
        await call(variant, user, "initiate_chat", manager, message="task")
    selections = seen(fake_llm, "selector")
    # The selection before c spoke read every message, b's and a's included.
    assert selections[-1][:3] == ["task", "a says", "b says"]
    assert seen(fake_llm, "c") == [["task"]]


# -- tool calls ----------------------------------------------------------------------------------


def tool_group(server: FakeLLMServer, visibility: Any) -> tuple[GroupChat, GroupChatManager]:
    """coder calls add, executor runs it, coder reads the result, then critic speaks."""
    coder, critic = member("coder", server), member("critic", server)
    executor = UserProxyAgent("executor", human_input_mode="NEVER", code_execution_config=False)

    @executor.register_for_execution()
    @coder.register_for_llm(description="Add two numbers.")
    def add(a: Annotated[int, "a"], b: Annotated[int, "b"]) -> int:
        return a + b

    server.responder = scripted(
        {
            "coder": iter([{"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]}, "5"]),
            "critic": iter(["looks fine"]),
        }
    )
    group = GroupChat(
        [coder, executor, critic],
        [],
        max_round=5,
        speaker_selection_method=in_order(coder, executor, coder, critic),
        visibility=visibility,
    )
    return group, GroupChatManager(group)


async def start_tools(variant: str, server: FakeLLMServer, visibility: Any) -> GroupChat:
    group, manager = tool_group(server, visibility)
    await start(variant, manager, "2+3?")
    return group


@VARIANTS
async def test_a_tool_exchange_between_two_agents_is_hidden_from_a_third(
    variant: str, fake_llm: FakeLLMServer
) -> None:
    group = await start_tools(variant, fake_llm, "addressed")
    assert [m.get("name") for m in group.messages] == [
        "user",
        "coder",
        "executor",
        "coder",
        "critic",
    ]
    assert seen(fake_llm, "coder") == [["2+3?"], ["2+3?", "call", "result"]]
    # The coder's answer ("5") was addressed to the critic, the exchange before it was not.
    assert seen(fake_llm, "critic") == [["2+3?", "5"]]


@VARIANTS
async def test_results_follow_their_call(variant: str, fake_llm: FakeLLMServer) -> None:
    # The critic may read the coder: it gets the call and so the executor's result too.
    await start_tools(variant, fake_llm, {"critic": ["coder"]})
    assert seen(fake_llm, "critic") == [["2+3?", "call", "result", "5"]]


async def test_a_hidden_call_hides_its_results(fake_llm: FakeLLMServer) -> None:
    # The critic may read the executor, not the coder: the result without its call would be an
    # orphan, so it gets neither. The executor, asked to run the call, gets it anyway.
    group = await start_tools("async", fake_llm, {"critic": ["executor"], "executor": []})
    assert seen(fake_llm, "critic") == [["2+3?"]]
    executor = group.agents[1]
    manager = next(iter(executor.chat_messages))
    assert [m.get("tool_calls") is not None for m in executor.chat_messages[manager]] == [
        False,
        True,
        False,
    ]


# -- transforms and resume ----------------------------------------------------------------------


async def test_message_transforms_apply_to_the_members_share(fake_llm: FakeLLMServer) -> None:
    a, b, c = (member(n, fake_llm) for n in "abc")
    TransformMessages(transforms=[MessageHistoryLimiter(max_messages=1)]).add_to_agent(c)
    fake_llm.responder = scripted(
        {"a": iter(["a1", "a2 for @c"]), "b": iter(["b1"]), "c": iter(["c1"])}
    )
    group = GroupChat(
        [a, b, c],
        [],
        max_round=5,
        speaker_selection_method=in_order(a, b, a, c),
        visibility="addressed",
    )
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    with IOStream.set_default(IOScripted()):
        await user.a_initiate_chat(GroupChatManager(group), message="task")
    # c's share is task and a2 (a1 went to b, b1 to a); its limiter cuts that share, not the
    # transcript, to its last message.
    manager = next(iter(c.chat_messages))
    assert [m["content"] for m in c.chat_messages[manager][:-1]] == ["task", "a2 for @c"]
    assert seen(fake_llm, "c") == [["a2 for @c"]]


SAVED = [
    {"role": "user", "name": "user", "content": "task"},
    {"role": "user", "name": "a", "content": "plan for @c"},
    {"role": "user", "name": "b", "content": "b note"},
    {"role": "user", "name": "c", "content": "c answer"},
    {"role": "user", "name": "a", "content": "go on"},
]


@VARIANTS
async def test_resume_rebuilds_each_share_with_the_rule(
    variant: str, fake_llm: FakeLLMServer
) -> None:
    a, b, c = (member(n, fake_llm) for n in "abc")
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    fake_llm.responder = scripted({"b": iter(["b again"])})
    group = GroupChat(
        [a, b, c, user],
        [],
        max_round=2,
        speaker_selection_method=in_order(b),
        visibility="addressed",
    )
    manager = GroupChatManager(group)
    with IOStream.set_default(IOScripted()):
        last_agent, last = await call(variant, manager, "resume", messages=json.dumps(SAVED))
        assert [m["content"] for m in a.chat_messages[manager]] == [
            "task",
            "plan for @c",
            "c answer",
        ]
        # Its own messages, the initial one, those after which it spoke, its mentions.
        assert [m["content"] for m in b.chat_messages[manager]] == [
            "task",
            "plan for @c",
            "b note",
        ]
        assert [m["content"] for m in c.chat_messages[manager]] == [
            "task",
            "plan for @c",
            "b note",
            "c answer",
        ]
        await call(variant, last_agent, "initiate_chat", manager, message=last, clear_history=False)
    # The resumed chat's first message is a broadcast; b spoke next.
    assert seen(fake_llm, "b") == [["task", "plan for @c", "b note", "go on"]]


# -- settings ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("visibility", "error"),
    [
        ("everyone", r"visibility is 'everyone'; it should be one of \['all', 'addressed'\]"),
        (3, r"must be 'all', 'addressed', a callable or a dict of allow lists, got int 3"),
        ({"a": "b"}, r"visibility\['a'\] must be a list of sender names, got str 'b'"),
        ({"a": ["zed"], "ghost": []}, r"not members: \['zed', 'ghost'\]; the members are"),
    ],
)
def test_a_bad_visibility_is_refused_at_construction(
    fake_llm: FakeLLMServer, visibility: Any, error: str
) -> None:
    with pytest.raises(GroupChatConfigError, match=error):
        GroupChat([member("a", fake_llm), member("b", fake_llm)], [], visibility=visibility)
    assert issubclass(GroupChatConfigError, ValueError)
