"""Worker for benchmarks/chat_overhead.py and benchmarks/concurrent_chats.py (not run by hand).

It runs the measured chats in its own interpreter and imports only the package under test
(``autogen`` from pyautogen 0.2.35, or ``parley``) plus the standard library, so the same file
runs in AutoGen's venv and in parley's. The chat code is written against AutoGen 0.2's public
API; parley runs it unchanged (``import parley as autogen``).

Protocol with the driver: every line meant for the driver is ``@@bench <json>`` on stdout.
``{"event": "mark", "label": ...}`` is a phase boundary: the worker then blocks until the driver
answers with a line on stdin, so the driver can read how many requests its fake server has
received so far (``len(server.requests)``). Marks are outside the timed regions. The last line
is ``{"event": "result", ...}``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import json
import os
import platform
import sys
import time
from types import ModuleType
from typing import Any

PREFIX = "@@bench "
OTHER_PACKAGE = {"autogen": "parley", "parley": "autogen"}
# Seconds spent in full (generation 2) garbage collections, per timed phase: what made a run
# slow is often one full collection (tens of ms with the openai SDK loaded), not the code.
# Every timed phase starts right after a full collection: the collector decides when to run one
# by the objects that survived since the last, so without it a full collection would fall in
# whichever phase happens to follow a few others, and be counted as that phase's cost.
FULL_GC: dict[str, float] = {}


class _FullCollections:
    def __init__(self) -> None:
        self.seconds = 0.0
        self._start = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._start


_GC = _FullCollections()


def emit(event: str, **fields: Any) -> None:
    sys.stdout.write(PREFIX + json.dumps({"event": event, **fields}) + "\n")
    sys.stdout.flush()


def mark(label: str) -> None:
    """Tell the driver a phase ended and wait until it has counted the server's requests."""
    emit("mark", label=label)
    if not sys.stdin.readline():
        raise SystemExit("driver went away")


def llm_config(args: argparse.Namespace, cache_seed: int | None) -> dict[str, Any]:
    # A fresh dict per agent. cache_seed=None turns caching off (AutoGen's default is 41).
    config = {"model": args.model, "base_url": args.base_url, "api_key": "sk-bench"}
    return {"config_list": [config], "cache_seed": cache_seed}


def make_pair(
    ag: ModuleType, args: argparse.Namespace, turns: int, cache_seed: int | None, tag: str = ""
) -> tuple[Any, Any]:
    """Two LLM agents. max_consecutive_auto_reply is raised above the number of turns: its
    default (100) would otherwise end a 200-turn chat early."""
    common: dict[str, Any] = {
        "human_input_mode": "NEVER",
        "code_execution_config": False,
        "max_consecutive_auto_reply": turns + 10,
    }
    alice = ag.ConversableAgent(
        f"alice{tag}",
        system_message="You are Alice. Answer in one short sentence.",
        llm_config=llm_config(args, cache_seed),
        **common,
    )
    bob = ag.ConversableAgent(
        f"bob{tag}",
        system_message="You are Bob. Answer in one short sentence.",
        llm_config=llm_config(args, cache_seed),
        **common,
    )
    return alice, bob


def check_history(result: Any, turns: int) -> int:
    n = len(result.chat_history)
    if n != 2 * turns:
        raise SystemExit(f"expected {2 * turns} messages in chat_history, got {n}")
    return n


CPU: dict[str, float] = {}  # process CPU seconds (every thread of the worker) per phase


def timed_chat(
    ag: ModuleType, args: argparse.Namespace, turns: int, seed: int | None, label: str = ""
) -> float:
    alice, bob = make_pair(ag, args, turns, seed)
    gc.collect()  # see _FullCollections
    start, cpu, full = time.perf_counter(), time.process_time(), _GC.seconds
    result = alice.initiate_chat(
        bob, message="Hello Bob, let's chat for a while.", max_turns=turns, silent=True
    )
    elapsed = time.perf_counter() - start
    if label:
        CPU[label] = time.process_time() - cpu
        FULL_GC[label] = _GC.seconds - full
    check_history(result, turns)
    return elapsed


def run_overhead(ag: ModuleType, args: argparse.Namespace) -> dict[str, Any]:
    # cwd is a fresh temp dir chosen by the driver: the legacy disk cache goes to ./.cache/<seed>.
    timed_chat(ag, args, args.warmup_turns, None)  # connections, lazy imports
    mark("warmup")
    live = timed_chat(ag, args, args.turns, None, "live")
    mark("live")
    fill = timed_chat(ag, args, args.turns, args.cache_seed)
    mark("fill")
    replay = timed_chat(ag, args, args.turns, args.cache_seed)
    mark("replay")
    result = {
        "live_s": live,
        "fill_s": fill,
        "replay_s": replay,
        "cache_dir_exists": os.path.isdir(os.path.join(".cache", str(args.cache_seed))),
    }
    if args.observability:
        result.update(run_observed(ag, args))
        result.update({f"{k}_cpu_s": v for k, v in CPU.items()})
        result.update({f"{k}_gc_s": v for k, v in FULL_GC.items()})
    return result


