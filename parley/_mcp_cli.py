"""``parley mcp serve SCRIPT:NAME [--transport stdio|http] [--host H] [--port P]
[--allow-remote] [--description TEXT]``: serve an agent's functions or a chat over MCP.

SCRIPT is run (not as ``__main__``: its ``if __name__ == "__main__":`` block is skipped, its
folder first on ``sys.path``) and NAME is one of its globals: an agent, a group chat's manager,
a ``(sender, recipient[, kwargs])`` or ``(sender, [chats])`` tuple, or a callable returning one
(see :mod:`parley.mcp.serve`). A chat is served as one tool named NAME. Over HTTP the bearer
token is ``$PARLEY_MCP_TOKEN``, or one generated and printed to stderr; the server's URL is
printed to stderr once it accepts connections, with the port bound (``--port 0``: a free one).
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Add ``mcp`` (with its ``serve`` subcommand) to the ``parley`` command's subcommands."""
    parser = sub.add_parser("mcp", help="serve parley agents and chats over MCP")
    mcp_sub = parser.add_subparsers(dest="mcp_command", required=True)
    serve = mcp_sub.add_parser(
        "serve",
        help="serve an agent's registered functions, or a chat as one tool, over MCP",
        description=(__doc__ or "").split("\n\n")[1] if __doc__ else None,
    )
    serve.add_argument("target", metavar="SCRIPT:NAME", help="a Python file and a name in it")
    serve.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    serve.add_argument("--host", default="127.0.0.1", help="HTTP address (default 127.0.0.1)")
    serve.add_argument(
        "--port",
        type=int,
        default=8000,
        help="HTTP port (default 8000; 0: any free port, printed on stderr)",
    )
    serve.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow an HTTP address other machines can reach (they still need the token)",
    )
    serve.add_argument("--description", help="the chat tool's description")


def _load(target: str) -> tuple[Any, str]:
    script, sep, name = target.rpartition(":")
    if not sep or not script or not name.isidentifier():
        raise SystemExit(f"parley mcp serve: {target!r} is not SCRIPT:NAME (e.g. team.py:chat)")
    path = Path(script)
    if not path.is_file():
        raise SystemExit(f"parley mcp serve: {script}: no such file")
    sys.path.insert(0, str(path.resolve().parent))
    namespace = runpy.run_path(str(path), run_name="__parley_mcp__")
    if name not in namespace:
        raise SystemExit(f"parley mcp serve: {script} defines no {name!r}")
    return namespace[name], name


def run(args: Any) -> int:
    """Carry out ``parley mcp serve ...``; the exit code."""
    assert args.mcp_command == "serve"  # argparse refuses any other
    obj, name = _load(args.target)
    try:
        from .mcp import serve
    except ImportError as error:
        print(f"parley mcp serve: {error}", file=sys.stderr)
        return 1
    try:
        serve(
            obj,
            name,
            transport=args.transport,
            host=args.host,
            port=args.port,
            allow_remote=args.allow_remote,
            description=args.description,
        )
    except (ValueError, TypeError) as error:
        print(f"parley mcp serve: {error}", file=sys.stderr)
        return 2
    except OSError as error:  # the address is taken, or not ours to bind
        print(f"parley mcp serve: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0
