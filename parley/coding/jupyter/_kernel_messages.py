"""Running one cell over the Jupyter messaging protocol, the same way for both executors.

A kernel is reached through :class:`KernelChannels`: send a request on the shell channel,
receive the next message of the shell or iopub channel, interrupt the kernel, tell whether it
is still alive. The gateway's websocket (``jupyter_client.py``) and an embedded kernel's ZeroMQ
sockets (``_embedded_channels.py``) both give that; everything else is here:

* :func:`wait_until_ready`: ``kernel_info_request`` until the kernel answers on shell and is
  heard on iopub (resent each second: a request sent while a kernel is still starting can go
  unanswered, and iopub messages sent before the subscription took effect are lost).
* :func:`run_cell`: an ``execute_request``, then the messages whose parent is that request
  (others are ignored, so output of an earlier, interrupted cell never leaks into this one,
  which AutoGen's embedded executor let happen) until the kernel is idle again, gathered by
  :class:`CellReader`. The timeout is the cell's whole running time, not (as in AutoGen) the
  longest silence between two messages, so a cell printing every second is stopped too. At
  the timeout the kernel is interrupted and the reader waits a little for it to become idle:
  the kernel and its variables survive. A cancelled call (``parley._core.runtime``: a cancelled
  chat) interrupts the kernel and raises :class:`~parley.exceptions.ExecutionCancelledError`.

The texts of a cell's result, kept by :class:`CellReader`:

* Stream text is kept as printed (AutoGen put a newline between every two chunks, so one
  ``print`` could come out with a blank line or not); a ``text/plain`` result or display
  starts on a line of its own. The text is capped at ``MAX_OUTPUT_BYTES`` with a marker, as
  the command-line executors' output is.
* ``image/*`` and ``text/html`` become :class:`ExecutionResult.DataItem` objects (saved to
  files by the executors); any other MIME type is JSON-dumped into the text, as in AutoGen.
* An error is ``ERROR: <ename>: <evalue>`` and the traceback, one line per entry, without the
  terminal colour codes (AutoGen showed the ``str`` of the list, escape codes included), after
  the output printed before it (AutoGen dropped that output). A ``%%bash`` cell's failure is
  ``ERROR: the shell script exited with status N``.
* A timeout ends the text with ``ERROR: Timeout: the code block ran longer than N s; it was
  interrupted; the kernel keeps its variables.`` (or ``...; it went on running after an
  interrupt.``, and the cell ends ``"stuck"``); a kernel that dies under the cell (its process
  ends, or a gateway reports it ``restarting``/``dead``) with ``ERROR: the kernel died while
  running the code block (its variables are lost).``. AutoGen's texts were ``ERROR: Timeout
  waiting for output from code block.`` and nothing for a dead kernel (it waited for the
  timeout).
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal, Protocol

from ..._core.runtime import current_token
from ...exceptions import ExecutionCancelledError
from .._process import MAX_OUTPUT_BYTES, CappedBuffer

__all__ = [
    "CellOutcome",
    "CellReader",
    "ExecutionResult",
    "KernelChannels",
    "execute_content",
    "new_message",
    "run_cell",
    "wait_until_ready",
]

_TICK_SECONDS = 0.25  # how long one receive waits: cancellation is noticed within this
_INTERRUPT_GRACE_SECONDS = 5.0  # for an interrupted cell to end before the kernel counts as stuck
_RESEND_SECONDS = 1.0
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_EXIT_STATUS = re.compile(r"returned non-zero exit status (-?\d+)")

CellEnd = Literal["done", "interrupted", "stuck", "died"]
"""How a cell ended: it finished; it timed out and the interrupt stopped it; it timed out and
went on running after the interrupt; the kernel died under it."""


@dataclass
class ExecutionResult:
    """A cell's result: whether it ran without error, its text, its images and HTML."""

    @dataclass
    class DataItem:
        """Rich output: a MIME type and its data (base64 for binary images)."""

        mime_type: str
        data: str

    is_ok: bool
    output: str
    data_items: list[ExecutionResult.DataItem] = field(default_factory=list)


@dataclass(frozen=True)
class CellOutcome:
    """A cell's result and how it ended (the executors restart a stuck or dead kernel)."""

    result: ExecutionResult
    end: CellEnd