def run_observed(ag: ModuleType, args: argparse.Namespace) -> dict[str, Any]:
    """The live chat again with runtime logging to SQLite on (both packages), then with
    OpenTelemetry tracing to an in-memory exporter (parley only; AutoGen 0.2 has none). The
    time starts once the logger has started (opening the database is not a turn's cost) and
    includes stopping it, so writes deferred to another thread are counted. Each is warmed up
    first, as the live chat is."""
    import importlib

    # The baseline is the plain live chat run right before and right after these (their mean):
    # a worker's later chats run on a bigger heap than its first, so comparing with the live
    # phase, run first, would count that drift as the observers' cost.
    base = [timed_chat(ag, args, args.turns, None, "base-before")]
    mark("base-before")
    logging_mod = importlib.import_module(f"{args.package}.runtime_logging")
    # Warm-up, as for the live phase: a short logged chat into another database, so that what
    # logging does once per process (imports, first statements) is not counted per turn.
    logging_mod.start(config={"dbname": "bench-warmup.db"})
    timed_chat(ag, args, args.warmup_turns, None)
    logging_mod.stop()
    mark("logging-warmup")
    alice, bob = make_pair(ag, args, args.turns, None)  # made before logging starts: not timed
    logging_mod.start(config={"dbname": "bench-logs.db"})  # opening the database: not per turn
    gc.collect()  # see _FullCollections
    start, cpu, full = time.perf_counter(), time.process_time(), _GC.seconds
    result = alice.initiate_chat(
        bob, message="Hello Bob, let's chat for a while.", max_turns=args.turns, silent=True
    )
    logging_mod.stop()
    logged = time.perf_counter() - start
    CPU["logging"] = time.process_time() - cpu
    FULL_GC["logging"] = _GC.seconds - full
    check_history(result, args.turns)
    mark("logging")
    out: dict[str, Any] = {"logging_s": logged}
    if args.package == "parley":
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        from parley import tracing

        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        tracing.enable(provider)
        timed_chat(ag, args, args.warmup_turns, None)
        tracing.disable()
        exporter.clear()
        mark("tracing-warmup")
        alice, bob = make_pair(ag, args, args.turns, None)
        gc.collect()  # see _FullCollections
        start, cpu, full = time.perf_counter(), time.process_time(), _GC.seconds
        tracing.enable(provider)
        result = alice.initiate_chat(
            bob, message="Hello Bob, let's chat for a while.", max_turns=args.turns, silent=True
        )
        tracing.disable()
        out["tracing_s"] = time.perf_counter() - start
        CPU["tracing"] = time.process_time() - cpu
        FULL_GC["tracing"] = _GC.seconds - full
        check_history(result, args.turns)
        out["spans"] = len(exporter.get_finished_spans())
        mark("tracing")
    base.append(timed_chat(ag, args, args.turns, None, "base-after"))
    mark("base-after")
    out["base_s"] = sum(base) / 2
    CPU["base"] = (CPU.pop("base-before") + CPU.pop("base-after")) / 2
    FULL_GC["base"] = (FULL_GC.pop("base-before") + FULL_GC.pop("base-after")) / 2
    return out


async def run_concurrent_chats(ag: ModuleType, args: argparse.Namespace) -> dict[str, Any]:
    pairs = [make_pair(ag, args, args.turns, None, tag=f"_{i}") for i in range(args.chats)]
    # Warm-up: one short chat on a separate pair, so first-use costs are not in the wall time.
    wa, wb = make_pair(ag, args, 1, None, tag="_warmup")
    await wa.a_initiate_chat(wb, message="Warm-up.", max_turns=1, silent=True)
    mark("warmup")
    ends: list[float] = []

    async def one(i: int, a: Any, b: Any) -> Any:
        result = await a.a_initiate_chat(
            b, message=f"Hello {b.name}, this is chat {i}.", max_turns=args.turns, silent=True
        )
        ends.append(time.perf_counter())
        return result

    start = time.perf_counter()
    results = await asyncio.gather(*(one(i, a, b) for i, (a, b) in enumerate(pairs)))
    wall = time.perf_counter() - start
    mark("chats")
    for result in results:
        check_history(result, args.turns)
    ends.sort()
    return {
        "wall_s": wall,
        "first_done_s": ends[0] - start,
        "median_done_s": ends[len(ends) // 2] - start,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", choices=("autogen", "parley"), required=True)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--mode", choices=("overhead", "concurrent"), required=True)
    parser.add_argument("--model", default="gpt-4")
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--warmup-turns", type=int, default=2)
    parser.add_argument("--cache-seed", type=int, default=4242)
    parser.add_argument("--chats", type=int, default=50)
    parser.add_argument("--observability", action="store_true", help="also logging, tracing")
    args = parser.parse_args()

    t = time.perf_counter()
    ag = importlib.import_module(args.package)
    import_s = time.perf_counter() - t
    if args.mode == "overhead":
        result = run_overhead(ag, args)
    else:
        result = asyncio.run(run_concurrent_chats(ag, args))
    if OTHER_PACKAGE[args.package] in sys.modules:
        raise SystemExit(f"{OTHER_PACKAGE[args.package]} was imported while measuring {ag}")
    emit(
        "result",
        package=args.package,
        version=getattr(ag, "__version__", "?"),
        python=platform.python_version(),
        import_s=import_s,
        **result,
    )


if __name__ == "__main__":
    main()
