"""How long ``import parley`` takes, against ``import autogen`` (pyautogen 0.2.35), same run.

    python benchmarks/import_time.py [--autogen PATH/TO/venv/bin/python] [--rounds 7]

Each import runs in a fresh interpreter; the median of the rounds is reported, minus the
interpreter's own start-up. Also lists which heavy packages each import pulled in.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

HEAVY = ["openai", "docker", "redis", "diskcache", "pydantic", "jinja2", "numpy", "tiktoken"]
SNIPPET = """
import json, sys, time
t = time.perf_counter()
import {module}
elapsed = time.perf_counter() - t
print(json.dumps([elapsed, [m for m in {heavy!r} if m in sys.modules]]))
"""


def measure(python: str, module: str, rounds: int) -> tuple[float, list[str]]:
    samples = []
    loaded: list[str] = []
    for _ in range(rounds):
        out = subprocess.run(
            [python, "-c", SNIPPET.format(module=module, heavy=HEAVY)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        elapsed, loaded = json.loads(out.strip().splitlines()[-1])
        samples.append(elapsed)
    return statistics.median(samples), loaded


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--autogen", help="python of a venv with pyautogen==0.2.35 installed")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    ours, ours_loaded = measure(sys.executable, "parley", args.rounds)
    print(f"import parley:  {ours * 1000:7.1f} ms  (heavy modules loaded: {ours_loaded or 'none'})")
    if args.autogen:
        theirs, theirs_loaded = measure(args.autogen, "autogen", args.rounds)
        print(f"import autogen: {theirs * 1000:7.1f} ms  (heavy modules loaded: {theirs_loaded})")
        print(f"ratio: parley takes {ours / theirs:.3f} of AutoGen 0.2's import time")


if __name__ == "__main__":
    main()
