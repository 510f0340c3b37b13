"""ChatCompletion.tune on a slow model: what concurrent evaluation, pruning and caching save.

    python benchmarks/tune.py [--samples 50] [--instances 16] [--delay 0.1] [--sequential] [--json]

A parley.testing.FakeLLMServer plays a model whose every reply takes ``--delay`` seconds. It
answers arithmetic questions: each completion is right with a probability that depends on the
model (gpt-4 better than gpt-3.5-turbo) and the prompt ("step by step" helps but makes the
answer five times longer), so ``n``, the model and the prompt trade success against cost. The
completions are pseudo-random but reproducible (seeded by the request and how often it was
made before).

The tune run (``--samples`` trials, inference budget 0.01 USD per instance) is timed and its
requests counted; printed against

- the sequential sum of the request latencies (requests x delay): the least time the same
  requests take one after another, as AutoGen's tune made them (``--sequential`` measures it:
  the same tune with ``max_concurrency=1``); and the rounds the requests came in: the pruning
  rules read the data 1, 2, 4, ... instances at a time, which bounds what concurrency can gain;
- a run without pruning and without a cache: every trial asks every instance for its full
  ``n`` (computed from the same trials; such a run would search a little differently);
- the same call again on the warm cache (no requests), and resumed from its trial log.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from parley.oai import ChatCompletion
from parley.testing import FakeLLMServer

PROMPTS = [
    "{question}",
    "Think step by step, then give the answer. {question}",
    "Reply with the number only. {question}",
]
RIGHT = {"gpt-3.5-turbo": 0.35, "gpt-4": 0.6}
PRICE = {"gpt-3.5-turbo": (0.0015, 0.002), "gpt-4": (0.03, 0.06)}


def make_data(count: int) -> list[dict[str, Any]]:
    rng = random.Random(7)
    data = []
    for _ in range(count):
        a, b = rng.randint(10, 99), rng.randint(10, 99)
        data.append({"question": f"What is {a} + {b}?", "answer": str(a + b)})
    return data


class SlowModel:
    """The fake model: ``delay`` seconds per reply, n completions, usage by the completion."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.seen: collections.Counter[str] = collections.Counter()

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        key = json.dumps(body, sort_keys=True)
        self.seen[key] += 1  # a repeated request is a new sample, as with a real model
        rng = random.Random(f"{key}#{self.seen[key]}")
        text = body["messages"][-1]["content"]
        a, b = (int(x) for x in text.split("What is ")[1].rstrip("?").split(" + "))
        careful = "step by step" in text
        right = min(0.95, RIGHT[body["model"]] + (0.25 if careful else 0.0))
        n = int(body.get("n") or 1)
        answers = [str(a + b) if rng.random() < right else str(a + b + 1) for _ in range(n)]
        words = 40 if careful else 8
        usage = {"prompt_tokens": 7 + len(text) // 4, "completion_tokens": words * n}
        return {"choices": answers, "usage": usage, "delay": self.delay}


def score(responses: list[str], question: str, answer: str) -> dict[str, float]:
    right = [r == answer for r in responses]
    return {"success": float(any(right)), "expected_success": sum(right) / len(right)}


def naive_figures(analysis: Any, data: list[dict[str, Any]]) -> tuple[int, int, float]:
    """(requests, completions, USD) of evaluating every trial on every instance at its full n,
    without a cache."""
    requests = completions = 0
    cost = 0.0
    for trial in analysis.trials:
        config = trial.config
        sub = config.get("subspace", config)
        model, n = sub["model"], int(sub["n"])
        careful = "step by step" in PROMPTS[int(config["prompt"])]
        in_price, out_price = PRICE[model]
        for instance in data:
            text = PROMPTS[int(config["prompt"])].format(**instance)
            prompt_tokens = 7 + len(text) // 4
            requests += 1
            completions += n
            cost += (prompt_tokens * in_price + (40 if careful else 8) * n * out_price) / 1000
    return requests, completions, cost


def _rounds(arrivals: list[float], delay: float) -> int:
    """How many waves the requests came in (a wave waits for the answers of the one before)."""
    arrivals = sorted(arrivals)
    return sum(1 for i, t in enumerate(arrivals) if i == 0 or t - arrivals[i - 1] > delay / 2)


def run(args: argparse.Namespace, cache_root: str, log: str) -> dict[str, Any]:
    data = make_data(args.instances)
    model = SlowModel(args.delay)
    with FakeLLMServer(responder=model) as server:
        config_list = [{"base_url": server.base_url, "api_key": "sk-bench"}]

        def tune() -> tuple[dict[str, Any], Any, float, list[Any]]:
            server.reset()
            start = time.perf_counter()
            best, analysis = ChatCompletion.tune(
                data,
                "success",
                "max",
                score,
                log_file_name=log,
                inference_budget=0.01,
                optimization_budget=args.optimization_budget,
                num_samples=args.samples,
                prompt=PROMPTS,
                allow_format_str_template=True,
                config_list=config_list,
                max_concurrency=args.max_concurrency,
            )
            return best, analysis, time.perf_counter() - start, server.requests

        ChatCompletion.set_cache(41, cache_root)
        best, analysis, wall, requests = tune()
        rounds = _rounds([r.time for r in server.received], args.delay)
        completions = sum(int(r.get("n") or 1) for r in requests)
        spent = sum(t.last_result["cost"] for t in analysis.trials)
        naive_requests, naive_completions, naive_cost = naive_figures(analysis, data)
        rejected = sum(1 for t in analysis.trials if math.isinf(t.last_result["inference_cost"]))
        _, _, warm_wall, warm_requests = tune()  # the same call: the log replays every trial
        Path(log).unlink()
        _, _, cache_wall, cache_requests = tune()  # no log: every request from the cache
        sequential_wall = None
        if args.sequential:  # measured: the same tune, one request at a time, cold cache
            Path(log).unlink()
            ChatCompletion.set_cache(42, cache_root)
            model.seen.clear()
            args.max_concurrency, concurrency = 1, args.max_concurrency
            sequential_wall = tune()[2]
            args.max_concurrency = concurrency
    return {
        "trials": len(analysis.trials),
        "rejected_trials": rejected,
        "instances": len(data),
        "delay_s": args.delay,
        "max_concurrency": args.max_concurrency,
        "wall_s": wall,
        "sequential_latency_s": len(requests) * args.delay,
        "sequential_wall_s": sequential_wall,
        "request_rounds": rounds,
        "requests": len(requests),
        "completions": completions,
        "spent_usd": spent,
        "naive_requests": naive_requests,
        "naive_completions": naive_completions,
        "naive_usd": naive_cost,
        "resumed_wall_s": warm_wall,
        "resumed_requests": len(warm_requests),
        "cached_wall_s": cache_wall,
        "cached_requests": len(cache_requests),
        "best_config": best,
        "best_result": {k: analysis.best_result[k] for k in ("success", "inference_cost")},
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--samples", type=int, default=50, help="trials (50)")
    parser.add_argument("--instances", type=int, default=16, help="data instances (16)")
    parser.add_argument("--delay", type=float, default=0.1, help="seconds per reply (0.1)")
    parser.add_argument("--max-concurrency", type=int, default=8, help="requests in flight (8)")
    parser.add_argument("--optimization-budget", type=float, default=20.0, help="USD (20)")
    parser.add_argument(
        "--sequential",
        action="store_true",
        help="also time the same tune with max_concurrency=1 (takes about requests x delay)",
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="parley-tune-bench-") as tmp:
        r = run(args, str(Path(tmp) / "cache"), str(Path(tmp) / "tune.jsonl"))
    if args.json:
        print(json.dumps(r, indent=2))
        return
    print(
        f"ChatCompletion.tune: {r['trials']} trials ({r['rejected_trials']} rejected as over "
        f"budget), {r['instances']} instances, {r['delay_s'] * 1000:.0f} ms per reply, "
        f"max_concurrency={r['max_concurrency']}"
    )
    speedup = r["sequential_latency_s"] / r["wall_s"]
    floor = r["request_rounds"] * r["delay_s"]
    rows = [
        ("wall time", f"{r['wall_s']:.1f} s"),
        ("request rounds", f"{r['request_rounds']} (x delay = {floor:.1f} s)"),
        ("sequential sum of latencies", f"{r['sequential_latency_s']:.1f} s ({speedup:.1f}x)"),
        ("requests (no pruning, no cache)", f"{r['requests']} ({r['naive_requests']})"),
        ("completions (no pruning)", f"{r['completions']} ({r['naive_completions']})"),
        ("spent USD (no pruning)", f"{r['spent_usd']:.3f} ({r['naive_usd']:.3f})"),
        ("rerun, trial log", f"{r['resumed_wall_s']:.2f} s, {r['resumed_requests']} requests"),
        ("rerun, cache only", f"{r['cached_wall_s']:.2f} s, {r['cached_requests']} requests"),
    ]
    if r["sequential_wall_s"] is not None:
        measured = r["sequential_wall_s"] / r["wall_s"]
        rows.insert(
            3, ("max_concurrency=1, measured", f"{r['sequential_wall_s']:.1f} s ({measured:.1f}x)")
        )
    for name, value in rows:
        print(f"{name:>32}: {value}")
    print(f"{'best':>32}: {r['best_config']} -> {r['best_result']}")


if __name__ == "__main__":
    main()
