"""Message transforms over a long history: parley against AutoGen 0.2.35, same run.

    python benchmarks/transforms.py                                  # parley only
    python benchmarks/transforms.py --autogen /tmp/agvenv/bin/python # parley and AutoGen
    PYTHONPATH=/path/to/checkout python benchmarks/transforms.py     # that checkout's parley

The history has ``--messages`` (10 000) messages as an agent stores them: user and assistant
turns of 20 to 80 words, and every tenth turn a tool call with its stored result (a message with
``tool_responses``). Each case is applied ``--runs`` times; the table shows the median.

* ``token limiter``: ``MessageTokenLimiter(max_tokens=1000, max_tokens_per_message=50)`` (the
  AutoGen notebook's limits), ``apply_transform``;
* ``token limiter, min_tokens=500``: the same with the notebook's ``min_tokens``;
* ``history limiter``: ``MessageHistoryLimiter(max_messages=10)``;
* ``TransformMessages, both``: history limiter (100 messages) then token limiter, through the
  capability's hook function, ``verbose=False``; ``verbose`` adds the log lines (printed to a
  null stream);
* ``TransformMessages, tokens, verbose``: the token limiter alone with its log line, which counts
  the tokens of the whole history (the worst case: every message encoded).

parley remembers token counts per text, so a chat's history is counted once, not once per
turn. ``cold`` forgets them before every run (the first transform of a chat); ``warm`` keeps
them (every later turn). AutoGen counts everything every time.

AutoGen runs in a subprocess of its venv's interpreter (this file with ``--worker``). Its
tiktoken would download the ``cl100k_base`` vocabulary; the driver writes parley's shipped copy
(the same bytes, checked by SHA-256) into a private ``TIKTOKEN_CACHE_DIR`` under the name
tiktoken looks for, so nothing is downloaded.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import io
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

WORDS = [
    "the",
    "archive",
    "lists",
    "harbour",
    "records",
    "ships",
    "cargo",
    "dates",
    "names",
    "of",
    "captains",
    "and",
    "the",
    "weather",
    "of",
    "each",
    "crossing",
    "with",
    "notes",
    "on",
    "delays",
    "repairs",
    "and",
    "the",
    "prices",
    "paid",
    "for",
    "grain",
    "wool",
    "and",
    "salt",
]
CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"


def history(n: int, seed: int = 7) -> list[dict[str, Any]]:
    """``n`` stored messages: text turns and, every tenth turn, a tool call with its result."""
    rng = random.Random(seed)

    def text() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 80)))

    out: list[dict[str, Any]] = []
    i = 0
    while len(out) < n:
        i += 1
        if i % 10 == 0 and len(out) + 2 <= n:
            call_id = f"call_{i}"
            out.append(
                {
                    "role": "assistant",
                    "content": None,
                    "name": "assistant",
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": "lookup", "arguments": json.dumps({"q": i})},
                        }
                    ],
                }
            )
            result = text()
            out.append(
                {
                    "role": "tool",
                    "name": "user",
                    "content": result,
                    "tool_responses": [
                        {"role": "tool", "tool_call_id": call_id, "content": result}
                    ],
                }
            )
        else:
            role = "user" if i % 2 else "assistant"
            out.append({"role": role, "name": role, "content": text()})
    return out


def timed(fn: Callable[[], Any], runs: int, before: Callable[[], None] | None = None) -> float:
    """Median milliseconds of ``fn`` over ``runs`` calls (``before`` runs untimed first)."""
    samples = []
    for _ in range(runs):
        if before is not None:
            before()
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples) * 1000


def cases(module: Any, transform_messages: Any) -> dict[str, Callable[[], Any]]:
    """The timed cases, built from a package's ``transforms`` and ``transform_messages``."""

    def token_limiter(**extra: Any) -> Any:
        return module.MessageTokenLimiter(max_tokens=1000, max_tokens_per_message=50, **extra)

    def both(verbose: bool) -> Any:
        return transform_messages.TransformMessages(
            transforms=[module.MessageHistoryLimiter(max_messages=100), token_limiter()],
            verbose=verbose,
        )

    with contextlib.redirect_stdout(io.StringIO()):  # AutoGen prints the capping lines
        built = {
            "token limiter": token_limiter(),
            "token limiter, min_tokens=500": token_limiter(min_tokens=500),
            "history limiter": module.MessageHistoryLimiter(max_messages=10),
        }
        quiet, loud = both(False), both(True)
        counting = transform_messages.TransformMessages(transforms=[token_limiter()], verbose=True)
    messages = HISTORY
    out: dict[str, Callable[[], Any]] = {
        name: functools.partial(t.apply_transform, messages) for name, t in built.items()
    }
    out["TransformMessages, both"] = lambda: quiet._transform_messages(messages)

    def verbose() -> Any:
        with contextlib.redirect_stdout(io.StringIO()):
            return loud._transform_messages(messages)

    out["TransformMessages, both, verbose"] = verbose

    def whole() -> Any:
        with contextlib.redirect_stdout(io.StringIO()):
            return counting._transform_messages(messages)

    out["TransformMessages, tokens, verbose"] = whole
    return out


