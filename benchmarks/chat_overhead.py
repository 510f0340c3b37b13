"""Framework overhead of a long two-agent LLM chat: parley against AutoGen 0.2.35, same run.

    python benchmarks/chat_overhead.py                                  # parley only
    python benchmarks/chat_overhead.py --autogen /tmp/agvenv/bin/python # parley and AutoGen
    python benchmarks/chat_overhead.py --only autogen --autogen /tmp/agvenv/bin/python

The chat: two ``ConversableAgent``s with an llm_config pointing at a parley.testing.FakeLLMServer
on loopback (``human_input_mode="NEVER"``, ``code_execution_config=False``), started with
``alice.initiate_chat(bob, message=..., max_turns=200, silent=True)``. The server answers at once
with a short text that depends only on the request (and is never "TERMINATE"), so what is
measured is the framework: building requests, the HTTP client, parsing, history bookkeeping.

*Turn* is AutoGen's: the initiator's message plus the recipient's reply. With two LLM agents
every message after the first comes from the LLM, so a chat of N turns is 2N messages and
2N - 1 chat-completion requests (counted at the server and checked). Times are per turn
(chat time / N), and per request alongside.

Phases, each in a worker subprocess per package that imports only that package
(benchmarks/_chat_worker.py), in a fresh temp directory as its working directory:

* warm-up: a 2-turn chat, not timed (connections, lazy imports);
* live: the chat with ``cache_seed=None`` (caching off);
* cache fill: the same chat with ``cache_seed=<seed>``: live, and writing ``./.cache/<seed>``;
* replay: the same chat again from the disk cache; the driver checks the server received no
  request during it;
* logging (``--observability``): the live chat with ``runtime_logging.start()`` to SQLite on,
  in both packages; timed from the start of the chat (the logger already started: opening the
  database is not a turn's cost) until ``runtime_logging.stop()`` returns, so writes a logger
  defers to a thread are counted; after a short logged warm-up chat (what is done once per
  process is not a turn's cost);
* tracing (``--observability``, parley only: AutoGen 0.2 has no tracing): the live chat with
  ``parley.tracing.enable()`` on an OpenTelemetry SDK ``TracerProvider`` exporting every span
  to an ``InMemorySpanExporter`` through a ``SimpleSpanProcessor`` (each span exported as it
  ends, so the export is counted).

With ``--observability`` the table adds the overhead per turn of each against the same chat
without them, run in the same worker right before logging and right after tracing (their mean):
not against the live phase, which runs first, on a smaller heap.

Only the ``initiate_chat`` call is timed: interpreter start-up, imports and agent construction
are not. The console transcript is silenced (``silent=True``) in both packages, so printing is
not measured. Each package runs ``--runs`` workers; the table shows the median.
"""

from __future__ import annotations

import argparse
import sys
import tempfile

import _chat_driver as drv

