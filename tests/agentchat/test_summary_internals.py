"""AutoGen's summary helpers and ``_generate_oai_reply_from_client`` on ``ConversableAgent``.

AutoGen code calls, overrides and patches these private methods (AutoGen's own group-chat test
patches ``_generate_oai_reply_from_client`` and expects the reflection summary to go through
it), so parley's summary path goes through them.
"""

from __future__ import annotations

import asyncio
from typing import Any
from unittest import mock

import pytest

import parley as autogen
from parley import ConversableAgent
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer


def quiet(name: str, **kwargs: Any) -> ConversableAgent:
    kwargs.setdefault("human_input_mode", "NEVER")
    kwargs.setdefault("llm_config", False)
    return ConversableAgent(name, **kwargs)


def test_reflection_summary_in_a_group_chat_goes_through_the_patched_method() -> None:
    # AutoGen's test_role_for_reflection_summary, in our own words: the model is never asked.
    llm_config = {"config_list": [{"model": "mock", "api_key": "mock"}]}
    alice = quiet("alice", default_auto_reply="This is alice speaking.")
    bob = quiet("bob", default_auto_reply="This is bob speaking.")
    group = autogen.GroupChat(
        agents=[alice, bob], messages=[], max_round=3, speaker_selection_method="round_robin"
    )
    manager = autogen.GroupChatManager(groupchat=group, llm_config=llm_config)
    with (
        mock.patch.object(ConversableAgent, "_generate_oai_reply_from_client") as patched,
        IOStream.set_default(IOScripted()),
    ):
        patched.return_value = "Mocked summary"
        result = alice.initiate_chat(
            manager,
            max_turns=2,
            message="hello",
            summary_method="reflection_with_llm",
            summary_args={"summary_role": "user"},
        )
    patched.assert_called_once()
    _, kwargs = patched.call_args
    assert kwargs["messages"][-1] == {
        "role": "user",
        "content": ConversableAgent.DEFAULT_SUMMARY_PROMPT,
    }
    assert kwargs["llm_client"] is manager.client
    assert result.summary == "Mocked summary"


def test_an_override_of_the_step_makes_the_summary(fake_llm: FakeLLMServer) -> None:
    seen: list[list[dict[str, Any]]] = []

    class Summarizer(ConversableAgent):
        def _generate_oai_reply_from_client(
            self, llm_client: Any, messages: list[dict[str, Any]], cache: Any
        ) -> Any:
            seen.append(messages)
            return "from the override"

    fake_llm.add_reply("B's answer")
    a = Summarizer("A", human_input_mode="NEVER", llm_config=False, default_auto_reply="a")
    b = quiet("B", llm_config=fake_llm.llm_config(), default_auto_reply="b")
    with IOStream.set_default(IOScripted()):
        result = a.initiate_chat(b, message="hi", max_turns=1, summary_method="reflection_with_llm")
    assert result.summary == "from the override"
    assert len(fake_llm.requests) == 1  # B's turn only: the summary asked the override
    assert seen[0][-1]["role"] == "system"


def test_generate_oai_reply_from_client_asks_the_client(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("pong")
    a = quiet("A", llm_config=fake_llm.llm_config())
    tool_turn = {
        "role": "tool",
        "content": "r1\n\nr2",
        "tool_responses": [
            {"role": "tool", "tool_call_id": "c1", "content": "r1"},
            {"role": "tool", "tool_call_id": "c2", "content": "r2"},
        ],
    }
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": c, "type": "function", "function": {"name": "f", "arguments": "{}"}}
            for c in ("c1", "c2")
        ],
    }
    reply = a._generate_oai_reply_from_client(
        llm_client=a.client,
        messages=[{"role": "user", "content": "go"}, call, tool_turn],
        cache=None,
    )
    assert reply == "pong"
    sent = fake_llm.requests[0]["messages"]
    # The bundled tool responses go out one message each, as the API takes them.
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "tool"]
    assert [m.get("tool_call_id") for m in sent[2:]] == ["c1", "c2"]


def test_generate_oai_reply_from_client_returns_a_call_as_a_dict(
    fake_llm: FakeLLMServer,
) -> None:
    fake_llm.add_reply(tool_calls=[{"name": "look up!", "arguments": '{"q": "x"}', "id": "c9"}])
    a = quiet("A", llm_config=fake_llm.llm_config())
    reply = a._generate_oai_reply_from_client(
        a.client, [{"role": "user", "content": "find x"}], None
    )
    assert isinstance(reply, dict)
    # The name made one the API accepts when the reply is sent back, as AutoGen does.
    assert reply["tool_calls"][0]["function"]["name"] == "look_up_"
    assert reply["tool_calls"][0]["id"] == "c9"


