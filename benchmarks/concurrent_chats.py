"""Many async two-agent chats at once against a slow model: parley against AutoGen 0.2.35.

    python benchmarks/concurrent_chats.py                                  # parley only
    python benchmarks/concurrent_chats.py --autogen /tmp/agvenv/bin/python # parley and AutoGen
    python benchmarks/concurrent_chats.py --only autogen --autogen /tmp/agvenv/bin/python

50 pairs of ``ConversableAgent``s (LLM agents, ``human_input_mode="NEVER"``, no code execution,
``cache_seed=None``) chat 10 turns each, all started at once with
``asyncio.gather(*(a.a_initiate_chat(b, message=..., max_turns=10, silent=True) ...))``. The
parley.testing.FakeLLMServer on loopback delays every reply by 200 ms, like a slow model.

The floor: a *turn* is the initiator's message plus the recipient's reply. The first turn's
message is the initial text (no request) and its reply is one LLM request; every later turn is
two (the initiator's next message comes from its LLM too). So one chat of N turns is a chain
of 2N - 1 sequential requests (checked at the server): 19 x 200 ms = 3.8 s for 10 turns, not
10 x 200 ms = 2.0 s. With unlimited concurrency all chats run side by side and the wall time
is that floor plus overhead; the table shows wall time and its ratio to the floor. "Peak in
flight" is the largest number of requests the server was holding at once (each request is held
for the delay), i.e. how many chats really progressed in parallel. AutoGen 0.2's
``a_generate_oai_reply`` runs the blocking client call in the event loop's default thread pool
(``min(32, os.cpu_count() + 4)`` threads), so its peak, and its wall time (about
requests x delay / threads), depend on the machine's CPU count.

Each package runs in a worker subprocess that imports only that package
(benchmarks/_chat_worker.py). Only the ``gather`` is timed (after one warm-up chat); agents are
built before. Transcripts are silenced (``silent=True``) in both packages. The table shows the
median of ``--runs`` workers.
"""

from __future__ import annotations

import argparse
import sys
import tempfile

import _chat_driver as drv


def peak_in_flight(arrivals: list[float], hold: float) -> int:
    """Most requests held at once, each held from its arrival for ``hold`` seconds."""
    events = sorted([(t, 1) for t in arrivals] + [(t + hold, -1) for t in arrivals])
    peak = current = 0
    for _, step in events:
        current += step
        peak = max(peak, current)
    return peak


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chats", type=int, default=50, help="concurrent chats (default 50)")
    parser.add_argument("--turns", type=int, default=10, help="max_turns per chat (default 10)")
    parser.add_argument(
        "--delay", type=float, default=0.2, help="seconds the server waits per reply (0.2)"
    )
    drv.add_common_args(parser, runs=3, timeout=300)
    args = parser.parse_args()
    if args.chats < 1 or args.turns < 1 or args.delay < 0:
        parser.error("--chats and --turns must be >= 1, --delay >= 0")
    wanted = drv.packages(args, parser)
    chain = 2 * args.turns - 1
    floor = chain * args.delay
    expected = args.chats * chain

    def respond(body: dict[str, object]) -> dict[str, object]:
        return {"content": drv.reply_text(body), "delay": args.delay}

    server = drv.start_server(responder=respond)
    runs: dict[str, list[tuple[drv.WorkerRun, int]]] = {}
    try:
        for package, python in wanted.items():
            runs[package] = []
            for i in range(args.runs):
                first = len(server.received)
                with tempfile.TemporaryDirectory(prefix=f"concurrent-{package}-") as cwd:
                    run = drv.run_worker(
                        python,
                        package,
                        server,
                        [
                            "--mode=concurrent",
                            f"--model={args.model}",
                            f"--turns={args.turns}",
                            f"--chats={args.chats}",
                        ],
                        cwd=cwd,
                        timeout=args.timeout,
                    )
                if run.requests["chats"] != expected:
                    raise drv.WorkerError(
                        f"{package} run {i + 1}: the chats made {run.requests['chats']} "
                        f"requests, expected {expected}"
                    )
                received = server.received[first:]
                arrivals = [r.time for r in received[len(received) - expected :]]
                peak = peak_in_flight(arrivals, args.delay)
                runs[package].append((run, peak))
                print(
                    f"  {package} run {i + 1}/{args.runs}: {run.result['wall_s']:.2f} s, "
                    f"peak in flight {peak}",
                    file=sys.stderr,
                )
    except drv.WorkerError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(1) from None
    finally:
        server.stop()

    def stat(package: str, key: str) -> float | None:
        if package not in runs:
            return None
        return drv.median([r.result[key] for r, _ in runs[package]])

    def peak(package: str) -> float | None:
        if package not in runs:
            return None
        return drv.median([p for _, p in runs[package]])

    versions = {p: rs[0][0].result["version"] for p, rs in runs.items()}
    labels = {p: f"{p} {versions.get(p, '')}" for p in ("parley", "autogen")}
    print(
        f"\n{args.chats} chats x {args.turns} turns at once, {args.delay * 1000:g} ms per reply, "
        f"{expected} LLM requests; floor = {chain} sequential requests per chat x "
        f"{args.delay * 1000:g} ms = {floor:.2f} s; median of {args.runs} runs"
    )
    print(f"{'':<26}" + "".join(f"{labels[p]:>18}" for p in ("parley", "autogen")))
    wall = {p: stat(p, "wall_s") for p in ("parley", "autogen")}
    rows = [
        ("wall time", wall, " s", 2),
        ("wall / floor", {p: v and v / floor for p, v in wall.items()}, "x", 2),
        ("first chat done", {p: stat(p, "first_done_s") for p in wall}, " s", 2),
        ("median chat done", {p: stat(p, "median_done_s") for p in wall}, " s", 2),
        ("peak requests in flight", {p: peak(p) for p in wall}, "", 0),
    ]
    for label, values, unit, digits in rows:
        print(
            f"{label:<26}"
            + "".join(drv.fmt(values[p], unit, 18, digits) for p in ("parley", "autogen"))
        )
    if wall["parley"] and wall["autogen"]:
        print(f"autogen / parley wall time: {wall['autogen'] / wall['parley']:.1f}x")
    if "parley" not in runs:
        print("(parley not measured: run without --only to compare)")


if __name__ == "__main__":
    main()
