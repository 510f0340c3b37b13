"""Run a :class:`FakeLLMServer` as a process: ``python -m parley.testing.server``.

For notebooks, other languages and other processes::

    python -m parley.testing.server --port 0 --script replies.json

prints the port it listens on as the first line of standard output, then serves until
interrupted (SIGINT or SIGTERM). The script is a JSON list of answers, each a string (a text
reply) or an object: ``{"content": ..., "tool_calls": [...], "usage": {...}, "delay": 1}``,
``{"error": 429, "message": ..., "headers": {"Retry-After": "1"}}``, ``{"disconnect": true}``,
``{"malformed": "<body>"}``. It may also be an object ``{"replies": [...], "default": ...}``,
where ``default`` answers once the replies are used up.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .fake_server import FakeLLMServer

__all__ = ["FakeLLMServer", "load_script", "main"]


def load_script(path: str | Path) -> tuple[list[Any], Any]:
    """Read a JSON script file: returns (replies, default)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise SystemExit(f"cannot read fake LLM script {path}: {e}") from e
    if isinstance(data, list):
        return data, None
    if isinstance(data, dict) and set(data) <= {"replies", "default"}:
        replies = data.get("replies", [])
        if not isinstance(replies, list):
            raise SystemExit(f"{path}: 'replies' must be a list")
        return replies, data.get("default")
    raise SystemExit(
        f"{path}: a script is a JSON list of replies or {{'replies': [...], 'default': ...}}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m parley.testing.server",
        description=(
            "Serve scripted OpenAI chat (and legacy text) completions on loopback "
            "(see parley.testing)."
        ),
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="interface to bind (default: 127.0.0.1)"
    )
    parser.add_argument("--port", type=int, default=0, help="port; 0 picks a free one (default: 0)")
    parser.add_argument("--script", help="JSON file with the replies to give, in order")
    parser.add_argument("--default-reply", help="text reply to give once the script is used up")
    parser.add_argument("--api-key", help="require this key (Authorization: Bearer ...)")
    parser.add_argument(
        "--lenient", action="store_true", help="skip OpenAI's stricter request checks"
    )
    args = parser.parse_args(argv)

    replies, default = load_script(args.script) if args.script else ([], None)
    if args.default_reply is not None:
        default = args.default_reply
    try:
        server = FakeLLMServer(
            args.host, args.port, strict=not args.lenient, default=default, api_key=args.api_key
        )
        server.add(*replies)
    except (TypeError, ValueError) as e:
        raise SystemExit(f"invalid fake LLM script: {e}") from e

    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with server:
        print(server.port, flush=True)
        print(f"fake LLM serving at {server.base_url}", file=sys.stderr, flush=True)
        stop.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
