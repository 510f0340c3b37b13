"""What every native provider client is tested with, through its real SDK against the fake
server: each provider's test file subclasses :class:`ProviderScenarios` and runs the chat
scenarios with its own config entry, then checks what its API received (which differs by
provider)."""

from __future__ import annotations

import sys
from typing import Any

import pytest

import parley
from parley import ConversableAgent
from parley.exceptions import ModelConnectionError, RateLimitError
from parley.io import IOScripted, IOStream
from parley.oai import OpenAIWrapper
from parley.oai.providers._registry import provider_for
from parley.testing import FakeLLMServer

HI = [{"role": "user", "content": "hi"}]
USAGE = {"prompt_tokens": 1000, "completion_tokens": 2000}


def entry(server: FakeLLMServer, api_type: str, model: str, **extra: Any) -> dict[str, Any]:
    return server.config_list(model, api_type=api_type, **extra)[0]


def _history(result: Any) -> list[dict[str, Any]]:
    history = result.chat_history
    assert history is not None
    return list(history)


def protocol(config: dict[str, Any]) -> str:
    """The wire protocol the server records for ``config``'s requests (the OpenAI-shaped
    providers speak OpenAI's)."""
    api_type = str(config["api_type"])
    if api_type in ("groq", "mistral", "together", "cerebras"):
        return "openai"
    return "gemini" if api_type == "google" else api_type


def two_agents_with_system_messages(server: FakeLLMServer, config: dict[str, Any]) -> Any:
    """alice and bob, both on ``config`` with system messages, talk for two turns; what alice's
    model was asked is checked as the server read it back. The chat's result."""
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


def tool_round_trip_registered_by_decorators(server: FakeLLMServer, config: dict[str, Any]) -> Any:
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


def short_retry_after_is_waited(server: FakeLLMServer, config: dict[str, Any]) -> None:
    """A 429 asking for a short wait is retried on the same config after that wait."""
    server.add_error(429, "slow down", headers={"Retry-After": "0.3"})
    server.add_reply("after the wait")
    response = OpenAIWrapper(config_list=[config], cache_seed=None).create(messages=HI)
    assert response.choices[0].message.content == "after the wait"
    first, second = server.received
    assert [first.protocol, second.protocol] == [protocol(config)] * 2
    assert second.time - first.time >= 0.3


def _agent(name: str, config: dict[str, Any], **llm: Any) -> ConversableAgent:
    return ConversableAgent(
        name, llm_config={"config_list": [config], **llm}, human_input_mode="NEVER"
    )


def two_agent_chat(server: FakeLLMServer, config: dict[str, Any]) -> Any:
    """alice and bob, both on ``config``, talk for two turns each; the chat's result."""
    replies = iter(["Hello alice.", "Hello bob.", "Bye alice.", "Bye bob."])
    server.responder = lambda body: next(replies)
    alice = _agent("alice", config)
    bob = _agent("bob", config)
    result = alice.initiate_chat(bob, message="Hi bob.", max_turns=2, silent=True)
    history = result.chat_history or []
    assert [m["content"] for m in history] == [
        "Hi bob.",
        "Hello alice.",
        "Hello bob.",
        "Bye alice.",
    ]
    assert len(server.requests) == 3
    return result


def tool_round_trip(server: FakeLLMServer, config: dict[str, Any]) -> Any:
    """The model calls ``add``, the user's agent runs it, the result goes back to the model;
    the chat's result."""
    server.add_reply(tool_calls=[{"id": "call_1", "name": "add", "arguments": {"a": 1, "b": 2}}])
    server.add_reply("The sum is 3.")
    assistant = _agent("assistant", config)
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")

    def add(a: int, b: int) -> int:
        return a + b

    parley.register_function(add, caller=assistant, executor=user, description="Add two ints.")
    result = user.initiate_chat(assistant, message="What is 1 + 2?", max_turns=2, silent=True)
    history = result.chat_history or []
    assert history[-1]["content"] == "The sum is 3."
    assert history[2]["tool_responses"][0]["content"] == "3"
    assert len(server.requests) == 2
    return result


def streamed(server: FakeLLMServer, config: dict[str, Any]) -> None:
    """A streamed reply is the agent's reply and is echoed to the IOStream as it comes."""
    server.add_reply("Streaming along, word by word.")
    agent = _agent("streamer", config, stream=True)
    screen = IOScripted()
    with IOStream.set_default(screen):
        reply = agent.generate_reply(HI)
    assert reply == "Streaming along, word by word."
    assert "Streaming along, word by word." in screen.text
    assert server.received[0].chat["stream"] is True


