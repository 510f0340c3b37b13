"""Conformance with AutoGen 0.2: how messages are stored, printed, generated and delivered."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from parley import ConversableAgent, SenderRequired
from parley.exceptions import InvalidMessageError
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

from ._spec_support import VARIANTS, agent, call

TOOL_CALL = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}


def pair(**kwargs: Any) -> tuple[ConversableAgent, ConversableAgent]:
    return agent("A", **kwargs), agent("B", **kwargs)


def deliver(message: Any, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """A sends ``message`` to B without a reply; (A's stored copy, B's stored copy)."""
    a, b = pair()
    with IOStream.set_default(IOScripted()):
        a.send(message, b, request_reply=False, **kwargs)
    return a.chat_messages[b][-1], b.chat_messages[a][-1]


# -- 0.2 normalisation --------------------------------------------------------------------


@VARIANTS
async def test_histories_mirror_each_other(variant: str) -> None:
    """(verified) A's own messages are assistant/A and B's are user/B; B's history mirrors."""
    a, b = pair()
    b.register_reply([ConversableAgent, None], lambda *_, **__: (True, "pong"))
    with IOStream.set_default(IOScripted()):
        await call(variant, a, "send", "ping", b, request_reply=True)
    assert a.chat_messages[b] == [
        {"content": "ping", "role": "assistant", "name": "A"},
        {"content": "pong", "role": "user", "name": "B"},
    ]
    assert b.chat_messages[a] == [
        {"content": "ping", "role": "user", "name": "A"},
        {"content": "pong", "role": "assistant", "name": "B"},
    ]


def test_a_bare_string_is_a_content_message() -> None:
    sent, received = deliver("hi")
    assert sent == {"content": "hi", "role": "assistant", "name": "A"}
    assert received == {"content": "hi", "role": "user", "name": "A"}


def test_only_known_keys_with_non_none_values_are_copied() -> None:
    message = {
        "content": "hi",
        "foo": 1,
        "tool_call_id": "call_9",
        "context": {"x": 1},
        "tool_responses": [{"tool_call_id": "c", "role": "tool", "content": "3"}],
        "function_call": None,
        "name": None,
    }
    sent, received = deliver(message)
    expected = {
        "content": "hi",
        "tool_call_id": "call_9",
        "context": {"x": 1},
        "tool_responses": [{"tool_call_id": "c", "role": "tool", "content": "3"}],
    }
    assert sent == {**expected, "role": "assistant", "name": "A"}
    assert received == {**expected, "role": "user", "name": "A"}


def test_the_stored_message_is_a_new_dict() -> None:
    message = {"content": "hi"}
    a, b = pair()
    with IOStream.set_default(IOScripted()):
        a.send(message, b, request_reply=False)
    assert message == {"content": "hi"}
    assert a.chat_messages[b][0] is not message
    assert b.chat_messages[a][0] is not message


def test_an_empty_string_content_is_kept() -> None:
    sent, received = deliver({"content": ""})
    assert sent["content"] == ""
    assert received["content"] == ""


def test_a_non_dict_message_is_converted_with_dict() -> None:
    sent, _ = deliver([("content", "from pairs")])
    assert sent == {"content": "from pairs", "role": "assistant", "name": "A"}


@pytest.mark.parametrize(
    ("extra", "key"),
    [
        ({"function_call": {"name": "f", "arguments": "{}"}}, "function_call"),
        ({"tool_calls": [TOOL_CALL]}, "tool_calls"),
    ],
)
def test_a_call_without_content_gets_content_none_role_assistant_and_no_name(
    extra: dict[str, Any], key: str
) -> None:
    sent, received = deliver(extra)
    for stored in (sent, received):
        assert stored == {key: extra[key], "content": None, "role": "assistant"}


def test_a_call_keeps_an_explicit_name() -> None:
    _, received = deliver({"content": "x", "tool_calls": [TOOL_CALL], "name": "custom"})
    assert received["name"] == "custom"
    assert received["role"] == "assistant"


