"""What runtime logging (SqliteLogger) adds to a chat turn, on the caller's thread.

    python benchmarks/logging_overhead.py [--turns 200] [--runs 5]

The chat of chat_overhead.py (two LLM agents on a FakeLLMServer on loopback, ``max_turns``
turns, ``silent=True``, caching off), timed without logging and with
``runtime_logging.start(config={"dbname": ...})``; plus the time spent inside the logging
listener's calls themselves (the snapshot and queue put that run on the event loop), measured
directly, and the CPU time the writer thread spends (serializing and inserting, off the loop,
but sharing the GIL with it). Runs alternate with and without logging; min and median over
``--runs``; times per turn (one turn of ``max_turns``).

It also counts the objects the garbage collector promotes to its oldest generation per turn
(those alive at a generation-1 collection), with and without logging. They are what brings on
a full collection of the whole heap (tens of milliseconds with the openai SDK loaded, once the
promoted objects reach a quarter of the heap's long-lived ones): records that keep objects
alive while they wait for their batch make those collections come sooner, a cost that falls
on whichever chat is running when one happens.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from parley import ConversableAgent, runtime_logging
from parley.logger import _listener, _writer
from parley.testing import FakeLLMServer


def chat(fake: FakeLLMServer, turns: int) -> float:
    config = fake.llm_config(cache_seed=None)
    # max_consecutive_auto_reply would end the chat at 100 replies (AutoGen's default).
    limits: dict[str, Any] = {"human_input_mode": "NEVER", "max_consecutive_auto_reply": turns}
    alice = ConversableAgent("alice", llm_config=config, **limits)
    bob = ConversableAgent("bob", llm_config=config, **limits)
    start = time.perf_counter()
    result = alice.initiate_chat(bob, message="hello", max_turns=turns, silent=True)
    elapsed = time.perf_counter() - start
    if len(result.chat_history) != 2 * turns:
        raise SystemExit(
            f"the chat ended after {len(result.chat_history)} messages, not {2 * turns}"
        )
    return elapsed


class _WriterCPU:
    """Adds up the writer thread's CPU time per record."""

    def __init__(self) -> None:
        self.seconds = 0.0
        original = _writer.Writer._write

        def timed(writer: Any, item: Any) -> None:
            t0 = time.thread_time()
            original(writer, item)
            self.seconds += time.thread_time() - t0

        _writer.Writer._write = timed  # type: ignore[method-assign]


class _Promotions:
    """Counts the objects each generation-1 collection moves to the oldest generation."""

    def __init__(self) -> None:
        self.count = 0
        self._young = 0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if info["generation"] != 1:
            return
        if phase == "start":
            self._young = len(gc.get_objects(0)) + len(gc.get_objects(1))
        else:
            self.count += self._young - info["collected"]


class _Timed:
    """Wraps the listener's entry points, adding up their time."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0
        reporter = _listener.Reporter
        for name in ("on_event", "on_step_start", "on_step_end"):
            original = getattr(reporter, name)
            setattr(reporter, name, self._wrap(original))

    def _wrap(self, original: Any) -> Any:
        def timed(listener: Any, arg: Any) -> None:
            t0 = time.perf_counter()
            original(listener, arg)
            self.seconds += time.perf_counter() - t0
            self.calls += 1

        return timed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    plain: list[float] = []
    logged: list[float] = []
    inside: list[float] = []
    cpu: list[float] = []
    timer = _Timed()
    writer = _WriterCPU()
    promotions = _Promotions()
    promoted: dict[str, list[float]] = {"plain": [], "logged": []}
    with FakeLLMServer(default="a short answer") as fake, tempfile.TemporaryDirectory() as tmp:
        chat(fake, 2)  # warm-up
        for run in range(args.runs):
            promotions.count = 0
            plain.append(chat(fake, args.turns))
            promoted["plain"].append(promotions.count)
            runtime_logging.start(config={"dbname": f"{tmp}/logs{run}.db"})
            timer.seconds, timer.calls, writer.seconds = 0.0, 0, 0.0
            promotions.count = 0
            logged.append(chat(fake, args.turns))
            inside.append(timer.seconds)
            runtime_logging.stop()
            promoted["logged"].append(promotions.count)
            cpu.append(writer.seconds)
    turns = args.turns
    ms = 1000 / turns

    def show(label: str, values: list[float]) -> None:
        low, mid = min(values) * ms, statistics.median(values) * ms
        print(f"  {label:<44} min {low:7.3f} ms   median {mid:7.3f} ms")

    print(f"a chat of {turns} turns, {args.runs} runs each, per turn:")
    show("without logging", plain)
    show("with SqliteLogger", logged)
    show(f"in the logging listener ({timer.calls // turns} calls, on the loop)", inside)
    show("writer thread CPU (off the loop)", cpu)
    for label, counts in promoted.items():
        per_turn = statistics.median(counts) / turns
        print(f"  objects promoted to the oldest generation, {label:<7} median {per_turn:7.1f}")


if __name__ == "__main__":
    main()
