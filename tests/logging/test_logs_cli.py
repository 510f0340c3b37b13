"""``parley logs``: the list of chats, one chat, and clear refusals."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from parley import runtime_logging
from parley.cli import main
from parley.testing import FakeLLMServer

from . import chats

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def logged(tmp_path: Path, dbname: str) -> dict[str, object]:
    with FakeLLMServer() as fake:
        runtime_logging.start(config={"dbname": dbname})
        results = {
            "tool": chats.tool_chat(fake),
            "code": chats.code_chat(fake, tmp_path / "work"),
            "nested": chats.nested_chat(fake),
        }
        runtime_logging.stop()
    return results


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "parley", "logs", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_list_as_a_command(logged: dict[str, object], dbname: str) -> None:
    done = run_cli(dbname)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split()[:3] == ["chat", "start", "(UTC)"]
    tool = logged["tool"]
    row = next(line for line in lines if line.startswith(tool.run_id[:8]))  # type: ignore[attr-defined]
    assert "user -> assistant" in row
    assert "is_termination_msg" in row
    assert row.split()[-4:-1] == ["4", "2", f"{tool.usage.cost:.6f}"]  # type: ignore[attr-defined]
    nested = logged["nested"]
    assert any(line.startswith("  ") and "critic -> reviewer" in line for line in lines)
    assert any(line.startswith(nested.run_id[:8]) for line in lines)  # type: ignore[attr-defined]


def test_one_chat_in_process(
    logged: dict[str, object], dbname: str, capsys: pytest.CaptureFixture[str]
) -> None:
    tool = logged["tool"]
    assert main(["logs", dbname, tool.run_id[:6]]) == 0  # type: ignore[attr-defined]
    out = capsys.readouterr().out
    assert f"chat {tool.run_id}: user -> assistant" in out  # type: ignore[attr-defined]
    transcript = out.split("Transcript\n")[1].split("\n\n")[0]
    assert transcript.splitlines() == [
        "[1] user -> assistant:",
        "    2+3?",
        "[2] assistant -> user:",
        '    tool call add({"a": 2, "b": 3})',
        "[3] user -> assistant:",
        "    5",
        "[4] assistant -> user:",
        "    TERMINATE",
    ]
    agents = out.split("Cost per agent (with nested chats)\n")[1].split("\n\n")[0]
    assert any(
        line.startswith("assistant") and line.split()[1] == "2" for line in agents.splitlines()
    )
    assert agents.splitlines()[-1].split()[-1] == f"{tool.usage.cost:.6f}"  # type: ignore[attr-defined]
    assert "fake-model" in out.split("Cost per model")[1]
    timings = out.split("Time (with nested chats)\n")[1].splitlines()
    assert timings[3].split()[:3] == ["model", "calls", "2"]
    assert timings[4].split()[:3] == ["tool", "calls", "1"]


def test_a_chat_with_code_and_a_nested_chat(
    logged: dict[str, object], dbname: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, nested = logged["code"], logged["nested"]
    assert main(["logs", dbname, code.run_id]) == 0  # type: ignore[attr-defined]
    out = capsys.readouterr().out
    timings = out.split("Time (with nested chats)\n")[1].splitlines()
    code_line = timings[5].split()
    assert code_line[:3] == ["code", "execution", "1"]
    assert float(code_line[3]) > 0
    assert "6 * 7" not in out.split("Transcript")[0]  # the code is in the transcript only
    assert "print(6 * 7)" in out.split("Transcript")[1]
    assert main(["logs", dbname, nested.run_id[:8]]) == 0  # type: ignore[attr-defined]
    out = capsys.readouterr().out
    assert "(nested chat " in out
    assert "critic -> reviewer" in out
    assert "reviewer" in out.split("Cost per agent")[1]  # the nested chat's cost is included
    assert f"{nested.usage.cost:.6f}" in out  # type: ignore[attr-defined]


def test_refusals(tmp_path: Path, logged: dict[str, object], dbname: str) -> None:
    done = run_cli(str(tmp_path / "nope.db"))
    assert done.returncode == 1
    assert "nope.db: no such file" in done.stderr
    text = tmp_path / "notes.txt"
    text.write_text("not a database at all, just some text that is long enough" * 20)
    done = run_cli(str(text))
    assert done.returncode == 1
    assert "not a SQLite database" in done.stderr
    done = run_cli(dbname, "zzzz")
    assert done.returncode == 1
    assert "no chat with an id starting with 'zzzz'" in done.stderr
    done = run_cli(dbname, "")
    assert done.returncode == 0  # an empty id means the list
    ids = [r.run_id for r in logged.values()]  # type: ignore[attr-defined]
    common = next((c for c in "0123456789abcdef" if sum(i.startswith(c) for i in ids) > 1), None)
    if common is not None:
        done = run_cli(dbname, common)
        assert done.returncode == 1
        assert "chats have ids starting with" in done.stderr


def test_an_ambiguous_prefix(dbname: str, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeLLMServer() as fake:
        runtime_logging.start(config={"dbname": dbname})
        chats.tool_chat(fake)
        runtime_logging.stop()
    con = sqlite3.connect(dbname)
    con.execute(
        "INSERT INTO chats (chat_id, sender, recipient) SELECT chat_id || 'x', sender, recipient FROM chats"
    )
    con.commit()
    (chat_id,) = con.execute("SELECT chat_id FROM chats ORDER BY id").fetchone()
    con.close()
    assert main(["logs", dbname, chat_id[:4]]) == 1
    assert "2 chats have ids starting with" in capsys.readouterr().err


def test_an_autogen_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "autogen.db"
    con = sqlite3.connect(path)
    con.execute(
        "CREATE TABLE chat_completions(id INTEGER PRIMARY KEY, invocation_id TEXT, session_id "
        "TEXT, is_cached INTEGER, cost REAL, start_time DATETIME, end_time DATETIME)"
    )
    con.execute(
        "INSERT INTO chat_completions (session_id, is_cached, cost, start_time, end_time) "
        "VALUES ('s-1234567890', 0, 0.25, '2024-01-01 00:00:00', '2024-01-01 00:00:01')"
    )
    con.commit()
    con.close()
    assert main(["logs", str(path)]) == 0
    out = capsys.readouterr().out
    assert "no chats table (it was written by AutoGen" in out
    assert "s-123456" in out
    assert "0.250000" in out
    assert main(["logs", str(path), "abc"]) == 1
    assert "chats cannot be shown" in capsys.readouterr().err
    other = tmp_path / "other.db"
    sqlite3.connect(other).close()
    other.write_bytes(other.read_bytes())
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    assert main(["logs", str(other)]) == 1
    assert "not a runtime log" in capsys.readouterr().err