def test_a_falsy_tool_calls_list_is_no_tool_call() -> None:
    """AutoGen stored ``{"tool_calls": []}`` with content None, a message every later request
    is refused for (on purpose, parley refuses it); an empty list next to content is dropped,
    as the API refuses an empty ``tool_calls``."""
    with pytest.raises(InvalidMessageError, match="Either content or function_call"):
        deliver({"tool_calls": []})
    sent, received = deliver({"content": "x", "tool_calls": []})
    assert sent == {"content": "x", "role": "assistant", "name": "A"}
    assert received == {"content": "x", "role": "user", "name": "A"}


@pytest.mark.parametrize("role", ["function", "tool"])
def test_function_and_tool_roles_are_kept(role: str) -> None:
    sent, received = deliver({"content": "3", "role": role, "name": "f"})
    assert sent == {"content": "3", "role": role, "name": "f"}
    assert received == {"content": "3", "role": role, "name": "f"}


@pytest.mark.parametrize("role", ["system", "user", "assistant", "bogus"])
def test_other_roles_given_by_the_caller_are_discarded(role: str) -> None:
    sent, received = deliver({"content": "x", "role": role})
    assert sent["role"] == "assistant"
    assert received["role"] == "user"


def test_override_role_sets_the_stored_role() -> None:
    sent, received = deliver({"content": "x", "role": "user", "override_role": "system"})
    assert sent["role"] == "system"
    assert received["role"] == "system"
    assert "override_role" not in sent


def test_an_explicit_name_is_kept() -> None:
    sent, received = deliver({"content": "x", "name": "alias"})
    assert sent["name"] == "alias"
    assert received["name"] == "alias"


def test_a_message_dict_cannot_convert_raises_type_error() -> None:
    """0.1: other objects go through dict(obj), so its TypeError reaches the caller."""
    a, b = pair()
    with IOStream.set_default(IOScripted()), pytest.raises(TypeError):
        a.send(5, b)  # type: ignore[arg-type]


@VARIANTS
async def test_send_without_content_or_call_raises_value_error(variant: str) -> None:
    a, b = pair()
    with (
        IOStream.set_default(IOScripted()),
        pytest.raises(ValueError, match="content or function_call"),
    ):
        await call(variant, a, "send", {"foo": 1}, b)
    assert not b.chat_messages[a]


@VARIANTS
async def test_receive_without_content_or_call_raises_value_error(variant: str) -> None:
    a, b = pair()
    with (
        IOStream.set_default(IOScripted()),
        pytest.raises(ValueError, match="content or function_call"),
    ):
        await call(variant, b, "receive", {"foo": 1}, a)


def test_messages_are_appended_to_the_history_keyed_by_the_partner() -> None:
    a, b, c = agent("A"), agent("B"), agent("C")
    with IOStream.set_default(IOScripted()):
        a.send("to b", b, request_reply=False)
        a.send("to c", c, request_reply=False)
        a.send("to b again", b, request_reply=False)
    assert [m["content"] for m in a.chat_messages[b]] == ["to b", "to b again"]
    assert [m["content"] for m in a.chat_messages[c]] == ["to c"]


# -- 0.3 console rendering ----------------------------------------------------------------


def printed(message: Any, receiver: ConversableAgent | None = None) -> str:
    a = agent("A")
    b = receiver or agent("B")
    with IOStream.set_default(IOScripted()) as io:
        a.send(message, b, request_reply=False)
    return io.text


def test_rendering_of_a_plain_message() -> None:
    text = printed("hello there")
    assert text == "A (to B):\n\nhello there\n\n" + "-" * 80 + "\n"


def test_rendering_of_a_tool_result() -> None:
    text = printed({"role": "tool", "tool_call_id": "call_7", "content": "42"})
    lines = text.splitlines()
    banner = next(line for line in lines if "call_7" in line)
    assert "tool" in banner
    assert lines[lines.index(banner) + 1] == "42"


