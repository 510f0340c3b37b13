"""``parley.oai.rate_limiters``: AutoGen's ``RateLimiter`` protocol and ``TimeRateLimiter``,
which is also the schedule behind a config's ``api_rate_limit``."""

from __future__ import annotations

import asyncio
import math
import threading
import time
from typing import Any

import pytest

from parley.oai import OpenAIWrapper
from parley.oai.rate_limiters import RateLimiter, TimeRateLimiter
from parley.testing import FakeLLMServer


def test_the_schedule_spaces_calls_by_the_interval() -> None:
    limiter = TimeRateLimiter(4)  # one call per 0.25 s
    assert limiter.delay(100.0) == 0  # the first call does not wait
    assert limiter.delay(100.0) == pytest.approx(0.25)  # the next one at 100.25
    assert limiter.delay(100.1) == pytest.approx(0.40)  # its slot is 100.5
    assert limiter.delay(101.0) == 0  # later than its slot: no wait
    assert limiter.delay(101.05) == pytest.approx(0.20)


def test_an_idle_limiter_does_not_store_up_a_burst() -> None:
    limiter = TimeRateLimiter(10)
    limiter.delay(0.0)
    assert limiter.delay(60.0) == 0
    assert limiter.delay(60.0) == pytest.approx(0.1)  # the minute idle bought no free calls


@pytest.mark.parametrize("rate", [0, -1, math.inf, math.nan, "5", True, None])
def test_a_rate_must_be_a_positive_number(rate: Any) -> None:
    with pytest.raises(ValueError, match="positive number of calls per second"):
        TimeRateLimiter(rate)


def test_sleep_blocks_so_calls_are_at_most_rate_per_second() -> None:
    # Gaps long enough that a loaded machine's stalls do not blur them.
    limiter = TimeRateLimiter(5)  # 200 ms apart
    start = time.monotonic()
    limiter.sleep()
    first = time.monotonic() - start
    for _ in range(4):
        limiter.sleep("ignored", any_keyword=1)  # AutoGen's signature takes anything
    elapsed = time.monotonic() - start
    assert first < 0.15  # the first call does not wait its 200 ms
    assert 0.79 <= elapsed < 4.0  # four waits of 200 ms, not a second each


def test_threads_share_the_schedule() -> None:
    limiter = TimeRateLimiter(10)  # 100 ms apart
    stamps: list[float] = []
    lock = threading.Lock()

    def call() -> None:
        limiter.sleep()
        with lock:
            stamps.append(time.monotonic())

    threads = [threading.Thread(target=call) for _ in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stamps.sort()
    # 4 gaps of 100 ms; the slack covers a thread stalled between its wait and its stamp.
    assert stamps[-1] - stamps[0] >= 0.3


async def test_a_sleep_does_not_block_the_event_loop() -> None:
    limiter = TimeRateLimiter(2)  # 500 ms apart
    ticks = 0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0.005)

    task = asyncio.ensure_future(ticker())
    start = time.monotonic()
    for _ in range(3):
        await limiter.a_sleep()
    elapsed = time.monotonic() - start
    done.set()
    await task
    assert 0.99 <= elapsed < 5.0  # two waits of 500 ms
    assert ticks >= 10  # the loop ran other work while the limiter waited


def test_time_rate_limiter_is_a_rate_limiter() -> None:
    limiter: RateLimiter = TimeRateLimiter(1)  # checked by mypy: it has sleep(*args, **kwargs)
    limiter.sleep()


def test_api_rate_limit_spaces_the_wrappers_requests(fake_llm: FakeLLMServer) -> None:
    for _ in range(3):
        fake_llm.add_reply("ok")
    config_list = fake_llm.config_list(api_rate_limit=10.0)  # 100 ms apart
    client = OpenAIWrapper(config_list=config_list)
    start = time.monotonic()
    for _ in range(3):
        client.create(messages=[{"role": "user", "content": "hi"}])
    assert time.monotonic() - start >= 0.19
    assert config_list[0]["api_rate_limit"] == 10.0  # the caller's entry is left alone
