"""Teachability (spec part 2, 14.8): memos taught in one chat, recalled in later ones.

Every chat runs through the real openai client against FakeLLMServer; the analyzer's answers
come from ``TeachingModel`` (see ``_script``), and what the agent's model was sent is read from
the server's request log.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from parley import ConversableAgent
from parley.agentchat.contrib.capabilities.teachability import MemoStore, Teachability
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer
from parley.usage import Budget

from ._script import Advice, Fact, TeachingModel

ROOT = Path(__file__).resolve().parents[3]
HEADER = "# Memories that might help"
DOG = Fact("my dog is called Rex", "What is the name of my dog?", "The user's dog is called Rex.")
CAT = Fact("my cat is Tom", "What is my cat called?", "The user's cat is called Tom.")
CITY = Fact("I live in Lisbon", "In which city do I live?", "The user lives in Lisbon.")
SUMS = Advice(
    "Add 17 and 25",
    task="Add 17 and 25.",
    general="Adding two numbers.",
    advice="Always check a sum by subtracting one addend from the result.",
)


def make_agent(server: FakeLLMServer, path: Path, **options: Any) -> tuple[Any, Teachability]:
    teachable = ConversableAgent(
        "teachable", llm_config=server.llm_config(), human_input_mode="NEVER"
    )
    teachability = Teachability(path_to_db_dir=str(path), **options)
    teachability.add_to_agent(teachable)
    return teachable, teachability


def chat(teachable: Any, message: str) -> None:
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    user.initiate_chat(teachable, message=message, max_turns=1, silent=True)


def memories(request: list[dict[str, Any]]) -> str | None:
    """The memory section appended to the request's last message, or None."""
    content = request[-1]["content"]
    return content.split(HEADER, 1)[1] if HEADER in content else None


@pytest.fixture
def model(fake_llm: FakeLLMServer) -> TeachingModel:
    responder = TeachingModel(facts=[DOG, CAT, CITY], tasks=[SUMS])
    fake_llm.responder = responder
    return responder


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


def test_a_new_store_over_the_same_directory_finds_the_memos(tmp_path: Path) -> None:
    store = MemoStore(path_to_db_dir=str(tmp_path))
    store.add_input_output_pair("What is my cat called?", "Tom")
    store.close()
    again = MemoStore(path_to_db_dir=str(tmp_path))
    assert again.last_memo_id == 1
    input_text, output_text, distance = again.get_nearest_memo("what's my cat's name?")
    assert (input_text, output_text) == ("What is my cat called?", "Tom")
    assert 0 <= distance < 1.5


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


def test_distances_are_squared_distances_of_unit_vectors(tmp_path: Path) -> None:
    store = MemoStore(path_to_db_dir=str(tmp_path))
    store.add_input_output_pair("What is the name of the user's dog?", "Rex")
    store.add_input_output_pair("Which city does the user live in?", "Lisbon")
    exact = store.get_related_memos("What is the name of the user's dog?", 10, 4.01)
    assert exact[0][:2] == ("What is the name of the user's dog?", "Rex")
    assert exact[0][2] == pytest.approx(0.0, abs=1e-5)
    assert all(0.0 <= d <= 4.0 for _, _, d in exact)
    assert [d for _, _, d in exact] == sorted(d for _, _, d in exact)
    # Related phrasing is within the default threshold, an unrelated request is not.
    assert store.get_nearest_memo("what is my dog called")[2] < 1.5
    assert store.get_related_memos("Write a poem about the sea", 10, 1.5) == []
    assert len(store.get_related_memos("What is the name of the user's dog?", 1, 4.01)) == 1


def test_prepopulate_and_list_memos(tmp_path: Path) -> None:
    teachability = Teachability(path_to_db_dir=str(tmp_path))
    teachability.prepopulate_db()
    with IOStream.set_default(IOScripted()) as io:
        listed = teachability.memo_store.list_memos()
    assert [uid for uid, _, _ in listed] == [str(i) for i in range(1, 11)]
    assert {output for _, _, output in listed} == {"yes", "no"}
    assert io.text.count("INPUT TEXT:") == 10
    assert listed[0][1] in io.text
    assert MemoStore(path_to_db_dir=str(tmp_path)).list_memos() == listed