def test_rendering_of_a_function_result() -> None:
    text = printed({"role": "function", "name": "adder", "content": "42"})
    lines = text.splitlines()
    banner = next(line for line in lines if "adder" in line)
    assert "function" in banner
    assert lines[lines.index(banner) + 1] == "42"


def test_a_tool_bundle_prints_each_response_and_nothing_else() -> None:
    bundle = {
        "role": "tool",
        "content": "first\n\nsecond",
        "tool_responses": [
            {"tool_call_id": "call_a", "role": "tool", "content": "first"},
            {"tool_call_id": "call_b", "role": "tool", "content": "second"},
        ],
    }
    text = printed(bundle)
    assert "call_a" in text
    assert "call_b" in text
    assert text.index("call_a") < text.index("first") < text.index("call_b")
    assert "first\n\nsecond" not in text  # the joined content is not printed as well


def test_rendering_of_a_proposed_function_call() -> None:
    text = printed({"function_call": {"name": "adder", "arguments": '{"a": 1}'}})
    assert "adder" in text
    lines = text.splitlines()
    args_line = next(i for i, line in enumerate(lines) if line.startswith("Arguments:"))
    assert '{"a": 1}' in "\n".join(lines[args_line : args_line + 2])


def test_rendering_of_proposed_tool_calls() -> None:
    calls = [
        {"id": "call_1", "type": "function", "function": {"name": "f1", "arguments": '{"x": 1}'}},
        {"id": "call_2", "type": "function", "function": {"name": "f2", "arguments": '{"y": 2}'}},
    ]
    text = printed({"content": None, "tool_calls": calls})
    banners = [line for line in text.splitlines() if "call_1" in line or "call_2" in line]
    assert len(banners) == 2
    assert "f1" in banners[0]
    assert "f2" in banners[1]
    assert text.count("Arguments:") == 2
    assert '{"x": 1}' in text
    assert '{"y": 2}' in text


def test_multimodal_content_is_printed_with_content_str() -> None:
    content = [
        {"type": "text", "text": "look at"},
        {"type": "image_url", "image_url": {"url": "http://example.invalid/x.png"}},
    ]
    text = printed({"content": content})
    assert "look at" in text
    assert "<image>" in text
    assert "example.invalid" not in text


def test_a_format_template_is_printed_raw_without_allow_format_str_template() -> None:
    text = printed({"content": "Hi {name}", "context": {"name": "Bob"}})
    assert "Hi {name}" in text
    assert "Hi Bob" not in text


def test_a_format_template_is_filled_when_the_receiver_allows_it(
    fake_llm: FakeLLMServer,
) -> None:
    receiver = agent("B", llm_config=fake_llm.llm_config(allow_format_str_template=True))
    text = printed({"content": "Hi {name}", "context": {"name": "Bob"}}, receiver)
    assert "Hi Bob" in text
    assert not fake_llm.requests


def test_allow_format_str_template_set_on_the_agent_later_is_seen(
    fake_llm: FakeLLMServer,
) -> None:
    """agent.llm_config is AutoGen's dict: a change made to it in place counts from then on."""
    receiver = agent("B", llm_config=fake_llm.llm_config())
    message = {"content": "Hi {name}", "context": {"name": "Bob"}}
    assert "Hi {name}" in printed(message, receiver)
    receiver.llm_config["allow_format_str_template"] = True  # type: ignore[index]
    assert "Hi Bob" in printed(message, receiver)


def test_a_jinja_template_is_rendered_with_the_context() -> None:
    jinja2 = pytest.importorskip("jinja2")
    text = printed({"content": jinja2.Template("Hello {{ who }}"), "context": {"who": "Ann"}})
    assert "Hello Ann" in text


def test_a_callable_template_is_called_with_the_context() -> None:
    text = printed({"content": lambda ctx: f"Hello {ctx['who']}", "context": {"who": "Ann"}})
    assert "Hello Ann" in text


