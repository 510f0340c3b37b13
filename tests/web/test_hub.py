"""The page's server-side state on its own: what a page is sent, what it keeps, what it forgets."""

from __future__ import annotations

import json
from typing import Any

import pytest

from parley.usage._run import ChatRun
from parley.web import AnswerRefusedError
from parley.web._hub import Hub
from parley.web._records import MAX_ENDED_CHATS


def _snapshot(hub: Hub) -> dict[str, Any]:
    text, unsubscribe = hub.subscribe(lambda _: None)
    unsubscribe()
    snapshot: dict[str, Any] = json.loads(text)
    return snapshot


def _end(hub: Hub, run: ChatRun) -> None:
    hub.chat_ended(run, reason="max_turns", summary=None, cost=None, tokens=None, error=None)


def test_a_long_running_page_keeps_the_newest_ended_chats() -> None:
    hub = Hub()
    runs = [ChatRun("a", f"b{i}", None) for i in range(MAX_ENDED_CHATS + 5)]
    for run in runs:
        hub.chat_started(run)
        _end(hub, run)
    running = ChatRun("a", "now", None)
    hub.chat_started(running)
    ids = [chat["id"] for chat in _snapshot(hub)["chats"]]
    assert ids == [run.id for run in runs[5:]] + [running.id]


def test_a_chat_the_page_never_saw_start_is_left_off() -> None:
    hub = Hub()
    before = ChatRun("a", "b", None)  # started before the page was served
    hub.printed(before, "hello\n")
    request, answer = hub.ask(before, "input", "Name? ", agent="a", sender="b")
    assert request.chat_id is None
    snapshot = _snapshot(hub)
    assert snapshot["chats"] == []
    assert snapshot["console"] == "hello\n"
    with pytest.raises(AnswerRefusedError, match="no chat"):
        hub.stop(before.id, "s1")
    hub.answer(request.id, "", action="stop", by="s1")  # Stop answers "exit" all the same
    assert answer.result(0) == "exit"


def test_a_stopped_chat_is_answered_exit_without_asking() -> None:
    hub = Hub()
    run = ChatRun("a", "b", None)
    hub.chat_started(run)
    hub.stop(run.id, "api")
    request, answer = hub.ask(run, "review", "ok?", agent="a", sender="b")
    assert answer.result(0) == "exit"
    assert hub.pending() == []
    assert run.stopped() == "stopped"
    (shown,) = _snapshot(hub)["requests"]
    assert (shown["id"], shown["status"], shown["action"]) == (request.id, "answered", "stop")
