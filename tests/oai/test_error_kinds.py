"""One classification of a failed request's error (parley.oai._error_kinds), and the paths that
read it: the client's retry, the config list's fallback, a batch's retry of a whole chat."""

from __future__ import annotations

from typing import Any

import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st

try:  # the openai SDK's own copy of httpx, where it vendors one
    import httpx2
except ImportError:  # pragma: no cover
    import httpx as httpx2  # type: ignore[no-redef]

from parley.batch import is_transient
from parley.exceptions import (
    AllConfigsFailedError,
    AuthenticationError,
    BadRequestError,
    ConfigFailure,
    MalformedResponseError,
    ModelAPIError,
    ModelConnectionError,
    ModelServerError,
    RateLimitError,
)
from parley.oai._error_kinds import Cause, classify
from parley.oai._fallback import should_fall_back
from parley.oai._retry import should_retry

REQUEST = httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions")


def openai_status(
    status: int, *, code: str | None = None, headers: dict[str, str] | None = None
) -> openai.APIStatusError:
    response = httpx2.Response(status, headers=headers or {}, request=REQUEST)
    return openai.APIStatusError("failed", response=response, body={"code": code})


class OtherHTTPError(Exception):
    """Another library's HTTP error: a status, no parley or openai type."""

    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status_code = status


# (error, retry, fall back, transient)
CASES: list[tuple[BaseException, bool, bool, bool]] = [
    (openai.APITimeoutError(request=REQUEST), True, True, True),
    (openai.APIConnectionError(request=REQUEST), True, True, True),
    (openai_status(429), True, True, True),
    (openai_status(408), True, True, True),
    (openai_status(409), True, True, True),
    (openai_status(502), True, True, True),
    (openai_status(401), False, True, False),
    (openai_status(403), False, True, False),
    (openai_status(404), False, True, False),
    (openai_status(400), False, False, False),
    (openai_status(422), False, False, False),
    (openai_status(400, code="content_filter"), False, False, False),
    (openai_status(503, headers={"x-should-retry": "false"}), False, True, True),
    (ModelConnectionError("gone", provider="acme"), True, True, True),
    (RateLimitError("slow down", provider="acme", status_code=429), True, True, True),
    (ModelServerError("down", provider="acme", status_code=500), True, True, True),
    (MalformedResponseError("not JSON", provider="acme", status_code=200), True, True, True),
    (AuthenticationError("no", provider="acme", status_code=401), False, True, False),
    (BadRequestError("unknown model", provider="acme", status_code=404), False, True, False),
    (BadRequestError("too long", provider="acme", status_code=400), False, False, False),
    # user code's errors: not retried nor moved past by the client, but a batch reruns a chat
    (ConnectionResetError(), False, False, True),
    (TimeoutError(), False, False, True),
    (OtherHTTPError(503), False, False, True),
    (OtherHTTPError(400), False, False, False),
    (ValueError("a bug"), False, False, False),
    (KeyError("a bug"), False, False, False),
]


@pytest.mark.parametrize(("error", "retry", "fall_back", "transient"), CASES)
def test_each_path_reads_one_classification(
    error: BaseException, retry: bool, fall_back: bool, transient: bool
) -> None:
    kind = classify(error)
    assert (kind.retry, kind.fall_back, kind.transient) == (retry, fall_back, transient)
    assert (should_retry(error), should_fall_back(error), is_transient(error)) == (
        retry,
        fall_back,
        transient,
    )
    assert kind.fatal is not (fall_back or transient)


def test_the_kind_carries_status_headers_and_a_reason() -> None:
    kind = classify(openai_status(503, headers={"x-should-retry": "false", "Retry-After": "2"}))
    assert (kind.cause, kind.status, kind.hint) == (Cause.SERVER, 503, False)
    assert kind.headers["retry-after"] == "2"
    assert kind.reason == "server (503), server says retry=false"
    assert classify(ValueError()).reason == "other"


# Where the copies of this decision disagreed before they became one, the behaviour kept:


def test_a_content_filter_is_never_retried_even_with_a_server_status() -> None:
    # The same text meets the same filter: the client retried a 5xx (or a "true" hint)
    # regardless, the fallback and the legacy Completion did not; none does now.
    for error in (
        openai_status(500, code="content_filter"),
        openai_status(400, code="content_filter", headers={"x-should-retry": "true"}),
        ModelServerError("filtered", provider="acme", status_code=503, code="content_filter"),
    ):
        assert classify(error).cause is Cause.CONTENT_FILTER
        assert classify(error).fatal


