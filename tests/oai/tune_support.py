"""Helpers of the Completion.tune tests: endpoints, scripted models and eval functions."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from typing import Any

from parley.testing import FakeLLMServer


def endpoint(server: FakeLLMServer) -> list[dict[str, Any]]:
    """A config list that reaches ``server`` and leaves the model to the tuned config (an entry's
    model would win over it, as in AutoGen)."""
    return [{"base_url": server.base_url, "api_key": "sk-tune-test"}]


def question_data(count: int) -> list[dict[str, Any]]:
    return [{"question": f"What is {i} + {i}?", "answer": str(2 * i)} for i in range(count)]


def asked(body: dict[str, Any]) -> str:
    """The text of a chat request's last message."""
    return str(body["messages"][-1]["content"])


def solver(
    right: Callable[[dict[str, Any]], bool],
    *,
    output_tokens: int = 5,
    prompt_tokens: int = 20,
    delay: float = 0.0,
) -> Callable[[dict[str, Any]], Any]:
    """A responder that answers each question correctly when ``right(request)`` holds and
    wrongly otherwise; every completion costs ``output_tokens`` tokens."""

    def respond(body: dict[str, Any]) -> Any:
        text = asked(body)
        a = int(text.split("What is ")[1].split(" ")[0])
        answer = f"It is {2 * a if right(body) else 2 * a + 1}."
        n = int(body.get("n") or 1)
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": output_tokens * n}
        return {"content": answer, "usage": usage, "delay": delay}

    return respond


def success(responses: list[Any], question: str, answer: str) -> dict[str, Any]:
    """AutoGen-style metrics: the share of right answers, whether any is right, and a text
    metric that tune leaves out."""
    right = [r == f"It is {answer}." for r in responses]
    return {
        "expected_success": sum(right) / len(right),
        "success": float(any(right)),
        "voted_answer": max(set(responses), key=responses.count),
    }


# -- a tuning run killed with SIGKILL (tests/oai/test_tune_resume.py) ---------------------------

KILL_AT = "PARLEY_TEST_TUNE_KILL_AT"
scored_calls = [0]  # success_or_die's calls in this process


def success_or_die(responses: list[Any], question: str, answer: str) -> dict[str, Any]:
    """``success``; with ``$PARLEY_TEST_TUNE_KILL_AT=k`` the process kills itself (SIGKILL: no
    cleanup, no finally) on the k-th call."""
    scored_calls[0] += 1
    if scored_calls[0] == int(os.environ.get(KILL_AT, "0")):
        os.kill(os.getpid(), signal.SIGKILL)
    return success(responses, question, answer)


def tune_to_kill(base_url: str, log: str, cache_root: str) -> tuple[dict[str, Any], Any]:
    """The run the SIGKILL test interrupts (in a child process) and resumes (in the test)."""
    from parley.oai import ChatCompletion

    ChatCompletion.set_cache(41, cache_root)
    return ChatCompletion.tune(
        question_data(4),
        "success",
        "max",
        success_or_die,
        log_file_name=log,
        inference_budget=0.003,
        num_samples=6,
        prompt=["{question}", "Think step by step. {question}"],
        allow_format_str_template=True,
        config_list=[{"base_url": base_url, "api_key": "sk-tune-test"}],
    )