HISTORY: list[dict[str, Any]] = []


def run_autogen(runs: int) -> dict[str, float]:
    from autogen.agentchat.contrib.capabilities import (  # type: ignore[import-not-found]
        transform_messages,
        transforms,
    )

    todo = cases(transforms, transform_messages)
    for fn in todo.values():
        fn()  # warm up: tiktoken's encoding, imports
    return {name: timed(fn, runs) for name, fn in todo.items()}


def run_parley(runs: int) -> dict[str, tuple[float, float]]:
    from parley.agentchat.contrib.capabilities import _texts, transform_messages, transforms
    from parley.io import IOStream

    class Null(IOStream):
        def print(
            self, *objects: Any, sep: str = " ", end: str = "\n", flush: bool = False
        ) -> None:
            pass

        def input(self, prompt: str = "", *, password: bool = False) -> str:
            return ""

    out = {}
    with IOStream.set_default(Null()):
        todo = cases(transforms, transform_messages)
        for name, fn in todo.items():
            fn()  # warm up: the encoding, imports
            cold = timed(fn, runs, before=_texts._counts.clear)
            warm = timed(fn, runs)
            out[name] = (cold, warm)
    return out


def tiktoken_cache() -> str:
    """A TIKTOKEN_CACHE_DIR holding parley's cl100k_base under tiktoken's cache name."""
    from parley._tokenizer import _vocabulary_bytes

    folder = tempfile.mkdtemp(prefix="parley-bench-tiktoken-")
    name = hashlib.sha1(CL100K_URL.encode()).hexdigest()
    with open(os.path.join(folder, name), "wb") as f:
        f.write(_vocabulary_bytes("cl100k_base"))
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--autogen", help="python of a venv with pyautogen==0.2.35 installed")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    HISTORY[:] = history(args.messages)
    if args.worker:
        print(json.dumps(run_autogen(args.runs)))
        return
    theirs: dict[str, float] = {}
    if args.autogen:
        env = {**os.environ, "TIKTOKEN_CACHE_DIR": tiktoken_cache()}
        env.pop("PYTHONPATH", None)
        proc = subprocess.run(
            [
                args.autogen,
                __file__,
                "--worker",
                "--messages",
                str(args.messages),
                "--runs",
                str(args.runs),
            ],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        if proc.returncode != 0:
            print(
                f"AutoGen worker failed, compared with nothing:\n{proc.stderr[-2000:]}",
                file=sys.stderr,
            )
        else:
            theirs = json.loads(proc.stdout.strip().splitlines()[-1])
    ours = run_parley(args.runs)
    print(f"{args.messages} messages, median of {args.runs} runs (ms)")
    print(f"{'case':<36}{'parley cold':>12}{'parley warm':>12}{'autogen':>10}{'ratio':>9}")
    for name, (cold, warm) in ours.items():
        ag = theirs.get(name)
        ag_text = f"{ag:10.3f}" if ag is not None else f"{'-':>10}"
        ratio = f"{ag / cold:8.1f}x" if ag is not None and cold else f"{'-':>9}"
        print(f"{name:<36}{cold:12.3f}{warm:12.3f}{ag_text}{ratio}")
    if theirs:
        print("ratio: AutoGen's time over parley's cold time (how many times faster parley is)")


if __name__ == "__main__":
    main()
