"""A TagAgent's loop on the embedded SmolLM2-135M model, end to end (slow, `local` extra).

The tiny model seldom follows the tool protocol; the test checks what must hold whatever it
writes: every reply is answered (a tool result or a correction), the run ends within its step
limit, and the requests went through the agent's client.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from parley.agents import TagAgent, TagPrompts
from parley.io import IOScripted, IOStream
from parley.local import (
    MODEL_NAME,
    LocalLlamaClient,
    local_config_list,
)

MAX_STEPS = 3


def count(text: str) -> str:
    """Count the characters of the input."""
    return str(len(text))


@pytest.mark.local_model
@pytest.mark.slow
@pytest.mark.timeout(120)
def test_the_loop_runs_on_the_local_model_and_ends_within_its_limits(
    model_file: Path, tmp_path: Path
) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("The password is swordfish.\n", encoding="utf-8")
    agent = TagAgent(
        "helper",
        llm_config={"config_list": local_config_list(max_tokens=128, n_ctx=2048)},
        tools={"COUNT": count},
        readme=readme,
        max_steps=MAX_STEPS,
    )
    agent.register_model_client(LocalLlamaClient)

    # The human answers any question; the model may also never ask one.
    with IOStream.set_default(IOScripted(lambda prompt: "swordfish")):
        reply = agent.run("Read the README and tell me the password.")

    transcript = agent.last_transcript
    assert transcript is not None
    assert 1 <= transcript.steps <= MAX_STEPS
    assert agent.stop_reason in ("end_run", "max_steps")
    if agent.stop_reason == "max_steps":
        assert reply == TagPrompts().render("limit_reached", steps=MAX_STEPS)
        assert transcript.steps == MAX_STEPS
    roles = [m["role"] for m in agent.memory]
    # The task, then each model reply, answered unless it ended the run.
    assert roles[0] == "user"
    assert roles.count("assistant") == transcript.steps
    assert all(a != b for a, b in itertools.pairwise(roles))
    usage = agent.get_total_usage()
    assert usage is not None
    assert 0 < usage[MODEL_NAME]["completion_tokens"] <= 128 * transcript.steps
    assert usage["total_cost"] == 0