@VARIANTS
async def test_context_is_used_by_the_llm_and_then_removed(
    variant: str, fake_llm: FakeLLMServer
) -> None:
    """0.1: ``context`` leaves the stored message the first time it is sent to an LLM."""
    fake_llm.add_reply("Hello!")
    a = agent("A")
    b = agent("B", llm_config=fake_llm.llm_config(allow_format_str_template=True))
    message = {"content": "Hi {name}", "context": {"name": "Bob"}}
    with IOStream.set_default(IOScripted()):
        await call(variant, a, "send", message, b, request_reply=True)
    assert fake_llm.last_request["messages"][-1] == {
        "content": "Hi Bob",
        "role": "user",
        "name": "A",
    }
    assert b.chat_messages[a][0] == {"content": "Hi {name}", "role": "user", "name": "A"}
    assert a.chat_messages[b][0]["context"] == {"name": "Bob"}  # the sender's copy keeps it
    assert message == {"content": "Hi {name}", "context": {"name": "Bob"}}


# -- 2.5 generate_reply / a_generate_reply ---------------------------------------------------


@VARIANTS
async def test_generate_reply_needs_messages_or_sender(variant: str) -> None:
    with pytest.raises(AssertionError):
        await call(variant, agent("A"), "generate_reply")


@VARIANTS
async def test_generate_reply_defaults_to_the_history_with_the_sender(variant: str) -> None:
    a, b = pair()
    seen: list[Any] = []

    def reply(recipient: Any, messages: Any = None, sender: Any = None, config: Any = None) -> Any:
        seen.append((recipient, [m["content"] for m in messages], sender, config))
        return True, "ok"

    a.register_reply([ConversableAgent, None], reply, config={"k": 1})
    with IOStream.set_default(IOScripted()):
        b.send("one", a, request_reply=False)
        b.send("two", a, request_reply=False)
    assert await call(variant, a, "generate_reply", sender=b) == "ok"
    assert seen == [(a, ["one", "two"], b, {"k": 1})]
    assert await call(variant, a, "generate_reply", [{"content": "x", "role": "user"}], b) == "ok"
    assert seen[-1][1] == ["x"]


@VARIANTS
async def test_default_auto_reply_when_nothing_is_final(variant: str) -> None:
    a = agent("A", default_auto_reply="fallback")
    a.register_reply([ConversableAgent, None], lambda *_, **__: (False, "ignored"))
    reply = await call(
        variant, a, "generate_reply", [{"content": "hi", "role": "user"}], agent("B")
    )
    assert reply == "fallback"


@VARIANTS
async def test_a_final_none_reply_means_no_reply(variant: str) -> None:
    a = agent("A", default_auto_reply="fallback")
    a.register_reply([ConversableAgent, None], lambda *_, **__: (True, None))
    assert await call(variant, a, "generate_reply", [{"content": "hi"}], agent("B")) is None


@VARIANTS
async def test_an_agent_without_llm_replies_with_the_empty_default(variant: str) -> None:
    """Edge case: ``ConversableAgent("x")`` has no LLM and replies ``""``."""
    x = ConversableAgent("x", human_input_mode="NEVER")
    assert x.client is None
    assert await call(variant, x, "generate_reply", [{"content": "hi"}], agent("B")) == ""


