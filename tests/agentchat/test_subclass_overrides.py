"""Subclasses that override AutoGen's private ConversableAgent methods, in real chats.

AutoGen 0.2 code customises an agent by overriding these underscored methods (a retry or a
provider's extra fields around the model call, a summary of its own, a nested-chat reply, a
carryover of its own): each test runs a chat against parley.testing's loopback server and
checks that what the user gets is the override's doing.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any, ClassVar
from unittest import mock

import pytest

import parley as autogen
from parley import ConversableAgent
from parley.testing import FakeLLMServer


def agent(name: str, cls: type[ConversableAgent] = ConversableAgent, **kwargs: Any) -> Any:
    kwargs.setdefault("human_input_mode", "NEVER")
    kwargs.setdefault("code_execution_config", False)
    kwargs.setdefault("llm_config", False)
    return cls(name, **kwargs)


def chat(sender: Any, recipient: Any, variant: str, **kwargs: Any) -> Any:
    kwargs.setdefault("silent", True)
    if variant == "sync":
        return sender.initiate_chat(recipient, **kwargs)
    return asyncio.run(sender.a_initiate_chat(recipient, **kwargs))


# -- _generate_oai_reply_from_client under the LLM reply -----------------------------------------


class Shouting(ConversableAgent):
    """Post-processes every model answer, calling the base step for the request itself."""

    calls: ClassVar[list[dict[str, Any]]] = []

    def _generate_oai_reply_from_client(
        self, llm_client: Any, messages: list[dict[str, Any]], cache: Any
    ) -> Any:
        self.calls.append(
            {
                "client": llm_client,
                "messages": [dict(m) for m in messages],
                "cache": cache,
                "thread": threading.current_thread(),
            }
        )
        reply = super()._generate_oai_reply_from_client(llm_client, messages, cache)
        return reply.upper() if isinstance(reply, str) else reply


@pytest.mark.parametrize("variant", ["sync", "async"])
def test_an_override_of_the_model_call_makes_the_llm_reply(
    fake_llm: FakeLLMServer, variant: str
) -> None:
    Shouting.calls = []
    bot = agent("bot", Shouting, llm_config=fake_llm.llm_config(), system_message="Be loud.")
    user = agent("user")
    fake_llm.add_reply("hello there")
    result = chat(user, bot, variant, message="hi", max_turns=1)
    assert [m["content"] for m in result.chat_history] == ["hi", "HELLO THERE"]
    assert result.summary == "HELLO THERE"
    # Called as AutoGen calls it: the client, the system message then the history, the cache.
    (call,) = Shouting.calls
    assert call["client"] is bot.client
    assert call["messages"][0] == {"content": "Be loud.", "role": "system"}
    assert call["messages"][-1]["content"] == "hi"
    assert call["cache"] is None
    # The base step still made the request, with the system message once.
    sent = fake_llm.requests[0]["messages"]
    assert [m["role"] for m in sent] == ["system", "user"]
    # User code that may block runs off the event loop, never on parley's runner thread.
    assert call["thread"] is not threading.main_thread()
    assert not call["thread"].name.startswith("parley-runner")


def test_the_override_gets_the_chats_cache(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    Shouting.calls = []
    bot = agent("bot", Shouting, llm_config=fake_llm.llm_config())
    user = agent("user")
    fake_llm.add_reply("cached answer")
    with autogen.Cache.disk(cache_seed="ovr", cache_path_root=tmp_path) as cache:
        first = user.initiate_chat(bot, message="q", max_turns=1, silent=True, cache=cache)
        again = user.initiate_chat(bot, message="q", max_turns=1, silent=True, cache=cache)
    assert [c["cache"] for c in Shouting.calls] == [cache, cache]
    assert first.chat_history[-1]["content"] == again.chat_history[-1]["content"] == "CACHED ANSWER"
    assert len(fake_llm.requests) == 1  # the second answer came from the cache


def test_an_override_that_retries_a_failed_request(fake_llm: FakeLLMServer) -> None:
    """A common extension: retry the model call when it fails (here: an empty answer)."""

    class Retrying(ConversableAgent):
        def _generate_oai_reply_from_client(
            self, llm_client: Any, messages: list[dict[str, Any]], cache: Any
        ) -> Any:
            for _ in range(3):
                reply = super()._generate_oai_reply_from_client(llm_client, messages, cache)
                if reply:
                    return reply
            return None

    bot = agent("bot", Retrying, llm_config=fake_llm.llm_config())
    user = agent("user")
    fake_llm.add_reply("")
    fake_llm.add_reply("second try")
    result = user.initiate_chat(bot, message="hi", max_turns=1, silent=True)
    assert result.chat_history[-1]["content"] == "second try"
    assert len(fake_llm.requests) == 2


def test_an_override_that_answers_with_a_tool_call_runs_the_tool(fake_llm: FakeLLMServer) -> None:
    class Planner(ConversableAgent):
        def _generate_oai_reply_from_client(
            self, llm_client: Any, messages: Any, cache: Any
        ) -> Any:
            if messages[-1].get("role") == "tool":
                return "the sum is " + messages[-1]["content"]
            call = {"name": "add", "arguments": '{"a": 2, "b": 3}'}
            return {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "type": "function", "function": call}],
            }

    planner = agent("planner", Planner, llm_config=fake_llm.llm_config())
    runner = agent("runner")

    @runner.register_for_execution()
    @planner.register_for_llm(description="Add two numbers.")
    def add(a: int, b: int) -> int:
        return a + b

    result = runner.initiate_chat(planner, message="2 + 3?", max_turns=2, silent=True)
    assert [m.get("content") for m in result.chat_history] == ["2 + 3?", None, "5", "the sum is 5"]
    assert fake_llm.requests == []  # the override answered every time


def test_a_patched_model_call_answers_for_every_agent(fake_llm: FakeLLMServer) -> None:
    """AutoGen's tests patch the class after the agents exist."""
    bot = agent("bot", llm_config=fake_llm.llm_config())
    user = agent("user")
    with mock.patch.object(
        ConversableAgent, "_generate_oai_reply_from_client", return_value="from the patch"
    ) as patched:
        result = user.initiate_chat(bot, message="hi", max_turns=1, silent=True)
    assert result.chat_history[-1]["content"] == "from the patch"
    assert fake_llm.requests == []
    args, _ = patched.call_args
    assert args[0] is bot.client
    assert args[1][-1]["content"] == "hi"


