"""Tools that require approval, with the web page as the human's review: the page is shown the
tool's name and arguments, rejects a call with feedback or approves it; a program playing the
human answers the same requests (``next_request`` / ``answer``). Code that requires approval is
reviewed the same way, the page shown the blocks it would run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from parley import AssistantAgent, UserProxyAgent
from parley.testing import FakeLLMServer
from parley.web import WebHuman

from .._approval_tools import add_send_email
from ._support import PRICE, WAIT, Page, approving_coder_chat


def _pair(fake_llm: FakeLLMServer, ran: list[str]) -> tuple[UserProxyAgent, AssistantAgent]:
    configs = [{**c, "price": PRICE} for c in fake_llm.config_list()]
    assistant = AssistantAgent("assistant", llm_config={"config_list": configs})
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
    add_send_email(assistant, user, ran)
    return user, assistant


def _notes(page: Page, chat_id: str) -> list[str]:
    return [
        m["item"]["text"]
        for m in page.seen
        if m["type"] == "item" and m["chat"] == chat_id and m["item"]["kind"] == "note"
    ]


def _latest(page: Page, kind: str) -> list[dict[str, Any]]:
    """The last version of each item of ``kind`` the page was sent."""
    items = {
        m["item"]["id"]: m["item"]
        for m in page.seen
        if m["type"] == "item" and m["item"]["kind"] == kind
    }
    return list(items.values())


def test_the_page_approves_and_rejects_tool_calls(
    human: WebHuman, open_page: Callable[..., Page], background: Any, fake_llm: FakeLLMServer
) -> None:
    ran: list[str] = []
    user, assistant = _pair(fake_llm, ran)
    user.register_human_review(human.review)
    fake_llm.add_reply(
        tool_calls=[
            {"name": "send_email", "arguments": {"to": "boss@example.com", "body": "I quit"}},
            {"name": "send_email", "arguments": {"to": "me@example.com", "body": "note"}},
        ]
    )
    fake_llm.add_reply("TERMINATE")
    page = open_page()
    result = background(user.initiate_chat, assistant, message="Send the emails.")

    # One request per call, one at a time: the page shows the tool and its arguments.
    first = page.request(kind="review")
    assert first["tool_call"]["name"] == "send_email"
    assert first["tool_call"]["arguments"] == {"to": "boss@example.com", "body": "I quit"}
    assert first["sender"] == "assistant"
    (shown,) = first["message"]["tool_calls"]
    assert shown["name"] == "send_email"
    assert '"to": "boss@example.com"' in shown["arguments"]
    assert human.pending() == [human.next_request(WAIT)]  # the second is not asked yet
    reject = page.act(type="answer", request=first["id"], action="reject", text="Not to the boss.")
    assert reject["ok"]

    # The program playing the human approves the second call.
    second = human.next_request(WAIT)
    assert second.tool_call is not None
    assert second.tool_call["arguments"]["to"] == "me@example.com"
    human.answer(second)

    chat_result = result.result(WAIT)
    assert ran == ["me@example.com"]
    tool_messages = [m for m in fake_llm.requests[1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == [
        "Error: the human rejected the call of send_email: Not to the boss.",
        "sent to me@example.com",
    ]
    assert chat_result.human_input == ["Not to the boss.", ""]
    # Everything the page was sent before the chat ended has been read once its end is.
    page.wait_for(lambda m: m["type"] == "chat" and m["chat"]["status"] == "ended")
    notes = _notes(page, first["chat_id"])
    assert "The human rejected user's call of send_email: Not to the boss." in notes
    assert "The human approved user's call of send_email." in notes
    # The rejected call shows as a tool that failed with the rejection, never as one that ran.
    statuses = sorted((t["status"], t["result"]) for t in _latest(page, "tool"))
    assert statuses == [
        ("done", "sent to me@example.com"),
        ("failed", "Error: the human rejected the call of send_email: Not to the boss."),
    ]


def test_stop_on_an_approval_ends_the_chat(
    human: WebHuman, open_page: Callable[..., Page], background: Any, fake_llm: FakeLLMServer
) -> None:
    ran: list[str] = []
    user, assistant = _pair(fake_llm, ran)
    user.register_human_review(human.review)
    fake_llm.add_reply(tool_calls=[{"name": "send_email", "arguments": {"to": "a", "body": "b"}}])
    page = open_page()
    result = background(user.initiate_chat, assistant, message="Send it.")
    request = page.request(kind="review")
    assert page.act(type="answer", request=request["id"], action="stop")["ok"]
    chat_result = result.result(WAIT)
    assert chat_result.termination_reason == "stopped"
    assert ran == []
    assert len(fake_llm.requests) == 1


def test_the_page_approves_and_rejects_code_that_asks_to_run(
    human: WebHuman,
    open_page: Callable[..., Page],
    background: Any,
    fake_llm: FakeLLMServer,
    tmp_path: Path,
) -> None:
    user, assistant = approving_coder_chat(
        fake_llm,
        tmp_path,
        replies=[
            "Two steps:\n```python\nopen('ran.txt', 'w').write('ran')\n```\n\n```sh\necho two\n```",
            "```python\nopen('bad.txt', 'w').write('bad')\n```",
            "TERMINATE",
        ],
    )
    user.register_human_review(human.review)
    page = open_page()
    result = background(user.initiate_chat, assistant, message="Write the files.")

    # The review carries the blocks it would run, in order; no tool call.
    first = page.request(kind="review")
    assert first["tool_call"] is None
    assert first["code_blocks"] == [
        {"language": "python", "code": "open('ran.txt', 'w').write('ran')"},
        {"language": "sh", "code": "echo two"},
    ]
    assert first["sender"] == "assistant"
    assert not (tmp_path / "ran.txt").exists()  # nothing runs before the answer
    assert page.act(type="answer", request=first["id"], action="approve")["ok"]

    # The program playing the human rejects the next message's code.
    second = human.next_request(WAIT)
    assert second.tool_call is None
    assert second.code_blocks == [
        {"language": "python", "code": "open('bad.txt', 'w').write('bad')"}
    ]
    human.answer(second, "No files called bad.")

    chat_result = result.result(WAIT)
    assert (tmp_path / "ran.txt").read_text() == "ran"
    assert not (tmp_path / "bad.txt").exists()
    assert chat_result.human_input == ["", "No files called bad."]
    page.wait_for(lambda m: m["type"] == "chat" and m["chat"]["status"] == "ended")
    notes = _notes(page, first["chat_id"])
    assert "The human approved running user's code." in notes
    assert "The human rejected running user's code: No files called bad." in notes
    # The rejected code shows as code that failed with the rejection as its output.
    outcomes = sorted((c["status"], c["output"]) for c in _latest(page, "code"))
    assert outcomes[0][0] == "done"
    assert outcomes[1] == ("failed", "Error: the human rejected the code: No files called bad.")
