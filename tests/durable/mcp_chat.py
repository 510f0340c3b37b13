"""A durable two-agent chat whose executor runs a tool of the demo MCP server
(``tests/mcp/demo_server.py``, over stdio), and the script that runs it in a child process.

``python -m tests.durable.mcp_chat CONFIG_LIST_JSON TMP TOOL IDEMPOTENT_JSON`` starts the chat
with the store ``TMP/chats.db``; the server counts each call of TOOL in ``TMP/marks`` (see
the demo server), so a test can kill this process while the tool runs (with
``TMP/marks/hold``), then resume the chat in its own process.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import parley.mcp
from parley import AssistantAgent, UserProxyAgent
from parley.durable import ChatStore, a_resume

from ..mcp._servers import stdio_entry

CHAT_ID = "mcp-chat"
ARGUMENTS = {"text": "hi"}


def task(tool: str) -> str:
    return f"Use {tool}."


def respond(body: dict[str, Any]) -> Any:
    """The model: call the tool the task names, once; then end the chat."""
    messages = body["messages"]
    first = next(str(m.get("content")) for m in messages if m.get("role") == "user")
    tool = first.removeprefix("Use ").removesuffix(".")
    if not any(m.get("role") == "tool" for m in messages):
        return {"tool_calls": [{"name": tool, "arguments": ARGUMENTS, "id": "call_1"}]}
    return "TERMINATE"


def marks(tmp: Path) -> Path:
    folder = tmp / "marks"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def calls(tmp: Path, tool: str) -> int:
    """How often the server ran ``tool``."""
    path = marks(tmp) / f"{tool}.calls"
    return len(path.read_text().splitlines()) if path.exists() else 0


def mcp_config(tmp: Path, **env: str) -> dict[str, Any]:
    return {"mcpServers": {"demo": stdio_entry(env={"MARK_DIR": str(marks(tmp)), **env})}}


@dataclass
class Chat:
    user: UserProxyAgent
    assistant: AssistantAgent
    tool: str

    async def run(self, store: Any) -> Any:
        return await self.user.a_initiate_chat(
            self.assistant, message=task(self.tool), store=store, chat_id=CHAT_ID, silent=True
        )

    async def resume(self, store: Any, **kw: Any) -> Any:
        return await a_resume(
            CHAT_ID, store=store, sender=self.user, recipient=self.assistant, **kw
        )


@asynccontextmanager
async def mcp_chat(
    config_list: list[dict[str, Any]],
    tmp: Path,
    tool: str,
    idempotent: Any = None,
    human_input_mode: str = "NEVER",
) -> AsyncIterator[Chat]:
    """The chat's agents, as a script builds them (again, to resume), with the demo server's
    ``tool`` registered (``idempotent`` as ``MCPToolkit.register`` takes it)."""
    assistant = AssistantAgent(
        "assistant", llm_config={"config_list": config_list, "cache_seed": None}
    )
    user = UserProxyAgent(
        "user",
        human_input_mode=human_input_mode,  # type: ignore[arg-type]
        code_execution_config=False,
        is_termination_msg=lambda m: "TERMINATE" in str(m.get("content") or ""),
    )
    async with await parley.mcp.connect(mcp_config(tmp)) as toolkit:
        toolkit.register(caller=assistant, executor=user, include=[tool], idempotent=idempotent)
        yield Chat(user, assistant, tool)


async def main(argv: list[str]) -> None:
    config_list, tmp, tool = json.loads(argv[1]), Path(argv[2]), argv[3]
    async with mcp_chat(config_list, tmp, tool, json.loads(argv[4])) as chat:
        await chat.run(ChatStore(tmp / "chats.db"))


if __name__ == "__main__":
    asyncio.run(main(sys.argv))
