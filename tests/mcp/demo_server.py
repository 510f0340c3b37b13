"""An MCP server for the client tests, written with the SDK's MCPServer (FastMCP).

Run as ``python demo_server.py stdio`` or ``python demo_server.py http PORT``. ``MARK_DIR``
(an environment variable) names a folder where the slow tool records what happened to it,
so a test can see a cancellation arrive on the server's side.
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys
from pathlib import Path
from typing import Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
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


@server.tool(description="Report the server's pid.")
def pid() -> int:
    return os.getpid()


@server.tool(description="Report an environment variable.")
def getenv(name: str) -> str:
    return os.environ.get(name, "<unset>")


@server.tool(description="A tiny picture.")
def picture() -> Image:
    return Image(data=PIXEL, format="png")


@server.resource("notes://today", description="Today's notes.")
def notes() -> str:
    return "buy milk"


@server.prompt(description="Ask for a review.")
def review(language: str, code: str) -> str:
    return f"Review this {language} code:\n{code}"


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run()
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
