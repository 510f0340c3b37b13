"""An MCP server for the client tests, written with the SDK's MCPServer (FastMCP).

Run as ``python demo_server.py stdio``, ``python demo_server.py http PORT`` or
``python demo_server.py sse PORT`` (the older HTTP+SSE transport, at ``/sse``). ``MARK_DIR``
(an environment variable) names a folder where the slow tool records what happened to it,
so a test can see a cancellation arrive on the server's side, and where ``append_note`` and
``save_note`` count their calls (a line each in ``NAME.calls``); while a file ``hold`` is
there, those two wait before they answer, so a test can kill their caller mid-call.
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys
from pathlib import Path
from typing import Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Audio, Image
from mcp.types import ToolAnnotations
from pydantic import BaseModel

# A 1x1 PNG.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)

server = MCPServer("demo")


class Total(BaseModel):
    total: int
    unit: str


def _mark(name: str) -> None:
    folder = os.environ.get("MARK_DIR")
    if folder:
        Path(folder, name).write_text(str(os.getpid()))


@server.tool(description="Add two integers.")
def add(a: int, b: int = 1) -> int:
    return a + b


@server.tool(description="Sum items in a unit.")
def total(items: list[int], unit: Literal["m", "km"] = "m") -> Total:
    return Total(total=sum(items), unit=unit)


@server.tool(description="Always fails.")
def explode(reason: str) -> str:
    raise ToolError(f"exploded: {reason}")


@server.tool(description="Sleeps for a while.")
async def slow(seconds: float) -> str:
    _mark("slow-started")
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        _mark("slow-cancelled")
        raise
    return "done"


def _count(tool: str, text: str) -> None:
    folder = os.environ.get("MARK_DIR")
    if folder:
        # The pid first: a test that sees the call counted reads it next.
        _mark(f"{tool}-started")
        with open(Path(folder, f"{tool}.calls"), "a") as calls:
            calls.write(text + "\n")


def _holding() -> bool:
    folder = os.environ.get("MARK_DIR")
    return bool(folder) and Path(folder, "hold").exists()


async def _count_and_hold(tool: str, text: str) -> None:
    _count(tool, text)
    for _ in range(3000):  # at most a minute: a test that forgot its hold file still ends
        if not _holding():
            return
        await asyncio.sleep(0.02)


# No annotations: the MCP default, a tool that is not idempotent.
@server.tool(description="Append a line to the notes.")
async def append_note(text: str) -> str:
    await _count_and_hold("append_note", text)
    return f"noted {text}"


@server.tool(
    description="Save the note, replacing the saved one.",
    annotations=ToolAnnotations(idempotent_hint=True, destructive_hint=False),
)
async def save_note(text: str) -> str:
    await _count_and_hold("save_note", text)
    return f"saved {text}"


@server.tool(description="Report the trace context the request carried (W3C traceparent).")
def traceparent(ctx: Context) -> str:
    meta = ctx.request_context.meta or {}
    return str(meta.get("traceparent", ""))


@server.tool(description="Report the server's pid.")
def pid() -> int:
    return os.getpid()


@server.tool(description="Report an environment variable.")
def getenv(name: str) -> str:
    return os.environ.get(name, "<unset>")


@server.tool(description="Report a header of the HTTP request that carried the call.")
def header(name: str, ctx: Context) -> str:
    request = ctx.request_context.request
    return "<no HTTP request>" if request is None else request.headers.get(name, "<unset>")


@server.tool(description="A tiny picture.")
def picture() -> Image:
    return Image(data=PIXEL, format="png")


@server.tool(description="A captioned picture, a sound and a drawing.", structured_output=False)
def album():  # type: ignore[no-untyped-def]  # no return annotation: content blocks only
    return [
        "the pixel:",
        Image(data=PIXEL, format="png"),
        Audio(data=b"RIFF\x24\x00\x00\x00WAVE", format="wav"),
        Image(data=b"<svg xmlns='http://www.w3.org/2000/svg'/>", format="svg+xml"),
    ]


@server.resource("notes://today", description="Today's notes.")
def notes() -> str:
    return "buy milk"


@server.prompt(description="Ask for a review.")
def review(language: str, code: str) -> str:
    return f"Review this {language} code:\n{code}"


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run()
    elif sys.argv[1] == "sse":
        server.run("sse", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