def test_without_an_override_the_reply_takes_parleys_own_path(fake_llm: FakeLLMServer) -> None:
    """The base class is never sent through the sync face (it would cost a thread per call)."""
    bot = agent("bot", llm_config=fake_llm.llm_config())
    user = agent("user")
    fake_llm.add_reply("plain")
    with mock.patch(
        "parley.agentchat._client_reply.run_sync", side_effect=AssertionError("sync face used")
    ):
        result = user.initiate_chat(bot, message="hi", max_turns=1, silent=True)
    assert result.chat_history[-1]["content"] == "plain"


# -- the summary chain -------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["sync", "async"])
def test_an_overriding_summarize_chat_makes_the_summary(
    fake_llm: FakeLLMServer, variant: str
) -> None:
    seen: list[tuple[Any, ...]] = []

    class Briefing(ConversableAgent):
        def _summarize_chat(
            self, summary_method: Any, summary_args: Any, recipient: Any = None, cache: Any = None
        ) -> Any:
            seen.append((summary_method, summary_args, recipient, cache))
            return f"{len(self.chat_messages[recipient])} messages with {recipient.name}"

    user = agent("user", Briefing)
    bot = agent("bot", llm_config=fake_llm.llm_config())
    fake_llm.add_reply("answer")
    args = {"summary_prompt": "Short."}
    result = chat(
        user,
        bot,
        variant,
        message="hi",
        max_turns=1,
        summary_method="reflection_with_llm",
        summary_args=args,
    )
    assert result.summary == "2 messages with bot"
    assert seen == [("reflection_with_llm", {"summary_prompt": "Short."}, bot, None)]
    assert len(fake_llm.requests) == 1  # no reflection: the override made the summary
    assert args == {"summary_prompt": "Short."}


def test_an_overriding_summarize_chat_may_call_the_base(fake_llm: FakeLLMServer) -> None:
    class LastWordsOnly(ConversableAgent):
        def _summarize_chat(
            self, summary_method: Any, summary_args: Any, recipient: Any = None, cache: Any = None
        ) -> Any:
            summary = super()._summarize_chat("last_msg", summary_args, recipient, cache=cache)
            return summary.strip() + " (checked)"

    user = agent("user", LastWordsOnly)
    bot = agent("bot", llm_config=fake_llm.llm_config())
    fake_llm.add_reply("the answer TERMINATE")
    result = user.initiate_chat(
        bot, message="hi", max_turns=1, silent=True, summary_method="reflection_with_llm"
    )
    assert result.summary == "the answer (checked)"
    assert len(fake_llm.requests) == 1


