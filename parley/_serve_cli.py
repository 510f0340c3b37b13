"""``parley serve [--host H] [--port P] [--open] [--exit] SCRIPT [ARGS...]``: run a Python
script with a web page as its human (``parley.web``).

The page starts first (loopback and a free port unless told otherwise) and its address, with
its access token, is printed to stderr. The script then runs as ``python SCRIPT ARGS`` would
run it (``__main__``, its ``sys.argv``, its folder first on ``sys.path``) with the page as the
process-wide ``IOStream``: an unchanged AutoGen-style script prints to the page (and to the
terminal) and its ``human_input_mode`` prompts are answered there. When the script ends the
page stays up, showing the finished chats, until Ctrl-C; ``--exit`` leaves at once. The exit
status is the script's (130 after a Ctrl-C while it ran).
"""

from __future__ import annotations

import argparse
import runpy
import sys
import threading
import traceback
import webbrowser
from pathlib import Path
from typing import Any

__all__ = ["add_parser", "run"]

_INTERRUPTED = 130


def _status(text: str) -> None:
    print(f"[parley] {text}", file=sys.stderr, flush=True)


def add_parser(sub: Any) -> None:
    """Add ``serve`` to the ``parley`` command's subcommands."""
    parser = sub.add_parser(
        "serve",
        help="run a Python script with a web page as its human (answers, approvals, stop)",
        description=(__doc__ or "").split("\n\n")[1] if __doc__ else None,
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to serve on (default 127.0.0.1: this machine only; another address "
        "lets anyone who has the link answer your chats)",
    )
    parser.add_argument("--port", type=int, default=0, help="the port (default: a free one)")
    parser.add_argument("--open", action="store_true", help="open the page in a web browser")
    parser.add_argument(
        "--exit",
        action="store_true",
        help="stop serving when the script ends (default: keep the page up until Ctrl-C)",
    )
    parser.add_argument("script", help="the Python script to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")


def run(args: argparse.Namespace) -> int:
    """Carry out ``parley serve ...``; the exit code."""
    script = Path(args.script)
    if not script.is_file():
        print(f"parley serve: {args.script}: no such file", file=sys.stderr)
        return 2
    try:
        from . import web
    except ImportError as error:
        print(f"parley serve: {error}", file=sys.stderr)
        return 1
    try:
        human = web.serve(args.host, args.port)
    except OSError as error:
        print(f"parley serve: cannot serve on {args.host}:{args.port}: {error}", file=sys.stderr)
        return 1
    with human:
        _status(f"the page for the human: {human.url}")
        if args.open:
            webbrowser.open(human.url)
        try:
            with human.attach_globally(echo=True):
                code = _run_script(script, list(args.args))
        except KeyboardInterrupt:
            _status("interrupted")
            return _INTERRUPTED
        if not args.exit:
            # The message is inside: a Ctrl-C right after it (once the user reads it) is the
            # one this waits for, not an error.
            try:
                _status("the script has ended; the page stays up until Ctrl-C (--exit: don't wait)")
                threading.Event().wait()
            except KeyboardInterrupt:
                pass
    return code


def _run_script(script: Path, argv: list[str]) -> int:
    """Run ``script`` as ``python script argv...`` would; its exit status."""
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [str(script), *argv]
    sys.path.insert(0, str(script.resolve().parent))
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            return stop.code or 0
        print(stop.code, file=sys.stderr)
        return 1
    except Exception:
        traceback.print_exc()
        return 1
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path
    return 0
