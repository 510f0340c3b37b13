"""Completion.tune(log_file_name=...): the JSON-lines trial log and resuming an interrupted run
from it, on a FakeLLMServer."""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from parley.oai import ChatCompletion
from parley.oai.legacy._tune_log import loggable
from parley.oai.legacy._tune_space import flaml_modules
from parley.testing import FakeLLMServer

from . import tune_support
from .tune_support import (
    KILL_AT,
    asked,
    endpoint,
    question_data,
    solver,
    success,
    tune_to_kill,
)

pytestmark = pytest.mark.usefixtures("tuning")
tune = flaml_modules().tune
DATA = question_data(4)
PROMPTS = ["{question}", "Think step by step. {question}"]

# eval_func must be the same function in the interrupted and the resumed run (its qualified
# name is part of the problem's fingerprint), so it is steered through this module's state.
_eval = {"calls": 0, "interrupt_at": 0}


def scored(responses: list[Any], **instance: Any) -> dict[str, Any]:
    _eval["calls"] += 1
    if _eval["calls"] == _eval["interrupt_at"]:
        raise KeyboardInterrupt  # Ctrl-C while the trial is being scored
    return success(responses, **instance)


@pytest.fixture(autouse=True)
def eval_counter(fake_llm: FakeLLMServer) -> None:
    _eval.update(calls=0, interrupt_at=0)
    fake_llm.responder = solver(
        lambda body: body["model"] == "gpt-4" or asked(body).startswith("Think")
    )


def _tune(server: FakeLLMServer, log: Path, **extra: Any) -> tuple[dict[str, Any], Any]:
    settings: dict[str, Any] = {
        "log_file_name": str(log),
        "inference_budget": 0.003,
        "optimization_budget": 1.0,
        "num_samples": 8,
        "prompt": PROMPTS,
        "allow_format_str_template": True,
        "config_list": endpoint(server),
    }
    return ChatCompletion.tune(DATA, "expected_success", "max", scored, **{**settings, **extra})


def _lines(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def _fresh_cache(root: Path, name: str) -> None:
    ChatCompletion.set_cache(41, str(root / name))


def test_an_interrupted_run_resumes_from_its_log(fake_llm: FakeLLMServer, tuning: Path) -> None:
    # The reference: one run, never interrupted.
    _fresh_cache(tuning, "reference")
    best, analysis = _tune(fake_llm, tuning / "reference.jsonl")
    fresh_requests, fresh_scores = len(fake_llm.requests), _eval["calls"]
    configs = [t.config for t in analysis.trials]
    assert fresh_scores >= 3 * len(DATA)  # at least three trials were scored

    # The same run, interrupted while scoring its third scored trial.
    fake_llm.reset()
    _eval.update(calls=0, interrupt_at=2 * len(DATA) + 1)
    _fresh_cache(tuning, "interrupted")
    log = tuning / "interrupted.jsonl"
    with pytest.raises(KeyboardInterrupt):
        _tune(fake_llm, log)
    before_interrupt = len(fake_llm.requests)
    recorded = _lines(log)[1:]
    assert recorded  # the finished trials were written as they finished
    shutil.copy(log, tuning / "copy.jsonl")

    # Resumed with the same cache: the recorded trials are replayed (no requests, no scoring)
    # and the trial that was cut short gets its requests from the cache.
    fake_llm.reset()
    _eval.update(calls=0, interrupt_at=0)
    resumed_best, resumed = _tune(fake_llm, log)
    assert before_interrupt + len(fake_llm.requests) == fresh_requests
    assert _eval["calls"] == fresh_scores - 2 * len(DATA)
    assert resumed_best == best
    assert [t.config for t in resumed.trials] == configs
    assert len(_lines(log)) == 1 + len(configs)

    # Resumed from the log alone (an empty cache): still strictly fewer requests than anew.
    fake_llm.reset()
    _fresh_cache(tuning, "empty")
    again_best, _ = _tune(fake_llm, tuning / "copy.jsonl")
    assert len(fake_llm.requests) < fresh_requests
    assert again_best == best


def test_a_run_killed_with_sigkill_resumes(fake_llm: FakeLLMServer, tuning: Path) -> None:
    scored = tune_support.scored_calls
    scored[0] = 0
    best, analysis = tune_to_kill(fake_llm.base_url, str(tuning / "ref.jsonl"), str(tuning / "a"))
    fresh_requests, fresh_scored = len(fake_llm.requests), scored[0]
    fake_llm.reset()
    log, cache = str(tuning / "killed.jsonl"), str(tuning / "b")
    child = (
        "import sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parents[2])!r})\n"
        "from tests.oai.tune_support import tune_to_kill\n"
        f"tune_to_kill({fake_llm.base_url!r}, {log!r}, {cache!r})\n"
    )
    # Killed while scoring its second scored trial: no cleanup ran, the log is as it was.
    env = {**os.environ, KILL_AT: "5"}
    done = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True, timeout=60)
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()
    killed_requests = len(fake_llm.requests)
    assert 0 < killed_requests < fresh_requests
    assert len(_lines(Path(log))) > 1
    fake_llm.reset()
    scored[0] = 0
    resumed_best, resumed = tune_to_kill(fake_llm.base_url, log, cache)
    assert killed_requests + len(fake_llm.requests) == fresh_requests
    assert scored[0] == fresh_scored - 4  # the one trial scored before the kill is replayed
    assert resumed_best == best
    assert [t.config for t in resumed.trials] == [t.config for t in analysis.trials]