def test_a_retry_the_server_asked_for_also_moves_on_and_is_transient() -> None:
    # x-should-retry: true on a 400 was retried by the client but ended the config list and
    # failed a batch's chat; worth retrying here means worth trying elsewhere, and later.
    error = openai_status(400, headers={"x-should-retry": "true"})
    assert (should_retry(error), should_fall_back(error), is_transient(error)) == (True,) * 3


def test_an_answer_that_is_no_reply_is_transient_for_a_batch() -> None:
    # MalformedResponseError (status 200) is a server error: the client retried it and moved
    # on, the batch read only the status and failed the chat at once.
    error = MalformedResponseError("not JSON", provider="acme", status_code=200)
    assert is_transient(error)
    validation = openai.APIResponseValidationError(httpx2.Response(200, request=REQUEST), None)
    assert classify(validation).cause is Cause.MALFORMED
    assert should_retry(validation)  # as parley's own MalformedResponseError


def test_without_a_status_the_error_class_decides() -> None:
    # The client's retry read the class, the fallback and the batch only the status.
    throttled = RateLimitError("throttled", provider="acme")
    assert (should_retry(throttled), should_fall_back(throttled), is_transient(throttled)) == (
        True,
        True,
        True,
    )
    no_credentials = AuthenticationError("no credentials found", provider="acme")
    assert should_fall_back(no_credentials)
    assert not should_retry(no_credentials)
    assert classify(ModelAPIError("?", provider="acme")).fatal


def test_all_configs_failed_is_transient_when_each_failure_was() -> None:
    def failed(*errors: BaseException) -> AllConfigsFailedError:
        return AllConfigsFailedError([ConfigFailure(i, "m", e) for i, e in enumerate(errors)])

    assert is_transient(failed(openai_status(429), TimeoutError()))
    assert not is_transient(failed(openai_status(429), openai_status(401)))
    assert not is_transient(failed())


# -- invariants, over errors of every source and shape --------------------------------------

STATUSES = st.none() | st.integers(100, 599) | st.sampled_from([401, 404, 408, 409, 429, 500])
CODES = st.sampled_from([None, "content_filter", "rate_limit_exceeded"])
HINTS = st.sampled_from([None, "true", "false", "maybe"])
PROVIDER_CLASSES = st.sampled_from(
    [
        ModelAPIError,
        RateLimitError,
        AuthenticationError,
        BadRequestError,
        ModelServerError,
        MalformedResponseError,
        ModelConnectionError,
    ]
)


@st.composite
def errors(draw: st.DrawFn) -> BaseException:
    status, code, hint = draw(STATUSES), draw(CODES), draw(HINTS)
    headers = {} if hint is None else {"x-should-retry": hint}
    source = draw(st.sampled_from(["openai", "provider", "plain", "other_http", "odd"]))
    if source == "openai":
        if status is None:
            return draw(
                st.sampled_from(
                    [
                        openai.APITimeoutError(request=REQUEST),
                        openai.APIConnectionError(request=REQUEST),
                        openai.APIResponseValidationError(
                            httpx2.Response(200, request=REQUEST), None
                        ),
                    ]
                )
            )
        return openai_status(status, code=code, headers=headers)
    if source == "provider":
        cls = draw(PROVIDER_CLASSES)
        return cls("x", provider="acme", status_code=status, headers=headers, code=code)
    if source == "plain":
        return draw(st.sampled_from([ConnectionRefusedError(), TimeoutError(), RuntimeError()]))
    if source == "other_http":
        return OtherHTTPError(status or 500)
    odd: Any = Exception("odd attributes")  # attributes of the wrong types must not matter
    odd.status_code = draw(st.sampled_from(["503", True, 3.5, None]))
    odd.response = draw(st.sampled_from([None, object(), "headers"]))
    return odd  # type: ignore[no-any-return]


@given(errors())
def test_anything_retried_is_also_a_reason_to_fall_back_and_transient(
    error: BaseException,
) -> None:
    kind = classify(error)
    if kind.retry:
        assert kind.fall_back
        assert kind.transient
    assert kind.fatal is not (kind.fall_back or kind.transient)


@given(errors())
def test_only_a_model_apis_error_is_retried_or_moved_past(error: BaseException) -> None:
    kind = classify(error)
    if not isinstance(error, (openai.APIError, ModelAPIError)):
        assert not kind.api
        assert not kind.retry
        assert not kind.fall_back


@given(errors())
def test_a_content_filter_is_fatal_and_the_server_hint_decides_retries(
    error: BaseException,
) -> None:
    kind = classify(error)
    if kind.cause is Cause.CONTENT_FILTER:
        assert kind.fatal
    elif (
        kind.api and kind.hint is not None and kind.cause not in (Cause.UNREACHABLE, Cause.TIMEOUT)
    ):
        assert kind.retry is kind.hint