@VARIANTS
async def test_an_empty_llm_answer_falls_through_to_the_default_reply(
    variant: str, fake_llm: FakeLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    """parley difference: the "extracted response is None" case is a logged warning (AutoGen:
    a UserWarning); the next reply function, here the default reply, answers."""
    fake_llm.add_reply(None)
    a = agent("A", llm_config=fake_llm.llm_config(), default_auto_reply="fallback")
    with caplog.at_level(logging.WARNING):
        reply = await call(
            variant, a, "generate_reply", [{"content": "hi", "role": "user"}], agent("B")
        )
    assert reply == "fallback"
    assert [r for r in caplog.records if r.levelno == logging.WARNING]


@VARIANTS
async def test_excluded_reply_functions_are_skipped(variant: str) -> None:
    a = agent("A")

    def first(*_: Any, **__: Any) -> Any:
        return True, "first"

    def second(*_: Any, **__: Any) -> Any:
        return True, "second"

    a.register_reply([ConversableAgent, None], second)
    a.register_reply([ConversableAgent, None], first)
    msgs = [{"content": "hi", "role": "user"}]
    b = agent("B")
    assert await call(variant, a, "generate_reply", msgs, b) == "first"
    assert await call(variant, a, "generate_reply", msgs, b, exclude=[first]) == "second"
    assert await call(variant, a, "generate_reply", msgs, b, exclude=(first, second)) == ""


@VARIANTS
async def test_excluding_a_builtin_reply_function(variant: str) -> None:
    """With the termination check excluded, a limit of 0 no longer stops the reply."""
    a = agent("A", max_consecutive_auto_reply=0, default_auto_reply="auto")
    msgs = [{"content": "hi", "role": "user"}]
    b = agent("B")
    assert await call(variant, a, "generate_reply", msgs, b) is None
    excluded = [ConversableAgent.check_termination_and_human_reply]
    assert await call(variant, a, "generate_reply", msgs, b, exclude=excluded) == "auto"


@VARIANTS
async def test_reply_functions_whose_trigger_does_not_match_are_skipped(variant: str) -> None:
    a, b, c = agent("A"), agent("B"), agent("C")
    a.register_reply(c, lambda *_, **__: (True, "for C only"))
    msgs = [{"content": "hi", "role": "user"}]
    assert await call(variant, a, "generate_reply", msgs, b) == ""
    assert await call(variant, a, "generate_reply", msgs, c) == "for C only"


def test_a_bare_none_trigger_is_a_value_error() -> None:
    """(verified) ``register_reply(None, f)`` raises; ``[None]`` is the way to say it."""
    a = agent("A")
    with pytest.raises(ValueError, match="trigger"):
        a.register_reply(None, lambda *_, **__: (True, "x"))
    a.register_reply([None], lambda *_, **__: (True, "no sender"))
    assert a.generate_reply([{"content": "hi"}]) == "no sender"
    assert a.generate_reply([{"content": "hi"}], agent("B")) == ""


@VARIANTS
async def test_a_string_trigger_without_sender_raises_sender_required(variant: str) -> None:
    """(verified) ``SenderRequired`` when a string trigger meets ``sender=None``."""
    a = agent("A")
    a.register_reply("B", lambda *_, **__: (True, "for B"))
    assert await call(variant, a, "generate_reply", [{"content": "hi"}], agent("B")) == "for B"
    with pytest.raises(SenderRequired):
        await call(variant, a, "generate_reply", [{"content": "hi"}])


@VARIANTS
async def test_a_trigger_returning_a_non_bool_is_an_assertion_error(variant: str) -> None:
    a = agent("A")
    a.register_reply(lambda sender: sender.name, lambda *_, **__: (True, "x"))
    with pytest.raises(AssertionError):
        await call(variant, a, "generate_reply", [{"content": "hi"}], agent("B"))


@VARIANTS
async def test_sync_and_async_reply_functions_run_in_both_apis(variant: str) -> None:
    """parley difference: AutoGen's generate_reply silently skipped coroutine functions."""
    a, b = agent("A"), agent("B")
    calls: list[str] = []

    def sync_reply(*_: Any, **__: Any) -> Any:
        calls.append("sync")
        return False, None

    async def async_reply(*_: Any, **__: Any) -> Any:
        calls.append("async")
        return True, "from async"

    a.register_reply([ConversableAgent, None], async_reply)
    a.register_reply([ConversableAgent, None], sync_reply)
    assert await call(variant, a, "generate_reply", [{"content": "hi"}], b) == "from async"
    assert calls == ["sync", "async"]


@VARIANTS
async def test_hooks_run_last_received_first_then_all_messages(variant: str) -> None:
    """The hooks run in AutoGen's order for generate_reply. parley uses the same order in a_generate_reply
    (AutoGen's a_ twin ran them the other way round, a listed flaw)."""
    a, b = agent("A"), agent("B")
    order: list[str] = []
    seen: list[list[Any]] = []

    def last_received(content: Any) -> Any:
        order.append("last_received")
        return content + "!"

    def all_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        order.append("all_messages")
        return [*messages, {"content": "extra", "role": "user"}]

    def capture(*_: Any, messages: Any = None, **__: Any) -> Any:
        seen.append([m["content"] for m in messages])
        return True, "ok"

    a.register_hook("process_all_messages_before_reply", all_messages)
    a.register_hook("process_last_received_message", last_received)
    a.register_reply([ConversableAgent, None], capture)
    await call(variant, a, "generate_reply", [{"content": "hi", "role": "user"}], b)
    assert order == ["last_received", "all_messages"]
    assert seen == [["hi!", "extra"]]


@VARIANTS
async def test_last_received_hooks_do_not_mutate_the_stored_history(variant: str) -> None:
    """parley difference: AutoGen's hook changed the stored message dict (a listed flaw)."""
    a, b = agent("A"), agent("B")
    a.register_hook("process_last_received_message", lambda content: content.upper())
    seen: list[Any] = []
    a.register_reply(
        [ConversableAgent, None],
        lambda *_, messages=None, **__: (seen.append(messages[-1]["content"]) or True, "ok"),
    )
    with IOStream.set_default(IOScripted()):
        b.send("quiet please", a, request_reply=False)
    await call(variant, a, "generate_reply", sender=b)
    assert seen == ["QUIET PLEASE"]
    assert a.chat_messages[b][-1]["content"] == "quiet please"


# -- 2.6 send / receive ---------------------------------------------------------------------


@VARIANTS
async def test_a_fresh_send_is_delivered_but_not_answered(variant: str) -> None:
    """(verified) reply_at_receive defaults to False between agents that never chatted."""
    a, b = agent("A"), agent("B", default_auto_reply="answer")
    with IOStream.set_default(IOScripted()):
        await call(variant, a, "send", "hi", b)
    assert [m["content"] for m in b.chat_messages[a]] == ["hi"]
    assert b.reply_at_receive[a] is False


@VARIANTS
async def test_request_reply_true_forces_exactly_one_reply(variant: str) -> None:
    """(verified) The answer is sent without request_reply, so A (reply_at_receive False)
    does not answer it."""
    a = agent("A", default_auto_reply="A answers")
    b = agent("B", default_auto_reply="B answers")
    with IOStream.set_default(IOScripted()):
        await call(variant, a, "send", "hi", b, request_reply=True)
    assert [m["content"] for m in a.chat_messages[b]] == ["hi", "B answers"]


@VARIANTS
async def test_request_reply_false_never_replies(variant: str) -> None:
    a, b = agent("A"), agent("B", default_auto_reply="answer")
    b.reply_at_receive[a] = True
    with IOStream.set_default(IOScripted()):
        await call(variant, a, "send", "hi", b, request_reply=False)
    assert len(b.chat_messages[a]) == 1


@VARIANTS
async def test_request_reply_none_follows_reply_at_receive(variant: str) -> None:
    a = agent("A", max_consecutive_auto_reply=1, default_auto_reply="from A")
    b = agent("B", max_consecutive_auto_reply=1, default_auto_reply="from B")
    a.reply_at_receive[b] = True
    b.reply_at_receive[a] = True
    with IOStream.set_default(IOScripted()):
        await call(variant, a, "send", "hi", b)
    assert [m["content"] for m in a.chat_messages[b]] == ["hi", "from B", "from A"]


@VARIANTS
async def test_send_after_initiate_chat_continues_the_conversation(variant: str) -> None:
    a = agent("A")
    b = agent("B", default_auto_reply="TERMINATE")
    with IOStream.set_default(IOScripted()):
        a.initiate_chat(b, message="first")
        assert a.reply_at_receive[b] is True
        assert b.reply_at_receive[a] is True
        await call(variant, a, "send", "again", b)
    assert [m["content"] for m in a.chat_messages[b]] == [
        "first",
        "TERMINATE",
        "again",
        "TERMINATE",
    ]


@VARIANTS
async def test_send_hooks_get_keywords_and_replace_the_message(variant: str) -> None:
    a, b = agent("A"), agent("B")
    seen: list[dict[str, Any]] = []

    def before_send(sender: Any, message: Any, recipient: Any, silent: Any) -> Any:
        seen.append(
            {"sender": sender, "message": message, "recipient": recipient, "silent": silent}
        )
        return {"content": f"[{message}]"}

    a.register_hook("process_message_before_send", before_send)
    with IOStream.set_default(IOScripted()):
        await call(variant, a, "send", "hi", b, request_reply=False, silent=True)
    assert seen == [{"sender": a, "message": "hi", "recipient": b, "silent": True}]
    assert a.chat_messages[b][-1]["content"] == "[hi]"
    assert b.chat_messages[a][-1]["content"] == "[hi]"


@VARIANTS
async def test_sync_and_async_send_hooks_run_in_both_apis(variant: str) -> None:
    """parley difference: AutoGen's a_send ignored sync hooks and send ignored async ones."""
    a, b = agent("A"), agent("B")

    def sync_hook(sender: Any, message: Any, recipient: Any, silent: Any) -> Any:
        return message + " +sync"

    async def async_hook(sender: Any, message: Any, recipient: Any, silent: Any) -> Any:
        return message + " +async"

    a.register_hook("process_message_before_send", sync_hook)
    a.register_hook("a_process_message_before_send", async_hook)
    with IOStream.set_default(IOScripted()):
        await call(variant, a, "send", "hi", b, request_reply=False)
    assert b.chat_messages[a][-1]["content"] == "hi +sync +async"


@pytest.mark.parametrize(
    ("sender_silent", "silent_arg", "shown"),
    [
        (None, False, True),
        (None, True, False),
        (True, False, False),
        (False, True, True),
    ],
)
@VARIANTS
async def test_the_senders_silent_flag_decides_printing(
    variant: str, sender_silent: bool | None, silent_arg: bool, shown: bool
) -> None:
    a = agent("A", silent=sender_silent)
    # The receiver's own flag is the opposite one: it must not matter.
    b = agent("B", silent=None if sender_silent is None else not sender_silent)
    with IOStream.set_default(IOScripted()) as io:
        await call(variant, a, "send", "hello", b, request_reply=False, silent=silent_arg)
    assert ("hello" in io.text) is shown


@VARIANTS
async def test_the_reply_is_sent_with_the_same_silent_flag(variant: str) -> None:
    a, b = agent("A"), agent("B", default_auto_reply="answer")
    with IOStream.set_default(IOScripted()) as io:
        await call(variant, a, "send", "hi", b, request_reply=True, silent=True)
    assert io.text == ""
    assert a.chat_messages[b][-1]["content"] == "answer"


def test_a_long_exchange_does_not_hit_the_recursion_limit() -> None:
    """AutoGen recursed once per message (a listed flaw); parley's delivery is iterative."""
    import sys

    turns = sys.getrecursionlimit()
    a = agent("A", max_consecutive_auto_reply=turns, default_auto_reply="a")
    b = agent("B", max_consecutive_auto_reply=turns, default_auto_reply="b")
    with IOStream.set_default(IOScripted()):
        result = a.initiate_chat(b, message="go", silent=True)
    assert len(result.chat_history or []) == 2 * turns + 1
