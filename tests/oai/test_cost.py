"""Prices, per-call cost, usage summaries and their printed form (AutoGen's response ``cost``,
``total_usage_summary``/``actual_usage_summary`` and ``print_usage_summary``)."""

from __future__ import annotations

import copy
import logging
import threading
import uuid

import pytest

from parley.oai._cost import (
    OAI_PRICE1K,
    compute_cost,
    format_usage_summary,
    model_price,
    update_usage_summary,
)

COST_LOGGER = "parley.oai._cost"


def _fresh_model() -> str:
    # the unknown-model warning is once per name per process, so each test needs its own name
    return f"no-such-model-{uuid.uuid4().hex}"


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


# --- the table -----------------------------------------------------------------------------------


REQUIRED_MODELS = [
    "gpt-5",
    "gpt-5-mini",
    "gpt-5-nano",
    "gpt-4.1",
    "gpt-4.1-mini",
    "gpt-4.1-nano",
    "gpt-4o",
    "gpt-4o-2024-05-13",
    "gpt-4o-2024-08-06",
    "gpt-4o-2024-11-20",
    "gpt-4o-mini",
    "o1",
    "o1-mini",
    "o3",
    "o3-mini",
    "o4-mini",
    "gpt-4-turbo",
    "gpt-4",
    "gpt-4-32k",
    "gpt-3.5-turbo",
    "gpt-3.5-turbo-0125",
    "gpt-3.5-turbo-1106",
    "gpt-35-turbo",
    "davinci-002",
]


@pytest.mark.parametrize("model", REQUIRED_MODELS)
def test_table_prices_current_models(model: str) -> None:
    assert model in OAI_PRICE1K
    assert model_price(model) is not None


def test_table_entries_are_non_negative_prices() -> None:
    for model, price in OAI_PRICE1K.items():
        pair = (price, price) if isinstance(price, float) else price
        assert len(pair) == 2, model
        assert all(p >= 0 for p in pair), model


# --- model_price ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "same_as"),
    [
        # exact names
        ("gpt-4o", "gpt-4o"),
        ("gpt-4o-mini", "gpt-4o-mini"),
        ("gpt-4-32k", "gpt-4-32k"),
        # an exact snapshot entry wins over its base (the first gpt-4o snapshot cost more)
        ("gpt-4o-2024-05-13", "gpt-4o-2024-05-13"),
        # unknown dated snapshots fall back to their own base, never a shorter one
        ("gpt-4o-2031-01-01", "gpt-4o"),
        ("gpt-4o-mini-2031-01-01", "gpt-4o-mini"),
        ("gpt-4-32k-0999", "gpt-4-32k"),
        ("gpt-4-0999", "gpt-4"),
        ("gpt-4.1-mini-2025-04-14", "gpt-4.1-mini"),
        ("gpt-5-nano-2025-08-07", "gpt-5-nano"),
        ("o3-mini-2025-01-31", "o3-mini"),
        ("gpt-3.5-turbo-0999", "gpt-3.5-turbo"),
        # Azure spellings without the dot
        ("gpt-35-turbo", "gpt-3.5-turbo"),
        ("gpt-35-turbo-16k", "gpt-3.5-turbo-16k"),
        ("gpt-35-turbo-0999", "gpt-3.5-turbo"),
        # case and router prefixes
        ("GPT-4o", "gpt-4o"),
        ("openai/gpt-4o-mini", "gpt-4o-mini"),
    ],
)
def test_model_price_resolution(model: str, same_as: str) -> None:
    assert model_price(model) == model_price(same_as)
    assert model_price(model) is not None


def test_model_price_distinguishes_similar_names() -> None:
    assert model_price("gpt-4o-mini") != model_price("gpt-4o")
    assert model_price("gpt-4o-mini-2031-01-01") != model_price("gpt-4o")
    assert model_price("gpt-4-32k") != model_price("gpt-4")
    assert model_price("gpt-4-32k-0999") != model_price("gpt-4")


@pytest.mark.parametrize(
    "model",
    [
        "",
        None,
        "llama-3-70b",
        "gpt-4o-audio-preview-2031-01-01",  # not priced as plain gpt-4o
        "gpt-4o-mini-tts",
        "gpt-4-turbo-ish",
        "gpt-4o2024",
    ],
)
def test_model_price_unknown(model: str | None) -> None:
    assert model_price(model) is None


def test_model_price_values() -> None:
    assert model_price("gpt-4") == (0.03, 0.06)
    assert model_price("davinci-002") == (0.002, 0.002)  # one price for all tokens


def test_model_price_sees_entries_added_to_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(OAI_PRICE1K, "my-model", (1.0, 2.0))
    assert model_price("my-model") == (1.0, 2.0)
    assert model_price("my-model-2030-01-01") == (1.0, 2.0)


