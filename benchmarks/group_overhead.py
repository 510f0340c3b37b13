"""Framework overhead of a group chat's rounds: parley against AutoGen 0.2.35, same run.

    python benchmarks/group_overhead.py                                  # parley only
    python benchmarks/group_overhead.py --autogen /tmp/agvenv/bin/python # parley and AutoGen
    PYTHONPATH=/path/to/checkout python benchmarks/group_overhead.py     # that checkout's parley

The group: three ``ConversableAgent``s with an llm_config pointing at a
parley.testing.FakeLLMServer on loopback (``human_input_mode="NEVER"``, no code execution,
``cache_seed=None``), a ``GroupChatManager(silent=True)``, and the first member starting
``initiate_chat(manager, message=..., silent=True)``. ``max_round`` is ``--rounds`` (100), so
the transcript ends with the initial message plus ``rounds - 1`` replies; a *round* is one reply
(selecting its speaker, asking that speaker's model, broadcasting the message to the group).

* ``round_robin``: one chat-completion request per round (the speaker's);
* ``auto``: two per round: the manager's model picks the speaker (the fake server answers
  selection requests, recognised by their system message, with one of the offered names),
  then the speaker answers.

The server answers at once with a short text that depends only on the request, so what is
measured is the framework: building requests, the HTTP client, selection, broadcasting and
history bookkeeping. Request counts are checked at the server.

Each package runs in a worker subprocess (this file with ``--worker``) that imports only that
package: AutoGen from its venv's interpreter, parley from the directory holding the ``parley``
package this driver imported (so ``PYTHONPATH`` picks the checkout to measure). A worker runs
a 6-round warm-up chat (not timed) and then the timed chat, one method per worker; only
``initiate_chat`` is timed. The table shows the median of ``--runs`` workers.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

PREFIX = "@@bench "
SELECTING = "SELECT THE NEXT SPEAKER"
NAMES = ("alice", "bob", "carol")
METHODS = ("round_robin", "auto")
WARMUP_ROUNDS = 6


# -- worker (runs with either package; standard library only) --------------------------------


def run_group(ag: Any, args: argparse.Namespace, rounds: int, tag: str) -> tuple[float, float, int]:
    """One group chat of ``rounds`` messages: (seconds in initiate_chat, CPU seconds of this
    process in it, transcript length)."""

    def llm_config() -> dict[str, Any]:
        config = {"model": args.model, "base_url": args.base_url, "api_key": "sk-bench"}
        return {"config_list": [config], "cache_seed": None}

    members = [
        ag.ConversableAgent(
            name,
            system_message=f"You are {name} [{tag}]. Answer in one short sentence.",
            description=f"{name} [{tag}] answers in one short sentence.",
            llm_config=llm_config(),
            human_input_mode="NEVER",
            code_execution_config=False,
            max_consecutive_auto_reply=rounds + 10,
        )
        for name in NAMES
    ]
    group = ag.GroupChat(
        agents=members,
        messages=[],
        max_round=rounds,
        speaker_selection_method=args.method,
        select_speaker_message_template=f"{SELECTING} [{tag}]. The participants:\n{{roles}}\n"
        "Choose one of {agentlist}.",
        select_speaker_prompt_template="Who speaks next? Answer with one of {agentlist}.",
    )
    manager = ag.GroupChatManager(
        group, llm_config=llm_config() if args.method == "auto" else False, silent=True
    )
    start, cpu = time.perf_counter(), time.process_time()
    members[0].initiate_chat(manager, message="Hello team, let's talk for a while.", silent=True)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    return elapsed, cpu, len(group.messages)


def worker(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description="group_overhead worker (not run by hand)")
    parser.add_argument("--package", choices=("autogen", "parley"), required=True)
    parser.add_argument("--path", help="directory to import the package from")
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--method", choices=METHODS, required=True)
    parser.add_argument("--rounds", type=int, required=True)
    parser.add_argument("--model", default="gpt-4")
    args = parser.parse_args(argv)
    if args.path:
        sys.path.insert(0, args.path)
    ag = importlib.import_module(args.package)
    run_group(ag, args, WARMUP_ROUNDS, "warmup")  # connections, lazy imports
    seconds, cpu_seconds, messages = run_group(ag, args, args.rounds, "timed")
    other = "parley" if args.package == "autogen" else "autogen"
    if other in sys.modules:
        raise SystemExit(f"{other} was imported while measuring {args.package}")
    result = {
        "package": args.package,
        "version": getattr(ag, "__version__", "?"),
        "file": getattr(ag, "__file__", "?"),
        "python": platform.python_version(),
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "messages": messages,
    }
    sys.stdout.write(PREFIX + json.dumps(result) + "\n")


# -- driver ----------------------------------------------------------------------------------


def respond(body: dict[str, Any]) -> str:
    """Selection requests get one of the offered names (varying with the chat's length); every
    other request a short text that is never "TERMINATE"."""
    import _chat_driver as drv

    messages = body.get("messages") or []
    first = str(messages[0].get("content")) if messages else ""
    if first.startswith(SELECTING):
        offered = re.findall(r"'([^']+)'", first.rsplit("Choose one of", 1)[1])
        return offered[len(messages) % len(offered)]
    return drv.reply_text(body)


def timed_requests(server: Any) -> int:
    return sum(
        "[timed]" in str((r.get("messages") or [{}])[0].get("content")) for r in server.requests
    )


def run_worker(
    python: str, package: str, server: Any, args: argparse.Namespace, method: str
) -> Any:
    import _chat_driver as drv

    import parley

    argv = [python, "-I", __file__, "--worker", f"--package={package}"]
    if package == "parley":
        argv.append(f"--path={Path(parley.__file__).resolve().parent.parent}")
    argv += [
        f"--base-url={server.base_url}",
        f"--method={method}",
        f"--rounds={args.rounds}",
        f"--model={args.model}",
    ]
    env = dict(os.environ, NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    server.reset()
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=args.timeout, env=env)
    except subprocess.TimeoutExpired as e:
        raise drv.WorkerError(
            f"{package} {method} worker timed out after {args.timeout:g} s"
        ) from e
    lines = [line for line in proc.stdout.splitlines() if line.startswith(PREFIX)]
    if proc.returncode != 0 or not lines:
        raise drv.WorkerError(
            f"{package} {method} worker failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
        )
    if server.errors:
        raise drv.WorkerError(f"the fake server's responder raised: {server.errors!r}")
    result = json.loads(lines[-1][len(PREFIX) :])
    result["requests"] = timed_requests(server)
    replies = args.rounds - 1
    expected = replies * (2 if method == "auto" else 1)
    if result["messages"] != args.rounds:
        raise drv.WorkerError(
            f"{package} {method}: {result['messages']} messages, not {args.rounds}"
        )
    if package == "parley" and result["requests"] != expected:
        raise drv.WorkerError(f"{package} {method}: {result['requests']} requests, not {expected}")
    return result


def collect(wanted: dict[str, str], args: argparse.Namespace) -> dict[tuple[str, str], Any]:
    """The results of every worker, by (package, method), each printed as it comes."""
    import _chat_driver as drv

    replies = args.rounds - 1
    server = drv.start_server(responder=respond)
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    try:
        for package, python in wanted.items():
            for method in args.methods:
                for i in range(args.runs):
                    result = run_worker(python, package, server, args, method)
                    runs.setdefault((package, method), []).append(result)
                    print(
                        f"  {package} {method} run {i + 1}/{args.runs}: "
                        f"{result['seconds'] / replies * 1000:.2f} ms/round "
                        f"(CPU {result['cpu_seconds'] / replies * 1000:.2f}), "
                        f"{result['requests']} requests ({result['file']})",
                        file=sys.stderr,
                    )
    finally:
        server.stop()
    return runs


def main() -> None:
    if sys.argv[1:2] == ["--worker"]:
        worker(sys.argv[2:])
        return
    import _chat_driver as drv

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=100, help="max_round (default 100)")
    parser.add_argument(
        "--methods", nargs="+", choices=METHODS, default=list(METHODS), help="default: both"
    )
    drv.add_common_args(parser, runs=3, timeout=300)
    args = parser.parse_args()
    if args.rounds < 2:
        parser.error("--rounds must be >= 2")
    wanted = drv.packages(args, parser)
    replies = args.rounds - 1

    try:
        runs = collect(wanted, args)
    except drv.WorkerError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(1) from None

    def per_round(package: str, method: str, key: str) -> float | None:
        results = runs.get((package, method))
        if not results:
            return None
        scale = 1000 if key.endswith("seconds") else 1
        return drv.median([r[key] for r in results]) / replies * scale

    labels = {
        p: f"{p} {runs[(p, args.methods[0])][0]['version']}" if (p, args.methods[0]) in runs else p
        for p in ("parley", "autogen")
    }
    print(
        f"\nGroup chat of three LLM agents, max_round={args.rounds} ({replies} rounds), "
        f"median of {args.runs} runs; round = one speaker selected, asked and broadcast; "
        "CPU = the worker process's CPU time (all its threads), the framework's own work"
    )
    print(
        f"{'':<26}"
        + "".join(f"{labels[p]:>18}" for p in ("parley", "autogen"))
        + f"{'autogen / parley':>18}"
    )
    rows = (("wall ms/round", "seconds", " ms"), ("CPU ms/round", "cpu_seconds", " ms"))
    for method in args.methods:
        for label, key, unit in rows:
            ours, theirs = per_round("parley", method, key), per_round("autogen", method, key)
            ratio = theirs / ours if ours and theirs else None
            print(
                f"{method + ', ' + label:<26}{drv.fmt(ours, unit, 18, 2)}"
                f"{drv.fmt(theirs, unit, 18, 2)}{drv.fmt(ratio, 'x', 18)}"
            )
        ours, theirs = (
            per_round("parley", method, "requests"),
            per_round("autogen", method, "requests"),
        )
        print(
            f"{method + ', requests/round':<26}{drv.fmt(ours, '', 18, 2)}{drv.fmt(theirs, '', 18, 2)}"
        )


if __name__ == "__main__":
    main()
