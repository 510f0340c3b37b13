"""Teachability beyond the happy path: its own analyzer model, verbosity, async and concurrent
chats, multimodal content, usage and budgets, an analyzer that answers nothing, no model."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from parley import ConversableAgent
from parley.agentchat.contrib.capabilities.teachability import Teachability
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer
from parley.usage import Budget

from ._script import (
    CAT,
    DOG,
    TeachingModel,
    chat,
    make_agent,
    memories,
)


def test_an_agent_without_a_model_cannot_be_taught(tmp_path: Path) -> None:
    agent = ConversableAgent("plain", llm_config=False)
    with pytest.raises(AssertionError, match=r"Teachability requires a valid llm_config\."):
        Teachability(path_to_db_dir=str(tmp_path)).add_to_agent(agent)


def test_the_analyzer_can_use_its_own_model(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    analyzer_model = TeachingModel(facts=[DOG])
    agent_model = fake_llm.responder = TeachingModel(replies=["Hi!"])
    with FakeLLMServer(responder=analyzer_model) as analyst:
        teachable, _ = make_agent(fake_llm, tmp_path, llm_config=analyst.llm_config())
        chat(teachable, "my dog is called Rex")
    assert analyzer_model.kinds() == ["is_task", "has_info", "question", "info"]
    assert len(agent_model.agent_requests) == 1
    assert agent_model.analyses == []


def test_verbosity_shows_the_memory_operations(
    fake_llm: FakeLLMServer, model: TeachingModel, tmp_path: Path
) -> None:
    with IOStream.set_default(IOScripted()) as io:
        teachable, _ = make_agent(fake_llm, tmp_path, verbosity=1)
        chat(teachable, "my dog is called Rex")
        chat(teachable, "What is the name of my dog?")
    assert "REMEMBER THIS QUESTION-ANSWER PAIR" in io.text
    assert "INPUT-OUTPUT PAIR ADDED TO VECTOR DATABASE" in io.text
    assert "MEMOS APPENDED TO LAST MESSAGE" in io.text
    # The analyzer's conversation is shown from verbosity 2 only.
    assert "Does the TEXT contain information" not in io.text
    with IOStream.set_default(IOScripted()) as io:
        chatty, _ = make_agent(fake_llm, tmp_path, verbosity=2)
        chat(chatty, "Nice weather.")
    assert "Does the TEXT contain information" in io.text


async def test_teachability_works_in_an_async_chat(
    fake_llm: FakeLLMServer, model: TeachingModel, tmp_path: Path
) -> None:
    teachable, _ = make_agent(fake_llm, tmp_path)
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    await user.a_initiate_chat(teachable, message="my cat is Tom", max_turns=1, silent=True)
    await user.a_initiate_chat(
        teachable, message="What is my cat called?", max_turns=1, silent=True, clear_history=True
    )
    assert memories(model.agent_requests[-1]) == f"\n- {CAT.answer}\n"


def test_the_analyzer_conversation_holds_one_analysis(
    fake_llm: FakeLLMServer, model: TeachingModel, tmp_path: Path
) -> None:
    teachable, teachability = make_agent(fake_llm, tmp_path)
    chat(teachable, "my dog is called Rex")
    chat(teachable, "Nice weather.")
    # AutoGen kept every analysis in the agent's history; here only the last one is kept.
    assert [m["content"] for m in teachable.chat_messages[teachability.analyzer]] == [
        "Nice weather.",
        model.analyses[-1][0],
        "no",
    ]


def test_multimodal_content_is_read_by_its_text(
    fake_llm: FakeLLMServer, model: TeachingModel, tmp_path: Path
) -> None:
    teacher, _ = make_agent(fake_llm, tmp_path)
    chat(teacher, "my dog is called Rex")
    _teachable, teachability = make_agent(fake_llm, tmp_path)
    parts = [{"type": "text", "text": "What is the name of my dog?"}]
    out = teachability.process_last_received_message(parts)
    assert out[0] == parts[0]
    assert len(out) == 2
    assert out[1]["type"] == "text"
    assert DOG.answer in out[1]["text"]


async def test_two_chats_at_once_share_the_analyzer_safely(
    fake_llm: FakeLLMServer, model: TeachingModel, tmp_path: Path
) -> None:
    teachable, teachability = make_agent(fake_llm, tmp_path)

    def unchanged(sender: Any, message: Any, recipient: Any, silent: Any) -> Any:
        return message

    # A plain hook runs in a worker thread: each send to the analyzer gives the other chat a
    # chance to run in between.
    teachable.register_hook("process_message_before_send", unchanged)
    alice = ConversableAgent("alice", llm_config=False, human_input_mode="NEVER")
    bob = ConversableAgent("bob", llm_config=False, human_input_mode="NEVER")
    await asyncio.gather(
        alice.a_initiate_chat(teachable, message="my dog is called Rex", max_turns=1, silent=True),
        bob.a_initiate_chat(teachable, message="my cat is Tom", max_turns=1, silent=True),
    )
    assert sorted(m[1:] for m in teachability.memo_store.list_memos()) == [
        (CAT.question, CAT.answer),
        (DOG.question, DOG.answer),
    ]


def test_the_analyzer_calls_are_part_of_the_chat_usage_and_budget(
    fake_llm: FakeLLMServer, model: TeachingModel, tmp_path: Path
) -> None:
    teachable, _ = make_agent(fake_llm, tmp_path)
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    result = user.initiate_chat(teachable, message="my dog is called Rex", max_turns=1, silent=True)
    assert result.usage is not None
    calls = {name: usage.llm_calls for name, usage in result.usage.by_agent().items()}
    assert calls == {"analyzer": 4, "teachable": 1}

    # A budget of three model calls stops the analysis before the agent's own reply.
    model.analyses.clear()
    limited = user.initiate_chat(
        teachable,
        message="my cat is Tom",
        max_turns=1,
        silent=True,
        budget=Budget(max_llm_calls=3),
    )
    assert limited.termination_reason == "budget:llm_calls"
    assert limited.usage is not None
    assert limited.usage.llm_calls == 3
    assert len(model.analyses) == 3


def test_an_analyzer_that_answers_nothing_stores_nothing(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    from parley.agentchat.contrib import text_analyzer_agent

    def model(body: dict[str, Any]) -> Any:
        if body["messages"][0]["content"] == text_analyzer_agent.system_message:
            return {"content": None, "refusal": "I cannot help with that."}
        return "Noted."

    fake_llm.responder = model
    teachable, teachability = make_agent(fake_llm, tmp_path)
    chat(teachable, "my dog is called Rex")
    # AutoGen read the instructions ("... yes or no.") back as the answer and stored them.
    assert teachability.memo_store.list_memos() == []
    assert len(fake_llm.requests) == 3  # two questions, both unanswered, and the reply