def rate_limited_then_other_provider(
    server: FakeLLMServer, config: dict[str, Any], protocol: str
) -> None:
    """A 429 asking for a long wait moves the request to the next config, of OpenAI; alone, the
    config raises a RateLimitError with the status and the wait, without the key."""
    server.add_error(429, "slow down", headers={"Retry-After": "30"})
    server.add_reply("from openai")
    fallback = server.config_list("gpt-4o-mini")[0]
    response = OpenAIWrapper(config_list=[config, fallback]).create(messages=HI)
    assert response.choices[0].message.content == "from openai"
    assert response.config_id == 1
    assert [r.protocol for r in server.received] == [protocol, "openai"]

    server.add_error(429, "slow down", headers={"Retry-After": "100"})
    alone = OpenAIWrapper(config_list=[{**config, "max_retries": 0}])
    with pytest.raises(RateLimitError) as caught:
        alone.create(messages=HI)
    error = caught.value
    assert (error.status_code, error.retry_after) == (429, 100.0)
    assert "slow down" in str(error)
    for key in ("api_key", "aws_access_key", "aws_secret_key"):
        assert key not in config or config[key] not in str(error)


def dropped_connection(server: FakeLLMServer, config: dict[str, Any]) -> None:
    """A connection dropped before the answer is a ModelConnectionError naming the provider."""
    server.add_disconnect()
    with pytest.raises(ModelConnectionError, match=config["api_type"]):
        OpenAIWrapper(config_list=[{**config, "max_retries": 0}]).create(messages=HI)


def usage_and_cost(
    server: FakeLLMServer, config: dict[str, Any], price: tuple[float, float]
) -> None:
    """A chat's cost and usage summary, priced by the client's table (``price`` per 1k input
    and output tokens, as the provider publishes it) or the config's ``price``."""
    cost = price[0] + 2 * price[1]  # 1000 and 2000 tokens
    before = dict(config)
    for priced in (config, {**config, "price": [0.5, 1.0]}):
        server.add_reply("Done.", usage=USAGE)
        assistant = _agent("assistant", priced)
        user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
        result = user.initiate_chat(assistant, message="Go.", max_turns=1, silent=True)
        expected = cost if priced is config else 0.5 + 2.0
        assert result.cost is not None
        usage = result.cost["usage_including_cached_inference"]
        assert usage["total_cost"] == pytest.approx(expected)
        (model,) = [k for k in usage if k != "total_cost"]
        assert usage[model]["prompt_tokens"] == 1000
        assert usage[model]["completion_tokens"] == 2000
        summary = parley.gather_usage_summary([assistant])
        assert summary is not None
        assert summary["usage_excluding_cached_inference"]["total_cost"] == pytest.approx(expected)
    assert config == before  # the caller's entry is never changed


def missing_sdk(
    monkeypatch: pytest.MonkeyPatch, config: dict[str, Any], module: str, extra: str
) -> None:
    """Without its SDK, a config of the provider fails when the client is built, naming the
    extra to install."""
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ImportError, match=rf"pip install 'parley\[{extra}\]'"):
        OpenAIWrapper(config_list=[config])


class ProviderScenarios:
    """The scenarios every provider passes, as test methods: a provider's test file subclasses
    this as ``Test<Provider>`` with its ``API_TYPE``, ``MODEL``, ``PRICE`` (its table's, per
    1k input and output tokens), ``SDK`` (the module to hide) and ``PROTOCOL`` (the wire the
    fake server saw)."""

    API_TYPE = ""
    MODEL = ""
    PRICE = (0.0, 0.0)
    SDK = ""
    PROTOCOL = "openai"

    def entry(self, server: FakeLLMServer, **extra: Any) -> dict[str, Any]:
        return entry(server, self.API_TYPE, self.MODEL, **extra)

    def test_streaming_echoes_the_text(self, fake_llm: FakeLLMServer) -> None:
        streamed(fake_llm, self.entry(fake_llm))

    def test_rate_limit_falls_back_to_openai(self, fake_llm: FakeLLMServer) -> None:
        rate_limited_then_other_provider(fake_llm, self.entry(fake_llm), self.PROTOCOL)

    def test_short_retry_after_is_waited(self, fake_llm: FakeLLMServer) -> None:
        short_retry_after_is_waited(fake_llm, self.entry(fake_llm))

    def test_dropped_connection(self, fake_llm: FakeLLMServer) -> None:
        dropped_connection(fake_llm, self.entry(fake_llm))

    def test_usage_and_cost(self, fake_llm: FakeLLMServer) -> None:
        usage_and_cost(fake_llm, self.entry(fake_llm), self.PRICE)

    def test_missing_sdk_names_the_extra(
        self, fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        extra = provider_for(self.API_TYPE)
        assert extra is not None
        missing_sdk(monkeypatch, self.entry(fake_llm), self.SDK, extra.extra)
