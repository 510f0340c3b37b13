"""The ``parley`` command.

``parley demo`` sends one coding question through the real ``openai`` client: to the model
named by an ``OAI_CONFIG_LIST`` (``--config FILE``, the ``OAI_CONFIG_LIST`` environment variable
holding JSON or a file name, or a file of that name in the current folder) when there is one,
otherwise to a scripted :class:`parley.testing.FakeLLMServer` on loopback. Later work turns
it into a two-agent chat on a local model.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["main"]

QUESTION = "Write a Python function that returns the n-th Fibonacci number, and print fib(10)."
SCRIPTED_ANSWER = """Here is an iterative version:

```python
def fib(n: int) -> int:
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a

print(fib(10))
```

TERMINATE"""


def _find_config(explicit: str | None) -> tuple[list[dict[str, Any]], str] | None:
    if explicit is not None:
        source = explicit
    elif os.environ.get("OAI_CONFIG_LIST"):
        source = os.environ["OAI_CONFIG_LIST"]
    elif Path("OAI_CONFIG_LIST").is_file():
        source = "OAI_CONFIG_LIST"
    else:
        return None
    path = Path(source)
    try:
        text = path.read_text(encoding="utf-8") if path.is_file() else source
        configs = json.loads(text)
    except (OSError, ValueError) as e:
        raise SystemExit(
            f"OAI_CONFIG_LIST {source!r} is neither a readable JSON file nor JSON: {e}"
        ) from e
    if (
        not isinstance(configs, list)
        or not configs
        or not all(isinstance(c, dict) and "model" in c for c in configs)
    ):
        raise SystemExit(
            f"OAI_CONFIG_LIST {source!r} must be a non-empty JSON list of objects with a 'model'"
        )
    return configs, ("file " + str(path)) if path.is_file() else "the OAI_CONFIG_LIST variable"


def _ask(config: dict[str, Any], question: str) -> tuple[str, Any]:
    from openai import OpenAI  # lazy: `import parley` stays light

    client = OpenAI(
        api_key=config.get("api_key") or "none", base_url=config.get("base_url"), max_retries=1
    )
    try:
        response = client.chat.completions.create(
            model=config["model"],
            messages=[
                {"role": "system", "content": "You are a helpful coding assistant."},
                {"role": "user", "content": question},
            ],
        )
    finally:
        client.close()
    return response.choices[0].message.content or "", response.usage


def demo(config_path: str | None) -> int:
    found = _find_config(config_path)
    print(f"user (to assistant):\n\n{QUESTION}\n\n{'-' * 80}")
    started = time.perf_counter()
    if found is not None:
        configs, where = found
        print(f"[parley] asking model {configs[0]['model']!r} from {where}", file=sys.stderr)
        answer, usage = _ask(configs[0], QUESTION)
    else:
        from .testing import FakeLLMServer

        print(
            "[parley] no OAI_CONFIG_LIST found: answering from parley.testing.FakeLLMServer "
            "(a scripted OpenAI-compatible server on loopback)",
            file=sys.stderr,
        )
        with FakeLLMServer() as server:
            server.add_reply(SCRIPTED_ANSWER)
            answer, usage = _ask(server.config_list()[0], QUESTION)
    elapsed = time.perf_counter() - started
    print(f"assistant (to user):\n\n{answer}\n\n{'-' * 80}")
    tokens = (
        f"{usage.prompt_tokens} prompt + {usage.completion_tokens} completion tokens"
        if usage
        else "usage unknown"
    )
    print(f"[parley] one round trip in {elapsed:.2f} s, {tokens}", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="parley", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo_parser = sub.add_parser("demo", help="ask a coding question through parley's model path")
    demo_parser.add_argument(
        "--config", help="an OAI_CONFIG_LIST file to use instead of the fake model"
    )
    args = parser.parse_args(argv)
    assert args.command == "demo"  # argparse refuses any other
    return demo(args.config)
