"""The three loops as ordinary agents together: speakers of one group chat, the inner agent of
a nested chat, and their model calls in the usage totals like any agent's."""

from __future__ import annotations

import json
from pathlib import Path

from parley import ConversableAgent, GroupChat, GroupChatManager, gather_usage_summary
from parley.agents import AutonomousAgent, ReActAgent, TagAgent
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer


class Lookup:
    name = "lookup"
    description = "the population of a city; input: the city's name"

    def use(self, city: str) -> str:
        return {"Paris": "2102650"}.get(city, "unknown")


def finish(reason: str) -> str:
    thoughts = {"text": "done", "reasoning": "", "plan": "", "criticism": "", "speak": ""}
    return json.dumps(
        {"thoughts": thoughts, "command": {"name": "task_complete", "args": {"reason": reason}}}
    )


def test_all_three_loops_speak_in_one_group_chat_and_their_cost_is_counted(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    llm_config = {"config_list": fake_llm.config_list(price=[0.01, 0.02])}
    react = ReActAgent("researcher", tools=[Lookup()], llm_config=llm_config)
    tag = TagAgent("editor", llm_config=llm_config)
    auto = AutonomousAgent(
        "archivist",
        role="an assistant that files reports",
        llm_config=llm_config,
        workspace=tmp_path / "ws",
        memory=False,
        continuous=True,
    )
    # Round robin: the researcher's two steps, the editor's one call, the archivist's cycle.
    fake_llm.add_reply("Thought: look it up\nAction: lookup\nAction Input: Paris")
    fake_llm.add_reply("Thought: I know it\nFinal Answer: Paris has 2102650 people.")
    fake_llm.add_reply("<TOOL: END_RUN>Paris: about 2.1 million people.</TOOL>")
    fake_llm.add_reply(finish("The figure is filed."))
    user = ConversableAgent("user", human_input_mode="NEVER", llm_config=False)
    group = GroupChat([react, tag, auto], [], max_round=4, speaker_selection_method="round_robin")
    manager = GroupChatManager(group, llm_config=False)

    with IOStream.set_default(IOScripted()):
        user.initiate_chat(manager, message="How many people live in Paris?")

    assert [(m.get("name"), m["content"]) for m in group.messages] == [
        ("user", "How many people live in Paris?"),
        ("researcher", "Paris has 2102650 people."),
        ("editor", "Paris: about 2.1 million people."),
        ("archivist", "The figure is filed."),
    ]
    # Each loop was given the message before its turn as its task.
    assert "Paris has 2102650 people." in json.dumps(fake_llm.requests[2]["messages"])
    assert "about 2.1 million" in json.dumps(fake_llm.requests[3]["messages"])
    # No tool schemas on the wire: the loops describe their tools in the prompt.
    assert all("tools" not in r and "functions" not in r for r in fake_llm.requests)
    usage = {a.name: a.get_total_usage() for a in (react, tag, auto)}
    assert all(u is not None and u["total_cost"] > 0 for u in usage.values())
    total = gather_usage_summary([react, tag, auto])["usage_including_cached_inference"]
    assert total["total_cost"] == sum(u["total_cost"] for u in usage.values() if u)


def test_a_loop_agent_answers_inside_a_nested_chat(fake_llm: FakeLLMServer) -> None:
    llm_config = {"config_list": fake_llm.config_list()}
    react = ReActAgent("researcher", tools=[Lookup()], llm_config=llm_config)
    fake_llm.add_reply("Action: lookup\nAction Input: Paris")
    fake_llm.add_reply("Final Answer: 2102650")
    desk = ConversableAgent("desk", human_input_mode="NEVER", llm_config=False)
    desk.register_nested_chats(
        [{"recipient": react, "max_turns": 1, "summary_method": "last_msg"}],
        trigger=lambda sender: sender is not react,
    )
    user = ConversableAgent("user", human_input_mode="NEVER", llm_config=False)

    with IOStream.set_default(IOScripted()):
        result = user.initiate_chat(desk, message="Population of Paris?", max_turns=1)

    assert result.chat_history[-1]["content"] == "2102650"
    assert [s.action for s in react.steps] == ["lookup"]
    assert react.steps[0].observation == "2102650"
