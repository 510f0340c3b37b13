"""Serve parley agents and chats over MCP (``parley mcp serve SCRIPT:NAME``, or :func:`serve`).

What can be served (``target``):

- an agent (a ``ConversableAgent``): each function registered on it for execution
  (``register_for_execution``, ``register_function(..., executor=agent)``) becomes an MCP tool.
  Its input schema is the one the agent's own ``llm_config`` gives the model when the agent is
  also the function's caller, otherwise the one ``register_for_llm`` would make. A call runs
  through the agent's tool path (argument checks, reports, durable journal); an error the
  function raises comes back as an error result the client's model can read; a function that
  returns image content parts (website/docs/tutorial/tools.md) answers with image blocks;
- a chat, served as ONE tool whose input is ``{"task": "..."}`` and whose result is the chat's
  summary (``ChatResult.summary``) as text, with structured content ``summary``, ``messages``
  (the history's length), ``termination_reason`` and ``cost``. A chat is described as

  - a ``GroupChatManager``: the group's first agent sends the task to the manager;
  - ``(sender, recipient)`` or ``(sender, recipient, kwargs)``: ``sender.a_initiate_chat(recipient,
    message=task, **kwargs)`` (``max_turns``, ``summary_method``...); the recipient may be a
    manager;
  - ``(sender, [chat, ...])``: sequential chats, as ``sender.initiate_chats(chats)`` runs them
    (in order, each carrying the earlier summaries), with the task as the first chat's
    message; the result is the last chat's summary;
  - a callable (sync or async) returning one of those, called for every tool call: each call
    gets fresh agents, so calls run concurrently. A chat given directly reuses its agents,
    so its calls run one at a time. The tool's description is the callable's docstring.

While a chat runs, the client receives a progress notification per message (``sender ->
receiver: text``) when it asked for progress. Cancelling the call (the client gives up)
cancels the chat: its model calls in flight are abandoned and no further turns start (a
synchronous tool already running in a worker thread finishes, its result unused). Chats
should not ask a human (``human_input_mode="NEVER"``): stdin is the protocol's.

Transports: ``stdio`` (the default) and ``http`` (MCP's streamable HTTP at ``/mcp``). HTTP
binds 127.0.0.1 unless told otherwise and refuses an address other machines can reach unless
``allow_remote=True`` (``--allow-remote``). It requires a bearer token: ``token``, else the
``PARLEY_MCP_TOKEN`` environment variable, else one generated and printed to stderr; a request
without it gets 401. The token is checked by the SDK's bearer-auth middleware.
"""

from __future__ import annotations

import os
import secrets
import sys
from typing import TYPE_CHECKING, Any, Literal

from .._core.runtime import run_sync
from .._net import is_loopback
from ._targets import Outcome, ServedTool, served_tools, unanswerable_approvals

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

__all__ = ["TOKEN_ENV", "a_serve", "make_server", "serve"]

INSTALL_HINT = "pip install 'parley[mcp]'"
TOKEN_ENV = "PARLEY_MCP_TOKEN"
"""The environment variable holding the HTTP transport's bearer token."""

Transport = Literal["stdio", "http"]


def _sdk() -> Any:
    try:
        import mcp_types
        from mcp.server.lowlevel import Server
    except ImportError as e:
        raise ImportError(
            f"serving over MCP needs the official MCP SDK ({e}): {INSTALL_HINT}", name=e.name
        ) from e
    return Server, mcp_types


def make_server(
    target: Any, name: str = "chat", *, description: str | None = None, server_name: str = "parley"
) -> Server[Any]:
    """An MCP server (the SDK's low-level ``Server``) offering ``target``'s tools (see the
    module docstring); ``name`` names a chat's tool. Run it with :func:`a_serve`, or with the
    SDK's transports yourself."""
    server_cls, types = _sdk()
    tools = {tool.name: tool for tool in served_tools(target, name, description)}

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=t.name,
                    description=t.description,
                    input_schema=t.input_schema,
                    output_schema=t.output_schema,
                )
                for t in tools.values()
            ]
        )

    async def call_tool(ctx: Any, params: Any) -> Any:
        tool = tools.get(params.name)
        if tool is None:
            return _result(types, Outcome(f"no tool named {params.name!r}", is_error=True))
        arguments = dict(params.arguments or {})
        if not tool.is_chat:
            return _result(types, await tool.call(arguments))
        return _result(types, await _with_progress(ctx, tool, arguments))

    server: Server[Any] = server_cls(server_name, on_list_tools=list_tools, on_call_tool=call_tool)
    return server


async def _with_progress(ctx: Any, tool: ServedTool, arguments: dict[str, Any]) -> Outcome:
    from ._progress import watch_messages

    async def report(count: int, line: str) -> None:
        await ctx.session.report_progress(count, None, line)

    async with watch_messages(report):
        return await tool.call(arguments)


def _result(types: Any, outcome: Outcome) -> Any:
    if outcome.parts is None:
        content = [types.TextContent(type="text", text=outcome.text)]
    else:
        content = [_block(types, part) for part in outcome.parts]
    return types.CallToolResult(
        content=content,
        structured_content=outcome.structured,
        is_error=outcome.is_error,
    )


def _block(types: Any, part: Any) -> Any:
    """A content part of a result with images as an MCP block: an inline image as an image
    block, an image URL and text as text."""
    if part.get("type") != "image_url":
        return types.TextContent(type="text", text=str(part.get("text", "")))
    url = str(part["image_url"]["url"])
    head, _, data = url.partition(",")
    if head.startswith("data:") and head.endswith(";base64"):
        return types.ImageContent(type="image", data=data, mime_type=head[5:-7])
    return types.TextContent(type="text", text=f"[image: {url}]")


# -- running ----------------------------------------------------------------------------------


def _status(text: str) -> None:
    print(f"[parley] {text}", file=sys.stderr, flush=True)


async def a_serve(
    target: Any,
    name: str = "chat",
    *,
    transport: Transport = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    token: str | None = None,
    allow_remote: bool = False,
    description: str | None = None,
) -> None:
    """Serve ``target`` over MCP until the client leaves (stdio) or the task is cancelled
    (HTTP); see the module docstring."""
    if transport == "http" and not is_loopback(host) and not allow_remote:
        raise ValueError(
            f"refusing to serve MCP on {host!r}, which other machines can reach: serve on "
            "127.0.0.1, or pass allow_remote=True (--allow-remote) if you mean it"
        )
    if transport not in ("stdio", "http"):
        raise ValueError(f"unknown MCP transport {transport!r}: use 'stdio' or 'http'")
    if transport == "stdio" and (waiting := unanswerable_approvals(target)):
        raise ValueError(
            f"the functions {waiting} need a human's approval, and over stdio nobody can give "
            "it (stdin carries the protocol): register a review function on the agent "
            "(agent.register_human_review) or serve over HTTP"
        )
    server = make_server(target, name, description=description)
    if transport == "stdio":
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
        return
    from ._http import serve_http

    secret = token or os.environ.get(TOKEN_ENV) or ""
    if not secret:
        secret = secrets.token_urlsafe(32)
        _status(f"MCP bearer token (set {TOKEN_ENV} to choose one): {secret}")
    await serve_http(server, host, port, secret, _status)


def serve(target: Any, name: str = "chat", **options: Any) -> None:
    """:func:`a_serve`, blocking (for a script: ``parley.mcp.serve(manager, "research")``)."""
    run_sync(a_serve(target, name, **options))
