"""The MCP server of ``mcp_tool_call.py``: one cheap tool, served over stdio by the SDK's
MCPServer (FastMCP), so that a call costs the protocol and little else."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("bench")


@server.tool(description="Add two integers.")
def add(a: int, b: int) -> int:
    return a + b


if __name__ == "__main__":
    server.run()
