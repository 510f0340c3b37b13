"""A loop of the user's own, written against parley.agents' public LoopAgent, ask_model and
ask_human: it works in a two-agent chat, asks the model through the agent's client, and its
cost is in the chat's usage."""

from __future__ import annotations

from parley import ConversableAgent
from parley.agents import LoopAgent, ask_human, ask_model
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer


class DraftThenCheck(LoopAgent):
    """Drafts an answer, asks the human whether it stands, revises once if not."""

    async def a_run(self, task: str) -> str:
        draft = await ask_model(self, [{"role": "user", "content": f"Draft: {task}"}])
        verdict = await ask_human(self, f"Keep {draft.text!r}? (y/n)")
        if verdict.strip() == "y":
            return draft.text
        revised = await ask_model(self, [{"role": "user", "content": f"Revise: {draft.text}"}])
        return revised.text


def test_a_loop_of_ones_own_replies_in_a_chat_with_its_cost_counted(
    fake_llm: FakeLLMServer,
) -> None:
    fake_llm.add_reply("first draft").add_reply("second draft")
    loop = DraftThenCheck(
        "writer", llm_config={"config_list": fake_llm.config_list(price=[0.01, 0.02])}
    )
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    with IOStream.set_default(IOScripted(["n"])):
        result = user.initiate_chat(loop, message="a haiku about tea", max_turns=1)
    assert result.chat_history[-1]["content"] == "second draft"
    assert [r["messages"][0]["content"] for r in fake_llm.requests] == [
        "Draft: a haiku about tea",
        "Revise: first draft",
    ]
    assert result.cost["usage_including_cached_inference"]["total_cost"] > 0
