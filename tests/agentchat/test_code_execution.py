"""The user proxy runs the code it receives: legacy config and executor form."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from parley import AssistantAgent, UserProxyAgent
from parley.coding import LocalCommandLineCodeExecutor
from parley.testing import FakeLLMServer

PY_BLOCK = "Run this:\n```python\nprint('hello from code')\n```"


def _chat(fake_llm: FakeLLMServer, proxy: UserProxyAgent, *replies: str) -> Any:
    for reply in replies:
        fake_llm.add_reply(reply)
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    return proxy.initiate_chat(assistant, message="do it", silent=True)


def test_legacy_local_execution_result_reaches_the_model(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    proxy = UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config={"work_dir": str(tmp_path), "use_docker": False},
    )
    _chat(fake_llm, proxy, PY_BLOCK, "TERMINATE")
    last = fake_llm.requests[1]["messages"][-1]
    assert last["content"] == "exitcode: 0 (execution succeeded)\nCode output: \nhello from code\n"
    assert last["role"] == "user"


def test_several_blocks_and_failures(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    proxy = UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config={"work_dir": str(tmp_path), "use_docker": False},
    )
    text = "```python\nprint('hi')\n```\n```sh\necho there\n```\n```ruby\nputs 1\n```\n```sh\necho never\n```"
    _chat(fake_llm, proxy, text, "TERMINATE")
    reply = fake_llm.requests[1]["messages"][-1]["content"]
    assert reply.startswith("exitcode: 1 (execution failed)\nCode output: \nhi\n\nthere\n")
    assert "unknown language ruby" in reply
    assert "never" not in reply


def test_filename_convention_writes_inside_work_dir(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    proxy = UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config={"work_dir": str(tmp_path), "use_docker": False},
    )
    _chat(fake_llm, proxy, "```python\n# filename: sub/app.py\nprint(6 * 7)\n```", "TERMINATE")
    assert (tmp_path / "sub" / "app.py").read_text().endswith("print(6 * 7)")
    assert "42" in fake_llm.requests[1]["messages"][-1]["content"]


def test_a_terminating_message_is_never_executed(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    marker = tmp_path / "ran.txt"
    proxy = UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config={"work_dir": str(tmp_path), "use_docker": False},
        is_termination_msg=lambda m: "TERMINATE" in (m.get("content") or ""),
    )
    result = _chat(
        fake_llm, proxy, f"```python\nopen({str(marker)!r}, 'w').write('x')\n```\nTERMINATE"
    )
    assert not marker.exists()
    assert len(result.chat_history) == 2


def test_executor_form(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    executor = LocalCommandLineCodeExecutor(work_dir=tmp_path, timeout=10)
    proxy = UserProxyAgent(
        "user", human_input_mode="NEVER", code_execution_config={"executor": executor}
    )
    _chat(fake_llm, proxy, PY_BLOCK, "TERMINATE")
    assert fake_llm.requests[1]["messages"][-1]["content"] == (
        "exitcode: 0 (execution succeeded)\nCode output: hello from code\n"
    )
    assert proxy.code_executor is executor


def test_executor_form_refuses_legacy_keys(tmp_path: Path) -> None:
    executor = LocalCommandLineCodeExecutor(work_dir=tmp_path)
    for key in ("use_docker", "work_dir", "timeout"):
        with pytest.raises(ValueError, match=key):
            UserProxyAgent("u", code_execution_config={"executor": executor, key: 1})


def test_docker_is_checked_when_code_runs_not_at_construction(
    fake_llm: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    monkeypatch.delenv("AUTOGEN_USE_DOCKER", raising=False)
    monkeypatch.delenv("PARLEY_USE_DOCKER", raising=False)
    monkeypatch.chdir(tmp_path)
    proxy = UserProxyAgent(
        "user", human_input_mode="NEVER", code_execution_config={"work_dir": str(tmp_path)}
    )
    assert proxy.use_docker is True  # constructing needs no engine
    marker = tmp_path / "host.txt"
    with pytest.raises(RuntimeError, match="use_docker") as info:
        _chat(fake_llm, proxy, f"```python\nopen({str(marker)!r}, 'w').write('x')\n```")
    assert "AUTOGEN_USE_DOCKER" in str(info.value)
    assert not marker.exists()  # never fell back to the host


def test_code_execution_off(fake_llm: FakeLLMServer) -> None:
    proxy = UserProxyAgent(
        "user", human_input_mode="NEVER", code_execution_config=False, default_auto_reply="ok"
    )
    _chat(fake_llm, proxy, PY_BLOCK, "TERMINATE")
    assert fake_llm.requests[1]["messages"][-1]["content"] == "ok"
