"""Conformance with AutoGen 0.2: construction, history and state, usage accounting
(``gather_usage_summary``), ``AssistantAgent`` and ``UserProxyAgent``."""

from __future__ import annotations

import copy
import inspect
from collections import defaultdict
from typing import Any

import pytest

from parley import (
    AssistantAgent,
    ConversableAgent,
    UserProxyAgent,
    gather_usage_summary,
)
from parley.exceptions import ConfigError
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

from ._spec_support import VARIANTS, agent, contents, initiate

HOOKS = {
    "process_last_received_message",
    "a_process_last_received_message",
    "process_all_messages_before_reply",
    "a_process_all_messages_before_reply",
    "process_message_before_send",
    "a_process_message_before_send",
}


# -- 2.2 class constants -------------------------------------------------------------------


def test_class_constants() -> None:
    assert ConversableAgent.DEFAULT_CONFIG is False
    assert ConversableAgent.MAX_CONSECUTIVE_AUTO_REPLY == 100
    assert ConversableAgent.DEFAULT_SUMMARY_METHOD == "last_msg"
    assert isinstance(ConversableAgent.DEFAULT_SUMMARY_PROMPT, str)


def test_subclass_constants_are_honoured(fake_llm: FakeLLMServer) -> None:
    class Configured(ConversableAgent):
        DEFAULT_CONFIG = fake_llm.llm_config()
        MAX_CONSECUTIVE_AUTO_REPLY = 4

    c = Configured("c")
    assert c.client is not None
    assert c.llm_config == fake_llm.llm_config()
    assert c.max_consecutive_auto_reply() == 4


# -- 2.3 constructor ----------------------------------------------------------------------------


def test_constructor_signature() -> None:
    params = inspect.signature(ConversableAgent.__init__).parameters
    assert list(params)[1:] == [
        "name",
        "system_message",
        "is_termination_msg",
        "max_consecutive_auto_reply",
        "human_input_mode",
        "function_map",
        "code_execution_config",
        "llm_config",
        "default_auto_reply",
        "description",
        "chat_messages",
        "silent",
    ]
    defaults = {n: p.default for n, p in params.items() if n not in ("self", "name")}
    assert defaults == {
        "system_message": "You are a helpful AI Assistant.",
        "is_termination_msg": None,
        "max_consecutive_auto_reply": None,
        "human_input_mode": "TERMINATE",
        "function_map": None,
        "code_execution_config": False,
        "llm_config": None,
        "default_auto_reply": "",
        "description": None,
        "chat_messages": None,
        "silent": None,
    }


@VARIANTS
async def test_all_parameters_may_be_passed_positionally(variant: str) -> None:
    history: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    a = ConversableAgent(
        "A",
        "system text",
        lambda m: m.get("content") == "stop",
        1,
        "NEVER",
        {"f": lambda: 1},
        False,
        False,
        "positional auto",
        "the description",
        history,
        True,
    )
    assert a.name == "A"
    assert a.system_message == "system text"
    assert a.max_consecutive_auto_reply() == 1
    assert a.human_input_mode == "NEVER"
    assert set(a.function_map) == {"f"}
    assert a.llm_config is False
    assert a.description == "the description"
    assert a.chat_messages is history
    assert a.silent is True
    b = agent("B", default_auto_reply="stop")
    with IOStream.set_default(IOScripted()) as io:
        result = await initiate(variant, b, a, message="hi")
    assert contents(result.chat_history) == ["hi", "positional auto", "stop"]
    assert "positional auto" not in io.text  # A is silent


