"""TextAnalyzerAgent (website/docs/teachability.md): one request per analysis, in the documented
layout."""

from __future__ import annotations

import pytest

from parley import ConversableAgent
from parley.agentchat.contrib.text_analyzer_agent import TextAnalyzerAgent, system_message
from parley.testing import FakeLLMServer


def test_analyze_text_sends_instructions_text_instructions(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("yes")
    analyzer = TextAnalyzerAgent(llm_config=fake_llm.llm_config())
    assert analyzer.name == "analyzer"
    assert analyzer.human_input_mode == "NEVER"
    assert analyzer.analyze_text("I was born in 1990.", "Does the TEXT mention a year?") == "yes"
    assert fake_llm.requests[0]["messages"] == [
        {"role": "system", "content": system_message},
        {
            "role": "user",
            "content": "# INSTRUCTIONS\nDoes the TEXT mention a year?\n\n"
            "# TEXT\nI was born in 1990.\n\n"
            "# INSTRUCTIONS\nDoes the TEXT mention a year?\n",
        },
    ]


def test_it_answers_a_text_then_instructions_pair(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("1990")
    analyzer = TextAnalyzerAgent(llm_config=fake_llm.llm_config())
    asker = ConversableAgent("asker", llm_config=False, human_input_mode="NEVER")
    asker.send("I was born in 1990.", analyzer, request_reply=False, silent=True)
    asker.send("Copy the year.", analyzer, request_reply=True, silent=True)
    assert asker.last_message(analyzer) == {"content": "1990", "role": "user", "name": "analyzer"}
    prompt = fake_llm.requests[0]["messages"][-1]["content"]
    assert prompt.startswith("# INSTRUCTIONS\nCopy the year.\n\n# TEXT\nI was born in 1990.\n")
    assert len(fake_llm.requests) == 1


def test_it_refuses_a_conversation_of_another_length(fake_llm: FakeLLMServer) -> None:
    analyzer = TextAnalyzerAgent(llm_config=fake_llm.llm_config())
    asker = ConversableAgent("asker", llm_config=False, human_input_mode="NEVER")
    asker.send("only the instructions", analyzer, request_reply=False, silent=True)
    with pytest.raises(AssertionError, match="exactly two messages"):
        analyzer.generate_reply(sender=asker)
    assert fake_llm.requests == []


def test_without_a_model_it_says_so() -> None:
    analyzer = TextAnalyzerAgent(llm_config=False)
    asker = ConversableAgent("asker", llm_config=False, human_input_mode="NEVER")
    asker.send("text", analyzer, request_reply=False, silent=True)
    asker.send("instructions", analyzer, request_reply=False, silent=True)
    with pytest.raises(ValueError, match=r"requires self\.llm_config"):
        analyzer.generate_reply(sender=asker)


async def test_the_async_face(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("no")
    analyzer = TextAnalyzerAgent(name="reader", llm_config=fake_llm.llm_config())
    assert await analyzer.a_analyze_text("Hello.", "Is this a question?") == "no"
    assert fake_llm.requests[0]["messages"][0]["content"] == system_message