class KernelChannels(Protocol):
    """A connection to one kernel."""

    def send(self, msg_type: str, content: Mapping[str, Any]) -> str:
        """Send a shell request; its message id."""
        ...

    def receive(self, timeout: float) -> Mapping[str, Any] | None:
        """The next shell or iopub message, or None if none came within ``timeout`` seconds."""
        ...

    def interrupt(self) -> None:
        """Interrupt what the kernel is running (a ``KeyboardInterrupt`` in Python)."""
        ...

    def alive(self) -> bool:
        """False once the kernel process is known to be dead."""
        ...


def new_message(msg_type: str, content: Mapping[str, Any], session: str) -> dict[str, Any]:
    """A shell request in the Jupyter messaging protocol (v5), as a websocket carries it."""
    header = {
        "msg_id": uuid.uuid4().hex,
        "msg_type": msg_type,
        "session": session,
        "username": "parley",
        "date": datetime.now(timezone.utc).isoformat(),
        "version": "5.3",
    }
    return {
        "header": header,
        "parent_header": {},
        "metadata": {},
        "content": dict(content),
        "channel": "shell",
        "buffers": [],
    }


def execute_content(code: str) -> dict[str, Any]:
    """An ``execute_request``'s content: visible, in the history, no stdin, stop on error."""
    return {
        "code": code,
        "silent": False,
        "store_history": True,
        "user_expressions": {},
        "allow_stdin": False,
        "stop_on_error": True,
    }


def _parent_id(msg: Mapping[str, Any]) -> Any:
    parent = msg.get("parent_header") or {}
    return parent.get("msg_id")


def wait_until_ready(channels: KernelChannels, timeout: float | None) -> bool:
    """Whether the kernel answered a ``kernel_info_request`` within ``timeout`` seconds (None:
    wait for ever), on the shell channel *and* with a status message on iopub: a subscription
    to iopub takes effect a moment after it is made, and messages published before that are
    lost, so a kernel that answers on shell alone may not be heard yet (jupyter_client waits the
    same way)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    sent: set[str] = set()
    replied = heard = False
    next_send = 0.0
    while not (replied and heard):
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            return False
        if now >= next_send:
            sent.add(channels.send("kernel_info_request", {}))
            next_send = now + _RESEND_SECONDS
        wait = next_send - now if deadline is None else min(next_send, deadline) - now
        msg = channels.receive(max(wait, 0.0))
        if msg and _parent_id(msg) in sent:
            replied = replied or msg.get("msg_type") == "kernel_info_reply"
            heard = heard or msg.get("msg_type") == "status"
    return True


class CellReader:
    """Gathers the outputs of one ``execute_request`` from the messages that answer it."""

    def __init__(self, msg_id: str, *, max_output: int = MAX_OUTPUT_BYTES) -> None:
        self.msg_id = msg_id
        self.finished = False
        self._text = CappedBuffer(max_output)
        self._at_line_start = True
        self._items: list[ExecutionResult.DataItem] = []
        self._error: str | None = None
        self._shell = False

    def for_shell(self) -> None:
        """Read a ``%%bash`` cell: its failure is the script's exit status (IPython's traceback
        of the magic, and the script it repeats, say nothing more)."""
        self._shell = True

    def feed(self, msg: Mapping[str, Any]) -> bool:
        """Take one message (ignored unless it answers this request); whether the cell is
        finished (the kernel is idle again)."""
        if self.finished or _parent_id(msg) != self.msg_id:
            return self.finished
        kind, content = msg.get("msg_type"), msg.get("content") or {}
        if kind == "stream":
            self._write(str(content.get("text", "")))
        elif kind in ("execute_result", "display_data"):
            self._display(content.get("data") or {})
        elif kind == "error" and self._error is None:
            self._error = self._format_error(content)
        elif kind == "status" and content.get("execution_state") == "idle":
            self.finished = True
        return self.finished

    def result(self, trailer: str | None = None) -> ExecutionResult:
        """What the cell gave so far; ``trailer`` (an error line) ends the text if given,
        else the cell's own error, if any."""
        ending = trailer if trailer is not None else self._error
        if ending is not None:
            self._line(ending)
        return ExecutionResult(
            is_ok=ending is None, output=self._text.text(), data_items=list(self._items)
        )

    def _write(self, text: str) -> None:
        if text:
            self._text.feed(text.encode("utf-8", "replace"))
            self._at_line_start = text.endswith("\n")

    def _line(self, text: str) -> None:
        """``text`` on a line of its own."""
        if not self._at_line_start:
            self._write("\n")
        self._write(text if text.endswith("\n") else text + "\n")

    def _display(self, data: Mapping[str, Any]) -> None:
        for mime, value in data.items():
            if mime == "text/plain":
                self._line(str(value))
            elif mime.startswith("image/") or mime == "text/html":
                self._items.append(ExecutionResult.DataItem(mime_type=mime, data=str(value)))
            else:
                self._line(json.dumps(value))

    def _format_error(self, content: Mapping[str, Any]) -> str:
        name, value = content.get("ename", "Error"), str(content.get("evalue", ""))
        status = _EXIT_STATUS.search(value) if self._shell else None
        if status is not None and name == "CalledProcessError":
            return f"ERROR: the shell script exited with status {status.group(1)}"
        text = f"ERROR: {name}: {value}"
        traceback = content.get("traceback") or []
        if traceback and not self._shell:
            text += "\n" + _ANSI.sub("", "\n".join(str(line) for line in traceback))
        return text


