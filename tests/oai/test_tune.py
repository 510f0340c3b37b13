"""Completion.tune end to end: a FakeLLMServer on loopback, through the real openai client."""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from parley.oai import ChatCompletion, Completion
from parley.oai.legacy._tune_space import flaml_modules
from parley.testing import FakeLLMServer

from .tune_support import asked, endpoint, question_data, solver, success

pytestmark = pytest.mark.usefixtures("tuning")
tune = flaml_modules().tune
STEP = "Think step by step. {question}"
PROMPTS = ["{question}", STEP, "Answer at once: {question}"]


def _by_question(requests: list[dict[str, Any]]) -> dict[str, list[int]]:
    sizes: dict[str, list[int]] = defaultdict(list)
    for body in requests:
        sizes[asked(body)].append(body.get("n", 1))
    return dict(sizes)


def test_n_grows_exponentially_asking_only_for_the_missing_completions(
    fake_llm: FakeLLMServer,
) -> None:
    fake_llm.responder = solver(lambda body: True)
    seen: list[int] = []

    def evaluate(responses: list[Any], **instance: Any) -> dict[str, Any]:
        seen.append(len(responses))
        return success(responses, **instance)

    data = question_data(4)
    config, analysis = ChatCompletion.tune(
        data,
        "expected_success",
        "max",
        evaluate,
        inference_budget=0.01,
        model="gpt-3.5-turbo",
        prompt="{question}",
        allow_format_str_template=True,
        n=8,
        max_tokens=None,  # unbounded: only measured tokens can prove the cost
        temperature=0.5,
        config_list=endpoint(fake_llm),
    )
    # The first instance proves n = 1, 2, 4 affordable one after the other, each round asking
    # only for the completions it lacks; the others are asked for the final n at once.
    assert _by_question(fake_llm.requests) == {
        "What is 0 + 0?": [1, 1, 2, 4],
        "What is 1 + 1?": [8],
        "What is 2 + 2?": [8],
        "What is 3 + 3?": [8],
    }
    assert seen == [8, 8, 8, 8]
    assert config == {
        "model": "gpt-3.5-turbo",
        "prompt": "{question}",
        "allow_format_str_template": True,
        "n": 8,
        "temperature": 0.5,
    }
    result = analysis.best_result
    assert result["expected_success"] == 1.0
    assert "voted_answer" not in result  # text metrics are left out
    # One request of 20 input tokens and 8 completions of 5 tokens, per instance.
    assert result["inference_cost"] == pytest.approx((20 * 0.0015 + 40 * 0.002) / 1000)
    # The first instance pays its input four times, its 8 completions once.
    paid = (4 * 20 * 0.0015 + 40 * 0.002) / 1000 + 3 * (20 * 0.0015 + 40 * 0.002) / 1000
    assert result["cost"] == pytest.approx(paid)
    assert result["total_cost"] == pytest.approx(paid)


