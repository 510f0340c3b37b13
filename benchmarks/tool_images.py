"""Per-request cost of moving tool-result images for OpenAI's chat wire
(parley.oai.providers._tool_images), which OpenAIClient.a_create runs before every request.

    python benchmarks/tool_images.py [--rounds 2000]

Times the pass alone on histories of 10, 400 and 2000 messages (a third of them tool results),
without any image (the common case: one scan, the list returned as it is) and with an image
result every 30 messages, against ``json.dumps`` of the same body in the same run (what the
request costs at least: the SDK encodes it before sending). Prints both and their ratio; exits 1
if the pass without images costs more than 15% of the encoding.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import Any

from parley.oai.providers._tool_images import images_after_results

PIXEL = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQD"
    "wAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
BUDGET = 0.15


def history(n: int, images: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(n):
        role = ("user", "assistant", "tool")[i % 3]
        message: dict[str, Any] = {"role": role, "content": f"message {i} " + "word " * 40}
        if role == "tool":
            message["tool_call_id"] = f"call_{i}"
            if images and i % 30 == 2:
                image = {"type": "image_url", "image_url": {"url": PIXEL}}
                message["content"] = [{"type": "text", "text": "a chart:"}, image]
        out.append(message)
    return out


def best_us(step: Callable[[], Any], rounds: int) -> float:
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(rounds):
            step()
        best = min(best, time.perf_counter() - start)
    return best / rounds * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args()
    worst = 0.0
    print(f"{'messages':>8} {'images':>6} {'pass µs':>9} {'json µs':>9} {'ratio':>6}")
    for n in (10, 400, 2000):
        rounds = max(args.rounds * 10 // n, 20)
        for images in (False, True):
            messages = history(n, images)
            moved = best_us(lambda m=messages: images_after_results(m), rounds)
            encoded = best_us(lambda m=messages: json.dumps({"messages": m}), rounds)
            ratio = moved / encoded
            if not images:
                worst = max(worst, ratio)
            print(f"{n:>8} {images!s:>6} {moved:>9.1f} {encoded:>9.1f} {ratio:>6.3f}")
    print(f"worst ratio without images: {worst:.3f} (budget {BUDGET})")
    return 0 if worst <= BUDGET else 1


if __name__ == "__main__":
    sys.exit(main())
