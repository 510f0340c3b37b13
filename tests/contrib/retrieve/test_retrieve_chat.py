"""RetrieveChat end to end: a RetrieveUserProxyAgent and an assistant on FakeLLMServer.

What the model was sent is read from the server's request log: the right chunks must reach the
prompt, and a scripted ``UPDATE CONTEXT`` must make the proxy send the next ones.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest

from parley import AssistantAgent
from parley.agentchat import EXIT, ReviewRequest
from parley.agentchat.contrib.retrieve_assistant_agent import RetrieveAssistantAgent
from parley.agentchat.contrib.retrieve_user_proxy_agent import (
    PROMPT_QA,
    UPDATE_CONTEXT_IN_PROMPT,
    RetrieveUserProxyAgent,
)
from parley.agentchat.contrib.vectordb import ChromaVectorDB, QdrantVectorDB
from parley.testing import FakeLLMServer

from ._corpus import OCEAN, VOLCANO, VOLCANO_MORE


def last_user(request: dict[str, Any]) -> str:
    return str(request["messages"][-1]["content"])


def context_of(request: dict[str, Any]) -> str:
    """The context in a request's prompt (the prompts end with it and a newline)."""
    return last_user(request).split("Context is: ", 1)[1][:-1]


def proxy(docs: Any, kind: str = "chroma", **config: Any) -> RetrieveUserProxyAgent:
    """A proxy over an in-memory store of ``kind`` (no files left behind)."""
    # Chroma's in-memory clients share one database per process: a directory of its own.
    store = (
        ChromaVectorDB(path=tempfile.mkdtemp(prefix="parley-chroma-"))
        if kind == "chroma"
        else QdrantVectorDB()
    )
    retrieve_config = {
        "docs_path": docs,
        "vector_db": store,
        "chunk_token_size": 40,
        "task": "qa",
        **config,
    }
    return RetrieveUserProxyAgent(
        "ragproxy",
        human_input_mode="NEVER",
        retrieve_config=retrieve_config,
        code_execution_config=False,
    )


def assistant(server: FakeLLMServer) -> AssistantAgent:
    return AssistantAgent(
        "assistant", llm_config={"config_list": server.config_list(), "cache_seed": None}
    )


