"""``parley serve SCRIPT``: an unchanged script run with the web page as its human, in a real
subprocess, answered over the page's websocket."""

from __future__ import annotations

import queue
import re
import signal
import subprocess
import sys
import textwrap
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from websockets.sync.client import connect

from parley import cli

from ._support import WAIT, Page, ws_url

# The bound on what the `parley serve` process itself does: start (Python, parley, the page's
# server) and exit. A second or two here; far more on a loaded machine.
PROCESS_WAIT = 120.0

SCRIPT = """
    import sys
    from parley import ConversableAgent

    user = ConversableAgent("user", llm_config=False, human_input_mode="ALWAYS")
    bot = ConversableAgent("bot", llm_config=False, default_auto_reply="Noted.")
    result = user.initiate_chat(bot, message="hello " + sys.argv[1], max_turns=2)
    print("history:", [m["content"] for m in result.chat_history])
"""


class _Lines:
    """A stream's lines, read by a thread, taken with a bounded wait."""

    def __init__(self, stream: object) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: object) -> None:
        for line in stream:  # type: ignore[attr-defined]
            self.lines.put(line)

    def until(self, pattern: str) -> re.Match[str]:
        while True:
            line = self.lines.get(timeout=PROCESS_WAIT)
            match = re.search(pattern, line)
            if match:
                return match


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "chat.py"
    path.write_text(textwrap.dedent(SCRIPT), encoding="utf-8")
    return path


@pytest.fixture
def run_serve(script: Path) -> Iterator[object]:
    processes: list[subprocess.Popen[str]] = []

    def start(*options: str) -> tuple[subprocess.Popen[str], _Lines]:
        process = subprocess.Popen(
            [sys.executable, "-m", "parley", "serve", *options, str(script), "world"],
            cwd=script.parent,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        processes.append(process)
        return process, _Lines(process.stderr)

    yield start
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=PROCESS_WAIT)


def _answer_the_prompt(url: str, text: str) -> None:
    with connect(ws_url(url), open_timeout=WAIT) as websocket:
        page = Page(websocket)
        request = page.request()
        assert request["prompt"].startswith("Provide feedback to bot.")
        assert page.act(type="answer", request=request["id"], action="send", text=text)["ok"]


def test_serve_runs_the_script_with_the_page_as_its_human(run_serve: object) -> None:
    process, stderr = run_serve("--exit")  # type: ignore[operator]
    url = stderr.until(r"the page for the human: (http://127\.0\.0\.1:\d+/\?token=\S+)").group(1)
    _answer_the_prompt(url, "from the web")
    out, _ = process.communicate(timeout=PROCESS_WAIT)
    assert process.returncode == 0
    assert "history: ['hello world', 'Noted.', 'from the web', 'Noted.']" in out
    assert "bot (to user):\n\nNoted." in out  # the transcript is echoed to the terminal too


def test_the_page_stays_up_until_ctrl_c(run_serve: object) -> None:
    process, stderr = run_serve()  # type: ignore[operator]
    url = stderr.until(r"the page for the human: (\S+)").group(1)
    _answer_the_prompt(url, "bye")
    stderr.until("the script has ended")
    with connect(ws_url(url), open_timeout=WAIT) as websocket:
        (chat,) = Page(websocket).snapshot["chats"]
    assert chat["status"] == "ended"
    assert chat["termination_reason"] == "max_turns"
    with urllib.request.urlopen(url, timeout=WAIT) as response:
        assert response.status == 200
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=PROCESS_WAIT)
    assert process.returncode == 0
    assert "'bye'" in out


def test_serve_refuses_a_missing_script(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["serve", str(tmp_path / "nope.py")]) == 2
    assert "nope.py: no such file" in capsys.readouterr().err