def test_an_overriding_last_msg_as_summary_makes_the_default_summary() -> None:
    class Counted(ConversableAgent):
        @staticmethod
        def _last_msg_as_summary(sender: Any, recipient: Any, summary_args: Any) -> str:
            last = recipient.last_message(sender)["content"]
            return f"{last} ({len(sender.chat_messages[recipient])} messages)"

    user = agent("user", Counted)
    bot = agent("bot", default_auto_reply="auto")
    result = user.initiate_chat(bot, message="hi", max_turns=2, silent=True)
    assert result.summary == "auto (4 messages)"


def test_an_overriding_reflection_with_llm_as_summary(fake_llm: FakeLLMServer) -> None:
    class Prefixed(ConversableAgent):
        @staticmethod
        def _reflection_with_llm_as_summary(sender: Any, recipient: Any, summary_args: Any) -> str:
            base = ConversableAgent._reflection_with_llm_as_summary(sender, recipient, summary_args)
            return "Summary: " + base

    user = agent("user", Prefixed)
    bot = agent("bot", llm_config=fake_llm.llm_config())
    fake_llm.add_reply("an answer")
    fake_llm.add_reply("they talked")
    result = user.initiate_chat(
        bot, message="hi", max_turns=1, silent=True, summary_method="reflection_with_llm"
    )
    assert result.summary == "Summary: they talked"
    assert fake_llm.requests[-1]["messages"][-1] == {
        "role": "system",
        "content": ConversableAgent.DEFAULT_SUMMARY_PROMPT,
    }


def test_an_overriding_reflection_with_llm_gets_autogens_arguments(
    fake_llm: FakeLLMServer,
) -> None:
    seen: list[dict[str, Any]] = []

    class OwnReflection(ConversableAgent):
        def _reflection_with_llm(
            self,
            prompt: str,
            messages: Any,
            llm_agent: Any = None,
            cache: Any = None,
            role: Any = None,
        ) -> str:
            seen.append({"prompt": prompt, "messages": messages, "llm_agent": llm_agent})
            seen[-1].update(cache=cache, role=role)
            return f"reflected on {len(messages)} messages"

    user = agent("user", OwnReflection)
    bot = agent("bot", llm_config=fake_llm.llm_config())
    fake_llm.add_reply("an answer")
    result = user.initiate_chat(
        bot,
        message="hi",
        max_turns=1,
        silent=True,
        summary_method="reflection_with_llm",
        summary_args={"summary_prompt": "In one line.", "summary_role": "user"},
    )
    assert result.summary == "reflected on 2 messages"
    (call,) = seen
    assert call["prompt"] == "In one line."
    assert [m["content"] for m in call["messages"]] == ["hi", "an answer"]
    assert call["llm_agent"] is bot
    assert call["role"] == "user"
    assert len(fake_llm.requests) == 1


# -- nested chats, carryover, preparing a chat ---------------------------------------------------


@pytest.mark.parametrize("use_async", [False, True])
def test_an_overriding_summary_from_nested_chats_answers_the_trigger(use_async: bool) -> None:
    """AG2's SwarmAgent overrides the nested chats' default reply function."""

    class Reporter(ConversableAgent):
        @staticmethod
        def _summary_from_nested_chats(
            chat_queue: Any,
            recipient: Any,
            messages: Any = None,
            sender: Any = None,
            config: Any = None,
        ) -> tuple[bool, str]:
            return True, f"sync report on {messages[-1]['content']!r} ({len(chat_queue)} chats)"

        @staticmethod
        async def _a_summary_from_nested_chats(
            chat_queue: Any,
            recipient: Any,
            messages: Any = None,
            sender: Any = None,
            config: Any = None,
        ) -> tuple[bool, str]:
            return True, f"async report on {messages[-1]['content']!r} ({len(chat_queue)} chats)"

    inner = agent("inner", default_auto_reply="inner")
    reporter = agent("reporter", Reporter)
    reporter.register_nested_chats(
        [{"recipient": inner, "max_turns": 1, "chat_id": 1}],
        trigger=lambda sender: True,
        use_async=use_async,
    )
    user = agent("user")
    result = chat(user, reporter, "async" if use_async else "sync", message="go", max_turns=1)
    kind = "async" if use_async else "sync"
    assert result.chat_history[-1]["content"] == f"{kind} report on 'go' (1 chats)"


