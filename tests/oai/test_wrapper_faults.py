"""Fallback, retries, timeouts and filters, against the loopback fake server."""

from __future__ import annotations

import openai
import pytest

from parley.exceptions import AllConfigsFailedError, MalformedResponseError
from parley.oai import OpenAIWrapper
from parley.testing import FakeLLMServer

HI = [{"role": "user", "content": "hi"}]


def _configs(server: FakeLLMServer, *models: str, **extra: object) -> list[dict[str, object]]:
    return [server.config_list(model=m, **extra)[0] for m in models]


def test_401_then_429_then_success_across_three_configs(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_error(401).add_error(429, headers={"Retry-After": "30"}).add_reply("third time")
    client = OpenAIWrapper(config_list=_configs(fake_llm, "a", "b", "c"))
    response = client.create(messages=HI)
    assert response.choices[0].message.content == "third time"
    assert response.config_id == 2
    # 401 is not retried; a 30 s Retry-After, with another config left to try, moves on at once.
    assert [r["model"] for r in fake_llm.requests] == ["a", "b", "c"]


def test_retry_after_is_honoured_within_one_config(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_error(429, headers={"Retry-After": "1"}).add_reply("after the wait")
    client = OpenAIWrapper(config_list=fake_llm.config_list())
    assert client.create(messages=HI).choices[0].message.content == "after the wait"
    first, second = fake_llm.received
    assert 1.0 <= second.time - first.time < 10  # the 1 s asked, not a backoff of its own


def test_retry_after_beyond_the_budget_moves_on_at_once(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_error(429, headers={"Retry-After": "20"}).add_reply("other config")
    client = OpenAIWrapper(config_list=_configs(fake_llm, "a", "b"))
    response = client.create(messages=HI)
    assert response.config_id == 1
    first, second = fake_llm.received
    assert second.time - first.time < 10  # not after the 20 s asked


def test_retry_after_beyond_the_budget_on_the_last_config_fails_at_once(
    fake_llm: FakeLLMServer,
) -> None:
    fake_llm.add_error(429, headers={"Retry-After": "120"})
    client = OpenAIWrapper(config_list=fake_llm.config_list(retry_budget=5))
    with pytest.raises(openai.RateLimitError):
        client.create(messages=HI)
    assert len(fake_llm.requests) == 1


def test_5xx_is_retried_with_backoff_then_succeeds(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_error(503).add_error(500).add_reply("ok")
    client = OpenAIWrapper(config_list=fake_llm.config_list(max_retries=2))
    assert client.create(messages=HI).choices[0].message.content == "ok"
    assert len(fake_llm.requests) == 3


def test_max_retries_zero_means_one_attempt(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_error(503)
    client = OpenAIWrapper(config_list=fake_llm.config_list(max_retries=0))
    with pytest.raises(openai.InternalServerError):
        client.create(messages=HI)
    assert len(fake_llm.requests) == 1


def test_timeout_moves_on_to_the_next_config(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("too late", delay=3).add_reply("in time")
    client = OpenAIWrapper(
        config_list=_configs(fake_llm, "slow", "fast", timeout=0.3, max_retries=0)
    )
    response = client.create(messages=HI)
    assert response.choices[0].message.content == "in time"
    assert response.config_id == 1


def test_timeout_on_the_only_config_is_a_timeout_error(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("too late", delay=3)
    client = OpenAIWrapper(config_list=fake_llm.config_list(timeout=0.3, max_retries=0))
    with pytest.raises(TimeoutError, match="timed out") as info:
        client.create(messages=HI)
    assert isinstance(info.value.__cause__, openai.APITimeoutError)


def test_dropped_connection_moves_on(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_disconnect().add_reply("second config")
    client = OpenAIWrapper(config_list=_configs(fake_llm, "a", "b", max_retries=0))
    assert client.create(messages=HI).config_id == 1


def test_dropped_connection_is_retried(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_disconnect().add_reply("retried")
    client = OpenAIWrapper(config_list=fake_llm.config_list())
    assert client.create(messages=HI).choices[0].message.content == "retried"


def test_malformed_body_is_a_clear_error_and_moves_on(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_malformed().add_reply("good body")
    client = OpenAIWrapper(config_list=_configs(fake_llm, "a", "b", max_retries=0))
    assert client.create(messages=HI).config_id == 1
    fake_llm.add_malformed()
    only = OpenAIWrapper(config_list=fake_llm.config_list(max_retries=0))
    with pytest.raises(MalformedResponseError, match="not valid JSON"):
        only.create(messages=HI)


def test_every_failure_at_once_names_them_all(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_error(401, "bad key").add_error(503, "overloaded").add_disconnect()
    client = OpenAIWrapper(config_list=_configs(fake_llm, "m1", "m2", "m3", max_retries=0))
    with pytest.raises(AllConfigsFailedError) as info:
        client.create(messages=HI)
    error = info.value
    assert [f.index for f in error.failures] == [0, 1, 2]
    assert [f.model for f in error.failures] == ["m1", "m2", "m3"]
    assert isinstance(error.failures[0].error, openai.AuthenticationError)
    assert isinstance(error.failures[1].error, openai.InternalServerError)
    assert isinstance(error.failures[2].error, openai.APIConnectionError)
    text = str(error)
    assert "config 0 (model 'm1'): AuthenticationError" in text
    assert "overloaded" in text
    assert error.__cause__ is error.failures[-1].error


def test_bad_request_is_not_retried_or_passed_on(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_error(400, "your request is wrong").add_reply("unused")
    client = OpenAIWrapper(config_list=_configs(fake_llm, "a", "b"))
    with pytest.raises(openai.BadRequestError, match="your request is wrong"):
        client.create(messages=HI)
    assert len(fake_llm.requests) == 1


def test_filter_rejection_moves_on_and_the_last_is_returned_marked(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("short").add_reply("a much longer answer")
    client = OpenAIWrapper(config_list=_configs(fake_llm, "a", "b"))
    seen = []

    def long_enough(context: object, response: object) -> bool:
        text = OpenAIWrapper.extract_text_or_completion_object(response)[0]
        seen.append(text)
        return len(text) > 10

    response = client.create(messages=HI, filter_func=long_enough)
    assert (response.config_id, response.pass_filter) == (1, True)
    fake_llm.add_reply("no").add_reply("nope")
    response = client.create(messages=HI, filter_func=long_enough)
    assert (response.config_id, response.pass_filter) == (1, False)
    assert response.choices[0].message.content == "nope"
    assert seen == ["short", "a much longer answer", "no", "nope"]


def test_rate_limit_spaces_requests(fake_llm: FakeLLMServer) -> None:
    fake_llm.responder = lambda req: "x"
    client = OpenAIWrapper(config_list=fake_llm.config_list(api_rate_limit=2.0))
    for _ in range(4):
        client.create(messages=HI)
    times = [r.time for r in fake_llm.received]
    # 2 per second: requests start 0.5 s apart (compared after the first, which also connects).
    # The server's arrival times jitter under load, hence the margin; unlimited calls take ms.
    assert times[3] - times[1] >= 0.75
