"""``Completion.tune`` never spends more than its optimization budget, though it sends a round's
requests concurrently (issue 34, 8d: $0.00216 spent with a $0.002 budget, $0.00648 with $0.005).

The model is a FakeLLMServer on loopback reached through the real openai client; every request
costs what its reported usage says at gpt-4's price (0.03 / 0.06 USD per 1000 tokens).
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from parley.oai import ChatCompletion
from parley.testing import FakeLLMServer

from ..oai.tune_support import endpoint, question_data, solver, success

pytestmark = pytest.mark.usefixtures("legacy_completion")

# 5 prompt and 2 completion tokens: 0.00027 USD a request, 0.00216 USD for a round of eight.
COST = (5 * 0.03 + 2 * 0.06) / 1000


def _tune(server: FakeLLMServer, budget: float, samples: int = -1, **config: Any) -> Any:
    return ChatCompletion.tune(
        question_data(8),
        "success",
        "max",
        success,
        optimization_budget=budget,
        num_samples=samples,
        model="gpt-4",
        prompt="{question}",
        allow_format_str_template=True,
        n=1,
        **{"max_tokens": 2, **config},
        config_list=endpoint(server),
    )


def _spent(analysis: Any) -> float:
    return max(t.last_result["total_cost"] for t in analysis.trials if t.last_result)


@pytest.mark.parametrize("budget", [0.002, 0.005])
def test_concurrent_requests_stay_within_the_optimization_budget(
    fake_llm: FakeLLMServer, budget: float
) -> None:
    fake_llm.responder = solver(lambda body: True, prompt_tokens=5, output_tokens=2)
    _, analysis = _tune(fake_llm, budget)
    spent = _spent(analysis)
    assert len(fake_llm.requests) >= 1  # the budget bought something
    assert spent == pytest.approx(len(fake_llm.requests) * COST)
    assert spent <= budget


def test_a_request_whose_worst_case_does_not_fit_is_not_sent(fake_llm: FakeLLMServer) -> None:
    # The replies are cheap, but each request may answer with up to 1000 tokens (0.06 USD):
    # more than the budget, so none is sent.
    fake_llm.responder = solver(lambda body: True, prompt_tokens=5, output_tokens=2)
    config, analysis = _tune(fake_llm, 0.005, max_tokens=1000)
    assert fake_llm.requests == []
    assert config == {}
    assert all(t.last_result["success"] == -math.inf for t in analysis.trials if t.last_result)


def test_a_chat_request_without_max_tokens_reserves_its_context_window(
    fake_llm: FakeLLMServer,
) -> None:
    # gpt-4's answer is bounded by its 8192-token context window only: 0.49 USD at worst.
    fake_llm.responder = solver(lambda body: True, prompt_tokens=5, output_tokens=2)
    # (one trial each: flaml cannot search on from a space holding None)
    _, analysis = _tune(fake_llm, 0.4, 1, max_tokens=None)
    assert fake_llm.requests == []
    _, analysis = _tune(fake_llm, 1.2, 1, max_tokens=None)
    assert 1 <= len(fake_llm.requests) <= 2
    assert _spent(analysis) <= 1.2


def test_a_model_whose_chat_format_parley_does_not_know_is_reserved_too(
    fake_llm: FakeLLMServer,
) -> None:
    # A local model's name: parley counts its prompt as gpt-4's instead of failing the run.
    fake_llm.responder = solver(lambda body: True, prompt_tokens=5, output_tokens=2)
    _, analysis = ChatCompletion.tune(
        question_data(8),
        "success",
        "max",
        success,
        optimization_budget=0.002,
        num_samples=-1,
        model="smollm2",
        price=[0.03, 0.06],
        prompt="{question}",
        allow_format_str_template=True,
        n=1,
        max_tokens=2,
        config_list=endpoint(fake_llm),
    )
    assert len(fake_llm.requests) >= 1
    assert _spent(analysis) <= 0.002
