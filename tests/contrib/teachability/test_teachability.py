"""Teachability (website/docs/teachability.md): memos taught in one chat, recalled in later ones.

Every chat runs through the real openai client against FakeLLMServer; the analyzer's answers
come from ``TeachingModel`` (see ``_script``), and what the agent's model was sent is read from
the server's request log.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from parley.agentchat.contrib.capabilities.teachability import MemoStore
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

from ._script import (
    CITY,
    DOG,
    HEADER,
    ROOT,
    SUMS,
    Advice,
    TeachingModel,
    chat,
    make_agent,
    memories,
)


def test_a_fact_taught_in_one_chat_is_recalled_by_a_new_agent(
    fake_llm: FakeLLMServer, model: TeachingModel, tmp_path: Path
) -> None:
    first, _ = make_agent(fake_llm, tmp_path)
    chat(first, "By the way, my dog is called Rex.")
    # Nothing to recall yet: the model saw the message as sent.
    assert model.agent_requests[0][-1]["content"] == "By the way, my dog is called Rex."
    assert model.kinds() == ["is_task", "has_info", "question", "info"]

    second, teachability = make_agent(fake_llm, tmp_path)
    chat(second, "What is the name of my dog?")
    recalled = memories(model.agent_requests[1])
    assert recalled == "\n- The user's dog is called Rex.\n"
    assert model.agent_requests[1][-1]["content"] == (
        "What is the name of my dog?\n\n" + HEADER + "\n- The user's dog is called Rex.\n"
    )
    # The model sees the memories; the agent's history keeps what the user wrote.
    user = next(a for a in second.chat_messages if a.name == "user")
    assert second.chat_messages[user][0]["content"] == "What is the name of my dog?"
    assert [m[1:] for m in teachability.memo_store.list_memos()] == [
        ("What is the name of my dog?", "The user's dog is called Rex.")
    ]


def test_the_system_message_says_the_agent_can_remember(
    fake_llm: FakeLLMServer, model: TeachingModel, tmp_path: Path
) -> None:
    teachable, _ = make_agent(fake_llm, tmp_path)
    assert teachable.system_message.startswith("You are a helpful AI Assistant.\n")
    chat(teachable, "hello")
    system = model.agent_requests[0][0]
    assert system["role"] == "system"
    assert "remember user teachings from prior conversations" in system["content"]


def test_each_message_costs_two_analyses_and_recall_adds_one(
    fake_llm: FakeLLMServer, model: TeachingModel, tmp_path: Path
) -> None:
    teachable, _ = make_agent(fake_llm, tmp_path)
    chat(teachable, "Nice weather today.")
    assert model.kinds() == ["is_task", "has_info"]
    chat(teachable, "Remember: I live in Lisbon.")
    model.analyses.clear()
    chat(teachable, "Nice weather today.")
    # One more analysis to ask whether the message is a task (it is not).
    assert model.kinds() == ["is_task", "is_task", "has_info"]


def test_task_advice_is_recalled_for_a_similar_task(
    fake_llm: FakeLLMServer, model: TeachingModel, tmp_path: Path
) -> None:
    first, _ = make_agent(fake_llm, tmp_path)
    chat(first, "Add 17 and 25. Tip: always check a sum by subtracting.")
    assert model.kinds() == ["is_task", "advice", "task", "general", "has_info"]
    model.tasks.append(
        Advice("Sum 3 and 4", task="Sum 3 and 4.", general="Adding two numbers.", advice=None)
    )
    model.analyses.clear()
    second, teachability = make_agent(fake_llm, tmp_path)
    chat(second, "Sum 3 and 4")
    # Retrieval: the text, then the generalised task; storage: no advice, no information.
    assert model.kinds() == ["is_task", "task", "general", "is_task", "advice", "has_info"]
    assert memories(model.agent_requests[-1]) == f"\n- {SUMS.advice}\n"
    assert [m[1:] for m in teachability.memo_store.list_memos()] == [
        ("Adding two numbers.", SUMS.advice)
    ]


def test_memos_survive_a_new_process(
    fake_llm: FakeLLMServer, model: TeachingModel, tmp_path: Path
) -> None:
    # The teaching chat runs in another Python process, with a fake server of its own.
    script = textwrap.dedent(
        f"""
        from parley import ConversableAgent
        from parley.agentchat.contrib.capabilities.teachability import Teachability
        from parley.testing import FakeLLMServer
        from tests.contrib.teachability._script import Fact, TeachingModel

        fact = Fact({DOG.trigger!r}, {DOG.question!r}, {DOG.answer!r})
        with FakeLLMServer(responder=TeachingModel(facts=[fact])) as server:
            agent = ConversableAgent("teachable", llm_config=server.llm_config())
            Teachability(path_to_db_dir={str(tmp_path)!r}).add_to_agent(agent)
            user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
            user.initiate_chat(agent, message="So, my dog is called Rex.", max_turns=1)
            assert not server.errors, server.errors
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    with IOStream.set_default(IOScripted()) as io:
        teachable, _ = make_agent(fake_llm, tmp_path)
    assert "LOADING MEMORY FROM DISK" in io.text
    chat(teachable, "What's the name of my dog?")
    assert memories(model.agent_requests[0]) == f"\n- {DOG.answer}\n"


