"""``ChatRun.stop``: a chat stopped from another thread ends where a spent budget would, with
its reason; the chats below it stop too."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from parley import ConversableAgent
from parley.exceptions import BudgetExceededError
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer
from parley.usage._run import ChatRun, chat_run, check, current_run, gate

WAIT = 20.0


def test_stop_keeps_the_first_reason_and_reaches_the_chats_below() -> None:
    with chat_run("a", "b", None) as outer, chat_run("b", "c", None) as inner:
        assert check() is None
        outer.stop()
        assert inner.stopped() == "stopped"
        assert check() == "stopped"
        assert inner.termination_reason() == "stopped"
        with pytest.raises(BudgetExceededError, match=r"the chat stopped \(stopped\)") as refused:
            gate()
        assert refused.value.reason == "stopped"
        outer.stop("another reason")
        assert outer.stop_reason == "stopped"
    lone = ChatRun(None, None, None)
    assert lone.stopped() is None


def test_a_chat_stopped_from_another_thread_makes_no_further_request(
    fake_llm: FakeLLMServer,
) -> None:
    fake_llm.default = "more"
    asked, stopped = threading.Event(), threading.Event()
    runs: list[ChatRun] = []
    user = ConversableAgent(
        "user", llm_config=False, human_input_mode="NEVER", default_auto_reply="go on"
    )
    bot = ConversableAgent("bot", llm_config=fake_llm.llm_config(), human_input_mode="NEVER")

    def before_the_model(*_: Any, **__: Any) -> tuple[bool, None]:
        run = current_run()
        assert run is not None
        runs.append(run)
        asked.set()
        assert stopped.wait(WAIT)  # the other thread stops the chat now
        return False, None  # not a reply: the model's reply function runs next

    bot.register_reply([ConversableAgent, None], before_the_model, position=0)
    result: list[Any] = []

    def chat() -> None:
        with IOStream.set_default(IOScripted()):
            result.append(user.initiate_chat(bot, message="start", max_turns=20))

    thread = threading.Thread(target=chat)
    thread.start()
    assert asked.wait(WAIT)
    runs[0].stop()
    stopped.set()
    thread.join(WAIT)
    assert not thread.is_alive()
    (chat_result,) = result
    assert chat_result.termination_reason == "stopped"
    assert [m["content"] for m in chat_result.chat_history] == ["start"]
    assert fake_llm.requests == []  # the model request was refused before it was sent
