"""Framework time of a Responses-API turn against a chat-completions turn, in one run.

    python benchmarks/responses_overhead.py [--calls 40] [--model gpt-5-mini]

One ``OpenAIWrapper.create`` at 10, 100 and 400 messages through each API (``api_type``
unset and ``"responses"``) against the same parley.testing.FakeLLMServer on loopback (caching
off, no retries, strict mode off so that the two requests cost the server alike). The server's
time and the HTTP round trip are taken out by timing the same request sent bare, with the
openai SDK's lower-level request path (``OpenAI().post``) and a body built beforehand: the
floor under each API. Time is the process's CPU time per call (the server runs in this
process, and does the same work for a call and its floor, so the difference is the client's
work alone; CPU time, unlike wall time, does not count the waits a loaded machine adds), the
median of ``--calls`` rounds in which the four calls take turns. parley's framework time per API
is its median minus its floor's; the script prints both and their ratio (Responses / chat
completions), and exits 1 when the Responses turn costs more than ``--max-ratio`` times the
chat turn's framework time.

The default model, ``gpt-5-mini``, is a reasoning model: both paths fit the request to its
profile (``max_tokens``, ``temperature``, the system message) before sending it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import openai
from openai.types.chat import ChatCompletion
from openai.types.responses import Response

from parley.oai import OpenAIWrapper
from parley.testing import FakeLLMServer

SIZES = (10, 100, 400)
OPTIONS: Any = {"security": {"bearer_auth": True}}


def conversation(n: int) -> list[dict[str, Any]]:
    text = "Here is some text of an ordinary length for one chat turn, about two lines long. " * 3
    roles = ("user", "assistant")
    return [{"role": "system", "content": "You are helpful."}] + [
        {"role": roles[i % 2], "content": f"{i}: {text}"} for i in range(n - 1)
    ]


def bare_chat_body(model: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """What parley sends for the turn, written out by hand: the floor sends this."""
    fitted = [{**m, "role": "developer"} if m["role"] == "system" else m for m in messages]
    return {"model": model, "messages": fitted, "max_completion_tokens": 256}


def bare_responses_body(model: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "model": model,
        "instructions": messages[0]["content"],
        "input": [{"role": m["role"], "content": m["content"]} for m in messages[1:]],
        "max_output_tokens": 256,
        "store": False,
        "include": ["reasoning.encrypted_content"],
    }


def timed(fns: dict[str, Callable[[], Any]], calls: int) -> dict[str, float]:
    """Median CPU ms per call of each of ``fns``, called in turn ``calls`` times after a
    warm-up call each (connection, imports)."""
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for fn in fns.values():
        fn()
    for _ in range(calls):
        for name, fn in fns.items():
            t = time.process_time()
            fn()
            samples[name].append(time.process_time() - t)
    return {name: statistics.median(s) * 1000 for name, s in samples.items()}


def calls(
    chat: OpenAIWrapper,
    responses: OpenAIWrapper,
    sdk: openai.OpenAI,
    model: str,
    messages: list[dict[str, Any]],
) -> dict[str, Callable[[], Any]]:
    """The four calls of one turn: through parley and bare, on each API."""
    extra = {"max_tokens": 256, "temperature": 0}
    chat_body = bare_chat_body(model, messages)
    resp_body = bare_responses_body(model, messages)
    return {
        "chat": lambda: chat.create(messages=messages, **extra),
        "chat floor": lambda: sdk.post(
            "/chat/completions", body=chat_body, cast_to=ChatCompletion, options=OPTIONS
        ),
        "responses": lambda: responses.create(messages=messages, **extra),
        "responses floor": lambda: sdk.post(
            "/responses", body=resp_body, cast_to=Response, options=OPTIONS
        ),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--model", default="gpt-5-mini")
    parser.add_argument("--max-ratio", type=float, default=1.25)
    args = parser.parse_args()
    import logging

    logging.getLogger("parley.oai._profiles").setLevel(logging.ERROR)  # the one-off warnings
    model = args.model
    worst = 0.0
    with FakeLLMServer(default="ok", strict=False) as server:
        chat = OpenAIWrapper(config_list=server.config_list(model=model), cache_seed=None)
        responses = OpenAIWrapper(
            config_list=server.config_list(model=model, api_type="responses"), cache_seed=None
        )
        sdk = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        print(
            f"{'messages':>8} {'chat':>9} {'floor':>9} {'framework':>10}"
            f" {'responses':>10} {'floor':>9} {'framework':>10} {'ratio':>6}"
        )
        for n in SIZES:
            messages = conversation(n)
            ms = timed(calls(chat, responses, sdk, model, messages), args.calls)
            fw_chat = max(ms["chat"] - ms["chat floor"], 1e-3)
            fw_resp = max(ms["responses"] - ms["responses floor"], 1e-3)
            ratio = fw_resp / fw_chat
            worst = max(worst, ratio)
            print(
                f"{n:>8} {ms['chat']:7.2f}ms {ms['chat floor']:7.2f}ms {fw_chat:8.2f}ms"
                f" {ms['responses']:8.2f}ms {ms['responses floor']:7.2f}ms {fw_resp:8.2f}ms"
                f" {ratio:6.2f}"
            )
        sdk.close()
    verdict = "within" if worst <= args.max_ratio else "OVER"
    print(f"worst ratio {worst:.2f}: {verdict} the {args.max_ratio:.2f} limit")
    return 0 if worst <= args.max_ratio else 1


if __name__ == "__main__":
    sys.exit(main())