def test_reset_db_forgets_everything(
    fake_llm: FakeLLMServer, model: TeachingModel, tmp_path: Path
) -> None:
    first, _ = make_agent(fake_llm, tmp_path)
    chat(first, "Remember: my dog is called Rex.")
    with IOStream.set_default(IOScripted()) as io:
        second, teachability = make_agent(fake_llm, tmp_path, reset_db=True)
    assert "CLEARING MEMORY" in io.text
    assert teachability.memo_store.list_memos() == []
    model.analyses.clear()
    chat(second, "What is the name of my dog?")
    assert memories(model.agent_requests[-1]) is None
    assert model.kinds() == ["is_task", "has_info"]  # an empty store is not searched
    # The reset is on disk too.
    assert MemoStore(path_to_db_dir=str(tmp_path)).last_memo_id == 0


def test_recall_threshold_and_max_num_retrievals(
    fake_llm: FakeLLMServer, model: TeachingModel, tmp_path: Path
) -> None:
    teacher, _ = make_agent(fake_llm, tmp_path)
    for message in ("Note: my dog is called Rex.", "And my cat is Tom.", "I live in Lisbon."):
        chat(teacher, message)

    # A threshold nothing is below: no memories.
    strict, _ = make_agent(fake_llm, tmp_path, recall_threshold=0.0)
    chat(strict, "What is the name of my dog?")
    assert memories(model.agent_requests[-1]) is None

    # The default threshold: the dog, not the unrelated city.
    default, _ = make_agent(fake_llm, tmp_path)
    chat(default, "What is the name of my dog?")
    recalled = memories(model.agent_requests[-1])
    assert recalled is not None
    assert DOG.answer in recalled
    assert CITY.answer not in recalled

    # Every memo is within distance 4 (unit vectors): all three, nearest first...
    loose, _ = make_agent(fake_llm, tmp_path, recall_threshold=4.01)
    chat(loose, "What is the name of my dog?")
    lines = (memories(model.agent_requests[-1]) or "").strip().splitlines()
    assert len(lines) == 3
    assert lines[0] == f"- {DOG.answer}"
    # ...unless max_num_retrievals says fewer.
    capped, _ = make_agent(fake_llm, tmp_path, recall_threshold=4.01, max_num_retrievals=1)
    chat(capped, "What is the name of my dog?")
    assert memories(model.agent_requests[-1]) == f"\n- {DOG.answer}\n"


def test_without_the_extra_the_error_names_it(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules["wordllama"] = None  # as if the extra were not installed
        from parley.agentchat.contrib.capabilities.teachability import Teachability
        try:
            Teachability(path_to_db_dir={str(tmp_path)!r})
        except ImportError as e:
            print(e)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "pip install 'parley[teachable]'" in done.stdout
