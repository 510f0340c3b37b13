"""The dangerous-command guard: one guard for the executor and the legacy path, whatever the
flag order. It is a guard against careless commands, not a sandbox.

Before the fix the guard matched only the literal ``rm -rf`` and the legacy
``code_utils.execute_code`` path had no guard at all. Each case aims the command at a real
folder: if the guard misses, the folder is gone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from parley import AssistantAgent, UserProxyAgent
from parley.code_utils import execute_code
from parley.coding import CodeBlock, LocalCommandLineCodeExecutor

RECURSIVE_FORCE = [
    "rm -rf victim",
    "rm -r -f victim",
    "rm -f -r victim",
    "rm -fR victim",
    "rm -Rf victim",
    "rm --recursive --force victim",
    "rm --force -r victim",
    "rm --rec --f victim",
    "rm victim -rf",
    "rm -v -r -f victim",
    "/bin/rm -r -f victim",
    "echo start; rm -r -f victim && echo done",
    "ls\nrm -r -f victim\n",
    "x=$(rm -r -f victim)",
    "find . -name victim | xargs rm -r -f",
]
HARMLESS = [
    "rm -r victim/inner",  # recursive without force: rm asks nothing here, and that is fine
    "rm -f victim/inner/file",
    "rm -r -- -f",  # '-f' after '--' is a file name; there is none, so rm just fails
    "echo 'rm -rf victim'",
    "# rm -rf victim\necho comment",
]


@pytest.fixture
def work_dir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    (path / "victim" / "inner").mkdir(parents=True)
    (path / "victim" / "inner" / "file").write_text("precious")
    return path


@pytest.mark.parametrize("command", RECURSIVE_FORCE)
@pytest.mark.parametrize("lang", ["sh", "bash", "shell"])
def test_executor_refuses_every_spelling(work_dir: Path, command: str, lang: str) -> None:
    executor = LocalCommandLineCodeExecutor(work_dir=work_dir)
    with pytest.raises(ValueError, match="Potentially dangerous command detected"):
        executor.execute_code_blocks([CodeBlock(language=lang, code=command)])
    assert (work_dir / "victim").is_dir()
    with pytest.raises(ValueError, match="rm -rf"):
        LocalCommandLineCodeExecutor.sanitize_command(lang, command)


@pytest.mark.parametrize("command", RECURSIVE_FORCE)
def test_legacy_path_refuses_every_spelling(work_dir: Path, command: str) -> None:
    exit_code, logs, image = execute_code(
        command, lang="sh", work_dir=str(work_dir), use_docker=False
    )
    assert (exit_code, image) == (1, None)
    assert "Potentially dangerous command detected" in logs
    assert (work_dir / "victim").is_dir()


@pytest.mark.parametrize("command", HARMLESS)
def test_other_commands_run(work_dir: Path, command: str) -> None:
    LocalCommandLineCodeExecutor.sanitize_command("sh", command)
    _, logs, _ = execute_code(command, lang="sh", work_dir=str(work_dir), use_docker=False)
    assert "Potentially dangerous" not in logs


def test_other_languages_are_not_judged(work_dir: Path) -> None:
    """A guard for shell commands only: Python code is not parsed for shell commands."""
    LocalCommandLineCodeExecutor.sanitize_command("python", "import os; os.system('rm -rf x')")


def test_a_refused_block_in_a_chat_is_a_failed_run_the_model_reads(
    work_dir: Path, fake_llm: Any
) -> None:
    fake_llm.add_reply("```sh\nrm -r -f victim\n```")
    fake_llm.add_reply("Sorry. TERMINATE")
    user = UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config={"executor": LocalCommandLineCodeExecutor(work_dir=work_dir)},
        is_termination_msg=lambda m: "TERMINATE" in str(m.get("content") or ""),
    )
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    result = user.initiate_chat(assistant, message="Clean up.")
    refusal = result.chat_history[2]["content"]
    assert refusal.startswith("exitcode: 1 (execution failed)")
    assert "Potentially dangerous command detected" in refusal
    assert "Potentially dangerous" in fake_llm.requests[1]["messages"][-1]["content"]
    assert result.chat_history[-1]["content"] == "Sorry. TERMINATE"
    assert (work_dir / "victim" / "inner" / "file").read_text() == "precious"
