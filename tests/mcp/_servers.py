"""Starting the demo MCP server (``demo_server.py``) for the client tests: its ``mcpServers``
entry over stdio, or a process serving streamable HTTP (or SSE) on a free loopback port; the
agents and request helpers the client tests share."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from parley import AssistantAgent, UserProxyAgent
from parley.testing import FakeLLMServer

SCRIPT = str(Path(__file__).with_name("demo_server.py"))
START_TIMEOUT = 30.0


def stdio_entry(**extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [SCRIPT, "stdio"], **extra}


def make_pair(fake_llm: FakeLLMServer) -> tuple[AssistantAgent, UserProxyAgent]:
    """An assistant on the fake model and a user proxy that runs its tools."""
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
    return assistant, user


def tool_results(request: dict[str, Any]) -> list[str]:
    """The tool messages' contents in a request the model received."""
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by its parent) counts as gone.
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ")[-1].startswith("Z"))


def wait_for(condition: Any, timeout: float = 15.0, what: str = "a condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.02)


class HttpServer:
    """The demo server over streamable HTTP (or, with ``transport="sse"``, the older HTTP+SSE
    transport) on a fixed port: start, kill and start again."""

    def __init__(self, env: dict[str, str] | None = None, transport: str = "http") -> None:
        self.port = free_port()
        self.transport = transport
        path = "sse" if transport == "sse" else "mcp"
        self.url = f"http://127.0.0.1:{self.port}/{path}"
        self.env = {**os.environ, **(env or {})}
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, SCRIPT, self.transport, str(self.port)],
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

        def answers() -> bool:
            assert self.process is not None
            if self.process.poll() is not None:
                raise AssertionError(f"the MCP server exited with {self.process.returncode}")
            try:
                # The SSE endpoint streams: the response's head is enough.
                with httpx.stream("GET", self.url, timeout=1.0):
                    return True
            except httpx.TransportError:
                return False

        wait_for(answers, START_TIMEOUT, "the MCP server to answer")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


@contextmanager
def http_server(env: dict[str, str] | None = None, transport: str = "http") -> Iterator[HttpServer]:
    server = HttpServer(env, transport)
    server.start()
    try:
        yield server
    finally:
        server.kill()
