"""The ``parley`` command.

``parley demo`` runs a two-agent coding chat: an AssistantAgent writes a Python script for a
small task and a UserProxyAgent runs it, in Docker when an engine and a sandbox image are there,
otherwise on this machine (said on screen). The model is the one an ``OAI_CONFIG_LIST`` names
(``--config FILE``, the ``OAI_CONFIG_LIST`` environment variable holding JSON or a file name, or
a file of that name in the current folder); without one, SmolLM2-135M-Instruct runs in-process
(the ``local`` extra). The transcript goes to stdout, progress and notes to stderr.

``parley sandbox build`` / ``parley sandbox status`` build and show parley's Docker images
(``parley._sandbox_cli``); ``parley logs logs.db [CHAT_ID]`` lists the chats of a runtime log
and shows one (``parley._logs_cli``); ``parley serve SCRIPT`` runs a script with a web page as
its human (``parley._serve_cli``, the ``web`` extra); ``parley mcp serve SCRIPT:NAME`` serves an
agent's functions or a chat over MCP (``parley._mcp_cli``, the ``mcp`` extra).
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any, TextIO

from . import _logs_cli, _mcp_cli, _sandbox_cli, _serve_cli

__all__ = ["main"]

TASK = "Write a Python script that prints the squares of the numbers 1 to 10."
# Short and concrete: a 135M-parameter model follows one instruction, not AssistantAgent's page
# of rules. This wording (with TASK's) gave a correct, single script at temperature 0.
LOCAL_SYSTEM_MESSAGE = (
    "You are a Python programmer. Reply with one short Python script in a ```python code block, "
    "and nothing else."
)
# The chat ends once the code has run successfully; the turn limit leaves the assistant room to
# fix failing code a few times.
MAX_TURNS = 3
CODE_TIMEOUT = 60
SUCCESS = "exitcode: 0 "  # how the proxy's report of a successful run begins
CONFIG_ENV = "OAI_CONFIG_LIST"


def _status(text: str) -> None:
    print(f"[parley] {text}", file=sys.stderr, flush=True)


class _Progress:
    """One line of progress on stderr: animated on a terminal; elsewhere (a CI log) the label
    is written at the start and the outcome appended when done."""

    _FRAMES = "|/-\\"

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream or sys.stderr
        self._tty = self._stream.isatty()
        self._label: str | None = None  # the running step's, None when idle
        self._started = 0.0
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, label: str) -> None:
        self.stop(None)
        self._label, self._started = label, time.perf_counter()
        if self._tty:
            self._done.clear()
            self._thread = threading.Thread(
                target=self._spin, args=(label,), name="parley-progress", daemon=True
            )
            self._thread.start()
        else:
            self._write(f"[parley] {label}... ")

    def stop(self, outcome: str | None) -> None:
        """End the step with ``outcome`` (the elapsed time is added); None: it was cut short."""
        if self._label is None:
            return
        label, self._label = self._label, None
        elapsed = time.perf_counter() - self._started
        if self._thread is not None:
            self._done.set()
            self._thread.join()
            self._thread = None
            self._write("\r\033[K")  # erase the spinner line
            if outcome is None:
                return
            self._write(f"[parley] {label}... ")
        self._write("stopped\n" if outcome is None else f"{outcome} in {elapsed:.1f} s\n")

    def _write(self, text: str) -> None:
        self._stream.write(text)
        self._stream.flush()

    def _spin(self, label: str) -> None:
        for frame in itertools.cycle(self._FRAMES):
            elapsed = time.perf_counter() - self._started
            self._write(f"\r{frame} {label}... {elapsed:.1f} s")
            if self._done.wait(0.1):
                return


# -- the model ---------------------------------------------------------------------------


def find_config(explicit: str | None) -> tuple[list[dict[str, Any]], str] | None:
    """(config list, where it came from), or None when there is no OAI_CONFIG_LIST."""
    from .oai import config_list_from_json

    if explicit is not None:
        if not Path(explicit).is_file():
            raise SystemExit(f"parley demo: --config {explicit!r}: no such file")
        name, location, where = explicit, None, f"file {explicit}"
    elif os.environ.get(CONFIG_ENV):
        name, location, where = CONFIG_ENV, "", f"${CONFIG_ENV}"
    elif Path(CONFIG_ENV).is_file():
        name, location, where = CONFIG_ENV, "", f"file ./{CONFIG_ENV}"
    else:
        return None
    try:
        configs = config_list_from_json(name, file_location=location)
    except (OSError, ValueError) as error:
        raise SystemExit(
            f"parley demo: cannot read the config list from {where}: {error}"
        ) from None
    if not configs:
        raise SystemExit(f"parley demo: the config list in {where} is empty")
    return configs, where


def _local_model(progress: _Progress) -> list[dict[str, Any]]:
    """The local model's config list, its weights loaded (with a progress line)."""
    from .local import (
        INSTALL_HINT,
        MODEL_NAME,
        LocalLlamaClient,
        LocalModelUnavailableError,
        local_config_list,
    )

    configs = local_config_list()
    try:
        client = LocalLlamaClient(configs[0])
        progress.start(f"loading {MODEL_NAME} (local, llama.cpp)")
        try:
            client.load()  # agents on the same model share these weights
        except BaseException:
            progress.stop("failed")
            raise
        progress.stop("loaded")
    except LocalModelUnavailableError as error:
        raise SystemExit(
            f"parley demo: no OAI_CONFIG_LIST found, and {error}.\nEither {INSTALL_HINT}, or "
            f"pass --config FILE (or set {CONFIG_ENV}) to use a model you have an API key for."
        ) from None
    return configs


