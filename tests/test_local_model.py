"""The embedded local model: ``LocalLlamaClient`` units (fast, no model) and real chats on
SmolLM2-135M-Instruct (``@pytest.mark.local_model``, slow).

The real-model tests fail, not skip, when the ``local`` extra is missing: the test command
installs it, so its absence is a broken setup. They assert structure (a code block was
produced and executed, the chat ended), not the model's wisdom; temperature 0 and a fixed seed
keep them stable.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from parley import AssistantAgent, OpenAIWrapper, UserProxyAgent
from parley.cli import LOCAL_SYSTEM_MESSAGE, TASK
from parley.local import (
    MODEL_NAME,
    LocalLlamaClient,
    LocalModelServer,
    LocalModelUnavailableError,
    local_config_list,
    serve_local_model,
)

# -- units, without the model -------------------------------------------------------------


class FakeLlama:
    """Stands in for llama_cpp.Llama: one token per word, a fixed reply."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        return [0] * len(text.split())

    def create_chat_completion(self, messages: list[dict[str, str]], **options: Any) -> Any:
        self.calls.append({"messages": messages, **options})
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "/somewhere/model.gguf",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "```python\nprint(1)\n```"},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 20, "completion_tokens": 7, "total_tokens": 27},
        }


def _client_with(model: FakeLlama, **config: Any) -> LocalLlamaClient:
    client = LocalLlamaClient({**local_config_list()[0], **config})
    client._loaded = (model, threading.Lock())
    return client


def test_the_config_entry_is_deterministic_and_bounded() -> None:
    (entry,) = local_config_list(max_tokens=128)
    assert entry["model"] == MODEL_NAME
    assert entry["model_client_cls"] == "LocalLlamaClient"
    assert entry["temperature"] == 0
    assert isinstance(entry["seed"], int)
    assert entry["max_tokens"] == 128


def test_registered_like_any_custom_client_and_answers_through_the_wrapper() -> None:
    model = FakeLlama()
    wrapper = OpenAIWrapper(config_list=local_config_list())
    wrapper.register_model_client(LocalLlamaClient)  # builds it; the weights are not loaded
    wrapper._slots[0].client._loaded = (model, threading.Lock())

    response = wrapper.create(
        messages=[
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "hi", "name": "user"},
            {"role": "tool", "content": "42", "tool_call_id": "x"},
        ]
    )

    assert wrapper.extract_text_or_completion_object(response) == ["```python\nprint(1)\n```"]
    assert response.model == MODEL_NAME  # not llama.cpp's file path
    assert response.cost == 0.0
    (call,) = model.calls
    assert call["messages"] == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "hi"},
        {"role": "user", "content": "42"},  # roles a chat template lacks become the user's
    ]
    assert call["temperature"] == 0
    assert call["max_tokens"] == 256
    assert "seed" in call
    assert "model_client_cls" not in call
    assert "model" not in call
    assert wrapper.actual_usage_summary is not None
    assert wrapper.actual_usage_summary[MODEL_NAME]["completion_tokens"] == 7


def test_history_is_trimmed_to_leave_room_for_the_reply() -> None:
    model = FakeLlama()
    client = _client_with(model, n_ctx=100, max_tokens=50)
    messages = [
        {"role": "system", "content": "be brief"},
        *({"role": "user", "content": "word " * 20} for _ in range(5)),
        {"role": "user", "content": "last question"},
    ]
    client.create({"messages": messages, "max_tokens": 50})
    sent = model.calls[0]["messages"]
    assert sent[0]["content"] == "be brief"  # the system message stays
    assert sent[-1]["content"] == "last question"  # so does the newest
    assert len(sent) < len(messages)


def test_unknown_constructor_arguments_are_refused() -> None:
    with pytest.raises(TypeError, match="unexpected"):
        LocalLlamaClient(local_config_list()[0], colour="blue")


def test_a_missing_model_file_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    import parley.local._model as model_module

    monkeypatch.setattr(model_module, "MODEL_DISTRIBUTION", "no-such-distribution-here")
    with pytest.raises(LocalModelUnavailableError, match=r"pip install \"parley\[local\]\""):
        model_module.find_model_file()


# -- the real model ----------------------------------------------------------------------


@pytest.mark.local_model
@pytest.mark.slow
def test_the_model_answers_a_coding_prompt_with_a_code_block_deterministically(
    model_file: Path,
) -> None:
    assert model_file.name.endswith(".gguf")
    wrapper = OpenAIWrapper(config_list=local_config_list())
    wrapper.register_model_client(LocalLlamaClient)
    messages = [
        {"role": "system", "content": LOCAL_SYSTEM_MESSAGE},
        {"role": "user", "content": TASK},
    ]
    first = wrapper.extract_text_or_completion_object(wrapper.create(messages=messages))[0]
    second = wrapper.extract_text_or_completion_object(wrapper.create(messages=messages))[0]
    assert "```python" in first
    assert first == second  # temperature 0, fixed seed
    usage = wrapper.actual_usage_summary
    assert usage is not None
    assert usage["total_cost"] == 0
    assert 0 < usage[MODEL_NAME]["completion_tokens"] <= 2 * 256


