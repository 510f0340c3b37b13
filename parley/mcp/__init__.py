"""MCP (the Model Context Protocol) in parley (the ``mcp`` extra: ``pip install 'parley[mcp]'``).

The client: connect to MCP servers from the ``mcpServers`` configuration Claude Desktop and
Cursor use (a dict or a JSON file), or from a ``mcp.ClientSession`` you opened, and register
their tools on agents like ``register_function`` (the caller's model proposes, the executor
runs)::

    async with await parley.mcp.connect("mcp.json") as toolkit:
        toolkit.register(caller=assistant, executor=user_proxy, prefix="fs_")
        await user_proxy.a_initiate_chat(assistant, message="...")

From sync code (a script, or a notebook cell that runs sync chats), connect with
:func:`connect_sync`: the connections then live on parley's background loop, where sync chats
run, and serve async callers on any loop as well::

    with parley.mcp.connect_sync("mcp.json") as toolkit:
        toolkit.register(caller=assistant, executor=user_proxy)
        user_proxy.initiate_chat(assistant, message="...")

A toolkit from :func:`connect` belongs to the event loop that made it: a sync chat started
from a coroutine on that loop (``initiate_chat`` in a notebook cell) blocks the loop, so its
tool calls fail with an error saying so; use ``await a_initiate_chat`` there, or
:func:`connect_sync`.

Resources and prompts are read as text (``toolkit.read_resource``, ``toolkit.get_prompt``) or
offered as tools (``register(..., resources_as_tools=True)``). Modules: ``_config`` (the
``mcpServers`` entries), ``_session`` (one connection: its owner task, reconnecting, closing),
``_toolkit`` (registration and calls), ``_results`` (answers as text).

The server: an agent's functions, or a whole chat as one tool, served over stdio or
streamable HTTP (:mod:`parley.mcp.serve`, ``parley mcp serve SCRIPT:NAME``).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from typing import Any

from .._core.runtime import run_sync
from . import _deps  # noqa: F401  (first: a missing SDK names the extra)
from ._config import ServerConfig, load_config
from ._session import Connection
from ._toolkit import MCPTool, MCPToolkit, tool_from_sdk
from .serve import TOKEN_ENV, a_serve, make_server, serve

__all__ = [
    "TOKEN_ENV",
    "MCPTool",
    "MCPToolkit",
    "ServerConfig",
    "a_serve",
    "connect",
    "connect_sync",
    "create_toolkit",
    "load_config",
    "make_server",
    "serve",
]


async def _listed(connection: Connection) -> list[MCPTool]:
    result = await connection.request("tools/list", lambda session: session.list_tools())
    return [tool_from_sdk(connection.name, tool) for tool in result.tools]


async def _toolkit(connections: list[Connection]) -> MCPToolkit:
    try:
        await asyncio.gather(*(c.open() for c in connections))
        listed = await asyncio.gather(*(_listed(c) for c in connections))
    except BaseException:
        await asyncio.gather(*(c.aclose() for c in connections), return_exceptions=True)
        raise
    return MCPToolkit(connections, [tool for tools in listed for tool in tools])


async def connect(
    config: Mapping[str, Any] | str | os.PathLike[str], *, errlog: Any = None
) -> MCPToolkit:
    """Connect to every server of an ``mcpServers`` config (a dict or a JSON file path) and
    list their tools. A stdio server runs with the SDK's minimal environment (``PATH``,
    ``HOME``, ...) plus its entry's ``env``; its stderr goes to ``errlog`` (default: discarded).
    Close the toolkit (``async with``, :meth:`MCPToolkit.aclose`) to end the servers."""
    servers = load_config(config)
    return await _toolkit([Connection(s.name, s, errlog=errlog) for s in servers])


def connect_sync(
    config: Mapping[str, Any] | str | os.PathLike[str], *, errlog: Any = None
) -> MCPToolkit:
    """:func:`connect`, blocking, for sync code (in a notebook too): the connections are
    owned by parley's background loop, so they outlive any ``asyncio.run`` and serve sync and
    async chats alike. Close the toolkit with ``with`` or :meth:`MCPToolkit.close`."""
    return run_sync(connect(config, errlog=errlog))


async def create_toolkit(session: Any, *, name: str | None = None) -> MCPToolkit:
    """A toolkit over a ``mcp.ClientSession`` you opened and initialised (AG2's name); it is
    used as it is: never reopened, and left open when the toolkit closes."""
    return await _toolkit([Connection(name or "mcp", session=session)])
