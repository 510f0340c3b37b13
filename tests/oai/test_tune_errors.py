"""Completion.tune's errors: each names the problem, and those that can be found before
spending anything are raised before the first request."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from parley.oai import ChatCompletion, Completion
from parley.testing import FakeLLMServer

from .tune_support import endpoint, question_data, solver, success

pytestmark = pytest.mark.usefixtures("tuning")


def _tune(server: FakeLLMServer, *args: Any, **extra: Any) -> tuple[dict[str, Any], Any]:
    positional = (question_data(2), "success", "max", success)
    settings: dict[str, Any] = {
        "model": "gpt-4",
        "prompt": "{question}",
        "allow_format_str_template": True,
        "n": 1,
        "max_tokens": 20,
        "config_list": endpoint(server),
    }
    return ChatCompletion.tune(*args, *positional[len(args) :], **{**settings, **extra})


@pytest.mark.parametrize(
    ("args", "extra", "error", "match"),
    [
        (([],), {}, ValueError, "needs at least one data instance"),
        (({"question": "q"},), {}, TypeError, "data must be a list of dicts"),
        ((["q"],), {}, TypeError, r"data\[0\] must be a dict"),
        ((question_data(2), "success", "maximize"), {}, ValueError, "mode must be 'min' or 'max'"),
        ((question_data(2), "success", "max", None), {}, TypeError, "eval_func must be a callable"),
        ((), {"optimization_budget": 0}, ValueError, "optimization_budget=0 cannot pay"),
        ((), {"inference_budget": -0.1}, ValueError, "inference_budget=-0.1 cannot pay"),
        ((), {"inference_budget": "cheap"}, TypeError, "inference_budget must be a number"),
        ((), {"num_samples": -1}, ValueError, "num_samples=-1 .* needs an optimization_budget"),
        ((), {"num_samples": 0}, ValueError, "num_samples must be positive"),
        ((), {"max_concurrency": 0}, ValueError, "max_concurrency must be at least 1"),
        ((), {"prompt": 5}, AssertionError, "prompt must be a string or a list of strings"),
        ((), {"messages": "hi"}, AssertionError, "messages must be a list of dicts"),
        ((), {"stop": 3}, AssertionError, "stop must be a string"),
    ],
)
def test_bad_arguments_are_refused_before_any_request(
    fake_llm: FakeLLMServer,
    args: tuple[Any, ...],
    extra: dict[str, Any],
    error: type[Exception],
    match: str,
) -> None:
    with pytest.raises(error, match=match):
        _tune(fake_llm, *args, **extra)
    assert fake_llm.requests == []


def test_a_model_without_a_price_needs_one_when_a_budget_is_set(
    fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_llm.responder = solver(lambda body: True)
    with pytest.raises(ValueError, match="no price is known for model 'my-model'") as caught:
        _tune(fake_llm, model="my-model", inference_budget=0.01)
    assert "price=[input, output]" in str(caught.value)
    assert "ChatCompletion.price1K['my-model'] = (input, output)" in str(caught.value)
    assert fake_llm.requests == []
    # Priced either way, or tuned without budgets, it is fine.
    config, _ = _tune(fake_llm, model="my-model", inference_budget=0.01, price=[0.001, 0.002])
    assert config["price"] == [0.001, 0.002]
    monkeypatch.setitem(Completion.price1K, "my-model", (0.001, 0.002))
    assert _tune(fake_llm, model="my-model", inference_budget=0.01)[0]["model"] == "my-model"
    monkeypatch.delitem(Completion.price1K, "my-model")
    assert _tune(fake_llm, model="my-model")[0]["model"] == "my-model"


def test_an_inference_budget_below_the_input_cost_of_every_choice(
    fake_llm: FakeLLMServer,
) -> None:
    data = [{"question": "Why? " * 400, "answer": "1"}]  # about 800 tokens
    with pytest.raises(ValueError, match=r"inference_budget=0.01 USD cannot buy one request"):
        _tune(fake_llm, data, model=["gpt-4", "gpt-4-32k"], inference_budget=0.01)
    assert fake_llm.requests == []


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        ({"prompt": ["{question}", "{question} Hint: {hint}"]}, "names 'hint', which data"),
        (
            {
                "messages": [
                    {"role": "system", "content": "Use {tool}."},
                    {"role": "user", "content": "{question}"},
                ]
            },
            "message template 'Use {tool}.' names 'tool'",
        ),
        ({"prompt": "{} {question}"}, "has a positional field"),
    ],
)
def test_a_template_key_the_data_lacks(
    fake_llm: FakeLLMServer, extra: dict[str, Any], match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        _tune(fake_llm, **extra)
    assert fake_llm.requests == []


def test_an_eval_func_without_the_metric(fake_llm: FakeLLMServer) -> None:
    fake_llm.responder = solver(lambda body: True)
    with pytest.raises(ValueError, match=r"eval_func returned no 'accuracy' metric") as caught:
        _tune(fake_llm, question_data(2), "accuracy")
    assert "['expected_success', 'success', 'voted_answer']" in str(caught.value)

    def texts(responses: list[Any], **instance: Any) -> dict[str, Any]:
        return {"success": "yes"}

    with pytest.raises(TypeError, match="eval_func's 'success' metric must be a number"):
        _tune(fake_llm, question_data(2), "success", "max", texts)


def test_without_flaml_tune_says_how_to_install_it(
    fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "flaml", None)
    with pytest.raises(ImportError, match=r"pip install 'parley\[tune\]'"):
        _tune(fake_llm)
    assert fake_llm.requests == []


def test_without_optuna_tune_searches_with_cfo(
    fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # BlendSearch needs optuna ("Optuna must be installed!"); FLAML's CFO does not.
    monkeypatch.setitem(sys.modules, "optuna", None)
    fake_llm.responder = solver(lambda body: "step" in body["messages"][-1]["content"])
    config, analysis = _tune(
        fake_llm, prompt=["{question}", "step by step: {question}"], temperature=0, num_samples=4
    )
    assert config["prompt"] == "step by step: {question}"
    assert analysis.best_result["success"] == 1.0


def test_a_price_carried_by_the_config_list_entry_prices_the_model(
    fake_llm: FakeLLMServer,
) -> None:
    """As a config entry's ``price`` prices ``create``'s answers, it lets tune keep budgets for
    a model no price table knows."""
    fake_llm.responder = solver(lambda body: True)
    priced = [{**endpoint(fake_llm)[0], "price": [0.001, 0.002]}]
    config, analysis = _tune(
        fake_llm,
        model="my-model",
        inference_budget=0.01,
        optimization_budget=1.0,
        config_list=priced,
    )
    assert config["model"] == "my-model"
    assert fake_llm.requests != []
    result = analysis.best_result
    assert result["inference_cost"] > 0  # priced by the entry, not left at zero
    assert result["total_cost"] > 0


def test_an_entry_without_a_price_for_its_own_model_is_still_refused(
    fake_llm: FakeLLMServer,
) -> None:
    entries = [
        {**endpoint(fake_llm)[0], "price": [0.001, 0.002]},
        {**endpoint(fake_llm)[0], "model": "other-unpriced-model"},
    ]
    with pytest.raises(ValueError, match="no price is known for model 'other-unpriced-model'"):
        _tune(fake_llm, model="my-model", inference_budget=0.01, config_list=entries)
    assert fake_llm.requests == []