# -- running the code --------------------------------------------------------------------


def _choose_executor(work_dir: Path, no_docker: bool) -> tuple[Any, str]:
    """(executor, a sentence saying where code runs)."""
    from .coding import LocalCommandLineCodeExecutor

    try:
        reason = _why_not_docker(no_docker)
    except ValueError as error:  # an unreadable PARLEY_USE_DOCKER
        raise SystemExit(f"parley demo: {error}") from None
    if reason is None:
        image = _present_image()
        if image is not None:
            from .coding import DockerCommandLineCodeExecutor

            executor = DockerCommandLineCodeExecutor(
                image=image, work_dir=work_dir, timeout=CODE_TIMEOUT
            )
            return executor, f"code runs in a Docker sandbox (image {image})"
        reason = (
            "Docker is running but has no sandbox image (build one with `parley sandbox build`)"
        )
    executor = LocalCommandLineCodeExecutor(work_dir=work_dir, timeout=CODE_TIMEOUT)
    return executor, (
        f"code runs LOCALLY on this machine (in {work_dir}), not in a Docker sandbox: {reason}"
    )


def _why_not_docker(no_docker: bool) -> str | None:
    """Why code cannot run in Docker, or None when the engine is there to use."""
    from .code_utils import decide_use_docker, is_docker_running

    if no_docker:
        return "--no-docker was given"
    if decide_use_docker(None) is False:
        name = "PARLEY_USE_DOCKER" if "PARLEY_USE_DOCKER" in os.environ else "AUTOGEN_USE_DOCKER"
        return f"Docker is turned off by {name}"
    if not is_docker_running():
        return "no Docker engine is reachable"
    return None


def _present_image() -> str | None:
    """The first sandbox image the engine already has (never pulled: the demo works offline)."""
    from .coding.images import image_status

    return image_status("sandbox").chosen


# -- the chat ----------------------------------------------------------------------------


def _watch_replies(assistant: Any, progress: _Progress) -> None:
    """Show progress while the assistant generates, and its time and tokens once it replies."""
    from .agentchat import Agent

    counted = 0

    def started(
        recipient: Any, messages: list[dict[str, Any]] | None = None, *_: Any, **__: Any
    ) -> tuple[bool, None]:
        if not (messages and _is_done(messages[-1])):  # else the assistant will not reply
            progress.start(f"{assistant.name} is generating")
        return False, None  # not a reply: the model's reply function runs next

    def finished(sender: Any, message: Any, recipient: Any, silent: bool) -> Any:
        nonlocal counted
        tokens = _completion_tokens(assistant)
        progress.stop(f"{tokens - counted} tokens" if tokens > counted else "replied")
        counted = tokens
        return message

    assistant.register_reply([Agent, None], started, position=0)
    assistant.register_hook("process_message_before_send", finished)


def _completion_tokens(agent: Any) -> int:
    summary = getattr(agent.client, "total_usage_summary", None) or {}
    return sum(v.get("completion_tokens", 0) for v in summary.values() if isinstance(v, dict))


def _succeeded(message: dict[str, Any]) -> bool:
    """Whether ``message`` is the proxy's report of code that ran with exit code 0."""
    return str(message.get("content") or "").startswith(SUCCESS)


def _is_done(message: dict[str, Any]) -> bool:
    # The assistant stops at a successful run: a 135M model would only restate its code.
    return _succeeded(message) or "TERMINATE" in str(message.get("content") or "")


