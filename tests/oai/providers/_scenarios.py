"""What every native provider client must do for an agent, run through the provider's real
SDK against FakeLLMServer's wire of that provider. Each ``test_<provider>.py`` calls these with
its ``api_type``; the assertions on the provider's own request shape stay in those files."""

from __future__ import annotations

import sys
import time
from typing import Any

import pytest

from parley import ConversableAgent, gather_usage_summary
from parley.io import IOScripted, IOStream
from parley.oai import OpenAIWrapper
from parley.testing import FakeLLMServer

HI = [{"role": "user", "content": "hi"}]


def _history(result: Any) -> list[dict[str, Any]]:
    history = result.chat_history
    assert history is not None
    return list(history)


def protocol(config: dict[str, Any]) -> str:
    """The wire protocol the server records for ``config``'s requests."""
    api_type = str(config["api_type"])
    return "gemini" if api_type == "google" else api_type


def entry(server: FakeLLMServer, api_type: str, model: str, **extra: Any) -> dict[str, Any]:
    (config,) = server.config_list(model, api_type=api_type, **extra)
    return config


def two_agent_chat(server: FakeLLMServer, config: dict[str, Any]) -> Any:
    """alice and bob, both on ``config``, talk for two turns; the chat's result."""
    server.add_reply("Hello Alice, how are you?")
    server.add_reply("Fine, thanks Bob.")
    server.add_reply("Glad to hear it.")
    llm = {"config_list": [config], "cache_seed": None}
    alice = ConversableAgent("alice", llm_config=llm, system_message="You are Alice.")
    bob = ConversableAgent("bob", llm_config=llm, system_message="You are Bob.")
    result = alice.initiate_chat(bob, message="Hi Bob!", max_turns=2, silent=True)
    assert [m["content"] for m in _history(result)] == [
        "Hi Bob!",
        "Hello Alice, how are you?",
        "Fine, thanks Bob.",
        "Glad to hear it.",
    ]
    assert [r.protocol for r in server.received] == [protocol(config)] * 3
    # What alice's model was asked, read back as OpenAI messages by the server.
    alice_asked = server.received[1].chat["messages"]
    assert alice_asked[0]["role"] == "system"
    assert "You are Alice." in str(alice_asked[0]["content"])
    assert [m["role"] for m in alice_asked[1:]] == ["assistant", "user"]
    assert [m["content"] for m in alice_asked[1:]] == ["Hi Bob!", "Hello Alice, how are you?"]
    return result


def tool_agents(config: dict[str, Any]) -> tuple[ConversableAgent, ConversableAgent]:
    """An assistant on ``config`` offered ``add``, and a user proxy that runs it."""
    llm = {"config_list": [config], "cache_seed": None}
    assistant = ConversableAgent("assistant", llm_config=llm)
    user = ConversableAgent(
        "user",
        llm_config=False,
        human_input_mode="NEVER",
        is_termination_msg=lambda m: "TERMINATE" in str(m.get("content") or ""),
    )

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    assistant.register_for_llm(description="Add two integers.")(add)
    user.register_for_execution()(add)
    return assistant, user


def tool_round_trip(server: FakeLLMServer, config: dict[str, Any]) -> Any:
    """The model calls ``add``; the user proxy runs it; the result goes back. The second
    request as the server received it (its raw JSON body)."""
    server.add_reply(tool_calls=[{"name": "add", "arguments": {"a": 1, "b": 2}}])
    server.add_reply("The sum is 3. TERMINATE")
    assistant, user = tool_agents(config)
    result = user.initiate_chat(assistant, message="What is 1 + 2?", silent=True)
    history = _history(result)
    assert history[-1]["content"] == "The sum is 3. TERMINATE"
    tool_message = history[2]
    assert tool_message["role"] == "tool"
    assert tool_message["content"] == "3"
    call = history[1]["tool_calls"][0]
    assert call["function"]["name"] == "add"
    assert tool_message["tool_responses"][0]["tool_call_id"] == call["id"]
    assert len(server.received) == 2
    return server.received[1]


def streaming(server: FakeLLMServer, config: dict[str, Any]) -> None:
    """A streamed reply is echoed as it arrives and is the chat's message."""
    server.add_reply("Streaming works fine.")
    llm = {"config_list": [{**config, "stream": True}], "cache_seed": None}
    bot = ConversableAgent("bot", llm_config=llm)
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    screen = IOScripted()
    with IOStream.set_default(screen):
        result = user.initiate_chat(bot, message="stream please", max_turns=1)
    assert _history(result)[-1]["content"] == "Streaming works fine."
    assert "Streaming works fine." in screen.text
    assert server.received[0].chat["stream"] is True


def rate_limited_then_fallback(server: FakeLLMServer, config: dict[str, Any]) -> None:
    """A 429 asking for a short wait is retried after it; one asking for a long wait sends the
    request on to the next config, another provider's (OpenAI's), at once."""
    server.add_error(429, "slow down", headers={"Retry-After": "0.3"})
    server.add_error(429, "slow down more", headers={"Retry-After": "30"})
    server.add_reply("from openai")
    (openai_entry,) = server.config_list("gpt-4o-mini")
    client = OpenAIWrapper(config_list=[config, openai_entry], cache_seed=None)
    start = time.monotonic()
    response = client.create(messages=HI)
    assert time.monotonic() - start < 10
    assert response.choices[0].message.content == "from openai"
    assert response.config_id == 1
    first, second, third = server.received
    assert [first.protocol, second.protocol, third.protocol] == [
        protocol(config),
        protocol(config),
        "openai",
    ]
    assert second.time - first.time >= 0.3


def usage_and_cost(
    server: FakeLLMServer, config: dict[str, Any], price_per_1k: tuple[float, float]
) -> None:
    """A chat's cost is the provider's price of the usage the server reported; an agent's
    usage summary lists the model; a ``price`` in the config overrides the table."""
    usage = {"prompt_tokens": 1000, "completion_tokens": 2000}
    server.add_reply("one", usage=usage)
    llm = {"config_list": [config], "cache_seed": None}
    bot = ConversableAgent("bot", llm_config=llm)
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    result = user.initiate_chat(bot, message="cost?", max_turns=1, silent=True)
    expected = price_per_1k[0] + 2 * price_per_1k[1]
    assert result.cost is not None
    total = result.cost["usage_including_cached_inference"]
    assert total["total_cost"] == pytest.approx(expected)
    (model,) = [k for k in total if k != "total_cost"]
    assert total[model]["prompt_tokens"] == 1000
    assert total[model]["completion_tokens"] == 2000
    summary = gather_usage_summary([bot, user])
    assert summary["usage_including_cached_inference"]["total_cost"] == pytest.approx(expected)

    server.add_reply("two", usage=usage)
    priced = OpenAIWrapper(config_list=[{**config, "price": [0.5, 1.0]}], cache_seed=None)
    assert priced.create(messages=HI).cost == pytest.approx(0.5 + 2.0)


def missing_sdk(
    monkeypatch: pytest.MonkeyPatch, config: dict[str, Any], module: str, extra: str
) -> None:
    """Without the SDK, a config naming the provider says which extra to install."""
    for name in [m for m in sys.modules if m == module or m.startswith(module + ".")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ImportError, match=rf"pip install 'parley\[{extra}\]'"):
        OpenAIWrapper(config_list=[config])
