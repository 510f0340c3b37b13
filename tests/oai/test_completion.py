"""The legacy enhanced-inference API (``parley.Completion`` / ``parley.ChatCompletion``) on the
wire: a FakeLLMServer on loopback, through the real openai client."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import openai
import pytest

import parley
from parley.exceptions import ConfigError
from parley.oai import ChatCompletion, Completion
from parley.testing import FakeLLMServer


@pytest.fixture(autouse=True)
def legacy(legacy_completion: Path) -> Path:
    """Each test gets its own cache root; class state is put back afterwards."""
    return legacy_completion


def entry(server: FakeLLMServer, model: str = "gpt-4", **extra: Any) -> dict[str, Any]:
    return {"model": model, "base_url": server.base_url, "api_key": "sk-test", **extra}


def test_same_objects_under_every_name() -> None:
    assert parley.Completion is Completion
    assert parley.ChatCompletion is ChatCompletion
    from parley.oai import completion

    assert completion.Completion is Completion
    assert issubclass(ChatCompletion, Completion)


def test_chat_model_prompt_becomes_a_user_message(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("4")
    response = Completion.create(
        {"problem": "2 + 2"},
        prompt="Solve {problem}",
        allow_format_str_template=True,
        **entry(fake_llm, "gpt-3.5-turbo"),
    )
    assert fake_llm.last_request["messages"] == [{"role": "user", "content": "Solve 2 + 2"}]
    assert "prompt" not in fake_llm.last_request
    assert Completion.extract_text(response) == ["4"]
    assert response["choices"][0]["message"]["content"] == "4"
    usage = response["usage"]
    assert response["cost"] == pytest.approx(
        (0.0015 * usage["prompt_tokens"] + 0.002 * usage["completion_tokens"]) / 1000
    )


def test_not_sent_options_and_request_timeout(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("ok")
    ChatCompletion.create(
        messages=[{"role": "user", "content": "hi"}],
        max_retry_period=5,
        retry_wait_time=1,
        request_timeout=7,
        cache_seed=None,
        allow_format_str_template=True,
        temperature=0.5,
        **entry(fake_llm, "fake-model"),
    )
    sent = fake_llm.last_request
    assert sent == {
        "model": "fake-model",
        "messages": [{"role": "user", "content": "hi"}],
        "temperature": 0.5,
    }
    assert "sk-test" not in json.dumps(sent)


def test_format_templates_only_with_the_flag(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("a")
    fake_llm.add_reply("b")
    ChatCompletion.create({"x": 1}, prompt="value {x}", use_cache=False, **entry(fake_llm))
    assert fake_llm.last_request["messages"][0]["content"] == "value {x}"
    ChatCompletion.create(
        {"x": 1},
        messages=[{"role": "system", "content": "sys {x}"}, {"role": "user", "content": ""}],
        allow_format_str_template=True,
        use_cache=False,
        **entry(fake_llm),
    )
    assert fake_llm.last_request["messages"] == [
        {"role": "system", "content": "sys 1"},
        {"role": "user", "content": ""},
    ]


def test_callable_templates_get_the_context_dict(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("ok")

    def prompt(context: dict[str, Any]) -> str:
        return f"{context['a']} + {context['b']}"

    ChatCompletion.create({"a": 1, "b": 2}, prompt=prompt, **entry(fake_llm))
    assert fake_llm.last_request["messages"][0]["content"] == "1 + 2"
    assert Completion.instantiate(prompt, {"a": "x", "b": "y"}) == "x + y"

    def per_turn(turn: int, **context: Any) -> str:
        return str(turn)

    with pytest.raises(TypeError):  # the context is passed as one positional argument
        Completion.instantiate(functools.partial(per_turn, turn=0), {"a": 1})


def test_instantiate_rules() -> None:
    assert Completion.instantiate("{a}", {"a": 1}) == "{a}"
    assert Completion.instantiate("{a}", {"a": 1}, allow_format_str_template=True) == "1"
    assert Completion.instantiate("{a}", None, allow_format_str_template=True) == "{a}"
    assert Completion.instantiate(None, {"a": 1}) is None


def test_a_template_naming_a_missing_key_says_which(fake_llm: FakeLLMServer) -> None:
    with pytest.raises(ValueError, match=r"'problem'.*not in the context.*\['question'\]"):
        ChatCompletion.create(
            {"question": "?"},
            prompt="Solve {problem}",
            allow_format_str_template=True,
            **entry(fake_llm),
        )
    assert fake_llm.requests == []


def test_model_and_prompt_are_required(fake_llm: FakeLLMServer) -> None:
    with pytest.raises(KeyError, match="model"):
        Completion.create(prompt="x", base_url=fake_llm.base_url, api_key="k")
    with pytest.raises(ValueError, match="Either prompt or messages"):
        Completion.create(**entry(fake_llm, "gpt-4"))
    with pytest.raises(ValueError, match="not both"):
        Completion.create(
            prompt="a", messages=[{"role": "user", "content": "b"}], **entry(fake_llm)
        )
    assert fake_llm.requests == []


def test_the_responses_api_type_is_refused_naming_the_wrapper(fake_llm: FakeLLMServer) -> None:
    responses = entry(fake_llm, "o4-mini", api_type="responses")
    with pytest.raises(ConfigError, match=r"'responses'.*use parley\.OpenAIWrapper"):
        ChatCompletion.create(prompt="x", **responses)
    with pytest.raises(ConfigError, match="OpenAIWrapper"):
        Completion.create(messages=[{"role": "user", "content": "x"}], **responses)
    # a refused entry is a mistake to fix, not a failure to fall back from
    with pytest.raises(ConfigError, match="OpenAIWrapper"):
        ChatCompletion.create(prompt="x", config_list=[responses, entry(fake_llm)])
    assert fake_llm.requests == []
    fake_llm.add_reply("chat path")
    answer = ChatCompletion.create(prompt="x", config_list=[entry(fake_llm), responses])
    assert ChatCompletion.extract_text(answer) == ["chat path"]
    assert [r.path for r in fake_llm.received] == ["/v1/chat/completions"]


def test_identical_call_is_answered_from_the_cache(fake_llm: FakeLLMServer, legacy: Path) -> None:
    fake_llm.add_reply("once")
    first = ChatCompletion.create(prompt="p", **entry(fake_llm))
    second = ChatCompletion.create(prompt="p", **entry(fake_llm))
    assert len(fake_llm.requests) == 1
    assert second == first
    assert second["cost"] == first["cost"]
    assert (legacy / "41").is_dir()
    # use_cache=False neither reads nor writes
    fake_llm.add_reply("fresh")
    third = ChatCompletion.create(prompt="p", use_cache=False, **entry(fake_llm))
    assert Completion.extract_text(third) == ["fresh"]
    assert ChatCompletion.create(prompt="p", **entry(fake_llm)) == first


def test_cache_seed_per_call_and_set_cache_inheritance(
    fake_llm: FakeLLMServer, legacy: Path
) -> None:
    fake_llm.add_reply("a")
    fake_llm.add_reply("b")
    ChatCompletion.create(prompt="p", cache_seed=5, **entry(fake_llm))
    # the call's seed keeps the root set_cache chose (AutoGen reset it to .cache)
    assert (legacy / "5").is_dir()
    assert ChatCompletion.cache_path == f"{legacy}/41"
    ChatCompletion.create(prompt="p", cache_seed=6, **entry(fake_llm))
    assert len(fake_llm.requests) == 2
    Completion.set_cache(7, "/tmp/x")
    assert ChatCompletion.cache_path == "/tmp/x/7"  # inherited until ChatCompletion sets its own
    ChatCompletion.set_cache(8, str(legacy))
    assert (Completion.cache_path, ChatCompletion.cache_path) == ("/tmp/x/7", f"{legacy}/8")


def test_clear_cache(fake_llm: FakeLLMServer, legacy: Path) -> None:
    fake_llm.add_reply("a")
    fake_llm.add_reply("b")
    fake_llm.add_reply("c")
    ChatCompletion.create(prompt="p", **entry(fake_llm))
    Completion.clear_cache(41, str(legacy))
    ChatCompletion.create(prompt="p", **entry(fake_llm))
    assert len(fake_llm.requests) == 2
    Completion.clear_cache(cache_path_root=str(legacy))
    assert not legacy.exists()
    assert Completion.extract_text(ChatCompletion.create(prompt="p", **entry(fake_llm))) == ["c"]


def test_config_list_fails_over_and_sums_rejected_cost(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_error(401)
    fake_llm.add_reply("bad answer")
    fake_llm.add_reply("good answer")
    seen: list[Any] = []

    def filter_func(context: Any, response: Any) -> bool:
        seen.append(context)
        return "good" in Completion.extract_text(response)[0]

    configs = [
        entry(fake_llm, "gpt-4"),
        entry(fake_llm, "gpt-3.5-turbo"),
        entry(fake_llm, "gpt-4-0613"),
    ]
    response = ChatCompletion.create(
        {"q": 1}, prompt="x", config_list=configs, filter_func=filter_func
    )
    assert (response["config_id"], response["pass_filter"]) == (2, True)
    assert seen == [{"q": 1}, {"q": 1}]
    rejected = (0.0015 * 9 + 0.002 * 2) / 1000  # the gpt-3.5-turbo reply's own cost
    assert response["cost"] > rejected
    assert [r["model"] for r in fake_llm.requests] == ["gpt-4", "gpt-3.5-turbo", "gpt-4-0613"]


def test_every_response_rejected_returns_the_last(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("no")
    fake_llm.add_reply("no either")
    response = ChatCompletion.create(
        prompt="x",
        config_list=[entry(fake_llm, "gpt-4"), entry(fake_llm, "gpt-3.5-turbo")],
        filter_func=lambda context, response: False,
    )
    assert (response["config_id"], response["pass_filter"]) == (1, False)


def test_config_list_entry_wins_and_other_errors_propagate(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("ok")
    ChatCompletion.create(
        prompt="x", temperature=0.1, config_list=[entry(fake_llm, temperature=0.9)]
    )
    assert fake_llm.last_request["temperature"] == 0.9
    fake_llm.add_error(422, "unprocessable")
    with pytest.raises(openai.UnprocessableEntityError):
        ChatCompletion.create(
            prompt="y", config_list=[entry(fake_llm, "gpt-4"), entry(fake_llm, "gpt-3.5-turbo")]
        )
    assert len(fake_llm.requests) == 2  # the second config was not tried


def test_rate_limit_is_retried_then_gives_up(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_error(429)
    fake_llm.add_reply("after the wait")
    response = ChatCompletion.create(prompt="x", retry_wait_time=0.05, **entry(fake_llm))
    assert Completion.extract_text(response) == ["after the wait"]
    for _ in range(3):
        fake_llm.add_error(429)
    with pytest.raises(openai.RateLimitError):
        ChatCompletion.create(
            prompt="y", retry_wait_time=0.2, max_retry_period=0.3, **entry(fake_llm)
        )
    for _ in range(3):
        fake_llm.add_error(429)
    gave_up = ChatCompletion.create(
        prompt="z",
        retry_wait_time=0.2,
        max_retry_period=0.3,
        raise_on_ratelimit_or_timeout=False,
        **entry(fake_llm),
    )
    assert gave_up == -1


def test_only_flamls_transient_errors_are_retried(fake_llm: FakeLLMServer) -> None:
    # The legacy rules are FLAML's: a 5xx is retried, a 409 (which the OpenAIWrapper's client
    # retries) and a content filter's refusal are not.
    fake_llm.add_error(503)
    fake_llm.add_reply("after the wait")
    response = ChatCompletion.create(prompt="x", retry_wait_time=0.05, **entry(fake_llm))
    assert Completion.extract_text(response) == ["after the wait"]
    fake_llm.add_error(409)
    with pytest.raises(openai.ConflictError):
        ChatCompletion.create(prompt="y", retry_wait_time=0.05, **entry(fake_llm))
    fake_llm.add_error(500, code="content_filter")
    with pytest.raises(openai.InternalServerError):
        ChatCompletion.create(prompt="z", retry_wait_time=0.05, **entry(fake_llm))
    assert len(fake_llm.requests) == 4


def test_timeout_doubles_until_the_period_ends(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("slow", delay=2)
    fake_llm.add_reply("fast")
    ChatCompletion.request_timeout = 0.3
    response = ChatCompletion.create(
        prompt="x", retry_wait_time=0.05, max_retry_period=5, **entry(fake_llm)
    )
    assert Completion.extract_text(response) == ["fast"]
    assert [r.json["model"] for r in fake_llm.received] == ["gpt-4", "gpt-4"]
    # an explicit request_timeout is not retried
    fake_llm.add_reply("slow", delay=2)
    with pytest.raises(openai.APITimeoutError):
        ChatCompletion.create(prompt="y", request_timeout=0.3, **entry(fake_llm))
    del ChatCompletion.request_timeout


def test_compact_history_keeps_one_entry_per_conversation(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("first")
    fake_llm.add_reply("second")
    Completion.start_logging()
    first = [{"role": "user", "content": "hi"}]
    ChatCompletion.create(messages=first, **entry(fake_llm))
    grown = [*first, {"role": "assistant", "content": "first"}, {"role": "user", "content": "more"}]
    ChatCompletion.create(messages=grown, **entry(fake_llm))
    history = ChatCompletion.logged_history
    assert history is Completion.logged_history
    assert list(history) == [
        json.dumps([*grown, {"content": "second", "role": "assistant"}], sort_keys=True)
    ]
    (value,) = history.values()
    assert value["created_at"] == [0, 1]
    assert [c["model"] for c in value["token_count"]] == ["gpt-4", "gpt-4"]
    assert set(value["token_count"][0]) == {
        "model",
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
    }


def test_full_history_and_usage_summary(
    fake_llm: FakeLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_llm.add_reply("a")
    fake_llm.add_reply("b")
    mine: dict[Any, Any] = {"kept": True}
    Completion.start_logging(mine, compact=False)
    ChatCompletion.create(prompt="one", **entry(fake_llm, "gpt-4"))
    ChatCompletion.create(prompt="two", **entry(fake_llm, "gpt-3.5-turbo"))
    ChatCompletion.create(prompt="two", **entry(fake_llm, "gpt-3.5-turbo"))  # cached, still logged
    assert list(mine) == ["kept", 0, 1, 2]
    assert mine[0]["request"] == {
        "model": "gpt-4",
        "messages": [{"role": "user", "content": "one"}],
    }
    assert mine[0]["response"]["choices"][0]["message"]["content"] == "a"
    del mine["kept"]
    Completion.print_usage_summary()
    lines = capsys.readouterr().out.splitlines()
    total = sum(v["response"]["cost"] for v in mine.values())
    assert lines[0] == f"Total cost: {total}"
    assert lines[1].startswith("Token count summary for model gpt-4: prompt_tokens: ")
    assert lines[2].startswith("Token count summary for model gpt-3.5-turbo: prompt_tokens: ")
    Completion.stop_logging()
    assert Completion.logged_history is None
    Completion.print_usage_summary()
    assert capsys.readouterr().out == "No usage summary available.\n"


def test_cost_and_extract_helpers() -> None:
    usage = {"prompt_tokens": 1000, "completion_tokens": 500}
    assert Completion.cost({"model": "gpt-4", "usage": usage}) == pytest.approx(0.06)
    assert Completion.cost(
        {"model": "text-davinci-003", "usage": {"prompt_tokens": 1000}}
    ) == pytest.approx(0.02)
    assert Completion.cost({"model": "no-such-model", "usage": usage}) == 0
    assert Completion.cost({"model": "gpt-4o-mini", "usage": usage}) > 0  # parley's newer table
    text = {"choices": [{"text": "a"}, {"text": "b"}]}
    assert Completion.extract_text(text) == ["a", "b"]
    call = {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": "{}"}}
    chat = {"choices": [{"message": {"role": "assistant", "content": "c"}}, {"message": call}]}
    assert Completion.extract_text(chat) == ["c", None]
    assert Completion.extract_text_or_function_call(chat) == ["c", call]
    assert Completion.extract_text_or_function_call(text) == ["a", "b"]


def test_price_prices_a_model_outside_the_tables(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("x")
    response = ChatCompletion.create(prompt="p", price=[1, 2], **entry(fake_llm, "my-model"))
    usage = response["usage"]
    assert response["cost"] == pytest.approx(
        (usage["prompt_tokens"] + 2 * usage["completion_tokens"]) / 1000
    )


def _eval(responses: list[str], answer: str, **_: Any) -> dict[str, Any]:
    hits = [r == answer for r in responses]
    return {
        "success": any(hits),
        "expected": sum(hits) / len(hits),
        "voted": f"answer: {responses[0]}",
    }


def test_test_aggregates_metrics(fake_llm: FakeLLMServer) -> None:
    fake_llm.responder = lambda body: (
        {"choices": ["4", "5"]} if "2+2" in json.dumps(body) else {"choices": ["9", "9"]}
    )
    data = [{"q": "2+2", "answer": "4"}, {"q": "3+3", "answer": "6"}]
    config = {"prompt": "{q}", "allow_format_str_template": True, "n": 2, **entry(fake_llm)}
    result = ChatCompletion.test(data, _eval, **config)
    assert result["success"] == 0.5
    assert result["expected"] == 0.25
    assert "voted" not in result  # text metrics are left out
    assert result["inference_cost"] == pytest.approx(result["cost"] / 2)
    median = ChatCompletion.test(data, _eval, agg_method="median", **config)
    assert median["expected"] == 0.25
    summary, per_instance, responses = ChatCompletion.test(
        data,
        _eval,
        agg_method={"success": max, "expected": min},
        return_responses_and_per_instance_result=True,
        **config,
    )
    assert (summary["success"], summary["expected"]) == (True, 0.0)
    assert responses == [["4", "5"], ["9", "9"]]
    assert per_instance[0]["voted"] == "answer: 4"
    with pytest.raises(AssertionError, match="callable for each metric"):
        ChatCompletion.test(data, _eval, agg_method={"success": max}, **config)
    with pytest.raises(ValueError, match="empty data set"):
        ChatCompletion.test([], _eval, **config)


def test_test_requests_run_concurrently(fake_llm: FakeLLMServer) -> None:
    fake_llm.default = None
    fake_llm.responder = lambda body: {"content": "x", "delay": 0.3}
    data = [{"i": i} for i in range(6)]
    ChatCompletion.test(
        data,
        lambda responses, **_: {"n": 1},
        prompt="{i}",
        allow_format_str_template=True,
        **entry(fake_llm),
    )
    arrivals = sorted(r.time for r in fake_llm.received)
    assert arrivals[-1] - arrivals[0] < 0.3  # all six were in flight together


def test_completion_models_use_the_text_endpoint(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply(choices=[" four", " 4"])
    response = Completion.create(
        {"q": "2 + 2"},
        prompt="Q: {q}\nA:",
        allow_format_str_template=True,
        n=2,
        logprobs=1,
        max_tokens=5,
        **entry(fake_llm, "text-davinci-003"),
    )
    (request,) = fake_llm.received
    assert request.path.endswith("/completions")
    assert not request.path.endswith("/chat/completions")
    assert request.json == {
        "model": "text-davinci-003",
        "prompt": "Q: 2 + 2\nA:",
        "n": 2,
        "logprobs": 1,
        "max_tokens": 5,
    }
    assert Completion.extract_text(response) == [" four", " 4"]
    assert Completion.extract_text_or_function_call(response) == [" four", " 4"]
    assert response["choices"][0]["logprobs"]["tokens"]
    assert response["cost"] == pytest.approx(0.02 * response["usage"]["total_tokens"] / 1000)


def test_instruct_and_streamed_completions(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("streamed text")
    response = Completion.create(
        prompt="go", stream=True, **entry(fake_llm, "gpt-3.5-turbo-instruct")
    )
    assert fake_llm.received[0].path.endswith("/v1/completions")
    assert Completion.extract_text(response) == ["streamed text"]
    assert response["usage"]["completion_tokens"] > 0
    # the same model through ChatCompletion goes to the chat endpoint
    fake_llm.add_reply("chat text")
    ChatCompletion.create(prompt="go", **entry(fake_llm, "gpt-3.5-turbo-instruct"))
    assert fake_llm.received[1].path.endswith("/chat/completions")


def test_completion_history_is_keyed_by_prompt_and_texts(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("done")
    Completion.start_logging()
    Completion.create(prompt="p", **entry(fake_llm, "text-ada-001"))
    assert list(Completion.logged_history) == [json.dumps(["p", "done"], sort_keys=True)]