def test_defaults_and_public_attributes() -> None:
    a = ConversableAgent("A")
    assert a.name == "A"
    assert a.system_message == "You are a helpful AI Assistant."
    assert a._oai_system_message == [
        {"content": "You are a helpful AI Assistant.", "role": "system"}
    ]
    assert a.description == a.system_message
    assert a.human_input_mode == "TERMINATE"
    assert a.llm_config is False
    assert a.client is None
    assert a.client_cache is None
    assert a.previous_cache is None
    assert a.silent is None
    assert a.code_executor is None
    assert a.use_docker is None
    assert a.max_consecutive_auto_reply() == 100
    assert a.function_map == {}
    assert isinstance(a.chat_messages, defaultdict)
    assert not a.chat_messages
    assert isinstance(a.reply_at_receive, defaultdict)
    assert a.reply_at_receive[agent("X")] is False
    assert set(a.hook_lists) == HOOKS
    assert all(hooks == [] for hooks in a.hook_lists.values())
    assert a._human_input == []


def test_name_is_read_only_and_description_writable() -> None:
    a = ConversableAgent("A", system_message="sys")
    assert a.description == "sys"
    with pytest.raises(AttributeError):
        a.name = "B"  # type: ignore[misc]
    a.description = "new"
    assert a.description == "new"
    assert ConversableAgent("B", description="given").description == "given"


def test_llm_config_none_means_no_llm() -> None:
    a = ConversableAgent("A", llm_config=None)
    assert a.llm_config is False
    assert a.client is None
    b = ConversableAgent("B", llm_config=False)
    assert b.llm_config is False
    assert b.client is None


def test_llm_config_is_deep_copied(fake_llm: FakeLLMServer) -> None:
    config = fake_llm.llm_config(temperature=0)
    original = copy.deepcopy(config)
    a = ConversableAgent("A", llm_config=config)
    assert a.llm_config == original
    assert a.llm_config is not config
    assert a.llm_config["config_list"] is not config["config_list"]
    assert a.llm_config["config_list"][0] is not config["config_list"][0]
    a.llm_config["config_list"][0]["model"] = "changed"
    assert config == original


def test_llm_config_that_cannot_be_deep_copied_is_a_type_error() -> None:
    class NotCopyable:
        def __deepcopy__(self, memo: Any) -> Any:
            raise TypeError("no copies")

    config = {"config_list": [{"model": "m", "api_key": "k"}], "http_client": NotCopyable()}
    with pytest.raises(TypeError, match="__deepcopy__"):
        ConversableAgent("A", llm_config=config)


@pytest.mark.parametrize("config", ["gpt-4", 1, ["gpt-4"], True])
def test_llm_config_of_the_wrong_type_is_an_assertion_error(config: Any) -> None:
    with pytest.raises(AssertionError):
        ConversableAgent("A", llm_config=config)


@pytest.mark.parametrize("config", [{}, {"config_list": []}, {"config_list": [{"model": ""}]}])
def test_empty_llm_configs_are_a_value_error(config: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="model"):
        ConversableAgent("A", llm_config=config)


def test_a_config_without_api_key_fails_at_construction(monkeypatch: pytest.MonkeyPatch) -> None:
    # As in AutoGen the agent cannot be built; parley's error names the config (a ConfigError,
    # a ValueError) instead of the SDK's OpenAIError.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match=r"config 0 \(model 'gpt-4'\).*OPENAI_API_KEY"):
        ConversableAgent("A", llm_config={"config_list": [{"model": "gpt-4"}]})
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    ConversableAgent("A", llm_config={"config_list": [{"model": "gpt-4"}]})


def test_code_execution_config_of_the_wrong_type_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="code_execution_config must be a dict or False"):
        ConversableAgent("A", code_execution_config="yes")  # type: ignore[arg-type]


def test_code_execution_config_none_is_deprecated() -> None:
    with pytest.warns(UserWarning, match="code_execution_config"):
        ConversableAgent("A", code_execution_config=None)  # type: ignore[arg-type]