@pytest.mark.local_model
@pytest.mark.slow
def test_a_two_agent_chat_on_the_local_model_runs_the_code_and_ends(
    model_file: Path, tmp_path: Path
) -> None:
    assistant = AssistantAgent(
        "assistant",
        system_message=LOCAL_SYSTEM_MESSAGE,
        llm_config={"config_list": local_config_list()},
    )
    assistant.register_model_client(LocalLlamaClient)
    user = UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config={"work_dir": str(tmp_path), "use_docker": False},
    )

    result = user.initiate_chat(assistant, message=TASK, max_turns=2)

    history = result.chat_history or []
    assert len(history) == 4  # task, code, execution report, last word: the turn limit
    assert "```" in str(history[1]["content"])
    assert str(history[2]["content"]).startswith("exitcode:")
    assert result.cost is not None
    assert result.cost["usage_including_cached_inference"]["total_cost"] == 0


def _run_demo(args: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``parley demo`` with no configuration: no OAI_CONFIG_LIST variable or file."""
    from parley.cli import main

    monkeypatch.delenv("OAI_CONFIG_LIST", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["demo", *args]) == 0


@pytest.mark.local_model
@pytest.mark.slow
def test_parley_demo_with_no_configuration_uses_the_local_model(
    model_file: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _run_demo(["--no-docker"], monkeypatch, tmp_path)

    out, err = capsys.readouterr()
    assert "no OAI_CONFIG_LIST found: using the local model" in err
    assert f"loading {MODEL_NAME} (local, llama.cpp)... loaded in" in err
    assert "assistant is generating... " in err
    assert " tokens in " in err
    assert "code runs LOCALLY" in err
    _assert_a_clean_coding_chat(out)


@pytest.mark.local_model
@pytest.mark.slow
@pytest.mark.docker
def test_parley_demo_runs_the_local_models_code_in_the_docker_sandbox(
    model_file: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tests.coding._docker_support import ensure_sandbox_image

    image = ensure_sandbox_image()
    monkeypatch.setenv("PARLEY_SANDBOX_IMAGE", image)
    for name in ("PARLEY_USE_DOCKER", "AUTOGEN_USE_DOCKER"):
        monkeypatch.delenv(name, raising=False)

    _run_demo([], monkeypatch, tmp_path)

    out, err = capsys.readouterr()
    assert f"code runs in a Docker sandbox (image {image})" in err
    _assert_a_clean_coding_chat(out)


def _assert_a_clean_coding_chat(out: str) -> None:
    """A code block was written and executed, and the chat ended with a summary and a cost."""
    assert "```python" in out
    assert "EXECUTING" in out
    assert "CODE BLOCK" in out
    assert "exitcode: " in out
    assert "chat ended: " in out
    assert re.search(r"code executed: [1-9] time\(s\), last exitcode: \d", out)
    assert "\nsummary: " in out
    assert f"cost: $0.0000 ({MODEL_NAME}:" in out


# -- the model behind an OpenAI-compatible endpoint ---------------------------------------


class FakeCompletingLlama(FakeLlama):
    """FakeLlama that also completes raw prompts: the reply names its prompt and seed."""

    def create_completion(self, prompt: Any, **options: Any) -> Any:
        self.calls.append({"prompt": prompt, **options})
        if isinstance(prompt, str) and len(prompt) > 100:
            raise ValueError("Requested tokens (101) exceed context window of 100")
        return {
            "id": "cmpl-1",
            "object": "text_completion",
            "created": 0,
            "model": "/somewhere/model.gguf",
            "choices": [
                {
                    "text": f" after {prompt!r} with seed {options.get('seed')}",
                    "index": 0,
                    "logprobs": None,
                    "finish_reason": "length",
                }
            ],
            "usage": {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8},
        }


@pytest.fixture
def fake_model_server() -> Iterator[tuple[LocalModelServer, FakeCompletingLlama]]:
    model = FakeCompletingLlama()
    with LocalModelServer(_client_with(model), "smollm2", "127.0.0.1", 0) as server:
        yield server, model
        assert server.errors == []


def _openai(server: LocalModelServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0)


def test_server_batches_n_generations_with_a_seed_each(
    fake_model_server: tuple[LocalModelServer, FakeCompletingLlama],
) -> None:
    server, model = fake_model_server
    with _openai(server) as client:
        r = client.completions.create(
            model="smollm2", prompt=["a", "b"], n=2, seed=7, max_tokens=5, temperature=0.5
        )
    # OpenAI's batch order: the n choices of the first prompt, then the next's.
    assert [c.text for c in r.choices] == [
        " after 'a' with seed 7",
        " after 'a' with seed 8",
        " after 'b' with seed 7",
        " after 'b' with seed 8",
    ]
    assert all(c.finish_reason == "length" for c in r.choices)
    assert r.model == "smollm2"
    assert r.usage is not None
    # Each prompt counted once, every generation's tokens counted.
    assert (r.usage.prompt_tokens, r.usage.completion_tokens) == (6, 20)
    assert model.calls[0] == {"prompt": "a", "seed": 7, "max_tokens": 5, "temperature": 0.5}


def test_server_answers_chat_n_times_with_different_seeds(
    fake_model_server: tuple[LocalModelServer, FakeCompletingLlama],
) -> None:
    server, model = fake_model_server
    with _openai(server) as client:
        r = client.chat.completions.create(
            model="smollm2", messages=[{"role": "user", "content": "hi"}], n=2
        )
    assert len(r.choices) == 2
    assert r.usage is not None
    assert (r.usage.prompt_tokens, r.usage.completion_tokens) == (20, 14)
    first, second = (call["seed"] for call in model.calls)
    assert second == first + 1  # no seed asked for: a random one, then the next


@pytest.mark.parametrize(
    ("options", "param"),
    [({"logprobs": 1}, "logprobs"), ({"best_of": 3}, "best_of"), ({"max_tokens": 0}, "max_tokens")],
)
def test_server_refuses_what_the_local_model_cannot_do(
    fake_model_server: tuple[LocalModelServer, FakeCompletingLlama],
    options: dict[str, Any],
    param: str,
) -> None:
    server, model = fake_model_server
    with _openai(server) as client, pytest.raises(openai.BadRequestError) as info:
        client.completions.create(model="smollm2", prompt="p", **options)
    assert info.value.param == param
    assert model.calls == []


def test_server_reports_a_prompt_longer_than_the_context(
    fake_model_server: tuple[LocalModelServer, FakeCompletingLlama],
) -> None:
    server, _ = fake_model_server
    with _openai(server) as client, pytest.raises(openai.BadRequestError) as info:
        client.completions.create(model="smollm2", prompt="x" * 101)
    assert info.value.code == "context_length_exceeded"
    assert "context window" in info.value.message


def test_server_config_list(
    fake_model_server: tuple[LocalModelServer, FakeCompletingLlama],
) -> None:
    server, _ = fake_model_server
    assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
    (entry,) = server.config_list()
    assert entry == {"model": "smollm2", "base_url": server.base_url, "api_key": "sk-parley-local"}
    assert server.config_list(model="other", temperature=0)[0]["model"] == "other"
    with _openai(server) as client:
        assert [m.id for m in client.models.list()] == ["smollm2"]


@pytest.fixture(scope="module")
def local_server(model_file: Path) -> Iterator[LocalModelServer]:
    with serve_local_model(model_path=str(model_file)) as server:
        yield server
        assert server.errors == []


@pytest.mark.local_model
@pytest.mark.slow
def test_the_served_model_answers_chat_and_completions(local_server: LocalModelServer) -> None:
    with _openai(local_server) as client:
        chat = client.chat.completions.create(
            model="smollm2",
            messages=[{"role": "user", "content": "Name a colour."}],
            max_tokens=16,
            temperature=0,
        )
        text = client.completions.create(
            model="smollm2", prompt="The capital of France is", max_tokens=8, temperature=0
        )
    assert chat.choices[0].message.content
    assert text.choices[0].text
    for usage in (chat.usage, text.usage):
        assert usage is not None
        assert usage.prompt_tokens > 0
        assert 0 < usage.completion_tokens <= 16
        assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


@pytest.mark.local_model
@pytest.mark.slow
async def test_the_served_model_gives_n_different_choices(local_server: LocalModelServer) -> None:
    async with openai.AsyncOpenAI(
        base_url=local_server.base_url, api_key="unused", max_retries=0
    ) as client:
        r = await client.completions.create(
            model="smollm2", prompt="Once upon a time", max_tokens=12, temperature=1, n=2, seed=3
        )
        streamed = await client.completions.create(
            model="smollm2",
            prompt="Once upon a time",
            max_tokens=12,
            temperature=1,
            seed=3,
            stream=True,
        )
        pieces = [c.choices[0].text async for c in streamed if c.choices]
    assert [c.index for c in r.choices] == [0, 1]
    assert r.choices[0].text != r.choices[1].text  # seeds 3 and 4
    assert "".join(pieces) == r.choices[0].text  # the same seed, the same text
