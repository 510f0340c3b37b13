"""Starting ``parley mcp serve`` in a subprocess and talking to it with the SDK's client."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import IO

import httpx2
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from parley.testing import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = "tests/mcp/team.py"
# The bound on one MCP exchange, the served process's start included (Python, parley and the
# SDK importing on a loaded machine).
WAIT = 60.0


def serve_command(name: str, *options: str) -> list[str]:
    """``python -m parley mcp serve tests/mcp/team.py:NAME OPTIONS``."""
    return [sys.executable, "-m", "parley", "mcp", "serve", f"{SCRIPT}:{name}", *options]


def server_env(llm: FakeLLMServer | None, **extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **extra}
    if llm is not None:
        env["PARLEY_TEST_LLM_URL"] = llm.base_url
    return env


def run_serve(name: str, *options: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``parley mcp serve`` run to its end (for a refusal), its output captured."""
    return subprocess.run(
        serve_command(name, *options),
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
        stdin=subprocess.DEVNULL,
    )


@contextmanager
def serving(name: str, *options: str, env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    """``parley mcp serve`` running while the block runs, its stderr readable."""
    process = subprocess.Popen(
        serve_command(name, *options),
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(WAIT)
        finally:
            if process.poll() is None:
                process.kill()
            assert process.stderr is not None
            process.stderr.close()


def first_line(stream: IO[str] | None, timeout: float = WAIT) -> str:
    """The stream's next line, waited for at most ``timeout`` seconds ("" at its end)."""
    assert stream is not None
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    if not lines:
        raise TimeoutError(f"no line within {timeout}s")
    return lines[0]


@asynccontextmanager
async def stdio_session(name: str, llm: FakeLLMServer | None) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable,
        args=serve_command(name)[1:],
        env=server_env(llm),
        cwd=str(ROOT),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class HttpServer:
    """``parley mcp serve --transport http`` in a subprocess, ended when the block ends."""

    def __init__(self, name: str, llm: FakeLLMServer | None, token: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process = subprocess.Popen(
            serve_command(name, "--transport", "http", "--port", str(self.port)),
            cwd=ROOT,
            env=server_env(llm, PARLEY_MCP_TOKEN=token),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    def __enter__(self) -> HttpServer:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited: {self.process.stderr.read()!r}")  # type: ignore[union-attr]
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return self
            except OSError:
                time.sleep(0.05)  # polling for the port to open: bounded by the deadline
        raise TimeoutError("the MCP HTTP server did not start")

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        try:
            self.process.wait(WAIT)
        finally:
            if self.process.poll() is None:
                self.process.kill()
            assert self.process.stderr is not None
            self.process.stderr.close()


@asynccontextmanager
async def http_session(url: str, token: str) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=WAIT) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session