def test_function_map_names_are_validated() -> None:
    with pytest.raises(ValueError, match="bad name"):
        ConversableAgent("A", function_map={"bad name": lambda: 1})
    with pytest.raises(ValueError, match="Invalid name"):
        ConversableAgent("A", function_map={"x" * 65: lambda: 1})
    ok = ConversableAgent("A", function_map={"good_name-1": lambda: 1, "x" * 64: lambda: 2})
    assert set(ok.function_map) == {"good_name-1", "x" * 64}


def test_chat_messages_is_stored_by_reference() -> None:
    history: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    a = agent("A", chat_messages=history)
    b = agent("B")
    with IOStream.set_default(IOScripted()):
        a.send("hi", b, request_reply=False)
    assert a.chat_messages is history
    assert history[b][0]["content"] == "hi"


@VARIANTS
async def test_a_plain_dict_chat_messages_fails_with_a_new_partner(variant: str) -> None:
    """(verified) KeyError when the first message with an unknown partner is stored."""
    a = agent("A", chat_messages={})
    b = agent("B", default_auto_reply="x")
    with IOStream.set_default(IOScripted()), pytest.raises(KeyError):
        await initiate(variant, a, b, message="hi", clear_history=False)


def test_a_plain_dict_chat_messages_works_for_known_partners() -> None:
    b = agent("B")
    a = agent("A", chat_messages={b: []})
    with IOStream.set_default(IOScripted()):
        a.send("hi", b, request_reply=False)
    assert contents(a.chat_messages[b]) == ["hi"]


# -- 2.15 history and state -----------------------------------------------------------------------


def talked() -> tuple[ConversableAgent, ConversableAgent]:
    a = agent("A", default_auto_reply="A-auto", max_consecutive_auto_reply=1)
    b = agent("B", default_auto_reply="B-auto", max_consecutive_auto_reply=1)
    with IOStream.set_default(IOScripted()):
        a.initiate_chat(b, message="start")
    return a, b


def test_chat_messages_for_summary_is_the_history() -> None:
    a, b = talked()
    assert a.chat_messages_for_summary(b) is a.chat_messages[b]


def test_last_message_with_an_agent() -> None:
    a, b = talked()
    assert a.last_message(b) == {"content": "A-auto", "role": "assistant", "name": "A"}
    assert b.last_message(a) == {"content": "A-auto", "role": "user", "name": "A"}
    with pytest.raises(KeyError, match="C"):
        a.last_message(agent("C"))
    a.clear_history(b)
    with pytest.raises(IndexError):
        a.last_message(b)


def test_last_message_without_an_agent() -> None:
    assert agent("lonely").last_message() is None
    a, b = talked()
    assert a.last_message() == a.chat_messages[b][-1]
    with IOStream.set_default(IOScripted()):
        a.send("other", agent("C"), request_reply=False)
    with pytest.raises(ValueError, match="More than one conversation"):
        a.last_message()


def test_clear_history_with_a_recipient_empties_the_list_in_place() -> None:
    a, b = talked()
    c = agent("C")
    with IOStream.set_default(IOScripted()):
        a.send("to c", c, request_reply=False)
    live = a.chat_messages[b]
    a.clear_history(b)
    assert live == []
    assert a.chat_messages[b] is live
    assert contents(a.chat_messages[c]) == ["to c"]


def test_clear_history_with_a_recipient_ignores_nr_messages_to_preserve() -> None:
    a, b = talked()
    with IOStream.set_default(IOScripted()) as io:
        a.clear_history(b, nr_messages_to_preserve=2)
    assert a.chat_messages[b] == []
    assert "nr_" in io.text or "ignored" in io.text.lower()


def test_clear_history_without_a_recipient_clears_everything() -> None:
    a, b = talked()
    a.clear_history()
    assert len(a.chat_messages) == 0
    assert contents(b.chat_messages[a]) == ["start", "B-auto", "A-auto"]


def test_clear_history_preserving_the_last_messages() -> None:
    a, b = talked()
    c = agent("C")
    with IOStream.set_default(IOScripted()):
        a.send("one", c, request_reply=False)
    a.clear_history(nr_messages_to_preserve=2)
    assert contents(a.chat_messages[b]) == ["B-auto", "A-auto"]
    assert contents(a.chat_messages[c]) == ["one"]


