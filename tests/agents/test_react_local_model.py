"""ReActAgent end to end on the embedded SmolLM2-135M (``@pytest.mark.local_model``, slow).

The tiny model is no reasoner: the test asserts that the loop runs and ends cleanly within its
limits (iterations, tokens per answer) and that every request asked the model to stop at the
Observation, not what it answers. It has no wall-clock bound: a loaded machine runs the model
slowly, and the limits, not the time, are what the loop must respect.
Like tests/test_local_model.py, it fails (does not skip) when the ``local`` extra is missing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from parley.agents import ReActAgent
from parley.agents.react import STOP_SEQUENCES
from parley.local import (
    LocalLlamaClient,
    local_config_list,
)

pytestmark = [pytest.mark.local_model, pytest.mark.slow, pytest.mark.timeout(900)]


class RecordingLocalClient(LocalLlamaClient):
    """The local model, keeping the parameters of each request it was given and the tokens
    each answer took."""

    requests: ClassVar[list[dict[str, Any]]] = []
    answer_tokens: ClassVar[list[int]] = []

    def create(self, params: dict[str, Any]) -> Any:
        type(self).requests.append(dict(params))
        response = super().create(params)
        type(self).answer_tokens.append(self.get_usage(response)["completion_tokens"])
        return response


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
    RecordingLocalClient.answer_tokens = []
    config = local_config_list(max_tokens=96, model_client_cls="RecordingLocalClient")
    agent = ReActAgent(
        "solver", [Calculator()], llm_config={"config_list": config}, max_iterations=3
    )
    agent.register_model_client(RecordingLocalClient)

    answer = agent.run("What is 6 times 7? Use the calculator.")

    assert isinstance(answer, str)
    assert answer.strip()
    assert agent.stop_reason in ("final_answer", "max_iterations")
    requests = RecordingLocalClient.requests
    assert 1 <= len(requests) <= 3  # max_iterations
    answer_tokens = RecordingLocalClient.answer_tokens
    assert len(answer_tokens) == len(requests)
    assert all(n <= 96 for n in answer_tokens), answer_tokens  # max_tokens
    assert all(r["stop"] == list(STOP_SEQUENCES) for r in requests)
    assert len(agent.steps) == len(requests) - (agent.stop_reason == "final_answer")
    for step in agent.steps:
        assert step.observation  # every step was answered: a tool result or a correction
    if agent.stop_reason == "max_iterations":
        assert answer.startswith("Stopped after 3 iterations")
    usage = agent.get_total_usage()
    assert usage is not None
    assert usage["total_cost"] == 0