def test_an_overriding_process_carryover_shapes_the_next_chats_first_message(
    fake_llm: FakeLLMServer,
) -> None:
    """A pattern seen in AutoGen code: carry over only the last summary."""

    class LastOnly(ConversableAgent):
        def _process_carryover(self, content: str, kwargs: dict[str, Any]) -> str:
            carryover = kwargs.get("carryover")
            if not carryover:
                return content
            last = carryover[-1] if isinstance(carryover, list) else carryover
            return f"{content}\nPreviously: {last}"

    user = agent("user", LastOnly)
    first = agent("first", llm_config=fake_llm.llm_config())
    second = agent("second", llm_config=fake_llm.llm_config())
    fake_llm.add_reply("result one")
    fake_llm.add_reply("result two")
    results = user.initiate_chats(
        [
            {"recipient": first, "message": "one", "max_turns": 1, "carryover": "old news"},
            {"recipient": second, "message": "two", "max_turns": 1},
        ]
    )
    assert results[0].chat_history[0]["content"] == "one\nPreviously: old news"
    assert results[1].chat_history[0]["content"] == "two\nPreviously: result one"
    assert fake_llm.requests[1]["messages"][-1]["content"] == "two\nPreviously: result one"


def test_overriding_prepare_chat_runs_for_both_agents() -> None:
    calls: list[tuple[str, str, bool, bool]] = []

    class Tracked(ConversableAgent):
        def _prepare_chat(
            self,
            recipient: Any,
            clear_history: bool,
            prepare_recipient: bool = True,
            reply_at_receive: bool = True,
        ) -> None:
            calls.append((self.name, recipient.name, clear_history, prepare_recipient))
            super()._prepare_chat(recipient, clear_history, prepare_recipient, reply_at_receive)

    user = agent("user", Tracked)
    bot = agent("bot", Tracked, default_auto_reply="ok")
    user.initiate_chat(bot, message="hi", max_turns=1, silent=True, clear_history=False)
    assert calls == [("user", "bot", False, True), ("bot", "user", False, False)]


# -- a subclass's _is_termination_msg method --------------------------------------------------


class StopWord(ConversableAgent):
    """Defines AutoGen's ``_is_termination_msg`` as a method and hands it to the base."""

    def __init__(self, name: str, **kwargs: Any) -> None:
        kwargs.setdefault("human_input_mode", "NEVER")
        super().__init__(name, is_termination_msg=self._is_termination_msg, **kwargs)

    def _is_termination_msg(self, message: dict[str, Any]) -> bool:
        return "STOP" in (message.get("content") or "")


def test_a_termination_method_handed_to_the_base_ends_the_chat() -> None:
    user = agent("user", default_auto_reply="please STOP")
    bot = StopWord("bot", llm_config=False, default_auto_reply="go on")
    result = user.initiate_chat(bot, message="hi", silent=True)
    assert [m["content"] for m in result.chat_history] == ["hi", "go on", "please STOP"]
    assert bot._is_termination_msg({"content": "STOP"}) is True


def test_a_termination_method_not_handed_to_the_base_leaves_the_default() -> None:
    """As in AutoGen, whose __init__ set the attribute over the method: the default
    check ("TERMINATE") applies, and the agent's own setting still reaches the chat."""

    class Ignored(ConversableAgent):
        def _is_termination_msg(self, message: dict[str, Any]) -> bool:
            return False

    user = agent("user", default_auto_reply="TERMINATE")
    bot = agent("bot", Ignored, default_auto_reply="go on", max_consecutive_auto_reply=5)
    result = user.initiate_chat(bot, message="hi", silent=True)
    assert [m["content"] for m in result.chat_history] == ["hi", "go on", "TERMINATE"]
    bot._is_termination_msg = lambda message: "go" in (message.get("content") or "")
    user2 = agent("user2", default_auto_reply="go")
    result = user2.initiate_chat(bot, message="hi", silent=True)
    assert [m["content"] for m in result.chat_history] == ["hi", "go on", "go"]
