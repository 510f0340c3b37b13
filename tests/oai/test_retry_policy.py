"""The retry policy's pure functions, and the loop that applies them (with a fake sleep)."""

from __future__ import annotations

import email.utils

import openai
import pytest

try:  # openai>=3 uses httpx2, earlier versions httpx
    import httpx2
except ImportError:  # pragma: no cover
    import httpx as httpx2  # type: ignore[no-redef]

from parley.oai._retry import (
    RetryPolicy,
    call_with_retries,
    parse_retry_after,
    retry_delay,
    should_retry,
)

REQUEST = httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions")


def status_error(status: int, headers: dict[str, str] | None = None) -> openai.APIStatusError:
    response = httpx2.Response(status, headers=headers or {}, request=REQUEST)
    client = openai.OpenAI(api_key="k", base_url="http://127.0.0.1/v1")
    try:
        return client._make_status_error_from_response(response)
    finally:
        client.close()


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, None),
        ({"Retry-After": "3"}, 3.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"Retry-After": "-4"}, 0.0),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after-ms": "250", "Retry-After": "9"}, 0.25),
        ({"Retry-After": "soon"}, None),
        ({"Retry-After": email.utils.formatdate(1_000_030, usegmt=True)}, 30.0),
        ({"Retry-After": email.utils.formatdate(999_000, usegmt=True)}, 0.0),
    ],
)
def test_parse_retry_after(headers: dict[str, str], expected: float | None) -> None:
    assert parse_retry_after(headers, now=1_000_000) == expected


def test_retry_delay_backs_off_exponentially_with_bounded_jitter() -> None:
    policy = RetryPolicy(initial_delay=0.5, multiplier=2, max_delay=8, jitter=0.25)
    no_jitter = [retry_delay(policy, n, rand=lambda: 0.5) for n in range(1, 7)]
    assert no_jitter == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert retry_delay(policy, 1, rand=lambda: 0.0) == pytest.approx(0.375)
    assert retry_delay(policy, 1, rand=lambda: 1.0) == pytest.approx(0.625)
    assert retry_delay(policy, 3, retry_after=7.0) == 7.0  # the server's word wins


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (status_error(429), True),
        (status_error(408), True),
        (status_error(409), True),
        (status_error(500), True),
        (status_error(503), True),
        (status_error(400), False),
        (status_error(401), False),
        (status_error(404), False),
        (status_error(503, {"x-should-retry": "false"}), False),
        (status_error(400, {"x-should-retry": "true"}), True),
        (openai.APIConnectionError(request=REQUEST), True),
        (openai.APITimeoutError(request=REQUEST), True),
        (ValueError("not an API error"), False),
    ],
)
def test_should_retry(error: BaseException, expected: bool) -> None:
    assert should_retry(error) is expected


async def test_call_with_retries_sleeps_as_told_then_gives_up() -> None:
    slept: list[float] = []
    calls = 0

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    async def failing() -> str:
        nonlocal calls
        calls += 1
        raise status_error(429, {"Retry-After": "2"})

    with pytest.raises(openai.RateLimitError):
        await call_with_retries(failing, RetryPolicy(max_retries=3), sleep=sleep)
    assert calls == 4
    assert slept == [2.0, 2.0, 2.0]


async def test_call_with_retries_respects_the_budget_and_max_wait() -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    async def failing() -> str:
        raise status_error(503, {"Retry-After": "4"})

    with pytest.raises(openai.InternalServerError):
        await call_with_retries(failing, RetryPolicy(max_retries=5, budget=10), sleep=sleep)
    assert slept == [4.0, 4.0]  # a third wait would pass the 10 s budget
    slept.clear()
    with pytest.raises(openai.InternalServerError):
        await call_with_retries(failing, RetryPolicy(max_retries=5), sleep=sleep, max_wait=3)
    assert slept == []


async def test_call_with_retries_returns_after_a_transient_failure() -> None:
    attempts = iter([status_error(500), "ok"])

    async def flaky() -> str:
        item = next(attempts)
        if isinstance(item, BaseException):
            raise item
        return item

    async def no_sleep(seconds: float) -> None:
        pass

    assert await call_with_retries(flaky, RetryPolicy(), sleep=no_sleep) == "ok"


async def test_non_retryable_errors_are_raised_at_once() -> None:
    calls = 0

    async def bad() -> str:
        nonlocal calls
        calls += 1
        raise status_error(400)

    with pytest.raises(openai.BadRequestError):
        await call_with_retries(bad, RetryPolicy(max_retries=5))
    assert calls == 1