def run_cell(
    channels: KernelChannels, code: str, timeout: float | None, *, shell: bool = False
) -> CellOutcome:
    """Run ``code`` as one cell and gather its outputs (the module's rules); ``shell``: it is a
    ``%%bash`` cell (see :meth:`CellReader.for_shell`).

    Raises :class:`ExecutionCancelledError` if the calling step is cancelled (the kernel is
    interrupted first).
    """
    reader = CellReader(channels.send("execute_request", execute_content(code)))
    if shell:
        reader.for_shell()
    deadline = None if timeout is None else time.monotonic() + timeout
    token = current_token()
    while True:
        if token is not None and token.cancelled:
            channels.interrupt()
            _settle(channels, reader, _TICK_SECONDS * 4)
            raise ExecutionCancelledError("the code block was stopped: its chat was cancelled")
        remaining = _TICK_SECONDS if deadline is None else deadline - time.monotonic()
        if remaining <= 0:
            break
        msg = channels.receive(min(remaining, _TICK_SECONDS))
        if msg is None:
            if not channels.alive():
                return _died(reader)
            continue
        if _kernel_restarted(msg):
            return _died(reader)
        if reader.feed(msg):
            return CellOutcome(reader.result(), "done")
    channels.interrupt()
    settled = _settle(channels, reader, _INTERRUPT_GRACE_SECONDS)
    if settled is None:
        return _died(reader)
    note = (
        "it was interrupted; the kernel keeps its variables"
        if settled
        else "it went on running after an interrupt"
    )
    trailer = f"ERROR: Timeout: the code block ran longer than {timeout:g} s; {note}."
    return CellOutcome(reader.result(trailer), "interrupted" if settled else "stuck")


def _settle(channels: KernelChannels, reader: CellReader, within: float) -> bool | None:
    """Read the interrupted cell's last messages until it ends: whether it did within
    ``within`` seconds; None if the kernel died."""
    deadline = time.monotonic() + within
    while (remaining := deadline - time.monotonic()) > 0:
        msg = channels.receive(min(remaining, _TICK_SECONDS))
        if msg is None:
            if not channels.alive():
                return None
            continue
        if _kernel_restarted(msg):
            return None
        # The KeyboardInterrupt error is the interrupt's, not the code's: the timeout says it.
        if msg.get("msg_type") != "error" and reader.feed(msg):
            return True
    return False


def _kernel_restarted(msg: Mapping[str, Any]) -> bool:
    """A gateway's news that the kernel died (it restarts it), whatever the parent."""
    content = msg.get("content") or {}
    return msg.get("msg_type") == "status" and content.get("execution_state") in (
        "restarting",
        "dead",
    )


def _died(reader: CellReader) -> CellOutcome:
    trailer = "ERROR: the kernel died while running the code block (its variables are lost)."
    return CellOutcome(reader.result(trailer), "died")
