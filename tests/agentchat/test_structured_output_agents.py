"""Typed structured output in agents: ``llm_config={"response_format": ...}`` validates the
agent's replies (retrying with the problem shown), ``ChatResult.parsed`` and
``agent.last_parsed_reply()`` give the object while the history keeps JSON text, in two-agent,
tool, group, nested and durable chats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel

import parley
from parley import (
    AssistantAgent,
    ConversableAgent,
    GroupChat,
    GroupChatManager,
    UserProxyAgent,
)
from parley.durable import ChatStore
from parley.exceptions import StructuredOutputError
from parley.testing import FakeLLMServer


class Verdict(BaseModel):
    approved: bool
    reason: str


GOOD = '{"approved": true, "reason": "tests pass"}'


def _llm_config(server: FakeLLMServer, **extra: Any) -> dict[str, Any]:
    return {
        "config_list": server.config_list(model="gpt-4o-mini"),
        "cache_seed": None,
        "response_format": Verdict,
        **extra,
    }


def _user(**kwargs: Any) -> UserProxyAgent:
    return UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False, **kwargs)


def _reviewer_with_tool(
    config_list: list[dict[str, Any]], **extra: Any
) -> tuple[AssistantAgent, UserProxyAgent]:
    """A reviewer typed by Verdict that can call run_tests, which the user runs."""
    llm_config = {"config_list": config_list, "cache_seed": None, "response_format": Verdict}
    reviewer = AssistantAgent("reviewer", llm_config={**llm_config, **extra})
    user = _user()

    def run_tests(suite: Annotated[str, "which suite"]) -> str:
        return f"{suite}: 12 passed"

    parley.register_function(run_tests, caller=reviewer, executor=user, description="Run.")
    return reviewer, user


def test_two_agent_chat_parses_and_keeps_text(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("I approve!").add_reply(GOOD)
    reviewer = AssistantAgent("reviewer", llm_config=_llm_config(fake_llm))
    user = _user()
    result = user.initiate_chat(reviewer, message="Review this.", max_turns=1, silent=True)
    assert result.parsed == Verdict(approved=True, reason="tests pass")
    assert result.chat_history[-1]["content"] == GOOD  # plain JSON text in the history
    assert reviewer.chat_messages[user][-1]["content"] == GOOD
    assert reviewer.last_parsed_reply(user) == result.parsed
    assert reviewer.last_parsed_reply() == result.parsed
    assert user.last_parsed_reply() is None  # the user has no schema
    # the invalid first reply was sent back with its problem
    retry = fake_llm.received[1].json["messages"]
    assert retry[-2] == {"role": "assistant", "content": "I approve!"}
    assert "does not match the JSON schema Verdict" in retry[-1]["content"]
    assert json.loads(json.dumps(result.chat_history)) == result.chat_history


def test_a_chat_whose_replies_never_conform_raises(fake_llm: FakeLLMServer) -> None:
    for _ in range(2):
        fake_llm.add_reply('{"approved": "maybe"}')
    reviewer = AssistantAgent(
        "reviewer", llm_config=_llm_config(fake_llm, structured_output_retries=1)
    )
    with pytest.raises(StructuredOutputError) as caught:
        _user().initiate_chat(reviewer, message="Review this.", max_turns=1, silent=True)
    assert caught.value.schema_name == "Verdict"
    assert caught.value.raw == '{"approved": "maybe"}'
    assert caught.value.attempts == 2
    assert any("$.reason" in e for e in caught.value.errors)


def test_tool_calls_first_then_a_typed_answer(fake_llm: FakeLLMServer) -> None:
    reviewer, user = _reviewer_with_tool(fake_llm.config_list(model="gpt-4o-mini"))
    fake_llm.add_reply(tool_calls=[{"name": "run_tests", "arguments": {"suite": "unit"}}])
    fake_llm.add_reply(GOOD)
    result = user.initiate_chat(reviewer, message="Review this.", max_turns=2, silent=True)
    assert len(fake_llm.received) == 2  # the tool call was not validated nor retried
    assert fake_llm.received[0].json["response_format"]["json_schema"]["name"] == "Verdict"
    assert result.chat_history[2]["content"] == "unit: 12 passed"
    assert result.parsed == Verdict(approved=True, reason="tests pass")


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_responses_api_text_format_beside_a_registered_function(
    fake_llm: FakeLLMServer, stream: bool
) -> None:
    """OpenAI's Responses API with a reasoning model: the schema goes as ``text.format`` beside
    the agent's function on every request; the tool call is not validated, a non-conforming
    answer is asked again with its problem shown, the reasoning items go back each time."""
    reasoning = {"completion_tokens_details": {"reasoning_tokens": 5}}
    config_list = fake_llm.config_list(model="o4-mini", api_type="responses")
    reviewer, user = _reviewer_with_tool(config_list, stream=stream)
    fake_llm.add_reply(
        tool_calls=[{"name": "run_tests", "arguments": {"suite": "unit"}}], usage=reasoning
    )
    fake_llm.add_reply('{"approved": "yes"}', usage=reasoning)
    fake_llm.add_reply(GOOD, usage=reasoning)
    result = user.initiate_chat(reviewer, message="Review this.", max_turns=2, silent=True)

    requests = [r.json for r in fake_llm.received]
    assert [r.path for r in fake_llm.received] == ["/v1/responses"] * 3
    for body in requests:
        text_format = body["text"]["format"]
        assert (text_format["type"], text_format["name"]) == ("json_schema", "Verdict")
        assert text_format["schema"]["required"] == ["approved", "reason"]
        assert [t["name"] for t in body["tools"]] == ["run_tests"]
        assert "response_format" not in body
    outputs = [i for i in requests[1]["input"] if i.get("type") == "function_call_output"]
    assert [o["output"] for o in outputs] == ["unit: 12 passed"]
    # the retry shows the problem and carries back both answers' reasoning items
    retry = requests[2]["input"]
    assert "$.reason" in json.dumps(retry[-1])
    assert sum(i.get("type") == "reasoning" for i in retry) == 2
    assert json.loads(result.chat_history[-1]["content"]) == json.loads(GOOD)
    assert result.parsed == Verdict(approved=True, reason="tests pass")
    assert reviewer.last_parsed_reply(user) == result.parsed


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_anthropic_answer_tool_beside_a_registered_function(
    fake_llm: FakeLLMServer, stream: bool
) -> None:
    """An older Claude (no output_config): the schema is an answer tool offered beside the
    agent's function under tool_choice "any"; the function is called first, then the answer
    tool, whose input is the typed final answer (never run as a tool)."""
    config_list = fake_llm.config_list("claude-3-5-sonnet-20240620", api_type="anthropic")
    reviewer, user = _reviewer_with_tool(config_list, stream=stream)
    fake_llm.add_reply(
        tool_calls=[{"id": "toolu_1", "name": "run_tests", "arguments": {"suite": "unit"}}]
    )
    fake_llm.add_reply(
        tool_calls=[{"id": "toolu_2", "name": "Verdict", "arguments": json.loads(GOOD)}]
    )
    result = user.initiate_chat(reviewer, message="Review this.", max_turns=2, silent=True)

    first, second = fake_llm.received
    for request in (first, second):
        assert [t["name"] for t in request.json["tools"]] == ["run_tests", "Verdict"]
        assert request.json["tool_choice"] == {"type": "any"}
        assert "output_config" not in request.json
    # the function's result went back as Anthropic's tool_result for the call
    results = [
        block
        for message in second.json["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    assert [(r["tool_use_id"], _block_text(r["content"])) for r in results] == [
        ("toolu_1", "unit: 12 passed")
    ]
    history = result.chat_history
    assert history[1]["tool_calls"][0]["function"]["name"] == "run_tests"
    assert history[2]["content"] == "unit: 12 passed"
    assert json.loads(history[3]["content"]) == json.loads(GOOD)  # JSON text, no tool call
    assert not history[3].get("tool_calls")
    assert result.parsed == Verdict(approved=True, reason="tests pass")
    assert reviewer.last_parsed_reply(user) == result.parsed


def _block_text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content)
    return str(content)


def test_group_chat_validates_the_typed_member(fake_llm: FakeLLMServer) -> None:
    writer = AssistantAgent(
        "writer", llm_config={"config_list": fake_llm.config_list(), "cache_seed": None}
    )
    reviewer = AssistantAgent("reviewer", llm_config=_llm_config(fake_llm))
    user = _user()
    group = GroupChat(
        [user, writer, reviewer],
        messages=[],
        max_round=3,
        speaker_selection_method="round_robin",
    )
    manager = GroupChatManager(group, llm_config=False)
    fake_llm.add_reply("Here is the patch.")  # writer
    fake_llm.add_reply("LGTM").add_reply('{"approved": false, "reason": "no tests"}')  # reviewer
    result = user.initiate_chat(manager, message="Write and review a patch.", silent=True)
    assert [m.get("name") for m in result.chat_history] == ["user", "writer", "reviewer"]
    assert result.parsed == Verdict(approved=False, reason="no tests")
    assert "response_format" not in fake_llm.received[0].json  # the writer is untyped
    assert reviewer.last_parsed_reply(manager) == result.parsed


def test_nested_chat_validates_the_inner_typed_agent(fake_llm: FakeLLMServer) -> None:
    reviewer = AssistantAgent("reviewer", llm_config=_llm_config(fake_llm))
    lead = ConversableAgent("lead", llm_config=False, human_input_mode="NEVER")
    lead.register_nested_chats(
        [{"recipient": reviewer, "max_turns": 1, "summary_method": "last_msg"}],
        trigger=lambda sender: sender is not reviewer,
    )
    user = _user()
    fake_llm.add_reply("ok").add_reply(GOOD)
    result = user.initiate_chat(lead, message="Please review.", max_turns=1, silent=True)
    assert result.chat_history[-1]["content"] == GOOD
    assert reviewer.last_parsed_reply(lead) == Verdict(approved=True, reason="tests pass")
    assert result.parsed is None  # the lead itself has no schema
    assert len(fake_llm.received) == 2


def test_durable_replay_recomputes_parsed(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    store = ChatStore(tmp_path / "chats.db")
    fake_llm.add_reply("nope").add_reply(GOOD)
    reviewer = AssistantAgent("reviewer", llm_config=_llm_config(fake_llm))
    first = _user().initiate_chat(
        reviewer, message="Review this.", max_turns=1, silent=True, store=store, chat_id="c1"
    )
    sent = len(fake_llm.received)
    reviewer2 = AssistantAgent("reviewer", llm_config=_llm_config(fake_llm))
    again = parley.durable.resume("c1", store=store, sender=_user(), recipient=reviewer2)
    assert len(fake_llm.received) == sent  # replayed from the journal
    assert again.parsed == first.parsed == Verdict(approved=True, reason="tests pass")
    assert again.chat_history[-1]["content"] == GOOD