def test_the_side_table_is_json_and_the_index_is_rebuilt_from_it(tmp_path: Path) -> None:
    store = MemoStore(path_to_db_dir=str(tmp_path))
    store.add_input_output_pair("What is my cat called?", "Tom")
    store.add_input_output_pair("Where do I live?", "Lisbon")
    store.close()
    table = json.loads((tmp_path / "uid_text_dict.json").read_text())
    assert table == {"1": ["What is my cat called?", "Tom"], "2": ["Where do I live?", "Lisbon"]}
    # A process that died after indexing a memo but before recording it: the index follows
    # the table, so the unrecorded memo is neither found nor counted.
    del table["2"]
    (tmp_path / "uid_text_dict.json").write_text(json.dumps(table))
    again = MemoStore(path_to_db_dir=str(tmp_path))
    assert again.last_memo_id == 1
    assert [m[:2] for m in again.get_related_memos("Where do I live?", 10, 4.01)] == [
        ("What is my cat called?", "Tom")
    ]
    again.add_input_output_pair("Where do I live?", "Porto")
    assert [m[1] for m in again.get_related_memos("Where do I live?", 10, 4.01)] == [
        "Porto",
        "Tom",
    ]


def test_a_broken_side_table_is_refused_with_the_way_out(tmp_path: Path) -> None:
    (tmp_path / "uid_text_dict.json").write_text("not json")
    with pytest.raises(ValueError, match="reset_db=True"):
        MemoStore(path_to_db_dir=str(tmp_path))
    MemoStore(reset=True, path_to_db_dir=str(tmp_path)).add_input_output_pair("a", "b")


def test_an_agent_without_a_model_cannot_be_taught(tmp_path: Path) -> None:
    agent = ConversableAgent("plain", llm_config=False)
    with pytest.raises(AssertionError, match=r"Teachability requires a valid llm_config\."):
        Teachability(path_to_db_dir=str(tmp_path)).add_to_agent(agent)