@pytest.fixture(params=["chroma", "qdrant"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_the_nearest_chunk_reaches_the_prompt(
    corpus: Path, fake_llm: FakeLLMServer, kind: str
) -> None:
    fake_llm.add_reply("About 10,935 metres.")
    rag = proxy(str(corpus), kind)
    result = rag.initiate_chat(
        assistant(fake_llm),
        message=rag.message_generator,
        problem="How deep is the Mariana Trench?",
        n_results=1,
        silent=True,
    )
    (request,) = fake_llm.requests  # the plain answer ended the chat
    prompt = last_user(request)
    assert prompt == PROMPT_QA.format(
        input_question="How deep is the Mariana Trench?", input_context="\n".join(OCEAN) + "\n"
    )
    assert UPDATE_CONTEXT_IN_PROMPT in prompt
    assert result.summary == "About 10,935 metres."
    assert rag.problem == "How deep is the Mariana Trench?"
    assert rag.n_results == 1


def test_update_context_sends_the_next_chunks_and_then_terminates(
    corpus: Path, fake_llm: FakeLLMServer, kind: str
) -> None:
    for _ in range(10):
        fake_llm.add_reply("Sorry, I cannot tell. UPDATE CONTEXT")
    rag = proxy(str(corpus), kind)
    helper = assistant(fake_llm)
    result = rag.initiate_chat(
        helper,
        message=rag.message_generator,
        problem="How tall is the Etna volcano?",
        n_results=1,
        silent=True,
    )
    contexts = [context_of(r) for r in fake_llm.requests]
    # Nearest first; each UPDATE CONTEXT brought the next chunk, never one already sent.
    assert contexts[0] == "\n".join(VOLCANO_MORE) + "\n"
    assert contexts[1] == "\n".join(VOLCANO) + "\n"
    assert len(set(contexts)) == len(contexts) == 7  # the corpus has 7 chunks
    # Both sides forgot the conversation each time: every request is the system message and
    # one prompt.
    assert all(len(r["messages"]) == 2 for r in fake_llm.requests)
    # With the chunks used up, the proxy says TERMINATE, and the chat ends.
    assert result.chat_history[-1]["content"] == "TERMINATE"
    assert len(fake_llm.requests) == 7


def test_update_context_can_be_turned_off(corpus: Path, fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("UPDATE CONTEXT")
    fake_llm.add_reply("Done.")
    rag = proxy(str(corpus), update_context=False)
    rag.initiate_chat(
        assistant(fake_llm),
        message=rag.message_generator,
        problem="How tall is Etna?",
        n_results=1,
        max_turns=2,
        silent=True,
    )
    first, second = fake_llm.requests
    assert second["messages"][1] == first["messages"][1]  # the history was kept: no update


def test_a_missing_answer_prefix_requeries_with_the_partial_answer(
    corpus: Path, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add_reply("The trench is deep. I need more.")
    fake_llm.add_reply("The answer is 320 km/h.")
    rag = proxy(str(corpus), customized_answer_prefix="the answer is")
    result = rag.initiate_chat(
        assistant(fake_llm),
        message=rag.message_generator,
        problem="How fast is the Shinkansen?",
        n_results=1,
        silent=True,
    )
    first, second = (context_of(r) for r in fake_llm.requests)
    assert "320 km/h" in first
    # The reply lacked the prefix: the proxy queried with its first sentence ("The trench is
    # deep.") and sent every chunk used so far, the old one and the one found.
    assert second == first.rstrip("\n") + "\n" + "\n".join(OCEAN)
    assert result.summary == "The answer is 320 km/h."


def test_customized_prompt(corpus: Path, fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("10,935 metres")
    rag = proxy(str(corpus), customized_prompt="Q: {input_question}\nDocs:\n{input_context}")
    rag.initiate_chat(
        assistant(fake_llm),
        message=rag.message_generator,
        problem="Mariana Trench depth?",
        n_results=1,
        silent=True,
    )
    assert (
        last_user(fake_llm.requests[0])
        == "Q: Mariana Trench depth?\nDocs:\n" + "\n".join(OCEAN) + "\n"
    )


def test_custom_token_counter_limits_the_context(
    corpus: Path, fake_llm: FakeLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[tuple[str, str]] = []

    def words(text: str, model: str) -> int:
        calls.append((text, model))
        return len(text.split())

    fake_llm.add_reply("Sicily.")
    # 30 "tokens" of context: the two Etna chunks (21 and 14 words) do not fit together.
    rag = proxy(
        str(corpus),
        custom_token_count_function=words,
        context_max_tokens=30,
        model="gpt-35-turbo-16k",
    )
    rag.initiate_chat(
        assistant(fake_llm),
        message=rag.message_generator,
        problem="Where is Etna volcano?",
        n_results=5,
        silent=True,
    )
    context = last_user(fake_llm.requests[0]).split("Context is: ", 1)[1]
    assert len(context.split()) <= 30
    assert "Sicily" in context
    assert "Caucasus" not in context
    assert {model for _, model in calls} == {"gpt-35-turbo-16k"}
    skipping = proxy(str(corpus), custom_token_count_function=words, context_max_tokens=5)
    skipping.retrieve_docs("Where is Etna volcano?", n_results=3)
    assert skipping._get_context(skipping._results) == ""
    assert "as it is too long to fit in the context." in capsys.readouterr().out


def test_search_string_filters_chroma_results(corpus: Path) -> None:
    rag = proxy(str(corpus))
    rag.retrieve_docs("volcano", n_results=5, search_string="Caucasus")
    assert [[d["content"] for d, _ in hits] for hits in rag._results] == [["\n".join(VOLCANO_MORE)]]


def test_a_human_typing_update_context_gets_the_next_chunks(
    corpus: Path, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add_reply("It is in Sicily.")
    fake_llm.add_reply("It is 3,357 metres tall.")
    answers = iter(["update context", EXIT])

    def human(request: ReviewRequest) -> str:
        return next(answers)

    rag = RetrieveUserProxyAgent(
        "ragproxy",
        human_input_mode="ALWAYS",
        retrieve_config={
            "docs_path": str(corpus),
            "vector_db": ChromaVectorDB(path=tempfile.mkdtemp(prefix="parley-chroma-")),
            "chunk_token_size": 40,
            "task": "qa",
        },
        code_execution_config=False,
    )
    rag.register_human_review(human)
    rag.initiate_chat(
        assistant(fake_llm),
        message=rag.message_generator,
        problem="How tall is the Etna volcano?",
        n_results=1,
        silent=True,
    )
    first, second = fake_llm.requests
    assert context_of(first) == "\n".join(VOLCANO_MORE) + "\n"
    # The typed words were replaced by the next context (the history is kept in this case).
    assert context_of(second) == "\n".join(VOLCANO) + "\n"
    assert "update context" not in [m["content"] for m in second["messages"]]


def test_collection_reused_and_only_new_chunks_added(
    corpus: Path, tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    db_path = str(tmp_path / "chroma")
    first = RetrieveUserProxyAgent(
        "first", human_input_mode="NEVER", code_execution_config=False,
        retrieve_config={"docs_path": str(corpus), "db_config": {"path": db_path}, "chunk_token_size": 40, "get_or_create": True},
    )  # fmt: skip
    first.retrieve_docs("volcano", n_results=1)
    assert len(first._vector_db.get_docs_by_ids()) == 7
    # A second agent on the same database, without docs_path, answers from what is stored.
    reader = RetrieveUserProxyAgent(
        "reader", human_input_mode="NEVER", code_execution_config=False,
        retrieve_config={"db_config": {"path": db_path}},
    )  # fmt: skip
    reader.retrieve_docs("How deep is the Mariana Trench?", n_results=1)
    assert reader._results[0][0][0]["content"] == "\n".join(OCEAN)
    # A new file: only its chunk is added; a copy of a stored file adds nothing.
    (corpus / "new.txt").write_text("Saturn has rings made of ice and rock.\n")
    (corpus / "copy.pdf").write_bytes((corpus / "ocean.pdf").read_bytes())
    again = RetrieveUserProxyAgent(
        "again", human_input_mode="NEVER", code_execution_config=False,
        retrieve_config={"docs_path": str(corpus), "db_config": {"path": db_path}, "chunk_token_size": 40, "get_or_create": True},
    )  # fmt: skip
    again.retrieve_docs("planet rings", n_results=1)
    assert len(again._vector_db.get_docs_by_ids()) == 8
    assert again._results[0][0][0]["content"].startswith("Saturn has rings")


def test_no_docs_path_and_no_collection_is_an_error(tmp_path: Path) -> None:
    rag = RetrieveUserProxyAgent(
        "rag", human_input_mode="NEVER", code_execution_config=False,
        retrieve_config={"db_config": {"path": str(tmp_path / "empty")}, "collection_name": "nothing-here"},
    )  # fmt: skip
    with pytest.raises(
        ValueError,
        match="`docs_path` is not provided, and the collection `nothing-here` does not exist",
    ):
        rag.retrieve_docs("anything")


def test_overwrite_rebuilds_the_collection(corpus: Path, tmp_path: Path) -> None:
    store = ChromaVectorDB(path=str(tmp_path / "db"))
    store.create_collection("autogen-docs")
    store.insert_docs([{"id": "stale", "content": "an old chunk to be dropped"}])
    rag = proxy(str(corpus), vector_db=store, overwrite=True, get_or_create=True)
    rag.retrieve_docs("volcano", n_results=1)
    ids = {d["id"] for d in store.get_docs_by_ids()}
    assert "stale" not in ids
    assert len(ids) == 7


def test_custom_text_split_function_and_types(corpus: Path) -> None:
    rag = proxy(
        str(corpus),
        custom_text_split_function=lambda text: [line for line in text.split("\n") if line.strip()],
        custom_text_types=["txt"],
    )
    rag.retrieve_docs("volcano", n_results=10)
    assert sorted(d["content"] for d, _ in rag._results[0]) == sorted(VOLCANO + VOLCANO_MORE)


def test_a_user_embedding_function_from_retrieve_config(corpus: Path) -> None:
    texts: list[str] = []

    def embed(batch: list[str]) -> list[list[float]]:
        texts.extend(batch)
        return [
            [float("trench" in t.lower()) + 0.01, float("bread" in t.lower()) + 0.01] for t in batch
        ]

    rag = RetrieveUserProxyAgent(
        "rag", human_input_mode="NEVER", code_execution_config=False,
        retrieve_config={"docs_path": str(corpus), "vector_db": "qdrant", "embedding_function": embed, "chunk_token_size": 40},
    )  # fmt: skip
    rag.retrieve_docs("trench", n_results=1)
    assert rag._results[0][0][0]["content"] == "\n".join(OCEAN)
    assert "trench" in texts
    assert rag._vector_db.embedding_function is embed


def test_the_old_chroma_client_path(corpus: Path, fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("Sicily.")
    rag = proxy(str(corpus), vector_db=None, get_or_create=True, collection_name="old-path-docs")
    rag.initiate_chat(
        assistant(fake_llm),
        message=rag.message_generator,
        problem="Where is the Etna volcano?",
        n_results=1,
        silent=True,
    )
    assert "Mount Etna is an active volcano" in last_user(fake_llm.requests[0])


def test_config_checks_and_defaults(corpus: Path) -> None:
    with pytest.raises(ValueError, match=r"`db_config` should be a dictionary\."):
        RetrieveUserProxyAgent("rag", retrieve_config={"db_config": "path"})
    assert [
        RetrieveUserProxyAgent.get_max_tokens(m)
        for m in ("gpt-4-32k", "gpt-3.5-turbo-16k", "gpt-4", "llama")
    ] == [32000, 16000, 8000, 4000]
    rag = proxy(str(corpus), task="poems")
    rag.problem = "q"
    with pytest.raises(NotImplementedError, match=r"task poems is not implemented\."):
        rag._generate_message("some context", "poems")
    assert rag._generate_message("", "qa") == "TERMINATE"
    config = {
        "docs_path": str(corpus),
        "db_config": {"path": None},
        "embedding_function": lambda t: [[1.0]] * len(t),
    }
    RetrieveUserProxyAgent("rag", retrieve_config=config)
    assert config["db_config"] == {"path": None}  # the caller's dicts are not changed


def test_termination_rule(corpus: Path) -> None:
    rag = proxy(str(corpus))
    ends = rag._is_termination_msg
    assert ends({"content": "Paris."})
    assert not ends({"content": "Run this:\n```python\nprint(1)\n```"})
    assert ends({"content": "```sh\nls\n```"})  # only python blocks keep the chat going
    assert not ends({"content": "Sorry, UPDATE CONTEXT"})
    assert not ends({"content": None})
    assert ends({"content": f"I quote: {UPDATE_CONTEXT_IN_PROMPT}"})


def test_run_code_refuses_installs(corpus: Path) -> None:
    rag = proxy(str(corpus))
    message = (
        "You MUST NOT install any packages because all the packages needed are already installed."
    )
    assert rag.run_code("pip install numpy", lang="python") == (0, message, None)
    assert rag.run_code("!ls", lang="python") == (0, message, None)
    assert rag.run_code("echo hi", lang="sh") == (0, message, None)


def test_retrieve_assistant_agent(fake_llm: FakeLLMServer) -> None:
    with pytest.warns(DeprecationWarning, match="use the AssistantAgent"):
        helper = RetrieveAssistantAgent(
            "helper", llm_config={"config_list": fake_llm.config_list()}
        )
    user = AssistantAgent("user", llm_config=False)
    done = [{"role": "user", "content": "exitcode: 0 (execution succeeded)\nok"}]
    assert helper.generate_reply(done, sender=user) == "TERMINATE"
    more = [{"role": "user", "content": "long text ... update context"}]
    assert helper.generate_reply(more, sender=user) == "UPDATE CONTEXT"
    assert fake_llm.requests == []  # answered without the model


def test_python_runs_in_the_ipython_kernel_when_there_is_one(corpus: Path) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        rag = proxy(str(corpus))
        exitcode, output, image = rag.run_code("answer = 6 * 7\nanswer", lang="python")
        assert (exitcode, output, image) == (0, "42", None)
        assert shell.user_ns["answer"] == 42  # defined in the live session
        exitcode, output, _ = rag.run_code("1 / 0", lang="python")
        assert exitcode == 1
        assert "division by zero" in output
    finally:
        InteractiveShell.clear_instance()


def test_the_older_qdrant_agent(corpus: Path, fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    from qdrant_client import QdrantClient

    from parley.agentchat.contrib.qdrant_retrieve_user_proxy_agent import (
        QdrantRetrieveUserProxyAgent,
    )

    fake_llm.add_reply("About 10,935 metres.")
    client = QdrantClient(path=str(tmp_path / "qdrant"))
    rag = QdrantRetrieveUserProxyAgent(
        "ragproxy",
        human_input_mode="NEVER",
        code_execution_config=False,
        retrieve_config={
            "docs_path": str(corpus),
            "client": client,
            "chunk_token_size": 40,
            "task": "qa",
            "on_disk": True,
        },
    )
    rag.initiate_chat(
        assistant(fake_llm),
        message=rag.message_generator,
        problem="How deep is the Mariana Trench?",
        n_results=1,
        silent=True,
    )
    assert context_of(fake_llm.requests[0]) == "\n".join(OCEAN) + "\n"
    assert client.count("autogen-docs").count == 7  # stored through the client given
    client.close()
