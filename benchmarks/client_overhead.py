"""Per-call client overhead at 10/100/400 messages: parley's OpenAIWrapper vs openai's create.

    python benchmarks/client_overhead.py [--calls 30]

Both talk to the same parley.testing.FakeLLMServer on loopback (caching off, no retries), so
the difference is what each client spends building and sending the request and reading the
reply. ``openai create`` is ``OpenAI().chat.completions.create(...)``, the path AutoGen 0.2
takes; ``openai post`` is the SDK's lower-level request path that parley uses, called bare, as
the floor. With ``--autogen PYTHON`` (a venv's python with pyautogen==0.2.35) it also times
AutoGen 0.2's OpenAIWrapper in that interpreter, in the same run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import openai
from openai.types.chat import ChatCompletion

from parley.oai import OpenAIWrapper
from parley.testing import FakeLLMServer

SIZES = (10, 100, 400)


def conversation(n: int) -> list[dict[str, Any]]:
    text = "Here is some text of an ordinary length for one chat turn, about two lines long. " * 3
    roles = ("user", "assistant")
    return [{"role": "system", "content": "You are helpful."}] + [
        {"role": roles[i % 2], "content": f"{i}: {text}", "name": f"agent_{i % 2}"}
        for i in range(n - 1)
    ]


def timed(fn: Callable[[], Any], calls: int) -> float:
    fn()  # warm up: connection, imports
    samples = []
    for _ in range(calls):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples) * 1000


AUTOGEN_SNIPPET = """
import json, statistics, sys, time
import autogen
base_url, sizes, calls = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
sys.path.insert(0, sys.argv[4])
from client_overhead import conversation
config = {"model": "gpt-4", "base_url": base_url, "api_key": "k"}
client = autogen.OpenAIWrapper(config_list=[config], cache_seed=None)
out = {}
for n in sizes:
    messages = conversation(n)
    client.create(messages=messages)
    samples = []
    for _ in range(calls):
        t = time.perf_counter()
        client.create(messages=messages)
        samples.append(time.perf_counter() - t)
    out[n] = statistics.median(samples) * 1000
print(json.dumps(out))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--autogen", help="python of a venv with pyautogen==0.2.35 installed")
    args = parser.parse_args()
    with FakeLLMServer(default="ok") as server:
        wrapper = OpenAIWrapper(config_list=server.config_list(model="gpt-4"), cache_seed=None)
        sdk = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        autogen: dict[str, float] = {}
        if args.autogen:
            here = str(__import__("pathlib").Path(__file__).parent)
            proc = subprocess.run(
                [
                    args.autogen,
                    "-c",
                    AUTOGEN_SNIPPET,
                    server.base_url,
                    json.dumps(SIZES),
                    str(args.calls),
                    here,
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            autogen = json.loads(proc.stdout.strip().splitlines()[-1])
        columns = ("parley", "openai create", "openai post", "autogen 0.2")
        print(f"{'messages':>8} " + " ".join(f"{c:>14}" for c in columns))
        for n in SIZES:
            messages = conversation(n)
            ours = timed(lambda m=messages: wrapper.create(messages=m), args.calls)  # type: ignore[misc]
            create = timed(
                lambda m=messages: sdk.chat.completions.create(model="gpt-4", messages=m),  # type: ignore[misc]
                args.calls,
            )
            post = timed(
                lambda m=messages: sdk.post(  # type: ignore[misc]
                    "/chat/completions",
                    body={"model": "gpt-4", "messages": m},
                    cast_to=ChatCompletion,
                    options={"security": {"bearer_auth": True}},
                ),
                args.calls,
            )
            ag = autogen.get(str(n))
            ag_text = f"{ag:12.2f}ms" if ag is not None else f"{'-':>14}"
            print(f"{n:>8} {ours:12.2f}ms {create:12.2f}ms {post:12.2f}ms {ag_text}")
            if ag is not None:
                print(f"{'':>8} parley is {ag / ours:.1f}x faster than AutoGen 0.2 here")
        sdk.close()
    sys.stdout.flush()


if __name__ == "__main__":
    main()