def test_reflection_with_llm_uses_the_llm_agent_then_its_own_client(
    fake_llm: FakeLLMServer,
) -> None:
    fake_llm.add_reply("first").add_reply("second")
    a = quiet("A", llm_config=fake_llm.llm_config(model="own-model"))
    b = quiet("B", llm_config=fake_llm.llm_config(model="other-model"))
    history = [{"role": "user", "content": "hello"}]
    assert a._reflection_with_llm("Sum up.", history, llm_agent=b, role="user") == "first"
    assert a._reflection_with_llm("Sum up.", history, llm_agent=quiet("C")) == "second"
    first, second = fake_llm.requests
    assert first["model"] == "other-model"
    assert first["messages"][-1] == {"role": "user", "content": "Sum up."}
    assert second["model"] == "own-model"
    assert second["messages"][-1] == {"role": "system", "content": "Sum up."}
    assert history == [{"role": "user", "content": "hello"}]


def test_reflection_with_llm_without_any_client_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="No OpenAIWrapper client is found"):
        quiet("A")._reflection_with_llm("Sum up.", [], llm_agent=quiet("B"))


def test_summarize_chat_and_the_static_summary_helpers(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("B answers. TERMINATE").add_reply("reflected").add_reply("again")
    a = quiet("A", default_auto_reply="a")
    b = quiet("B", llm_config=fake_llm.llm_config())
    with IOStream.set_default(IOScripted()):
        a.initiate_chat(b, message="question", max_turns=1)
    assert a._summarize_chat(None, {}, recipient=b) == ""
    assert a._summarize_chat("last_msg", {}, recipient=b) == "B answers. "
    assert ConversableAgent._last_msg_as_summary(a, b, {}) == "B answers. "
    args = {"summary_prompt": "Short, please."}
    assert a._summarize_chat("reflection_with_llm", args, recipient=b) == "reflected"
    assert args == {"summary_prompt": "Short, please."}  # the caller's dict is not changed
    assert fake_llm.requests[1]["messages"][-1]["content"] == "Short, please."
    assert ConversableAgent._reflection_with_llm_as_summary(a, b, {}) == "again"
    assert a._summarize_chat(lambda s, r, args: f"{s.name}->{r.name}", {}, recipient=b) == "A->B"
    with pytest.raises(ValueError, match="summary_method"):
        a._summarize_chat("unknown", {}, recipient=b)


def test_summary_helpers_work_from_a_running_event_loop(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("from inside a loop")
    a = quiet("A", llm_config=fake_llm.llm_config())

    async def inside() -> Any:
        return a._reflection_with_llm("Sum up.", [{"role": "user", "content": "x"}])

    assert asyncio.run(inside()) == "from inside a loop"


def test_append_oai_message_takes_both_autogen_signatures() -> None:
    a, b = quiet("A"), quiet("B")
    # 0.2.35: (message, role, conversation_id); the role says the direction.
    assert a._append_oai_message("sent", "assistant", b) is True
    assert a._append_oai_message("received", "user", b) is True
    # 0.2.40: is_sending given.
    assert a._append_oai_message("sent too", "assistant", b, is_sending=True) is True
    assert [(m["role"], m["content"], m.get("name")) for m in a.chat_messages[b]] == [
        ("assistant", "sent", "A"),
        ("user", "received", "B"),
        ("assistant", "sent too", "A"),
    ]


def test_an_override_written_for_0_2_35_is_called_without_is_sending() -> None:
    calls: list[tuple[str, str]] = []

    class Old(ConversableAgent):
        def _append_oai_message(self, message: Any, role: str, conversation_id: Any) -> bool:
            calls.append((role, message if isinstance(message, str) else message["content"]))
            return super()._append_oai_message(message, role, conversation_id)

    a = Old("A", human_input_mode="NEVER", llm_config=False, default_auto_reply="auto-a")
    b = quiet("B", default_auto_reply="auto-b")
    with IOStream.set_default(IOScripted()):
        a.initiate_chat(b, message="hi", max_turns=1)
    assert calls == [("assistant", "hi"), ("user", "auto-b")]
    assert [m["content"] for m in a.chat_messages[b]] == ["hi", "auto-b"]
