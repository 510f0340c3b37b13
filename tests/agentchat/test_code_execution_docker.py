"""A two-agent chat whose assistant writes code: the proxy runs it in the Docker sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from parley import AssistantAgent, UserProxyAgent
from parley.coding import DockerCommandLineCodeExecutor
from parley.testing import FakeLLMServer
from tests.coding._docker_support import ensure_sandbox_image

pytestmark = pytest.mark.docker

CODE = "Let me check.\n```python\nimport os, platform\nprint('uid', os.getuid(), 'py', platform.python_version_tuple()[0])\n```"


def test_legacy_config_runs_code_in_docker(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    image = ensure_sandbox_image()
    fake_llm.add_reply(CODE).add_reply("TERMINATE")
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    proxy = UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config={"work_dir": str(tmp_path), "use_docker": image},
    )
    proxy.initiate_chat(assistant, message="which python?", silent=True)
    output = fake_llm.requests[1]["messages"][-1]["content"]
    assert output.startswith("exitcode: 0 (execution succeeded)\nCode output: ")
    assert "py 3" in output
    assert "uid 0" not in output  # the sandbox runs as non-root


def test_executor_form_runs_code_in_docker(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    image = ensure_sandbox_image()
    fake_llm.add_reply(
        "```python\n# filename: result.txt.py\nopen('result.txt', 'w').write('from the sandbox')\nprint('written')\n```"
    )
    fake_llm.add_reply("TERMINATE")
    with DockerCommandLineCodeExecutor(image=image, work_dir=tmp_path, timeout=30) as executor:
        assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
        proxy = UserProxyAgent(
            "user", human_input_mode="NEVER", code_execution_config={"executor": executor}
        )
        proxy.initiate_chat(assistant, message="write a file", silent=True)
    assert fake_llm.requests[1]["messages"][-1]["content"] == (
        "exitcode: 0 (execution succeeded)\nCode output: written\n"
    )
    assert (tmp_path / "result.txt").read_text() == "from the sandbox"  # readable on the host