def test_a_config_proven_too_costly_is_pruned_without_requests(
    fake_llm: FakeLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    # 100 output tokens per completion; the budget buys about 150.
    fake_llm.responder = solver(lambda body: True, output_tokens=100)
    config, analysis = ChatCompletion.tune(
        question_data(4),
        "success",
        "max",
        success,
        inference_budget=0.00033,
        num_samples=2,
        model="gpt-3.5-turbo",
        prompt="{question}",
        allow_format_str_template=True,
        n=tune.choice([8, 16]),
        max_tokens=None,
        temperature=0.5,
        config_list=endpoint(fake_llm),
    )
    first, second = analysis.trials
    # The first trial learns on one instance that n = 1 fits and n = 2 does not ...
    assert [body["n"] for body in fake_llm.requests] == [1, 1]
    assert first.last_result["success"] == -math.inf
    assert first.last_result["inference_cost"] == math.inf
    # ... so the second, asking for more completions, is rejected without a request.
    assert second.config["n"] != first.config["n"]
    assert second.last_result["success"] == -math.inf
    assert second.last_result["cost"] == 0
    assert config == {}
    assert any("no trial of tune() produced" in m for m in caplog.messages)


def test_a_config_not_yet_proven_affordable_reads_the_data_progressively(
    fake_llm: FakeLLMServer,
) -> None:
    # max_tokens=100 proves at most 7 completions affordable (about 750 tokens bought); the
    # 8 wanted are asked for at once, on the first instance only, until the cost is known.
    fake_llm.responder = solver(lambda body: True, output_tokens=200)
    ChatCompletion.tune(
        question_data(4),
        "success",
        "max",
        success,
        inference_budget=0.0015225,
        model="gpt-3.5-turbo",
        prompt="{question}",
        allow_format_str_template=True,
        n=8,
        max_tokens=100,
        temperature=0.5,
        config_list=endpoint(fake_llm),
    )
    assert _by_question(fake_llm.requests) == {"What is 0 + 0?": [8]}


def test_the_instances_of_a_round_are_requested_concurrently(fake_llm: FakeLLMServer) -> None:
    fake_llm.responder = solver(lambda body: True, delay=0.2)
    common: dict[str, Any] = {
        "model": "gpt-4",
        "prompt": "{question}",
        "allow_format_str_template": True,
        "n": 1,
        "max_tokens": 20,
        "temperature": 0,
        "config_list": endpoint(fake_llm),
    }
    ChatCompletion.tune(question_data(8), "success", "max", success, **common)
    arrivals = sorted(r.time for r in fake_llm.received)
    assert len(arrivals) == 8
    # All eight were in flight before the first answer (0.2 s) could come back.
    assert arrivals[-1] - arrivals[0] < 0.15

    fake_llm.reset()
    ChatCompletion.set_cache(42, str(Path(ChatCompletion.cache_path).parent))
    ChatCompletion.tune(question_data(6), "success", "max", success, max_concurrency=2, **common)
    arrivals = sorted(r.time for r in fake_llm.received)
    assert len(arrivals) == 6
    # Two at a time: a third request waits for an answer.
    assert all(
        later - earlier >= 0.18 for earlier, later in zip(arrivals, arrivals[2:], strict=False)
    )


def _headline(server: FakeLLMServer, **extra: Any) -> tuple[dict[str, Any], Any]:
    settings: dict[str, Any] = {
        "inference_budget": 0.002,
        "optimization_budget": 0.5,
        "num_samples": 12,
        "prompt": PROMPTS,
        "allow_format_str_template": True,
        "config_list": endpoint(server),
    }
    return ChatCompletion.tune(question_data(6), "success", "max", success, **{**settings, **extra})


def _only_cheap_and_careful(body: dict[str, Any]) -> bool:
    return body["model"] == "gpt-3.5-turbo" and asked(body).startswith("Think step by step.")


def test_tune_finds_the_one_good_config_within_the_budgets(fake_llm: FakeLLMServer) -> None:
    fake_llm.responder = solver(_only_cheap_and_careful)
    config, analysis = _headline(fake_llm)
    assert config["model"] == "gpt-3.5-turbo"
    assert config["prompt"] == STEP
    assert config["allow_format_str_template"] is True
    assert {"n", "max_tokens"} <= set(config)
    assert len({"temperature", "top_p"} & set(config)) == 1
    assert "config_list" not in config
    best = analysis.best_result
    assert best["success"] == 1.0
    assert best["inference_cost"] <= 0.002
    assert sum(t.last_result["cost"] for t in analysis.trials) <= 0.5
    # The first two trials compare the models and nothing else.
    first, second = (t.config for t in analysis.trials[:2])
    assert {first["subspace"].pop("model"), second["subspace"].pop("model")} == {
        "gpt-3.5-turbo",
        "gpt-4",
    }
    assert first == second

    # The config works as is with create, and test() scores it with the remembered eval_func.
    data = question_data(6)
    response = ChatCompletion.create(
        context=data[3], use_cache=False, config_list=endpoint(fake_llm), **config
    )
    assert ChatCompletion.extract_text(response)[0] == "It is 6."
    assert fake_llm.last_request["messages"] == [
        {"role": "user", "content": "Think step by step. What is 3 + 3?"}
    ]
    assert ChatCompletion.test(data, config_list=endpoint(fake_llm), **config)["success"] == 1.0
    assert ChatCompletion.data == data
    assert (ChatCompletion._metric, ChatCompletion._mode) == ("success", "max")
    assert ChatCompletion._eval_func is success
    assert (ChatCompletion.inference_budget, ChatCompletion.optimization_budget) == (0.002, 0.5)
    assert ChatCompletion._prompts == PROMPTS
    assert ChatCompletion._config_list == endpoint(fake_llm)
    assert "_metric" not in Completion.__dict__  # the tuned class only


def test_the_same_call_proposes_the_same_trials(fake_llm: FakeLLMServer, tuning: Path) -> None:
    fake_llm.responder = solver(_only_cheap_and_careful)
    runs = []
    for seed, cache in [(20, "a"), (20, "b"), (7, "c")]:
        ChatCompletion.set_cache(41, str(tuning / cache))  # nothing comes from a cache
        config, analysis = _headline(fake_llm, search_seed=seed, num_samples=8)
        runs.append((config, [t.config for t in analysis.trials]))
    assert runs[0] == runs[1]
    assert runs[2][1] != runs[0][1]


def test_rate_limits_that_outlast_retries_reject_the_trial(
    fake_llm: FakeLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    fake_llm.responder = lambda body: {"error": 429, "message": "slow down"}
    config, analysis = ChatCompletion.tune(
        question_data(2),
        "success",
        "max",
        success,
        inference_budget=0.01,
        model="gpt-4",
        prompt="{question}",
        allow_format_str_template=True,
        n=4,
        max_retry_period=0,  # give up at once: create returns -1
        config_list=endpoint(fake_llm),
    )
    assert config == {}
    (trial,) = analysis.trials
    assert trial.last_result["success"] == -math.inf
    assert any("RateLimitError or Timeout" in m for m in caplog.messages)


def test_the_optimization_budget_stops_the_spending(fake_llm: FakeLLMServer) -> None:
    fake_llm.responder = solver(lambda body: True, output_tokens=50)
    # A gpt-4 request may cost up to (its prompt + max_tokens >= 50) tokens: at least
    # 0.00375 USD. Two such reservations fit in the budget, a third does not: the round is cut
    # short, and the run stops there (tests/security/test_tune_budget.py for the details).
    config, analysis = ChatCompletion.tune(
        question_data(4),
        "success",
        "max",
        success,
        optimization_budget=0.01,
        num_samples=-1,
        model="gpt-4",
        prompt="{question}",
        allow_format_str_template=True,
        n=1,
        max_tokens=tune.randint(50, 100),
        config_list=endpoint(fake_llm),
    )
    assert 1 <= len(fake_llm.requests) <= 2
    first, *rest = analysis.trials
    assert first.last_result["success"] == -math.inf
    assert first.last_result["total_cost"] == pytest.approx(len(fake_llm.requests) * 0.0036)
    assert all(t.last_result is None for t in rest)  # not run: the budget is spent
    assert config == {}


def test_the_logger_level_is_restored(fake_llm: FakeLLMServer) -> None:
    logger = logging.getLogger("parley.oai.completion")
    before = logger.level
    fake_llm.responder = solver(lambda body: True)
    with pytest.raises(ValueError, match="eval_func returned no 'succes' metric"):
        ChatCompletion.tune(
            question_data(2),
            "succes",
            "max",
            success,
            logging_level=logging.DEBUG,
            model="gpt-4",
            prompt="{question}",
            allow_format_str_template=True,
            n=1,
            config_list=endpoint(fake_llm),
        )
    assert logger.level == before
