"""ReActAgent end to end on the embedded SmolLM2-135M (``@pytest.mark.local_model``, slow).

The tiny model is no reasoner: the test asserts that the loop runs and ends cleanly within its
limits and that every request asked the model to stop at the Observation, not what it answers.
Like tests/test_local_model.py, it fails (does not skip) when the ``local`` extra is missing.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, ClassVar

import pytest

from parley.agents import ReActAgent
from parley.agents.react import STOP_SEQUENCES
from parley.local import (
    LocalLlamaClient,
    local_config_list,
)

pytestmark = [pytest.mark.local_model, pytest.mark.slow, pytest.mark.timeout(180)]


class RecordingLocalClient(LocalLlamaClient):
    """The local model, keeping the parameters of each request it was given."""

    requests: ClassVar[list[dict[str, Any]]] = []

    def create(self, params: dict[str, Any]) -> Any:
        type(self).requests.append(dict(params))
        return super().create(params)


class Calculator:
    name = "calculator"
    description = "evaluates an arithmetic expression such as 2 + 3 * 4. Input: the expression."

    def __init__(self) -> None:
        self.asked: list[str] = []

    def use(self, input: str) -> str:
        self.asked.append(input)
        return "42"


def test_the_loop_runs_on_the_local_model_and_ends_within_its_limits(model_file: Path) -> None:
    RecordingLocalClient.requests = []
    config = local_config_list(max_tokens=96, model_client_cls="RecordingLocalClient")
    agent = ReActAgent(
        "solver", [Calculator()], llm_config={"config_list": config}, max_iterations=3
    )
    agent.register_model_client(RecordingLocalClient)

    started = time.monotonic()
    answer = agent.run("What is 6 times 7? Use the calculator.")
    elapsed = time.monotonic() - started

    assert isinstance(answer, str)
    assert answer.strip()
    assert agent.stop_reason in ("final_answer", "max_iterations")
    requests = RecordingLocalClient.requests
    assert 1 <= len(requests) <= 3
    assert all(r["stop"] == list(STOP_SEQUENCES) for r in requests)
    assert len(agent.steps) == len(requests) - (agent.stop_reason == "final_answer")
    for step in agent.steps:
        assert step.observation  # every step was answered: a tool result or a correction
    if agent.stop_reason == "max_iterations":
        assert answer.startswith("Stopped after 3 iterations")
    usage = agent.get_total_usage()
    assert usage is not None
    assert usage["total_cost"] == 0
    assert elapsed < 120
