"""MCP both ways (the ``mcp`` extra: ``pip install 'parley[mcp]'``): parley agents and chats
served as MCP tools (:mod:`parley.mcp.serve`, ``parley mcp serve``).

The SDK is imported only when a server is made, so ``import parley.mcp`` stays light.
"""

from __future__ import annotations

from .serve import TOKEN_ENV, a_serve, make_server, serve

__all__ = [
    "TOKEN_ENV",
    "a_serve",
    "make_server",
    "serve",
]