def test_the_analyzer_can_use_its_own_model(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    analyzer_model = TeachingModel(facts=[DOG])
    agent_model = fake_llm.responder = TeachingModel(replies=["Hi!"])
    with FakeLLMServer(responder=analyzer_model) as analyst:
        teachable, _ = make_agent(fake_llm, tmp_path, llm_config=analyst.llm_config())
        chat(teachable, "my dog is called Rex")
    assert analyzer_model.kinds() == ["is_task", "has_info", "question", "info"]
    assert len(agent_model.agent_requests) == 1
    assert agent_model.analyses == []


def test_verbosity_shows_the_memory_operations(
    fake_llm: FakeLLMServer, model: TeachingModel, tmp_path: Path
) -> None:
    with IOStream.set_default(IOScripted()) as io:
        teachable, _ = make_agent(fake_llm, tmp_path, verbosity=1)
        chat(teachable, "my dog is called Rex")
        chat(teachable, "What is the name of my dog?")
    assert "REMEMBER THIS QUESTION-ANSWER PAIR" in io.text
    assert "INPUT-OUTPUT PAIR ADDED TO VECTOR DATABASE" in io.text
    assert "MEMOS APPENDED TO LAST MESSAGE" in io.text
    # The analyzer's conversation is shown from verbosity 2 only.
    assert "Does the TEXT contain information" not in io.text
    with IOStream.set_default(IOScripted()) as io:
        chatty, _ = make_agent(fake_llm, tmp_path, verbosity=2)
        chat(chatty, "Nice weather.")
    assert "Does the TEXT contain information" in io.text


async def test_teachability_works_in_an_async_chat(
    fake_llm: FakeLLMServer, model: TeachingModel, tmp_path: Path
) -> None:
    teachable, _ = make_agent(fake_llm, tmp_path)
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    await user.a_initiate_chat(teachable, message="my cat is Tom", max_turns=1, silent=True)
    await user.a_initiate_chat(
        teachable, message="What is my cat called?", max_turns=1, silent=True, clear_history=True
    )
    assert memories(model.agent_requests[-1]) == f"\n- {CAT.answer}\n"


def test_the_analyzer_conversation_holds_one_analysis(
    fake_llm: FakeLLMServer, model: TeachingModel, tmp_path: Path
) -> None:
    teachable, teachability = make_agent(fake_llm, tmp_path)
    chat(teachable, "my dog is called Rex")
    chat(teachable, "Nice weather.")
    # AutoGen kept every analysis in the agent's history; here only the last one is kept.
    assert [m["content"] for m in teachable.chat_messages[teachability.analyzer]] == [
        "Nice weather.",
        model.analyses[-1][0],
        "no",
    ]


def test_multimodal_content_is_read_by_its_text(
    fake_llm: FakeLLMServer, model: TeachingModel, tmp_path: Path
) -> None:
    teacher, _ = make_agent(fake_llm, tmp_path)
    chat(teacher, "my dog is called Rex")
    _teachable, teachability = make_agent(fake_llm, tmp_path)
    parts = [{"type": "text", "text": "What is the name of my dog?"}]
    out = teachability.process_last_received_message(parts)
    assert out[0] == parts[0]
    assert len(out) == 2
    assert out[1]["type"] == "text"
    assert DOG.answer in out[1]["text"]


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


async def test_two_chats_at_once_share_the_analyzer_safely(
    fake_llm: FakeLLMServer, model: TeachingModel, tmp_path: Path
) -> None:
    teachable, teachability = make_agent(fake_llm, tmp_path)

    def unchanged(sender: Any, message: Any, recipient: Any, silent: Any) -> Any:
        return message

    # A plain hook runs in a worker thread: each send to the analyzer gives the other chat a
    # chance to run in between.
    teachable.register_hook("process_message_before_send", unchanged)
    alice = ConversableAgent("alice", llm_config=False, human_input_mode="NEVER")
    bob = ConversableAgent("bob", llm_config=False, human_input_mode="NEVER")
    await asyncio.gather(
        alice.a_initiate_chat(teachable, message="my dog is called Rex", max_turns=1, silent=True),
        bob.a_initiate_chat(teachable, message="my cat is Tom", max_turns=1, silent=True),
    )
    assert sorted(m[1:] for m in teachability.memo_store.list_memos()) == [
        (CAT.question, CAT.answer),
        (DOG.question, DOG.answer),
    ]


def test_the_analyzer_calls_are_part_of_the_chat_usage_and_budget(
    fake_llm: FakeLLMServer, model: TeachingModel, tmp_path: Path
) -> None:
    teachable, _ = make_agent(fake_llm, tmp_path)
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    result = user.initiate_chat(teachable, message="my dog is called Rex", max_turns=1, silent=True)
    assert result.usage is not None
    calls = {name: usage.llm_calls for name, usage in result.usage.by_agent().items()}
    assert calls == {"analyzer": 4, "teachable": 1}

    # A budget of three model calls stops the analysis before the agent's own reply.
    model.analyses.clear()
    limited = user.initiate_chat(
        teachable,
        message="my cat is Tom",
        max_turns=1,
        silent=True,
        budget=Budget(max_llm_calls=3),
    )
    assert limited.termination_reason == "budget:llm_calls"
    assert limited.usage is not None
    assert limited.usage.llm_calls == 3
    assert len(model.analyses) == 3


def test_an_analyzer_that_answers_nothing_stores_nothing(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    from parley.agentchat.contrib import text_analyzer_agent

    def model(body: dict[str, Any]) -> Any:
        if body["messages"][0]["content"] == text_analyzer_agent.system_message:
            return {"content": None, "refusal": "I cannot help with that."}
        return "Noted."

    fake_llm.responder = model
    teachable, teachability = make_agent(fake_llm, tmp_path)
    chat(teachable, "my dog is called Rex")
    # AutoGen read the instructions ("... yes or no.") back as the answer and stored them.
    assert teachability.memo_store.list_memos() == []
    assert len(fake_llm.requests) == 3  # two questions, both unanswered, and the reply
