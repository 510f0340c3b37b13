"""For random transcripts with tool calls and random allow lists, every member's request is one
OpenAI accepts (FakeLLMServer is strict) and holds exactly the messages the rule allows."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parley import ConversableAgent, GroupChat, GroupChatManager
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

NAMES = ("a", "b", "c")

# One step of a transcript: a text by a member, or a call by one member run by another.
steps = st.lists(
    st.one_of(
        st.tuples(st.just("text"), st.sampled_from(NAMES), st.none()),
        st.tuples(st.just("tool"), st.sampled_from(NAMES), st.sampled_from(NAMES)),
    ),
    min_size=1,
    max_size=8,
)
allow_lists = st.dictionaries(
    st.sampled_from(NAMES), st.lists(st.sampled_from(NAMES), unique=True), max_size=3
)


def transcript(plan: list[tuple[str, str, str | None]]) -> list[dict[str, Any]]:
    """The saved messages: the initial one by a, the plan, a closing text by a."""
    out: list[dict[str, Any]] = [{"role": "user", "name": "a", "content": "m0"}]
    for kind, sender, runner in plan:
        i = len(out)
        if kind == "text":
            out.append({"role": "user", "name": sender, "content": f"m{i}"})
            continue
        call = {"id": f"call_{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        out.append({"role": "assistant", "name": sender, "content": None, "tool_calls": [call]})
        result = {"tool_call_id": f"call_{i}", "role": "tool", "content": f"r{i}"}
        out.append({"role": "tool", "name": runner, "content": f"r{i}", "tool_responses": [result]})
    out.append({"role": "user", "name": "a", "content": "last"})
    return out


def expected(saved: list[dict[str, Any]], rule: dict[str, list[str]], name: str) -> list[str]:
    """What ``name`` should see, read from the rule as the docs state it: its own messages, the
    initial one, its senders' messages; a tool result with its call, which also goes to the
    member that ran it."""
    shown: list[str] = []
    for i, m in enumerate(saved[:-1]):
        if m["role"] == "tool":
            call = saved[i - 1]
            if _sees(saved, i - 1, rule, name) or name in (call["name"], m["name"]):
                shown.append(m["content"])
            continue
        if m.get("tool_calls"):
            if _sees(saved, i, rule, name) or name == saved[i + 1]["name"]:
                shown.append("call")
            continue
        if _sees(saved, i, rule, name):
            shown.append(m["content"])
    return shown


def _sees(saved: list[dict[str, Any]], i: int, rule: dict[str, list[str]], name: str) -> bool:
    sender = saved[i]["name"]
    return i == 0 or sender == name or name not in rule or sender in rule[name]


@pytest.fixture(scope="module")
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(responder=lambda request: "ok") as fake:
        yield fake


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(plan=steps, rule=allow_lists)
def test_every_request_is_valid_and_holds_exactly_the_allowed_messages(
    server: FakeLLMServer, plan: list[tuple[str, str, str | None]], rule: dict[str, list[str]]
) -> None:
    members = [
        ConversableAgent(
            n,
            system_message=f"I am {n}.",
            llm_config=server.llm_config(),
            human_input_mode="NEVER",
            code_execution_config=False,
        )
        for n in NAMES
    ]
    group = GroupChat(members, [], visibility=rule)
    manager = GroupChatManager(group)
    saved = transcript(plan)
    with IOStream.set_default(IOScripted()):
        manager.resume(messages=saved)
    assert len(group.messages) == len(saved) - 1  # the manager keeps the whole transcript
    for agent in members:
        before = len(server.requests)
        agent.generate_reply(sender=manager)  # refused by the server if not a valid request
        request = server.requests[before]["messages"]
        shown = ["call" if m.get("tool_calls") else m["content"] for m in request[1:]]
        assert shown == expected(saved, rule, agent.name), agent.name
    assert not server.errors
