"""Helpers of the web page's tests: pages over the real websocket protocol and the agents of
the scenarios on the fake model server."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from parley import AssistantAgent, UserProxyAgent
from parley.coding import LocalCommandLineCodeExecutor
from parley.testing import FakeLLMServer

WAIT = 20.0  # seconds: the bound of every wait in these tests (each takes milliseconds)
CODE_REPLY = "Let me check:\n```python\nprint('hello from the page')\n```"
PRICE = [0.01, 0.03]  # USD per 1k prompt / completion tokens, so the page shows a cost


def web_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name == "parley-web"]


def ws_url(http_url: str) -> str:
    return http_url.replace("http://", "ws://", 1).replace("/?", "/ws?", 1)


class Page:
    """A page as the browser's script sees it: the websocket's messages, and its actions."""

    def __init__(self, websocket: Any) -> None:
        self.ws = websocket
        self.snapshot: dict[str, Any] = self.next()
        assert self.snapshot["type"] == "snapshot"
        self.session: str = self.snapshot["session"]
        self.seen: list[dict[str, Any]] = []  # every message after the snapshot
        self._unread: list[dict[str, Any]] = []
        self._refs = 0

    def next(self, timeout: float = WAIT) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(self.ws.recv(timeout=timeout))
        return message

    def wait_for(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = WAIT
    ) -> dict[str, Any]:
        """The first message, not yet taken, for which ``predicate`` holds; waits for it."""
        for message in self._unread:
            if predicate(message):
                self._unread.remove(message)
                return message
        while True:
            message = self.next(timeout)
            self.seen.append(message)
            if predicate(message):
                return message
            self._unread.append(message)

    def request(self, status: str = "pending", kind: str | None = None) -> dict[str, Any]:
        """The next request message with that status (and kind)."""
        message = self.wait_for(
            lambda m: (
                m["type"] == "request"
                and m["request"]["status"] == status
                and kind in (None, m["request"]["kind"])
            )
        )
        request: dict[str, Any] = message["request"]
        return request

    def act(self, **action: Any) -> dict[str, Any]:
        """Send an action; the server's result for it."""
        self._refs += 1
        ref = self._refs
        self.ws.send(json.dumps({**action, "ref": ref}))
        return self.wait_for(lambda m: m["type"] == "result" and m["ref"] == ref)


def coder_chat(
    server: FakeLLMServer, work_dir: Path, *, replies: list[str], **proxy: Any
) -> tuple[UserProxyAgent, AssistantAgent]:
    """An assistant scripted with ``replies`` and a user proxy that runs code on this machine
    in ``work_dir`` and asks its human before every reply."""
    for reply in replies:
        server.add_reply(reply)
    configs = [{**c, "price": PRICE} for c in server.config_list()]
    assistant = AssistantAgent("assistant", llm_config={"config_list": configs})
    executor = LocalCommandLineCodeExecutor(work_dir=work_dir, timeout=30)
    user = UserProxyAgent(
        "user",
        human_input_mode="ALWAYS",
        code_execution_config={"executor": executor},
        is_termination_msg=lambda m: "TERMINATE" in str(m.get("content") or ""),
        **proxy,
    )
    return user, assistant


def approving_coder_chat(
    server: FakeLLMServer, work_dir: Path, *, replies: list[str]
) -> tuple[UserProxyAgent, AssistantAgent]:
    """An assistant scripted with ``replies`` and a user proxy that runs their code in
    ``work_dir`` once its human approves it (``"requires_approval": True``), never asked
    otherwise."""
    for reply in replies:
        server.add_reply(reply)
    assistant = AssistantAgent("assistant", llm_config=server.llm_config())
    user = UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config={
            "executor": LocalCommandLineCodeExecutor(work_dir=work_dir, timeout=30),
            "requires_approval": True,
        },
        is_termination_msg=lambda m: "TERMINATE" in str(m.get("content") or ""),
    )
    return user, assistant


def streaming_chat(server: FakeLLMServer, reply: str) -> tuple[UserProxyAgent, AssistantAgent]:
    """An assistant whose one ``reply`` streams piece by piece, and a user proxy that never
    asks its human."""
    server.add_reply(reply, chunk_delay=0.01)
    configs = [{**c, "stream": True} for c in server.config_list()]
    assistant = AssistantAgent("assistant", llm_config={"config_list": configs})
    user = UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config=False,
        is_termination_msg=lambda m: "TERMINATE" in str(m.get("content") or ""),
    )
    return user, assistant
