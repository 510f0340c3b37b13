"""The same tools two ways, for tests that check parley sees an MCP call like any tool call:
``append_note`` and ``explode`` of the demo MCP server (over stdio), or Python functions
registered with ``register_function`` that answer alike."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import parley
import parley.mcp

from ._servers import stdio_entry

KINDS = ("python", "mcp")
TOOLS = ["append_note", "explode"]
# A secret the MCP server gets in its environment: no log, span or usage record may show it.
SECRET = "mcp-SECRET-5c4b3a29d8e7"


def _calls_file(tmp: Path) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    return tmp / "append_note.calls"


@asynccontextmanager
async def note_tools(
    kind: str, caller: Any, executor: Any, tmp: Path
) -> AsyncIterator[Callable[[], int]]:
    """Register the tools of ``kind`` on the agents; yields how often ``append_note`` ran."""
    calls = _calls_file(tmp)

    def counted() -> int:
        return len(calls.read_text().splitlines()) if calls.exists() else 0

    if kind == "python":

        def append_note(text: str) -> str:
            with open(calls, "a") as f:
                f.write(text + "\n")
            return f"noted {text}"

        def explode(reason: str) -> str:
            raise ValueError(f"exploded: {reason}")

        for function, description in (
            (append_note, "Append a line to the notes."),
            (explode, "Always fails."),
        ):
            parley.register_function(
                function, caller=caller, executor=executor, description=description
            )
        yield counted
        return
    entry = stdio_entry(env={"MARK_DIR": str(tmp), "DEMO_TOKEN": SECRET})
    async with await parley.mcp.connect({"mcpServers": {"demo": entry}}) as toolkit:
        toolkit.register(caller=caller, executor=executor, include=TOOLS)
        yield counted
