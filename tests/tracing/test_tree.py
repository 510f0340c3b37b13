"""Where spans hang: group chats, nested chats, concurrent chats, the application's own
spans and other instrumentation's; errors; turning tracing off."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import openai
import pytest
from opentelemetry import trace

import parley
import parley.tracing
from parley import AssistantAgent, ConversableAgent, GroupChat, GroupChatManager, UserProxyAgent
from parley._core import events as _events
from parley.testing import FakeLLMServer

from .conftest import Traced


def agent(name: str, **kwargs: Any) -> ConversableAgent:
    kwargs.setdefault("human_input_mode", "NEVER")
    kwargs.setdefault("default_auto_reply", f"{name} here")
    return ConversableAgent(name, **kwargs)


def test_group_chat_speaker_selection(fake_llm: FakeLLMServer, traced: Traced) -> None:
    a, b, c = agent("a"), agent("b"), agent("c")
    group = GroupChat([a, b, c], [], max_round=3, speaker_selection_method="auto")
    manager = GroupChatManager(group, llm_config=fake_llm.llm_config())
    fake_llm.add_reply("b", usage={"prompt_tokens": 50, "completion_tokens": 1})
    fake_llm.add_reply("c", usage={"prompt_tokens": 60, "completion_tokens": 1})
    a.initiate_chat(manager, message="go", silent=True)
    assert traced.outline() == [
        "chat a -> chat_manager",
        "  invoke_agent chat_manager",
        "    reply_func run_chat",
        "      select_speaker chat_manager",
        "        invoke_agent speaker_selection_agent",
        "          reply_func a_generate_oai_reply",
        "            chat fake-model",
        "      invoke_agent b",
        "      select_speaker chat_manager",
        "        invoke_agent speaker_selection_agent",
        "          reply_func a_generate_oai_reply",
        "            chat fake-model",
        "      invoke_agent c",
        "  summarize last_msg",
    ]
    selections = traced.named("select_speaker chat_manager")
    assert [(s.attributes["parley.speaker.last"], s.attributes["parley.speaker.selected"])
            for s in selections] == [("a", "b"), ("b", "c")]  # fmt: skip
    for call in traced.named("chat fake-model"):
        # charged to the manager, as ChatResult.usage counts it
        assert call.attributes["gen_ai.agent.name"] == "chat_manager"
        assert call.attributes["parley.purpose"] == "speaker_selection"
    assert [c.attributes["gen_ai.usage.input_tokens"] for c in traced.named("chat fake-model")] == [
        50,
        60,
    ]


def test_a_nested_chat_is_a_chat_span_inside_its_reply_function(traced: Traced) -> None:
    writer, critic, reviewer = agent("writer"), agent("critic"), agent("reviewer")
    critic.register_nested_chats(
        [{"recipient": reviewer, "max_turns": 1, "summary_method": "last_msg"}], trigger=writer
    )
    writer.initiate_chat(critic, message="draft", max_turns=1, silent=True)
    assert traced.outline() == [
        "chat writer -> critic",
        "  invoke_agent critic",
        "    reply_func summary_from_nested_chats",
        "      chat critic -> reviewer",
        "        invoke_agent reviewer",
        "        summarize last_msg",
        "  summarize last_msg",
    ]
    outer = traced.one("chat writer -> critic")
    inner = traced.one("chat critic -> reviewer")
    assert inner.attributes["parley.chat.parent_id"] == outer.attributes["parley.chat.id"]
    assert inner.context.trace_id == outer.context.trace_id


def pair(fake_llm: FakeLLMServer, i: int) -> tuple[UserProxyAgent, AssistantAgent]:
    assistant = AssistantAgent(f"assistant{i}", llm_config=fake_llm.llm_config(model=f"model-{i}"))
    user = UserProxyAgent(
        f"user{i}",
        human_input_mode="NEVER",
        max_consecutive_auto_reply=3,
        code_execution_config=False,
        default_auto_reply="go on",
    )
    return user, assistant


def slow_echo(request: dict[str, Any]) -> dict[str, Any]:
    # slow enough that the chats' calls overlap
    return {"content": f"{request['model']} says hi", "delay": 0.02}


def assert_chats_apart(traced: Traced, n: int) -> None:
    chats = traced.named("chat user0 -> assistant0") + traced.named("chat user1 -> assistant1")
    assert len(chats) == n == len(traced.roots())
    for chat in chats:
        i = chat.name[-1]
        subtree = traced.subtree(chat)
        assert {s.context.trace_id for s in subtree} == {chat.context.trace_id}
        calls = [s for s in subtree if s.attributes.get("parley.step.kind") == "llm_call"]
        assert len(calls) == 4
        assert {c.attributes["gen_ai.request.model"] for c in calls} == {f"model-{i}"}
        assert {
            s.attributes["gen_ai.agent.name"]
            for s in subtree
            if s.attributes.get("parley.step.kind") == "turn"
        } == {f"user{i}", f"assistant{i}"}
    assert len(traced.spans()) == sum(len(traced.subtree(c)) for c in chats)
    first, second = chats
    assert first.start_time < second.end_time
    assert second.start_time < first.end_time


async def test_concurrent_async_chats_keep_their_own_trees(
    fake_llm: FakeLLMServer, traced: Traced
) -> None:
    fake_llm.responder = slow_echo
    pairs = [pair(fake_llm, i) for i in range(2)]
    await asyncio.gather(*(u.a_initiate_chat(a, message="hi", silent=True) for u, a in pairs))
    assert_chats_apart(traced, 2)


def test_concurrent_sync_chats_in_threads_keep_their_own_trees(
    fake_llm: FakeLLMServer, traced: Traced
) -> None:
    fake_llm.responder = slow_echo
    pairs = [pair(fake_llm, i) for i in range(2)]
    threads = [
        threading.Thread(
            target=u.initiate_chat, args=(a,), kwargs={"message": "hi", "silent": True}
        )
        for u, a in pairs
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in threads)
    assert_chats_apart(traced, 2)


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_chat_inside_the_applications_span_is_its_child(
    fake_llm: FakeLLMServer, traced: Traced, kind: str
) -> None:
    fake_llm.add_reply("TERMINATE")
    user, assistant = pair(fake_llm, 0)
    tracer = traced.provider.get_tracer("app")
    with tracer.start_as_current_span("handle request") as app:
        if kind == "sync":
            await asyncio.to_thread(user.initiate_chat, assistant, message="hi", silent=True)
        else:
            await user.a_initiate_chat(assistant, message="hi", silent=True)
    chat = traced.one("chat user0 -> assistant0")
    assert chat.parent is not None
    assert chat.parent.span_id == app.get_span_context().span_id
    assert traced.ancestors(traced.one("chat model-0")) == [
        "reply_func generate_oai_reply",
        "invoke_agent assistant0",
        "chat user0 -> assistant0",
        "handle request",
    ]


@pytest.mark.parametrize("sync_tool", [True, False])
def test_spans_made_inside_a_tool_nest_under_its_span(
    fake_llm: FakeLLMServer, traced: Traced, sync_tool: bool
) -> None:
    tracer = traced.provider.get_tracer("app")
    user, assistant = pair(fake_llm, 0)

    def lookup_sync(q: str) -> str:  # runs in a worker thread
        with tracer.start_as_current_span("database query"):
            return q.upper()

    async def lookup_async(q: str) -> str:
        with tracer.start_as_current_span("database query"):
            return q.upper()

    lookup = lookup_sync if sync_tool else lookup_async
    parley.register_function(
        lookup, caller=assistant, executor=user, name="lookup", description="A tool."
    )
    fake_llm.add_reply(tool_calls=[{"name": "lookup", "arguments": {"q": "x"}}])
    fake_llm.add_reply("TERMINATE")
    user.initiate_chat(assistant, message="hi", silent=True)
    assert traced.ancestors(traced.one("database query"))[:3] == [
        "execute_tool lookup",
        "reply_func generate_tool_calls_reply",
        "invoke_agent user0",
    ]
    # and the application's context is back as it was
    assert not trace.get_current_span().get_span_context().is_valid


def test_a_failed_model_call_is_an_error_span_without_the_key(
    fake_llm: FakeLLMServer, traced: Traced
) -> None:
    fake_llm.add_error(401, "Incorrect API key provided: sk-proj-abcd1234****wxyz.")
    user, assistant = pair(fake_llm, 0)
    with pytest.raises(openai.AuthenticationError):
        user.initiate_chat(assistant, message="hi", silent=True)
    call = traced.one("chat model-0")
    assert call.status.status_code.name == "ERROR"
    assert call.attributes["error.type"] == "AuthenticationError"
    (event,) = call.events
    assert event.name == "exception"
    assert event.attributes["exception.type"].endswith("AuthenticationError")
    assert "Incorrect API key provided" in event.attributes["exception.message"]
    # the ancestors failed with it
    for name in ("invoke_agent assistant0", "chat user0 -> assistant0"):
        assert traced.one(name).status.status_code.name == "ERROR"
    for span in traced.spans():
        shown = repr(span.to_json())
        assert "abcd1234" not in shown
        assert "wxyz" not in shown


def test_a_failed_tool_and_failed_code_are_error_spans(
    fake_llm: FakeLLMServer, traced: Traced, tmp_path: Any
) -> None:
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    user = UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config={"work_dir": str(tmp_path), "use_docker": False},
    )

    def broken() -> str:
        raise RuntimeError("no database")

    parley.register_function(broken, caller=assistant, executor=user, description="A tool.")
    fake_llm.add_reply(tool_calls=[{"name": "broken", "arguments": {}}])
    fake_llm.add_reply("```python\nraise SystemExit(3)\n```")
    fake_llm.add_reply("TERMINATE")
    user.initiate_chat(assistant, message="hi", silent=True)
    tool = traced.one("execute_tool broken")
    assert tool.status.status_code.name == "ERROR"
    assert tool.attributes["parley.tool.success"] is False
    assert tool.attributes["error.type"] == "tool_call_failed"
    code = traced.one("execute_code")
    assert code.attributes["parley.code.exit_code"] == 3
    assert code.status.status_code.name == "ERROR"
    assert code.status.description == "exit code 3"
    # the chat went on: these failures were answers for the model
    assert traced.one("chat user -> assistant").status.status_code.name == "UNSET"


def test_disable_stops_spans(fake_llm: FakeLLMServer, traced: Traced) -> None:
    assert parley.tracing.tracing_enabled()
    parley.tracing.disable()
    assert not parley.tracing.tracing_enabled()
    assert not _events.listening()  # nothing left listening: no cost per step
    fake_llm.add_reply("TERMINATE")
    user, assistant = pair(fake_llm, 0)
    user.initiate_chat(assistant, message="hi", silent=True)
    assert traced.spans() == []
    parley.tracing.enable(traced.provider)
    fake_llm.add_reply("TERMINATE")
    user.initiate_chat(assistant, message="again", silent=True)
    assert [s.name for s in traced.roots()] == ["chat user0 -> assistant0"]


def test_disable_during_a_chat_ends_the_open_spans_and_starts_no_more(
    fake_llm: FakeLLMServer, traced: Traced
) -> None:
    user, assistant = pair(fake_llm, 0)

    def stop_tracing() -> str:
        parley.tracing.disable()
        return "stopped"

    parley.register_function(stop_tracing, caller=assistant, executor=user, description="A tool.")
    fake_llm.add_reply(tool_calls=[{"name": "stop_tracing", "arguments": {}}])
    fake_llm.add_reply("TERMINATE")
    user.initiate_chat(assistant, message="hi", silent=True)
    assert traced.outline() == [
        "chat user0 -> assistant0",
        "  invoke_agent assistant0",
        "    reply_func generate_oai_reply",
        "      chat model-0",
        "  invoke_agent user0",
        "    reply_func generate_tool_calls_reply",
        "      execute_tool stop_tracing",
    ]  # the second model call and the summary came after: no spans
    assert len(fake_llm.requests) == 2
    assert not _events.listening()  # the listener left once its last span ended


def test_enable_twice_replaces_the_settings(fake_llm: FakeLLMServer, traced: Traced) -> None:
    parley.tracing.enable(traced.provider, capture_content=True)
    assert len(_events._listeners) == 1
    fake_llm.add_reply("TERMINATE")
    user, assistant = pair(fake_llm, 0)
    user.initiate_chat(assistant, message="hi", silent=True)
    assert len(traced.named("chat model-0")) == 1
    assert "gen_ai.input.messages" in traced.one("chat model-0").attributes


def test_reply_functions_that_pass_without_traced_work_get_no_span(
    fake_llm: FakeLLMServer, traced: Traced
) -> None:
    user, assistant = pair(fake_llm, 0)
    helper, expert = agent("helper"), agent("expert", default_auto_reply="expert view")

    async def consult_then_pass(
        recipient: Any, messages: Any = None, sender: Any = None, config: Any = None
    ) -> tuple[bool, Any]:
        await helper.a_initiate_chat(expert, message="thoughts?", max_turns=1, silent=True)
        return False, None

    def broken(
        recipient: Any, messages: Any = None, sender: Any = None, config: Any = None
    ) -> tuple[bool, Any]:
        raise ValueError("broken reply function")

    assistant.register_reply([UserProxyAgent, None], consult_then_pass)
    fake_llm.add_reply("TERMINATE")
    user.initiate_chat(assistant, message="hi", silent=True)
    assert traced.outline() == [
        "chat user0 -> assistant0",
        "  invoke_agent assistant0",
        "    reply_func consult_then_pass",
        "      chat helper -> expert",
        "        invoke_agent expert",
        "        summarize last_msg",
        "    reply_func generate_oai_reply",
        "      chat model-0",
        "  invoke_agent user0",
        "    reply_func check_termination_and_human_reply",
        "  summarize last_msg",
    ]
    passed = traced.one("reply_func consult_then_pass")
    assert passed.attributes["parley.reply_func.final"] is False
    # the span starts when the function did, not when its first traced work did
    assert passed.start_time < traced.one("chat helper -> expert").start_time
    traced.exporter.clear()
    assistant.register_reply([UserProxyAgent, None], broken)
    with pytest.raises(ValueError, match="broken reply function"):
        user.initiate_chat(assistant, message="hi", silent=True)
    failed = traced.one("reply_func broken")
    assert failed.status.status_code.name == "ERROR"
    assert failed.attributes["error.type"] == "ValueError"


def test_a_forked_child_traces_although_a_thread_held_the_lock(
    fake_llm: FakeLLMServer, traced: Traced
) -> None:
    import os
    import select
    import signal
    import warnings

    listener = parley.tracing._listener
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with listener._lock:
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(10)
    user, assistant = pair(fake_llm, 0)
    fake_llm.add_reply("TERMINATE")
    read_end, write_end = os.pipe()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # forking with threads running
            pid = os.fork()
        if pid == 0:  # the child: the holder thread does not exist here
            try:
                # On this thread: a new thread may get the dead holder's id, and so the lock.
                asyncio.run(user.a_initiate_chat(assistant, message="hi", silent=True))
                names = {s.name for s in traced.spans()}
                os.write(write_end, b"ok" if "chat model-0" in names else b"no spans")
            finally:
                os._exit(0)
    finally:
        release.set()
        holder.join(10)
    os.close(write_end)
    ready = False
    try:
        # poll, not select: a long test session may hold descriptors past select's 1024.
        poller = select.poll()
        poller.register(read_end, select.POLLIN)
        ready = bool(poller.poll(20_000))
        answer = os.read(read_end, 16) if ready else b"the child hung"
    finally:
        os.close(read_end)
        if not ready:
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    assert answer == b"ok"


def test_a_chat_a_sync_tool_starts_is_inside_the_tools_span(
    fake_llm: FakeLLMServer, traced: Traced
) -> None:
    user, assistant = pair(fake_llm, 0)
    helper, expert = agent("helper"), agent("expert", default_auto_reply="42")

    def ask_expert(question: str) -> str:  # sync: runs in a worker thread
        result = helper.initiate_chat(expert, message=question, max_turns=1, silent=True)
        return str(result.summary)

    parley.register_function(ask_expert, caller=assistant, executor=user, description="Ask.")
    fake_llm.add_reply(tool_calls=[{"name": "ask_expert", "arguments": {"question": "?"}}])
    fake_llm.add_reply("TERMINATE")
    user.initiate_chat(assistant, message="hi", silent=True)
    inner = traced.one("chat helper -> expert")
    assert traced.ancestors(inner) == [
        "execute_tool ask_expert",
        "reply_func generate_tool_calls_reply",
        "invoke_agent user0",
        "chat user0 -> assistant0",
    ]
    outer = traced.one("chat user0 -> assistant0")
    assert inner.attributes["parley.chat.parent_id"] == outer.attributes["parley.chat.id"]