def test_clear_history_never_separates_a_tool_response_from_its_call() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    b = agent("B")
    a = agent("A")
    a.chat_messages[b].extend(
        [
            {"content": "task", "role": "user", "name": "B"},
            {"content": None, "tool_calls": [call], "role": "assistant"},
            {
                "content": "3",
                "tool_responses": [{"tool_call_id": "c1", "role": "tool", "content": "3"}],
                "role": "tool",
                "name": "B",
            },
            {"content": "the answer is 3", "role": "assistant", "name": "A"},
        ]
    )
    with IOStream.set_default(IOScripted()) as io:
        a.clear_history(nr_messages_to_preserve=2)
    assert [m.get("content") for m in a.chat_messages[b]] == [None, "3", "the answer is 3"]
    assert io.text  # a note about the extra message


def test_stop_reply_at_receive() -> None:
    a, b = talked()
    c = agent("C")
    a.reply_at_receive[c] = True
    a.stop_reply_at_receive(b)
    assert a.reply_at_receive[b] is False
    assert a.reply_at_receive[c] is True
    a.stop_reply_at_receive()
    assert a.reply_at_receive[c] is False


def test_reset(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("llm says")
    a = agent("A", llm_config=fake_llm.llm_config(model="gpt-4"), max_consecutive_auto_reply=5)
    b = agent("B", default_auto_reply="B-auto")
    calls: list[Any] = []
    reset_calls: list[Any] = []
    config = {"n": 0}

    def counting(recipient: Any, messages: Any = None, sender: Any = None, config: Any = None):
        calls.append(dict(config))
        config["n"] += 1
        return False, None

    def custom_reset(config: dict[str, Any]) -> None:
        reset_calls.append(dict(config))
        config["n"] = -1

    a.register_reply([ConversableAgent, None], counting, config=config)
    a.register_reply(
        [ConversableAgent, None],
        lambda *_, **__: (False, None),
        config={},
        reset_config=custom_reset,
    )
    with IOStream.set_default(IOScripted(["kept"])):
        b.initiate_chat(a, message="hi", max_turns=1)
        a.get_human_input("?")
    assert a.get_total_usage() is not None
    assert config == {"n": 0}  # the registered config is a copy
    a.client_cache = cache = object()
    a.reset()
    assert len(a.chat_messages) == 0
    assert a._consecutive_auto_reply_counter[b] == 0
    assert a.reply_at_receive[b] is False
    assert a.get_total_usage() is None
    assert a.get_actual_usage() is None
    assert a._human_input == ["kept"]  # not cleared
    assert a.client_cache is cache  # not cleared
    assert reset_calls == [{}]
    # The first reply function's config is back to a fresh copy of the initial one.
    with IOStream.set_default(IOScripted()):
        a.generate_reply(
            [{"content": "x", "role": "user"}], b, exclude=[ConversableAgent.generate_oai_reply]
        )
    assert calls[-1] == {"n": 0}


def test_update_system_message_affects_the_next_llm_call(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("one").add_reply("two")
    a = agent("A", system_message="first system", llm_config=fake_llm.llm_config())
    b = agent("B")
    with IOStream.set_default(IOScripted()):
        b.initiate_chat(a, message="hi", max_turns=1)
        a.update_system_message("second system")
        assert a.system_message == "second system"
        b.initiate_chat(a, message="hi", max_turns=1)
    first, second = fake_llm.requests
    assert first["messages"][0] == {"content": "first system", "role": "system"}
    assert second["messages"][0] == {"content": "second system", "role": "system"}


def test_register_model_client_without_a_client_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError):
        agent("A").register_model_client(object)


# -- 2.17 usage accounting on the agent -------------------------------------------------------------


def test_usage_without_a_client() -> None:
    a = agent("A")
    assert a.get_actual_usage() is None
    assert a.get_total_usage() is None
    with IOStream.set_default(IOScripted()) as io:
        a.print_usage_summary()
    assert io.text.strip() == "No cost incurred from agent 'A'."


def test_usage_with_a_client(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("hello", usage={"prompt_tokens": 10, "completion_tokens": 5})
    a = agent("A", llm_config=fake_llm.llm_config(model="gpt-4"))
    with IOStream.set_default(IOScripted()) as io:
        a.print_usage_summary()
        assert io.printed[0].strip() == "Agent 'A':"
        assert len(io.printed) > 1  # followed by the client's own summary
        agent("B").initiate_chat(a, message="hi", max_turns=1)
        io.clear()
        a.print_usage_summary()
    total = a.get_total_usage()
    assert total is not None
    assert total["gpt-4"]["prompt_tokens"] == 10
    assert total["gpt-4"]["completion_tokens"] == 5
    assert total["gpt-4"]["total_tokens"] == 15
    assert total["total_cost"] == pytest.approx(total["gpt-4"]["cost"])
    assert total["total_cost"] > 0
    assert a.get_actual_usage() == total
    assert io.printed[0].strip() == "Agent 'A':"
    assert "gpt-4" in io.text


def test_print_usage_summary_modes(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("hello")
    a = agent("A", llm_config=fake_llm.llm_config(model="gpt-4"))
    with IOStream.set_default(IOScripted()) as io:
        agent("B").initiate_chat(a, message="hi", max_turns=1)
        io.clear()
        a.print_usage_summary("actual")
        actual = io.text
        io.clear()
        a.print_usage_summary(["total"])
        total = io.text
    assert actual.startswith("Agent 'A':")
    assert total.startswith("Agent 'A':")
    assert "excluding" in actual.lower()
    assert "including" in total.lower()


# -- 4.1 gather_usage_summary ------------------------------------------------------------------------


def test_gather_usage_summary_without_usage() -> None:
    """(verified) both summaries are {"total_cost": 0}."""
    expected = {
        "usage_including_cached_inference": {"total_cost": 0},
        "usage_excluding_cached_inference": {"total_cost": 0},
    }
    assert gather_usage_summary([]) == expected
    assert gather_usage_summary([agent("A"), agent("B")]) == expected


def test_gather_usage_summary_ignores_unused_clients_and_clientless_objects(
    fake_llm: FakeLLMServer,
) -> None:
    unused = agent("A", llm_config=fake_llm.llm_config())

    class Bare:
        name = "bare"

    summary = gather_usage_summary([unused, Bare()])
    assert summary["usage_including_cached_inference"] == {"total_cost": 0}
    assert summary["usage_excluding_cached_inference"] == {"total_cost": 0}


def test_gather_usage_summary_adds_agents_and_separates_cache_hits(
    fake_llm: FakeLLMServer, tmp_path: Any
) -> None:
    from parley.cache import Cache

    fake_llm.add_reply("x", usage={"prompt_tokens": 10, "completion_tokens": 2})
    fake_llm.add_reply("y", usage={"prompt_tokens": 20, "completion_tokens": 4})
    fake_llm.add_reply("z", usage={"prompt_tokens": 1, "completion_tokens": 1})
    user = agent("user")
    first = agent("first", llm_config=fake_llm.llm_config(model="gpt-4"))
    second = agent("second", llm_config=fake_llm.llm_config(model="gpt-4"))
    third = agent("third", llm_config=fake_llm.llm_config(model="gpt-3.5-turbo"))
    with IOStream.set_default(IOScripted()):
        with Cache.disk(cache_seed=5, cache_path_root=str(tmp_path)) as cache:
            user.initiate_chat(first, message="hi", max_turns=1, cache=cache)
            user.initiate_chat(first, message="hi", max_turns=1, cache=cache)  # a cache hit
        user.initiate_chat(second, message="hello", max_turns=1)
        user.initiate_chat(third, message="hey", max_turns=1)
    assert len(fake_llm.requests) == 3
    before = copy.deepcopy([a.get_total_usage() for a in (first, second, third)])

    summary = gather_usage_summary([user, first, second, third])

    including = summary["usage_including_cached_inference"]
    excluding = summary["usage_excluding_cached_inference"]
    assert including["gpt-4"]["prompt_tokens"] == 10 + 10 + 20
    assert excluding["gpt-4"]["prompt_tokens"] == 10 + 20
    assert including["gpt-4"]["completion_tokens"] == 2 + 2 + 4
    assert including["gpt-4"]["total_tokens"] == 12 + 12 + 24
    assert excluding["gpt-3.5-turbo"]["total_tokens"] == 2
    costs = [a.get_total_usage()["total_cost"] for a in (first, second, third)]  # type: ignore[index]
    assert including["total_cost"] == pytest.approx(sum(costs))
    assert including["gpt-4"]["cost"] + including["gpt-3.5-turbo"]["cost"] == pytest.approx(
        including["total_cost"]
    )
    assert excluding["total_cost"] < including["total_cost"]
    # The agents' own summaries are not changed by the aggregation.
    assert [a.get_total_usage() for a in (first, second, third)] == before


# -- 3.1 AssistantAgent ---------------------------------------------------------------------------------


def test_assistant_signature() -> None:
    params = inspect.signature(AssistantAgent.__init__).parameters
    assert list(params)[1:] == [
        "name",
        "system_message",
        "llm_config",
        "is_termination_msg",
        "max_consecutive_auto_reply",
        "human_input_mode",
        "description",
        "kwargs",
    ]
    assert params["system_message"].default == AssistantAgent.DEFAULT_SYSTEM_MESSAGE
    assert params["llm_config"].default is None
    assert params["human_input_mode"].default == "NEVER"


def test_assistant_defaults() -> None:
    a = AssistantAgent("a")
    assert isinstance(a, ConversableAgent)
    assert a.llm_config is False
    assert a.client is None
    assert a.human_input_mode == "NEVER"
    assert a.system_message == AssistantAgent.DEFAULT_SYSTEM_MESSAGE
    assert a.description == AssistantAgent.DEFAULT_DESCRIPTION
    assert a._code_execution_config is False
    assert a._default_auto_reply == ""
    assert "TERMINATE" in AssistantAgent.DEFAULT_SYSTEM_MESSAGE
    assert "# filename:" in AssistantAgent.DEFAULT_SYSTEM_MESSAGE
    assert isinstance(AssistantAgent.DEFAULT_DESCRIPTION, str)


def test_assistant_positional_order(fake_llm: FakeLLMServer) -> None:
    a = AssistantAgent("a", "custom system", fake_llm.llm_config(), None, 3, "TERMINATE", "desc")
    assert a.system_message == "custom system"
    assert a.client is not None
    assert a.max_consecutive_auto_reply() == 3
    assert a.human_input_mode == "TERMINATE"
    assert a.description == "desc"


def test_assistant_description_rule() -> None:
    assert AssistantAgent("a", system_message="custom").description == "custom"
    assert AssistantAgent("a", description="mine").description == "mine"
    explicit = AssistantAgent("a", system_message=AssistantAgent.DEFAULT_SYSTEM_MESSAGE)
    assert explicit.description == AssistantAgent.DEFAULT_DESCRIPTION


def test_assistant_forwards_keyword_arguments() -> None:
    a = AssistantAgent("a", default_auto_reply="fallback", silent=True)
    assert a._default_auto_reply == "fallback"
    assert a.silent is True


@VARIANTS
async def test_assistant_without_llm_answers_with_empty_strings(variant: str) -> None:
    a = AssistantAgent("a")
    user = agent("user", default_auto_reply="more")
    with IOStream.set_default(IOScripted()):
        result = await initiate(variant, user, a, message="hi", max_turns=2)
    assert contents(result.chat_history) == ["hi", "", "more", ""]


# -- 3.2 UserProxyAgent ------------------------------------------------------------------------------------


def test_user_proxy_signature() -> None:
    params = inspect.signature(UserProxyAgent.__init__).parameters
    assert list(params)[1:] == [
        "name",
        "is_termination_msg",
        "max_consecutive_auto_reply",
        "human_input_mode",
        "function_map",
        "code_execution_config",
        "default_auto_reply",
        "llm_config",
        "system_message",
        "description",
        "kwargs",
    ]
    assert params["human_input_mode"].default == "ALWAYS"
    assert params["code_execution_config"].default == {}
    assert params["default_auto_reply"].default == ""
    assert params["llm_config"].default is False
    assert params["system_message"].default == ""


def test_user_proxy_defaults() -> None:
    u = UserProxyAgent("u", code_execution_config=False)
    assert isinstance(u, ConversableAgent)
    assert u.human_input_mode == "ALWAYS"
    assert u.llm_config is False
    assert u.client is None
    assert u.system_message == ""
    assert u._default_auto_reply == ""


@pytest.mark.parametrize("mode", ["ALWAYS", "TERMINATE", "NEVER"])
def test_user_proxy_description_by_mode(mode: str) -> None:
    descriptions = UserProxyAgent.DEFAULT_USER_PROXY_AGENT_DESCRIPTIONS
    assert set(descriptions) == {"ALWAYS", "TERMINATE", "NEVER"}
    u = UserProxyAgent("u", human_input_mode=mode, code_execution_config=False)  # type: ignore[arg-type]
    assert u.description == descriptions[mode]
    given = UserProxyAgent(
        "u",
        human_input_mode=mode,  # type: ignore[arg-type]
        code_execution_config=False,
        description="given",
    )
    assert given.description == "given"


def test_user_proxy_default_auto_reply_none_means_no_reply() -> None:
    """3.2 forwards default_auto_reply; 2.5 step 5 returns it, so None means no reply."""
    u = UserProxyAgent(
        "u", human_input_mode="NEVER", code_execution_config=False, default_auto_reply=None
    )
    assert u.generate_reply([{"content": "hi", "role": "user"}], agent("B")) is None


def test_user_proxy_invalid_mode_without_description_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        UserProxyAgent("u", human_input_mode="never", code_execution_config=False)  # type: ignore[arg-type]


@VARIANTS
async def test_user_proxy_invalid_mode_with_description_behaves_as_terminate(
    variant: str,
) -> None:
    u = UserProxyAgent(
        "u",
        human_input_mode="never",  # type: ignore[arg-type]
        code_execution_config=False,
        description="custom",
        default_auto_reply="u-auto",
    )
    b = agent("B", default_auto_reply="B-reply", max_consecutive_auto_reply=2)
    with IOStream.set_default(IOScripted()) as io:  # TERMINATE: no question below the limit
        result = await initiate(variant, u, b, message="start")
    assert contents(result.chat_history) == ["start", "B-reply", "u-auto", "B-reply", "u-auto"]
    assert io.prompts == []
    assert ">>>>>>>> USING AUTO REPLY..." in io.text  # not NEVER


@VARIANTS
async def test_user_proxy_asks_the_human_every_turn(variant: str) -> None:
    u = UserProxyAgent("user", code_execution_config=False)
    b = agent("B", default_auto_reply="B-reply")
    with IOStream.set_default(IOScripted(["first", "second", "exit"])) as io:
        result = await initiate(variant, u, b, message="task")
    assert contents(result.chat_history) == [
        "task",
        "B-reply",
        "first",
        "B-reply",
        "second",
        "B-reply",
    ]
    assert len(io.prompts) == 3
    assert result.human_input == ["first", "second", "exit"]
