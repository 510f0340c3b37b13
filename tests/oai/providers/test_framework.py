"""The pieces every native provider client shares: errors by status, retry and fallback on
them, price tables, reading OpenAI-shaped requests, calling an SDK."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.exceptions import (
    AuthenticationError,
    BadRequestError,
    ModelAPIError,
    ModelConnectionError,
    ModelServerError,
    RateLimitError,
)
from parley.oai._fallback import should_fall_back
from parley.oai._retry import RetryPolicy, call_with_retries
from parley.oai.providers._base import api_error, price_per_1k
from parley.oai.providers._messages import (
    ImageData,
    content_parts,
    content_text,
    function_specs,
    parse_arguments,
    split_system,
)
from parley.oai.providers._openai_compatible import hide_tools
from parley.oai.providers._sdk_calls import call_kwargs, root_url


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (None, ModelConnectionError),
        (400, BadRequestError),
        (401, AuthenticationError),
        (403, AuthenticationError),
        (404, BadRequestError),
        (422, BadRequestError),
        (429, RateLimitError),
        (500, ModelServerError),
        (529, ModelServerError),
        (418, ModelAPIError),
    ],
)
def test_api_error_by_status(status: int | None, cls: type[ModelAPIError]) -> None:
    error = api_error("acme", "nope", status=status, headers={"Retry-After": "3"})
    assert type(error) is cls
    assert str(error) == "acme: nope"
    assert (error.provider, error.status_code, error.headers) == (
        "acme",
        status,
        {"retry-after": "3"},
    )


def _fails(*errors: Exception) -> tuple[Any, list[float]]:
    queue = list(errors)
    slept: list[float] = []

    async def call() -> str:
        if queue:
            raise queue.pop(0)
        return "ok"

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    return (call, sleep), slept


def test_a_rate_limit_is_retried_after_the_providers_wait() -> None:
    (call, sleep), slept = _fails(api_error("acme", "slow", status=429, retry_after=2.5))
    assert asyncio.run(call_with_retries(call, RetryPolicy(), sleep=sleep)) == "ok"
    assert slept == [2.5]


def test_a_bad_request_is_not_retried() -> None:
    (call, sleep), slept = _fails(api_error("acme", "bad", status=400))
    with pytest.raises(BadRequestError):
        asyncio.run(call_with_retries(call, RetryPolicy(), sleep=sleep))
    assert slept == []


def test_a_long_wait_with_another_config_left_moves_on() -> None:
    (call, sleep), slept = _fails(api_error("acme", "slow", status=429, retry_after=30))
    with pytest.raises(RateLimitError):
        asyncio.run(call_with_retries(call, RetryPolicy(), sleep=sleep, max_wait=8))
    assert slept == []


@pytest.mark.parametrize(
    ("status", "falls_back"),
    [(None, True), (401, True), (429, True), (503, True), (400, False), (422, False)],
)
def test_fallback_on_provider_errors(status: int | None, falls_back: bool) -> None:
    assert should_fall_back(api_error("acme", "x", status=status)) is falls_back


def test_a_content_filter_does_not_fall_back() -> None:
    assert not should_fall_back(api_error("acme", "x", status=400, code="content_filter"))


def test_price_is_the_longest_matching_prefix() -> None:
    table = {"claude-3": (1.0, 1.0), "claude-3-5-sonnet": (3.0, 15.0)}
    assert price_per_1k("claude-3-5-sonnet-20241022", table) == (3.0, 15.0)
    assert price_per_1k("claude-3-opus", table) == (1.0, 1.0)
    assert price_per_1k("gpt-4", table) is None


@given(
    st.dictionaries(st.text(max_size=6), st.tuples(st.floats(0, 1), st.floats(0, 1))),
    st.text(max_size=10),
)
def test_a_price_found_is_that_of_a_prefix_no_shorter_than_any_other(
    table: dict[str, tuple[float, float]], model: str
) -> None:
    price = price_per_1k(model, table)
    prefixes = [name for name in table if model.startswith(name)]
    if not prefixes:
        assert price is None
    else:
        longest = max(prefixes, key=len)
        assert price == table[longest]


def test_content_parts_texts_and_images() -> None:
    parts = content_parts(
        [
            {"type": "text", "text": "a"},
            {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AAAA"}},
            {"type": "image_url", "image_url": "https://x/y.png"},
        ]
    )
    assert parts == [
        "a",
        ImageData("image/jpeg", "AAAA", None),
        ImageData(None, None, "https://x/y.png"),
    ]
    assert parts[1].raw() == b"\x00\x00\x00"  # type: ignore[union-attr]
    assert content_text([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]) == "ab"
    assert content_parts(None) == []
    with pytest.raises(ValueError, match="base64"):
        content_parts([{"type": "image_url", "image_url": {"url": "data:image/png;base64,%%"}}])


def test_split_system_and_arguments_and_function_specs() -> None:
    system, rest = split_system(
        [
            {"role": "system", "content": "A"},
            {"role": "user", "content": "u"},
            {"role": "system", "content": "B"},
        ]
    )
    assert (system, rest) == ("A\n\nB", [{"role": "user", "content": "u"}])
    assert split_system([{"role": "user", "content": "u"}])[0] is None
    assert parse_arguments('{"a": 1}') == {"a": 1}
    assert parse_arguments("") == {}
    assert parse_arguments("not json") == {"arguments": "not json"}
    specs = function_specs({"tools": [{"type": "function", "function": {"name": "f"}}]})
    assert specs[0].parameters == {"type": "object", "properties": {}}


def test_call_kwargs_puts_undeclared_keys_in_extra_body() -> None:
    def create(*, model: str, extra_body: dict[str, Any] | None = None) -> None: ...

    assert call_kwargs(create, {"model": "m", "top_k": 3, "extra_body": {"top_k": 4}}) == {
        "model": "m",
        "extra_body": {"top_k": 4},
    }
    assert call_kwargs(create, {"model": "m"}) == {"model": "m"}


def test_root_url() -> None:
    assert root_url("https://api.groq.com/openai/v1/", "/openai/v1") == "https://api.groq.com"
    assert root_url("https://api.together.xyz", "/v1") == "https://api.together.xyz"


def _tool(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name}}


def test_hide_tools_as_autogen() -> None:
    ran_f = [
        {"role": "assistant", "tool_calls": [{"id": "1", "function": {"name": "f"}}]},
        {"role": "tool", "tool_call_id": "1", "content": "x"},
    ]
    both = {"tools": [_tool("f"), _tool("g")], "messages": ran_f}
    assert not hide_tools(both)
    assert hide_tools({**both, "hide_tools": "if_any_run"})
    assert not hide_tools({**both, "hide_tools": "if_all_run"})
    assert hide_tools({"tools": [_tool("f")], "messages": ran_f, "hide_tools": "if_all_run"})
    with pytest.raises(ValueError, match="hide_tools"):
        hide_tools({**both, "hide_tools": "always"})
