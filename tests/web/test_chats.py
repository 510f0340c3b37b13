"""Real chats on the fake model server, with the web page as their human: reviews approved and
rejected, input answered, an answer taken once, chats stopped, and what the page is shown
(messages, streamed tokens, tool calls, code and its output, cost). The page is played by
websocket clients speaking the page's protocol."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import parley
from parley import AssistantAgent, ConversableAgent, UserProxyAgent
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer
from parley.web import AnswerRefusedError, WebHuman

from ._support import CODE_REPLY, PRICE, WAIT, Page, coder_chat, streaming_chat


def _llm(server: FakeLLMServer) -> dict[str, Any]:
    return {"config_list": [{**c, "price": PRICE} for c in server.config_list()]}


def _items(page: Page, chat_id: str, kind: str) -> list[dict[str, Any]]:
    """The latest version of each item of ``kind`` the page was sent for the chat."""
    latest: dict[int, dict[str, Any]] = {}
    for message in page.seen:
        if message["type"] == "item" and (message["chat"], message["item"]["kind"]) == (
            chat_id,
            kind,
        ):
            latest[message["item"]["id"]] = message["item"]
    return list(latest.values())


def _text(message: dict[str, Any]) -> str:
    return "".join(s["text"] for s in message["segments"])


def _ended(page: Page) -> dict[str, Any]:
    chat: dict[str, Any] = page.wait_for(
        lambda m: m["type"] == "chat" and m["chat"]["status"] in ("ended", "failed")
    )["chat"]
    return chat


def test_review_approve_then_reject_with_feedback(
    human: WebHuman,
    open_page: Callable[..., Page],
    background: Any,
    fake_llm: FakeLLMServer,
    tmp_path: Path,
) -> None:
    user, assistant = coder_chat(
        fake_llm, tmp_path, replies=[CODE_REPLY, "Shall I plot it too?", "Fine. TERMINATE"]
    )
    user.register_human_review(human.review)
    page = open_page()
    result = background(user.initiate_chat, assistant, message="Greet the page.")

    review = page.request(kind="review")
    assert review["agent"] == "user"
    assert review["sender"] == "assistant"
    code = [s for s in review["message"]["segments"] if s["kind"] == "code"]
    assert code == [{"kind": "code", "language": "python", "text": "print('hello from the page')"}]
    assert page.act(type="answer", request=review["id"], action="approve")["ok"]

    review = page.request(kind="review")  # the assistant's question, after the code ran
    assert review["message"]["segments"][0]["text"] == "Shall I plot it too?"
    refused = page.act(type="answer", request=review["id"], action="reject", text="  ")
    assert refused["error"] == "type the feedback to send with Reject"
    assert page.act(type="answer", request=review["id"], action="reject", text="No, thanks.")["ok"]

    review = page.request(kind="review")  # the TERMINATE message: approving it ends the chat
    assert page.act(type="answer", request=review["id"], action="approve")["ok"]
    chat_result = result.result(WAIT)
    chat = _ended(page)

    assert chat_result.termination_reason == "is_termination_msg"
    assert chat["termination_reason"] == "is_termination_msg"
    assert chat_result.human_input == ["", "No, thanks.", ""]
    # The feedback went to the model as the human's reply; the code ran once, on approval.
    assert fake_llm.requests[2]["messages"][-1]["content"] == "No, thanks."
    assert fake_llm.requests[1]["messages"][-1]["content"].startswith("exitcode: 0")
    (ran,) = _items(page, chat["id"], "code")
    assert ran["status"] == "done"
    assert ran["exit_code"] == 0
    assert "hello from the page" in ran["output"]
    notes = [n["text"] for n in _items(page, chat["id"], "note")]
    assert "The human answered user: No, thanks." in notes
    assert chat["cost"] == pytest.approx(
        chat_result.cost["usage_including_cached_inference"]["total_cost"]
    )
    assert chat["cost"] > 0


def test_input_prompts_are_answered_on_the_page(
    human: WebHuman, open_page: Callable[..., Page], background: Any, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add_reply("Which city?")
    fake_llm.add_reply("Paris it is. TERMINATE")
    assistant = AssistantAgent("assistant", llm_config=_llm(fake_llm))
    user = UserProxyAgent("user", human_input_mode="ALWAYS", code_execution_config=False)
    page = open_page()

    def chat() -> Any:
        with human.attach():
            return user.initiate_chat(assistant, message="Plan a trip.", max_turns=2)

    result = background(chat)
    asked = page.request(kind="input")
    assert asked["agent"] == "user"
    assert asked["prompt"].startswith("Provide feedback to assistant.")
    assert asked["message"]["segments"][0]["text"] == "Which city?"  # what the prompt answers
    assert page.act(type="answer", request=asked["id"], action="send", text="Paris")["ok"]
    chat_result = result.result(WAIT)
    assert [m["content"] for m in chat_result.chat_history] == [
        "Plan a trip.",
        "Which city?",
        "Paris",
        "Paris it is. TERMINATE",
    ]
    chat = _ended(page)
    # What the chat printed went to the page's console, not the terminal.
    console = "".join(m["text"] for m in page.seen if m["type"] == "console")
    assert "assistant (to user):\n\nWhich city?" in console
    senders = [(m["sender"], m["recipient"]) for m in _items(page, chat["id"], "message")]
    assert senders == [
        ("user", "assistant"),
        ("assistant", "user"),
        ("user", "assistant"),
        ("assistant", "user"),
    ]


def test_an_answer_is_taken_once(
    human: WebHuman, open_page: Callable[..., Page], background: Any, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add_reply("Ready?")
    fake_llm.add_reply("TERMINATE")
    assistant = AssistantAgent("assistant", llm_config=_llm(fake_llm))
    user = UserProxyAgent("user", human_input_mode="ALWAYS", code_execution_config=False)
    user.register_human_review(human.review)
    alice, bob = open_page(), open_page()
    result = background(user.initiate_chat, assistant, message="Start.", max_turns=2)

    seen_by_alice, seen_by_bob = alice.request(), bob.request()
    assert seen_by_alice == seen_by_bob
    request_id = seen_by_alice["id"]
    assert alice.act(type="answer", request=request_id, action="reject", text="From Alice.")["ok"]
    refused = bob.act(type="answer", request=request_id, action="reject", text="From Bob.")
    assert refused == {"type": "result", "ref": 1, "ok": False, "error": "already answered"}
    with pytest.raises(AnswerRefusedError, match="already answered"):
        human.answer(request_id, "From the program.")
    for page in (alice, bob):
        answered = page.request("answered")
        assert answered["answer"] == "From Alice."
        assert answered["answered_by"] == alice.session
    chat_result = result.result(WAIT)
    assert chat_result.human_input == ["From Alice."]
    assert fake_llm.requests[1]["messages"][-1]["content"] == "From Alice."


def test_stop_answers_the_waiting_request_and_ends_the_chat(
    human: WebHuman,
    open_page: Callable[..., Page],
    background: Any,
    fake_llm: FakeLLMServer,
    tmp_path: Path,
) -> None:
    user, assistant = coder_chat(fake_llm, tmp_path, replies=[CODE_REPLY])
    user.register_human_review(human.review)
    page = open_page()
    result = background(user.initiate_chat, assistant, message="Go.")
    review = page.request(kind="review")
    assert page.act(type="stop", chat=review["chat_id"])["ok"]
    chat_result = result.result(WAIT)
    assert chat_result.termination_reason == "stopped"
    assert len(fake_llm.requests) == 1  # nothing ran and nothing more was asked
    assert not list(tmp_path.iterdir())
    answered = page.request("answered")
    assert (answered["action"], answered["answer"]) == ("stop", "exit")
    chat = _ended(page)
    assert chat["termination_reason"] == "stopped"
    assert page.act(type="stop", chat=chat["id"])["error"] == "the chat has already ended"


def test_stop_while_the_model_writes(
    human: WebHuman, open_page: Callable[..., Page], background: Any, fake_llm: FakeLLMServer
) -> None:
    fake_llm.default = "One more thing."  # a chat that would go on for its 50 turns
    # 20 words, 0.1 s apart: the stop (milliseconds away) lands while the reply streams.
    slow = " ".join(f"word{i}" for i in range(20))
    fake_llm.add_reply(slow, chunk_delay=0.1)
    configs = [{**c, "price": PRICE, "stream": True} for c in fake_llm.config_list()]
    assistant = AssistantAgent("assistant", llm_config={"config_list": configs})
    user = UserProxyAgent(
        "user", human_input_mode="NEVER", code_execution_config=False, default_auto_reply="Go on."
    )
    page = open_page()

    def chat() -> Any:
        with human.attach():
            return user.initiate_chat(assistant, message="Go.", max_turns=50)

    result = background(chat)
    first_token = page.wait_for(lambda m: m["type"] == "token")
    assert page.act(type="stop", chat=first_token["chat"])["ok"]
    assert page.wait_for(lambda m: m["type"] == "chat" and m["chat"]["status"] == "stopping")
    chat_result = result.result(WAIT)
    # The reply being written was kept; no turn came after it.
    assert chat_result.termination_reason == "stopped"
    history = [m["content"] for m in chat_result.chat_history]
    assert history == ["Go.", slow]
    assert len(fake_llm.requests) == 1
    assert _ended(page)["termination_reason"] == "stopped"


def test_the_page_sees_streamed_tokens_tool_calls_and_cost(
    human: WebHuman, open_page: Callable[..., Page], background: Any, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add_reply(tool_calls=[{"name": "add", "arguments": {"a": 20, "b": 22}, "id": "c1"}])
    fake_llm.add_reply("The sum is 42. TERMINATE", chunk_delay=0.01)
    configs = [{**c, "price": PRICE, "stream": True} for c in fake_llm.config_list()]
    assistant = AssistantAgent("assistant", llm_config={"config_list": configs})
    user = UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config=False,
        is_termination_msg=lambda m: "TERMINATE" in str(m.get("content") or ""),
    )

    def add(a: int, b: int) -> int:
        return a + b

    parley.register_function(add, caller=assistant, executor=user, description="Add.")
    page = open_page()

    def chat() -> Any:
        with human.attach():
            return user.initiate_chat(assistant, message="Add 20 and 22.")

    chat_result = background(chat).result(WAIT)
    chat = _ended(page)
    tokens = [m for m in page.seen if m["type"] == "token"]
    assert {t["speaker"] for t in tokens} == {"assistant"}
    assert "".join(t["text"] for t in tokens).startswith("The sum is 42.")
    assert len(tokens) > 1  # it arrived piece by piece
    assert any(m["type"] == "draft_end" for m in page.seen)
    (tool,) = _items(page, chat["id"], "tool")
    assert (tool["agent"], tool["name"], tool["status"], tool["result"]) == (
        "user",
        "add",
        "done",
        "42",
    )
    assert '"a": 20' in tool["arguments"]
    calls = [m["tool_calls"] for m in _items(page, chat["id"], "message") if m["tool_calls"]]
    assert calls == [[{"id": "c1", "name": "add", "arguments": '{\n  "a": 20,\n  "b": 22\n}'}]]
    results = [m["tool_results"] for m in _items(page, chat["id"], "message") if m["tool_results"]]
    assert results == [[{"id": "c1", "text": "42"}]]
    total = chat_result.cost["usage_including_cached_inference"]["total_cost"]
    assert chat["cost"] == pytest.approx(total)
    assert chat["tokens"] == chat_result.usage.total_tokens > 0


def test_a_group_chat_shows_each_message_once(
    human: WebHuman, open_page: Callable[..., Page], background: Any, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add_reply("Draft: hello.")
    fake_llm.add_reply("Looks good. TERMINATE")
    writer = ConversableAgent("writer", llm_config=_llm(fake_llm))
    critic = ConversableAgent("critic", llm_config=_llm(fake_llm))
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    group = parley.GroupChat(
        [user, writer, critic], messages=[], max_round=3, speaker_selection_method="round_robin"
    )
    manager = parley.GroupChatManager(group, llm_config=False)
    page = open_page()
    background(user.initiate_chat, manager, message="Write a greeting.").result(WAIT)
    chat = _ended(page)
    messages = [
        (m["sender"], m["segments"][0]["text"]) for m in _items(page, chat["id"], "message")
    ]
    assert messages == [
        ("user", "Write a greeting."),
        ("writer", "Draft: hello."),
        ("critic", "Looks good. TERMINATE"),
    ]


async def test_a_cancelled_chat_withdraws_its_request(
    human: WebHuman, open_page: Callable[..., Page], fake_llm: FakeLLMServer
) -> None:
    fake_llm.add_reply("Approve me.")
    assistant = AssistantAgent("assistant", llm_config=_llm(fake_llm))
    user = UserProxyAgent("user", human_input_mode="ALWAYS", code_execution_config=False)
    user.register_human_review(human.review)
    page = open_page()
    task = asyncio.ensure_future(user.a_initiate_chat(assistant, message="Go.", max_turns=2))
    request = await asyncio.to_thread(page.request)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    withdrawn = await asyncio.to_thread(page.request, "withdrawn")
    assert withdrawn["id"] == request["id"]
    assert human.pending() == []


def test_the_pages_draft_takes_the_streamed_reply_from_its_deltas(
    human: WebHuman, open_page: Callable[..., Page], background: Any, fake_llm: FakeLLMServer
) -> None:
    # The chat prints to a stream of its own, not the page: the page's draft still grows with
    # each piece of the streamed reply (the token_delta reports), and its console stays empty.
    user, assistant = streaming_chat(fake_llm, "Hello from a streamed reply. TERMINATE")
    page = open_page()
    terminal = IOScripted()

    def chat() -> Any:
        with IOStream.set_default(terminal):
            return user.initiate_chat(assistant, message="Say hello.")

    background(chat).result(WAIT)
    chat = _ended(page)
    tokens = [m for m in page.seen if m["type"] == "token"]
    assert len(tokens) > 1  # piece by piece
    assert {(t["chat"], t["speaker"]) for t in tokens} == {(chat["id"], "assistant")}
    assert "".join(t["text"] for t in tokens) == "Hello from a streamed reply. TERMINATE"
    assert "Hello from a streamed reply." in terminal.text  # what was printed went there
    assert [m for m in page.seen if m["type"] == "console"] == []
    # the draft ends as the message it was becomes an item
    kinds = [m["type"] for m in page.seen]
    draft_end = kinds.index("draft_end")
    assert draft_end > kinds.index("token")
    (reply,) = [m for m in _items(page, chat["id"], "message") if m["sender"] == "assistant"]
    assert _text(reply) == "Hello from a streamed reply. TERMINATE"


def test_a_silent_chats_stream_makes_no_draft(
    human: WebHuman, open_page: Callable[..., Page], background: Any, fake_llm: FakeLLMServer
) -> None:
    user, assistant = streaming_chat(fake_llm, "Quietly streamed. TERMINATE")
    page = open_page()

    def chat() -> Any:
        with human.attach():
            return user.initiate_chat(assistant, message="Say it.", silent=True)

    background(chat).result(WAIT)
    chat = _ended(page)
    assert [m for m in page.seen if m["type"] == "token"] == []
    texts = [_text(m) for m in _items(page, chat["id"], "message")]
    assert texts[-1] == "Quietly streamed. TERMINATE"
