"""What consuming a chat as a stream of typed events costs: the same two-agent chat of N turns
run by ``initiate_chat`` and by ``run`` with every event read through its iterator, same process,
same server, interleaved.

    PYTHONPATH=. python benchmarks/run_events.py [--turns 200] [--reps 5] [--stream]

The chat: two ``ConversableAgent``s (``human_input_mode="NEVER"``) whose llm_config points at a
``parley.testing.FakeLLMServer`` on loopback answering at once with a short text (never
"TERMINATE"), ``max_turns=N``, ``summary_method=None``. The baseline is
``a.initiate_chat(b, ..., silent=True)`` (no console output to time); the run is
``a.run(b, ...)`` with a loop over ``response.events`` in the caller's thread, reading each
event's ``type`` (the chat runs on parley's runner loop meanwhile). ``--stream`` makes the model
stream its replies, so the run also carries a ``stream`` event per token chunk.

Per turn: the chat's time over N, by the wall clock and by the CPU time of the process (all its
threads: the work done, steadier than the wall clock on a busy machine). Both are the framework:
building requests, the HTTP client, parsing, history, and for the run its reports, events and
the hand-off to the reading thread; the server answers at once (its thread's CPU time is the
same in both). Each repetition runs both back to back, alternating which goes first; the table
shows each one's median and the median of the repetitions' ratios. Exits 1 when the run's CPU
time per turn is more than 10% over ``initiate_chat``'s.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections import Counter
from typing import Any

from parley import ConversableAgent
from parley.testing import FakeLLMServer

LIMIT = 1.10


def agents(server: FakeLLMServer, stream: bool) -> tuple[ConversableAgent, ConversableAgent]:
    config: dict[str, Any] = {"config_list": server.config_list(price=[0, 0]), "cache_seed": None}
    if stream:
        config["stream"] = True
    a, b = (
        ConversableAgent(
            name, llm_config=config, human_input_mode="NEVER", max_consecutive_auto_reply=10**6
        )
        for name in ("a", "b")
    )
    return a, b


Times = tuple[float, float]  # (wall, CPU of the process) seconds


def by_initiate_chat(server: FakeLLMServer, turns: int, stream: bool) -> Times:
    a, b = agents(server, stream)
    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    a.initiate_chat(b, message="hi", max_turns=turns, silent=True, summary_method=None)
    return time.perf_counter() - start, time.process_time() - cpu


def by_run(server: FakeLLMServer, turns: int, stream: bool, seen: Counter[str]) -> Times:
    a, b = agents(server, stream)
    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    response = a.run(b, message="hi", max_turns=turns, summary_method=None)
    for event in response.events:
        seen[event.type] += 1
    elapsed = time.perf_counter() - start, time.process_time() - cpu
    if len(response.messages) != 2 * turns:
        raise SystemExit(f"the run's chat has {len(response.messages)} messages, not {2 * turns}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--stream", action="store_true", help="the model streams its replies")
    args = parser.parse_args()
    base: list[Times] = []
    run: list[Times] = []
    seen: Counter[str] = Counter()
    with FakeLLMServer(default="a short answer") as server:
        by_initiate_chat(server, 5, args.stream)  # warm up: imports, connections
        by_run(server, 5, args.stream, Counter())
        for rep in range(args.reps):
            order = ("base", "run") if rep % 2 == 0 else ("run", "base")
            for which in order:
                if which == "base":
                    base.append(by_initiate_chat(server, args.turns, args.stream))
                else:
                    run.append(by_run(server, args.turns, args.stream, seen))
            print(
                f"  rep {rep + 1}/{args.reps}: ms/turn (wall/CPU) initiate_chat "
                f"{base[-1][0] / args.turns * 1e3:.3f}/{base[-1][1] / args.turns * 1e3:.3f}, "
                f"run {run[-1][0] / args.turns * 1e3:.3f}/{run[-1][1] / args.turns * 1e3:.3f}",
                file=sys.stderr,
            )

    def ms(times: list[Times], i: int) -> float:
        return statistics.median(t[i] for t in times) / args.turns * 1e3

    def paired(i: int) -> float:
        # Each repetition's two chats ran back to back: the median of their ratios is
        # steadier than the ratio of the medians when the machine's load drifts.
        return statistics.median(r[i] / b[i] for r, b in zip(run, base, strict=True))

    ratio = paired(1)
    per_run = {k: v // args.reps for k, v in sorted(seen.items())}
    print(
        f"\n{args.turns}-turn chat, two LLM agents{' (streamed replies)' if args.stream else ''}, "
        f"median of {args.reps} runs each, interleaved"
    )
    print(f"{'':<30}{'wall':>12}{'CPU':>12}")
    print(f"{'initiate_chat, ms/turn':<30}{ms(base, 0):>12.3f}{ms(base, 1):>12.3f}")
    print(f"{'run, every event read, ms/turn':<30}{ms(run, 0):>12.3f}{ms(run, 1):>12.3f}")
    print(f"{'run / initiate_chat, paired':<30}{paired(0):>11.3f}x{ratio:>11.3f}x")
    print(f"limit {LIMIT:.2f}x on the CPU ratio")
    print(f"events per run: {per_run}")
    if ratio > LIMIT:
        print(f"FAIL: the run costs {ratio:.3f}x initiate_chat per turn (limit {LIMIT:.2f}x)")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
