"""How long ``import parley`` takes, against ``import autogen`` (pyautogen 0.2.35), same run.

    python benchmarks/import_time.py [--autogen PATH/TO/venv/bin/python] [--rounds 7]

Each measurement runs in a fresh interpreter and times the statements alone (the interpreter's
own start-up is not counted); the median of the rounds is reported. Two measurements per
package:

* ``import``: the import statement itself. parley imports its public names on first access,
  so this is the price of a program that only imports it.
* ``first chat``: the import plus the names a two-agent chat touches (the agent classes and
  ``config_list_from_json``), i.e. everything loaded before the first message is sent.
  AutoGen imports it all eagerly, so for AutoGen both numbers are the same work.

Also lists which heavy packages each measurement pulled in.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

HEAVY = [
    "openai",
    "httpx",
    "docker",
    "redis",
    "diskcache",
    "pydantic",
    "jinja2",
    "numpy",
    "tiktoken",
]
FIRST_CHAT = (
    "{module}.AssistantAgent, {module}.UserProxyAgent, {module}.ConversableAgent, "
    "{module}.config_list_from_json"
)
SNIPPET = """
import json, sys, time
t = time.perf_counter()
{statements}
elapsed = time.perf_counter() - t
print(json.dumps([elapsed, [m for m in {heavy!r} if m in sys.modules]]))
"""


def measure(python: str, statements: str, rounds: int) -> tuple[float, list[str]]:
    samples = []
    loaded: list[str] = []
    for _ in range(rounds):
        out = subprocess.run(
            [python, "-W", "ignore", "-c", SNIPPET.format(statements=statements, heavy=HEAVY)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        elapsed, loaded = json.loads(out.strip().splitlines()[-1])
        samples.append(elapsed)
    return statistics.median(samples), loaded


def report(label: str, python: str, module: str, rounds: int) -> tuple[float, float]:
    imported, imported_heavy = measure(python, f"import {module}", rounds)
    chat, chat_heavy = measure(
        python, f"import {module}\n{FIRST_CHAT.format(module=module)}", rounds
    )
    print(f"{label}  import:     {imported * 1000:7.1f} ms  (heavy: {imported_heavy or 'none'})")
    print(f"{label}  first chat: {chat * 1000:7.1f} ms  (heavy: {chat_heavy or 'none'})")
    return imported, chat


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--autogen", help="python of a venv with pyautogen==0.2.35 installed")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    ours = report("parley ", sys.executable, "parley", args.rounds)
    if args.autogen:
        theirs = report("autogen", args.autogen, "autogen", args.rounds)
        print(
            f"ratio: parley takes {ours[0] / theirs[0]:.3f} of AutoGen 0.2's import time, "
            f"{ours[1] / theirs[1]:.3f} of its time to the first chat"
        )


if __name__ == "__main__":
    main()