def test_a_finished_run_replays_in_full_from_its_log(
    fake_llm: FakeLLMServer, tuning: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log = tuning / "tune.jsonl"
    # A search space of its own: flaml adds attributes to the domains it has searched, which
    # must not make the second run look like another problem.
    best, first = _tune(fake_llm, log, num_samples=4, n=tune.randint(1, 8))
    fake_llm.reset()
    _eval["calls"] = 0
    _fresh_cache(tuning, "empty")
    again, second = _tune(fake_llm, log, num_samples=4, n=tune.randint(1, 8))
    assert (fake_llm.requests, _eval["calls"]) == ([], 0)
    assert again == best
    assert [t.last_result["cost"] for t in second.trials] == [
        t.last_result["cost"] for t in first.trials
    ]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_the_log_format(fake_llm: FakeLLMServer, tuning: Path) -> None:
    log = tuning / "logs" / "tune.jsonl"  # the directory is made
    _, analysis = _tune(fake_llm, log, num_samples=3)
    header, *trials = _lines(log)
    assert header["format"] == "parley.tune/1"
    assert len(header["fingerprint"]) == 64
    assert (header["class"], header["metric"], header["mode"]) == (
        "ChatCompletion",
        "expected_success",
        "max",
    )
    assert [t["trial"] for t in trials] == [0, 1, 2]
    for entry, trial in zip(trials, analysis.trials, strict=True):
        assert entry["config"] == loggable(trial.config)
        assert {"expected_success", "cost", "total_cost", "inference_cost"} <= set(entry["result"])
        assert {"total_cost", "valid", "invalid", "input_tokens"} == set(entry["state"])
    assert "sk-tune-test" not in log.read_text()  # the config list's key is never written
    assert loggable({"config_list": [{"api_key": "sk-x", "model": "m"}]}) == {
        "config_list": [{"api_key": "***", "model": "m"}]
    }


def test_a_log_of_another_problem_is_replaced(
    fake_llm: FakeLLMServer, tuning: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log = tuning / "tune.jsonl"
    _tune(fake_llm, log, num_samples=2)
    first_header = _lines(log)[0]
    _eval["calls"] = 0
    with caplog.at_level(logging.WARNING, logger="parley.oai.completion"):
        _tune(fake_llm, log, num_samples=2, inference_budget=0.004)  # another problem
    assert any("is of another tuning problem" in m for m in caplog.messages)
    header, *trials = _lines(log)
    assert header["fingerprint"] != first_header["fingerprint"]
    assert len(trials) == 2
    assert _eval["calls"] > 0  # nothing was replayed


def test_a_line_cut_short_is_dropped_and_the_run_goes_on(
    fake_llm: FakeLLMServer, tuning: Path
) -> None:
    log = tuning / "tune.jsonl"
    _, short = _tune(fake_llm, log, num_samples=3)
    with log.open("a") as f:
        f.write('{"trial": 3, "config": {"mod')  # a crash in the middle of a write
    fake_llm.reset()
    _eval["calls"] = 0
    _, longer = _tune(fake_llm, log, num_samples=5)
    assert [t.config for t in longer.trials[:3]] == [t.config for t in short.trials]
    assert [t["trial"] for t in _lines(log)[1:]] == [0, 1, 2, 3, 4]


def test_a_log_the_search_no_longer_follows_is_evaluated_from_there(
    fake_llm: FakeLLMServer, tuning: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log = tuning / "tune.jsonl"
    _tune(fake_llm, log, num_samples=3)
    header, first, second, third = _lines(log)
    second["config"]["prompt"] = 1 - second["config"]["prompt"]  # not what the search proposes
    log.write_text("".join(json.dumps(e) + "\n" for e in (header, first, second, third)))
    with caplog.at_level(logging.WARNING, logger="parley.oai.completion"):
        _tune(fake_llm, log, num_samples=3)
    assert any("trial 2 of the tune log differs" in m for m in caplog.messages)
    assert _lines(log)[2]["config"] != second["config"]
    assert len(_lines(log)) == 4
