"""Scripted faults as the real openai client sees them: status, headers, exception type."""

from __future__ import annotations

import json
import time

import openai
import pytest

from parley.testing import FakeLLMServer

from ._raw import post_chat

USER = [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize(
    ("status", "exc_type"),
    [
        (400, openai.BadRequestError),
        (401, openai.AuthenticationError),
        (403, openai.PermissionDeniedError),
        (404, openai.NotFoundError),
        (409, openai.ConflictError),
        (422, openai.UnprocessableEntityError),
        (429, openai.RateLimitError),
        (500, openai.InternalServerError),
        (503, openai.InternalServerError),
    ],
)
def test_http_errors(
    fake_llm: FakeLLMServer,
    client: openai.OpenAI,
    status: int,
    exc_type: type[openai.APIStatusError],
) -> None:
    fake_llm.add_error(status, f"scripted {status}", code="my_code")
    with pytest.raises(exc_type) as info:
        client.chat.completions.create(model="m", messages=USER)
    assert info.value.status_code == status
    assert info.value.code == "my_code"
    assert f"scripted {status}" in str(info.value)
    assert info.value.request_id is not None


def test_rate_limit_with_retry_after_header(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    fake_llm.add_error(
        429, "slow down", headers={"Retry-After": "1", "x-ratelimit-remaining-requests": "0"}
    )
    with pytest.raises(openai.RateLimitError) as info:
        client.chat.completions.create(model="m", messages=USER)
    assert info.value.response.headers["retry-after"] == "1"
    assert info.value.response.headers["x-ratelimit-remaining-requests"] == "0"
    assert info.value.body == {
        "message": "slow down",
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }


def test_openai_client_retries_then_succeeds(fake_llm: FakeLLMServer) -> None:
    # The client honours Retry-After (here 0 s) and retries; the server saw both attempts.
    fake_llm.add_error(503, headers={"Retry-After": "0"}).add_reply("recovered")
    with openai.OpenAI(base_url=fake_llm.base_url, api_key="k", max_retries=1) as c:
        r = c.chat.completions.create(model="m", messages=USER)
    assert r.choices[0].message.content == "recovered"
    assert len(fake_llm.requests) == 2


def test_error_with_verbatim_body(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    fake_llm.add_error(502, body="<html>Bad gateway</html>", headers={"Content-Type": "text/html"})
    with pytest.raises(openai.InternalServerError) as info:
        client.chat.completions.create(model="m", messages=USER)
    assert info.value.status_code == 502
    assert info.value.response.text == "<html>Bad gateway</html>"


def test_delay_triggers_client_timeout(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("late", delay=60).add_reply("on time")
    with openai.OpenAI(base_url=fake_llm.base_url, api_key="k", max_retries=0, timeout=0.3) as c:
        started = time.monotonic()
        with pytest.raises(openai.APITimeoutError):
            c.chat.completions.create(model="m", messages=USER)
        assert time.monotonic() - started < 30  # the 0.3 s timeout, not the 60 s answer
        # the server is not stuck behind the slow answer
        assert (
            c.chat.completions.create(model="m", messages=USER).choices[0].message.content
            == "on time"
        )


def test_delay_is_honoured(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    fake_llm.add_reply("late", delay=0.3)
    started = time.monotonic()
    client.chat.completions.create(model="m", messages=USER)
    assert time.monotonic() - started >= 0.3


def test_dropped_connection(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    fake_llm.add_disconnect().add_reply("after the drop")
    with pytest.raises(openai.APIConnectionError):
        client.chat.completions.create(model="m", messages=USER)
    assert (
        client.chat.completions.create(model="m", messages=USER).choices[0].message.content
        == "after the drop"
    )


async def test_dropped_connection_async(
    fake_llm: FakeLLMServer, aclient: openai.AsyncOpenAI
) -> None:
    fake_llm.add_disconnect()
    with pytest.raises(openai.APIConnectionError):
        await aclient.chat.completions.create(model="m", messages=USER)


def test_malformed_json_body(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    fake_llm.add_malformed()
    with pytest.raises((openai.APIResponseValidationError, json.JSONDecodeError)):
        client.chat.completions.create(model="m", messages=USER)
    fake_llm.add_malformed("not json at all")
    assert fake_llm.pending == 1
    resp = post_chat(fake_llm, json.dumps({"model": "m", "messages": USER}).encode())
    assert resp.status == 200
    assert resp.text == "not json at all"


def test_empty_script_fails_fast_and_clearly(fake_llm: FakeLLMServer) -> None:
    with (
        openai.OpenAI(base_url=fake_llm.base_url, api_key="k", max_retries=2) as c,
        pytest.raises(openai.InternalServerError) as info,
    ):
        c.chat.completions.create(model="m", messages=USER)
    assert "no scripted answer left" in str(info.value)
    assert len(fake_llm.requests) == 1  # x-should-retry: false, so the client did not retry


def test_responder_exception_is_reported(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    def broken(req: object) -> str:
        raise KeyError("missing")

    fake_llm.responder = broken
    with pytest.raises(openai.InternalServerError, match="responder raised KeyError"):
        client.chat.completions.create(model="m", messages=USER)
    assert len(fake_llm.errors) == 1
    fake_llm.errors.clear()  # the fixture would otherwise fail this test


def test_api_key_is_checked_when_set() -> None:
    with FakeLLMServer(api_key="sk-right") as server:
        with openai.OpenAI(base_url=server.base_url, api_key="sk-wrong", max_retries=0) as c:
            with pytest.raises(openai.AuthenticationError):
                c.chat.completions.create(model="m", messages=USER)
            with pytest.raises(openai.AuthenticationError):
                c.models.list()
        server.add_reply("welcome")
        cfg = server.config_list()[0]
        assert cfg["api_key"] == "sk-right"
        with openai.OpenAI(base_url=cfg["base_url"], api_key=cfg["api_key"], max_retries=0) as c:
            assert (
                c.chat.completions.create(model="m", messages=USER).choices[0].message.content
                == "welcome"
            )
        assert server.received[-1].headers["authorization"] == "Bearer sk-right"