# --- compute_cost --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "prompt", "completion", "price", "expected"),
    [
        ("gpt-4", 1000, 1000, None, 0.09),
        ("gpt-4", 1000, None, None, 0.03),
        ("gpt-4o-mini", 2000, 500, None, 0.0006),
        ("gpt-4o-2031-01-01", 1000, 1000, None, 0.0125),
        ("davinci-002", 500, 500, None, 0.002),
        ("gpt-4", 0, 0, None, 0.0),
        # a config's price overrides the table, and prices models it doesn't know
        ("gpt-4", 1000, 1000, [0.5, 1.0], 1.5),
        ("anything-at-all", 2000, 3000, (0.5, 1.0), 4.0),
        ("anything-at-all", 10, 0, [0, 0], 0.0),
    ],
)
def test_compute_cost(
    model: str, prompt: int, completion: int | None, price: list[float] | None, expected: float
) -> None:
    assert compute_cost(model, prompt, completion, price=price) == pytest.approx(expected)


def test_single_number_price_is_used_for_both_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger=COST_LOGGER):
        cost = compute_cost("gpt-4", 1000, 3000, price=0.5)
    assert cost == pytest.approx(2.0)
    assert len(_warnings(caplog)) == 1
    assert "both" in _warnings(caplog)[0]