def _summary(sender: Any, recipient: Any, summary_args: Any) -> str:
    """The successful run's report, else the assistant's last words."""
    history = sender.chat_messages.get(recipient) or [{}]
    last = history[-1]
    if _succeeded(last):
        output = str(last["content"]).partition("Code output:")[2].strip()
        return f"The code ran successfully and printed:\n{output}"
    return str(last.get("content") or "").replace("TERMINATE", "").strip()


def _outcome(history: list[dict[str, Any]], max_turns: int) -> str:
    last = history[-1] if history else {}
    if _succeeded(last):
        return "the code ran successfully"
    if "TERMINATE" in str(last.get("content") or ""):
        return "the assistant said TERMINATE"
    if len(history) >= 2 * max_turns:
        return f"the turn limit ({max_turns} turns) was reached"
    return "no agent had more to say"


def _executions(history: list[dict[str, Any]]) -> list[str]:
    """The exit-code lines of the proxy's execution reports."""
    return [
        str(m.get("content")).splitlines()[0]
        for m in history
        if str(m.get("content") or "").startswith("exitcode:")
    ]


def _cost_line(cost: dict[str, Any] | None) -> str:
    usage = (cost or {}).get("usage_including_cached_inference") or {}
    parts = [
        f"{model}: {u.get('prompt_tokens', 0)} prompt + {u.get('completion_tokens', 0)} "
        "completion tokens"
        for model, u in usage.items()
        if isinstance(u, dict)
    ]
    return f"${usage.get('total_cost', 0.0):.4f}" + (f" ({'; '.join(parts)})" if parts else "")


def demo(config_path: str | None, *, no_docker: bool = False) -> int:
    """Run the demo chat and print how it ended, its summary and its cost; the exit status."""
    from .agentchat import AssistantAgent, UserProxyAgent
    from .io import IOStream

    progress = _Progress()
    found = find_config(config_path)
    with ExitStack() as stack:
        stack.callback(progress.stop, None)
        if found is not None:
            configs, where = found
            _status(f"model {configs[0].get('model')!r} from {where}")
            local = False
        else:
            _status(f"no {CONFIG_ENV} found: using the local model (pass --config to change)")
            configs, local = _local_model(progress), True
        work_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="parley-demo-")))
        executor, where_code_runs = _choose_executor(work_dir, no_docker)
        if hasattr(executor, "stop"):
            stack.callback(executor.stop)  # the sandbox container goes before its work dir
        _status(where_code_runs)

        assistant = AssistantAgent(
            "assistant",
            system_message=LOCAL_SYSTEM_MESSAGE if local else AssistantAgent.DEFAULT_SYSTEM_MESSAGE,
            llm_config={"config_list": configs},
            is_termination_msg=_is_done,
        )
        if any(c.get("model_client_cls") == "LocalLlamaClient" for c in configs):
            from .local import LocalLlamaClient

            assistant.register_model_client(LocalLlamaClient)
        user = UserProxyAgent(
            "user",
            human_input_mode="NEVER",
            code_execution_config={"executor": executor},
            # With max_turns the proxy speaks each turn: it ends the chat on its own report too.
            is_termination_msg=_is_done,
        )
        _watch_replies(assistant, progress)
        result = user.initiate_chat(
            assistant, message=TASK, max_turns=MAX_TURNS, summary_method=_summary
        )

    history = result.chat_history or []
    runs = _executions(history)
    IOStream.get_default().print(
        "=" * 80,
        f"chat ended: {_outcome(history, MAX_TURNS)}",
        f"code executed: {len(runs)} time(s)" + (f", last {runs[-1]}" if runs else ""),
        f"summary: {(result.summary or '').strip() or '(empty)'}",
        f"cost: {_cost_line(result.cost)}",
        sep="\n",
        flush=True,
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="parley", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo_parser = sub.add_parser(
        "demo", help="two agents write and run a small Python script (no configuration needed)"
    )
    demo_parser.add_argument(
        "--config", metavar="FILE", help="an OAI_CONFIG_LIST file to use instead of the local model"
    )
    demo_parser.add_argument(
        "--no-docker", action="store_true", help="run the code on this machine, not in Docker"
    )
    _sandbox_cli.add_parser(sub)
    _logs_cli.add_parser(sub)
    _serve_cli.add_parser(sub)
    _mcp_cli.add_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "sandbox":
        return _sandbox_cli.run(args)
    if args.command == "logs":
        return _logs_cli.run(args)
    if args.command == "serve":
        return _serve_cli.run(args)
    if args.command == "mcp":
        return _mcp_cli.run(args)
    assert args.command == "demo"  # argparse refuses any other
    return demo(args.config, no_docker=args.no_docker)
