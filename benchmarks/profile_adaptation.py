"""Per-request cost of adapting a chat request to its model's profile (parley.oai._profiles).

    python benchmarks/profile_adaptation.py [--rounds 20000]

Times the adapter alone, as OpenAIClient.a_create calls it before every chat request, on the
request an AutoGen 0.2 script sends (temperature=0, max_tokens, a system message), for:

- a model no family matches (sent as it is: the look-up only),
- gpt-4o (a family that changes nothing but is checked),
- o3 and gpt-5 (renamed, dropped and re-roled: the full adaptation),

at 10 and 400 messages (re-roling walks the messages), on both APIs: chat completions
(``ProfileAdapter.__call__``) and the Responses API (``ProfileAdapter.responses``, which also
fits the chat-only parameters). The budget is 20 µs per request; the script exits 1 if any case
exceeds it.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Callable
from typing import Any

from parley.oai._profiles import ProfileAdapter

BUDGET_US = 20.0
CASES = ("deepseek-chat", "gpt-4o", "o3", "gpt-5")


def request(model: str, n: int) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are helpful."}]
    messages += [
        {"role": ("user", "assistant")[i % 2], "content": f"turn {i}"} for i in range(n - 1)
    ]
    return {"model": model, "messages": messages, "temperature": 0, "max_tokens": 512}


def per_request_us(
    adapt: Callable[[dict[str, Any]], Any], params: dict[str, Any], rounds: int
) -> float:
    """The best of 5 runs of ``rounds`` adaptations, in µs per request."""
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(rounds):
            adapt(params)
        best = min(best, time.perf_counter() - start)
    return best / rounds * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20000)
    args = parser.parse_args()
    logging.getLogger("parley.oai._profiles").setLevel(logging.ERROR)  # the one-off warnings
    adapter = ProfileAdapter()
    worst = 0.0
    print(f"{'model':<16}{'messages':>10}{'chat µs':>12}{'responses µs':>14}")
    for model in CASES:
        for n in (10, 400):
            params = request(model, n)
            chat = per_request_us(adapter, params, args.rounds)
            responses = per_request_us(adapter.responses, params, args.rounds)
            worst = max(worst, chat, responses)
            print(f"{model:<16}{n:>10}{chat:>12.2f}{responses:>14.2f}")
    verdict = "within" if worst <= BUDGET_US else "OVER"
    print(f"worst {worst:.2f} µs: {verdict} the {BUDGET_US:.0f} µs budget")
    return 0 if worst <= BUDGET_US else 1


if __name__ == "__main__":
    sys.exit(main())