@pytest.mark.parametrize(
    "price",
    [
        [0.1],
        [0.1, 0.2, 0.3],
        [],
        ["0.1", 0.2],
        [0.1, None],
        [True, 0.2],
        [-0.1, 0.2],
        -1,
        float("nan"),
        [0.1, float("inf")],
        "0.1",
        {"prompt": 0.1},
    ],
)
def test_bad_price_raises_naming_it(price: object) -> None:
    with pytest.raises(ValueError, match="price"):
        compute_cost("gpt-4", 10, 10, price=price)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("prompt", "completion", "name"),
    [(-1, 0, "prompt_tokens"), (0, -5, "completion_tokens"), ("3", 0, "prompt_tokens")],
)
def test_bad_token_counts_raise_naming_them(prompt: object, completion: object, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        compute_cost("gpt-4", prompt, completion)  # type: ignore[arg-type]


def test_unknown_model_costs_zero_with_one_warning_per_name(
    caplog: pytest.LogCaptureFixture,
) -> None:
    first, second = _fresh_model(), _fresh_model()
    with caplog.at_level(logging.WARNING, logger=COST_LOGGER):
        costs = [compute_cost(first, 100, 100) for _ in range(3)]
        costs.append(compute_cost(second, 100, 100))
        costs.append(compute_cost(first, 5, 5))
    assert costs == [0.0] * 5
    messages = _warnings(caplog)
    assert len(messages) == 2
    assert first in messages[0]
    assert second in messages[1]
    assert "price" in messages[0]  # tells the user how to fix it


def test_unknown_model_warns_once_across_threads(caplog: pytest.LogCaptureFixture) -> None:
    model = _fresh_model()
    start = threading.Barrier(8, timeout=10)

    def worker() -> None:
        start.wait()
        for _ in range(50):
            compute_cost(model, 1, 1)

    with caplog.at_level(logging.WARNING, logger=COST_LOGGER):
        threads = [threading.Thread(target=worker) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=10)
    assert not any(t.is_alive() for t in threads)
    assert sum(model in m for m in _warnings(caplog)) == 1


def test_known_model_logs_nothing(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger=COST_LOGGER):
        compute_cost("gpt-4o", 10, 10)
        compute_cost(_fresh_model(), 10, 10, price=[0.1, 0.2])
    assert caplog.records == []


# --- update_usage_summary ------------------------------------------------------------------------


def _usage(model: str = "m2", cost: float = 0.5, prompt: int = 3, completion: int | None = 2):
    total = prompt + (completion or 0)
    return {
        "model": model,
        "cost": cost,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": total,
    }


def test_usage_summary_verified_example() -> None:
    # AutoGen's own example: 0.5 per call; two real calls then one cache hit
    actual = total = None
    for _ in range(2):
        actual = update_usage_summary(actual, _usage())
        total = update_usage_summary(total, _usage())
    total = update_usage_summary(total, _usage())  # the cache hit counts toward total only
    assert actual == {
        "total_cost": 1.0,
        "m2": {"cost": 1.0, "prompt_tokens": 6, "completion_tokens": 4, "total_tokens": 10},
    }
    assert total == {
        "total_cost": 1.5,
        "m2": {"cost": 1.5, "prompt_tokens": 9, "completion_tokens": 6, "total_tokens": 15},
    }


def test_usage_summary_keeps_models_apart() -> None:
    summary = update_usage_summary(None, _usage("a", 0.25, 10, 5))
    summary = update_usage_summary(summary, _usage("b", 0.5, 1, 1))
    summary = update_usage_summary(summary, _usage("a", 0.25, 10, 5))
    assert summary == {
        "total_cost": 1.0,
        "a": {"cost": 0.5, "prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30},
        "b": {"cost": 0.5, "prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def test_usage_summary_none_completion_tokens_count_as_zero() -> None:
    summary = update_usage_summary(None, _usage("emb", 0.1, 7, None))
    assert summary == {
        "total_cost": 0.1,
        "emb": {"cost": 0.1, "prompt_tokens": 7, "completion_tokens": 0, "total_tokens": 7},
    }


@pytest.mark.parametrize(
    "missing", ["model", "cost", "prompt_tokens", "completion_tokens", "total_tokens"]
)
def test_usage_without_a_required_key_is_not_counted(missing: str) -> None:
    usage = _usage()
    del usage[missing]
    assert update_usage_summary(None, usage) is None
    before = update_usage_summary(None, _usage())
    assert update_usage_summary(before, usage) == before


def test_usage_summary_never_mutates_its_arguments() -> None:
    summary = update_usage_summary(None, _usage())
    assert summary is not None
    snapshot = copy.deepcopy(summary)
    usage = _usage()
    usage_snapshot = dict(usage)
    updated = update_usage_summary(summary, usage)
    assert summary == snapshot
    assert usage == usage_snapshot
    assert updated is not summary
    assert updated is not None
    assert updated["m2"] is not summary["m2"]
    assert updated["total_cost"] == 1.0


def test_usage_with_non_numeric_count_raises_naming_it() -> None:
    usage = _usage()
    usage["prompt_tokens"] = "three"  # type: ignore[assignment]
    with pytest.raises(ValueError, match="prompt_tokens"):
        update_usage_summary(None, usage)


# --- format_usage_summary ------------------------------------------------------------------------

RULE = "-" * 100
ACTUAL = {
    "total_cost": 0.0123456789,
    "gpt-4": {
        "cost": 0.0123456789,
        "prompt_tokens": 100,
        "completion_tokens": 20,
        "total_tokens": 120,
    },
}
TOTAL = {
    "total_cost": 0.02,
    "gpt-4": {"cost": 0.015, "prompt_tokens": 150, "completion_tokens": 30, "total_tokens": 180},
    "gpt-4o": {"cost": 0.005, "prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
}


def _model_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("* Model")]


def test_no_usage_yet_prints_one_line_whatever_the_mode() -> None:
    for mode in (["actual", "total"], "nonsense", [], 42):
        text = format_usage_summary(None, None, mode=mode)  # type: ignore[arg-type]
        assert len(text.splitlines()) == 1
        assert "create" in text


@pytest.mark.parametrize(
    "mode",
    [[], ["actual", "total", "actual"], ["foo"], ["foo", "bar"], "foo", "", None, 3, "Actual"],
)
def test_invalid_mode_raises(mode: object) -> None:
    with pytest.raises(ValueError, match="mode"):
        format_usage_summary(ACTUAL, TOTAL, mode=mode)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("mode", "sections"),
    [
        ("actual", ["excluding"]),
        ("total", ["including"]),
        (["actual"], ["excluding"]),
        (["total"], ["including"]),
        (["actual", "actual"], ["excluding"]),
        (["actual", "total"], ["excluding", "including"]),
        (["total", "actual"], ["excluding", "including"]),
        (("actual", "total"), ["excluding", "including"]),
        (["actual", "bogus"], ["excluding"]),
    ],
)
def test_modes_select_sections(mode: str | list[str], sections: list[str]) -> None:
    text = format_usage_summary(ACTUAL, TOTAL, mode=mode)
    lines = text.splitlines()
    assert lines[0] == RULE
    assert lines[-1] == RULE
    headers = [line for line in lines if line.startswith("Usage summary")]
    assert [h.split()[2] for h in headers] == sections
    assert all("cached usage" in h for h in headers)


def test_default_mode_prints_both_with_each_model() -> None:
    text = format_usage_summary(ACTUAL, TOTAL)
    assert "Total cost: 0.01235" in text  # rounded to 5 places
    assert "Total cost: 0.02" in text
    assert _model_lines(text) == [
        "* Model 'gpt-4': cost: 0.01235, prompt_tokens: 100, completion_tokens: 20, "
        "total_tokens: 120",
        "* Model 'gpt-4': cost: 0.015, prompt_tokens: 150, completion_tokens: 30, "
        "total_tokens: 180",
        "* Model 'gpt-4o': cost: 0.005, prompt_tokens: 10, completion_tokens: 2, total_tokens: 12",
    ]


def test_both_equal_prints_a_note_instead_of_the_total() -> None:
    text = format_usage_summary(ACTUAL, dict(ACTUAL))
    assert [line for line in text.splitlines() if line.startswith("Usage summary")] == [
        "Usage summary excluding cached usage:"
    ]
    assert len(_model_lines(text)) == 1
    assert "equals the actual cost" in text


def test_equal_summaries_with_total_mode_still_print_the_total() -> None:
    text = format_usage_summary(ACTUAL, dict(ACTUAL), mode="total")
    assert "Usage summary including cached usage:" in text
    assert "equals" not in text


@pytest.mark.parametrize("mode", ["actual", ["actual", "total"]])
def test_all_cached_note_when_actual_is_none(mode: str | list[str]) -> None:
    text = format_usage_summary(None, TOTAL, mode=mode)
    assert "No actual cost incurred" in text
    assert "cache" in text
    assert "Usage summary excluding" not in text
    if mode != "actual":
        assert "Usage summary including cached usage:" in text