PHASES = (
    ("live", "live, ms/turn"),
    ("fill", "cache fill, ms/turn"),
    ("replay", "cache replay, ms/turn"),
)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", type=int, default=200, help="max_turns (default 200)")
    parser.add_argument("--cache-seed", type=int, default=4242, help="default 4242")
    parser.add_argument(
        "--observability",
        action="store_true",
        help="also time the chat with runtime logging (sqlite) and with tracing (in-memory)",
    )
    drv.add_common_args(parser, runs=3, timeout=300)
    args = parser.parse_args()
    if args.turns < 1:
        parser.error("--turns must be >= 1")
    wanted = drv.packages(args, parser)
    expected = 2 * args.turns - 1

    server = drv.start_server(responder=drv.reply_text)
    runs: dict[str, list[drv.WorkerRun]] = {}
    try:
        for package, python in wanted.items():
            runs[package] = []
            for i in range(args.runs):
                with tempfile.TemporaryDirectory(prefix=f"chat-overhead-{package}-") as cwd:
                    run = drv.run_worker(
                        python,
                        package,
                        server,
                        [
                            "--mode=overhead",
                            f"--model={args.model}",
                            f"--turns={args.turns}",
                            f"--cache-seed={args.cache_seed}",
                            *(["--observability"] if args.observability else []),
                        ],
                        cwd=cwd,
                        timeout=args.timeout,
                    )
                problems = []
                counted = ["live", "fill"]
                if args.observability:
                    counted += ["base-before", "logging", "base-after"]
                    counted += ["tracing"] if package == "parley" else []
                for phase in counted:
                    if run.requests[phase] != expected:
                        problems.append(
                            f"{phase} made {run.requests[phase]} requests, expected {expected}"
                        )
                if run.requests["replay"] != 0:
                    problems.append(
                        f"replay was not served from the cache: the server received "
                        f"{run.requests['replay']} requests during it"
                    )
                if not run.result["cache_dir_exists"]:
                    problems.append(f"no ./.cache/{args.cache_seed} directory was written")
                if problems:
                    raise drv.WorkerError(f"{package} run {i + 1}: " + "; ".join(problems))
                runs[package].append(run)
                times = ", ".join(
                    f"{p} {run.result[p + '_s'] / args.turns * 1000:.1f}" for p, _ in PHASES
                )
                print(f"  {package} run {i + 1}/{args.runs}: ms/turn {times}", file=sys.stderr)
                if args.observability:
                    observed = ", ".join(
                        f"{p} {run.result[p + '_s'] / args.turns * 1000:.2f}"
                        f" (full GC {run.result.get(p + '_gc_s', 0.0) * 1000:.0f} ms)"
                        for p in ("base", "logging", "tracing")
                        if p + "_s" in run.result
                    )
                    print(f"    observed ms/turn: {observed}", file=sys.stderr)
    except drv.WorkerError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(1) from None
    finally:
        server.stop()

    def ms_per_turn(package: str, phase: str) -> float | None:
        if package not in runs:
            return None
        return drv.median([r.result[phase + "_s"] for r in runs[package]]) / args.turns * 1000

    versions = {p: rs[0].result["version"] for p, rs in runs.items()}
    labels = {"parley": f"parley {versions.get('parley', '')}"}
    labels["autogen"] = f"autogen {versions.get('autogen', '')}"
    print(
        f"\n{args.turns}-turn chat between two LLM agents ({2 * args.turns} messages, "
        f"{expected} LLM requests), median of {args.runs} runs; "
        "turn = initiator's message + recipient's reply"
    )
    header = f"{'':<24}" + "".join(f"{labels[p]:>18}" for p in ("parley", "autogen"))
    print(header + f"{'autogen / parley':>18}")
    for phase, label in PHASES:
        ours, theirs = ms_per_turn("parley", phase), ms_per_turn("autogen", phase)
        ratio = theirs / ours if ours and theirs else None
        print(
            f"{label:<24}{drv.fmt(ours, ' ms', 18)}{drv.fmt(theirs, ' ms', 18)}"
            f"{drv.fmt(ratio, 'x', 18)}"
        )
    for phase, label in PHASES:
        ours, theirs = ms_per_turn("parley", phase), ms_per_turn("autogen", phase)
        per_req = label.replace("ms/turn", "ms/request")
        scale = args.turns / expected
        print(
            f"{per_req:<24}{drv.fmt(ours and ours * scale, ' ms', 18, 2)}"
            f"{drv.fmt(theirs and theirs * scale, ' ms', 18, 2)}"
        )
    if args.observability:
        print(
            "\nobservability: ms/turn added to the plain chat run just before and after (median of "
            "per-run differences), "
            "by the wall clock and by the CPU time\nof the chat's process (all its threads: the "
            "work added, steadier than the wall clock on a busy machine), and the part of it\n"
            "spent in full garbage collections (generation 2)"
        )
        for phase, label in (("logging", "runtime logging, sqlite"), ("tracing", "tracing")):
            for kind, suffix in (("wall", "_s"), ("CPU", "_cpu_s"), ("full GC", "_gc_s")):
                row = f"{label + ', ' + kind:<30}"
                for package in ("parley", "autogen"):
                    extra = [
                        (r.result[phase + suffix] - r.result["base" + suffix]) / args.turns * 1000
                        for r in runs.get(package, [])
                        if phase + suffix in r.result
                    ]
                    row += drv.fmt(drv.median(extra) if extra else None, " ms", 18, 2)
                print(row)
    if "parley" not in runs:
        print("(parley not measured: run without --only to compare)")


if __name__ == "__main__":
    main()
