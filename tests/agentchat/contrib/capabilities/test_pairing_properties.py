"""Property tests: no transform, alone or combined in any order, separates a tool call from its
results, reorders or invents messages, breaks its limits, or changes the caller's data; and the
strict fake server (OpenAI's validation) accepts every transformed history.

Histories are random: text, multimodal and empty messages, system messages anywhere, tool calls
with one to three calls answered in the request form (one tool message per call) or parley's
stored form (one message with ``tool_responses``), legacy function calls, a pending call at the
end, and (where said) results whose call was cut off before the transform saw them.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from parley.agentchat._messages import request_messages
from parley.agentchat.contrib.capabilities import (
    MessageHistoryLimiter,
    MessageTokenLimiter,
    TextMessageCompressor,
    TextMessageContentName,
    TransformMessages,
)
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

from ._histories import (
    History,
    check_whole_units,
    histories,
    kept_indices,
    pairing_errors,
    sent_tokens,
)

PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def server() -> Iterator[openai.OpenAI]:
    with (
        FakeLLMServer(strict=True, default="ok") as fake,
        openai.OpenAI(base_url=fake.base_url, api_key="sk-test", max_retries=0) as client,
    ):
        yield client


history_limiters = st.builds(
    MessageHistoryLimiter,
    max_messages=st.one_of(st.none(), st.integers(1, 12)),
    keep_first_message=st.booleans(),
)


@st.composite
def token_limiters(draw: Any) -> MessageTokenLimiter:
    max_tokens = draw(st.one_of(st.none(), st.integers(0, 120)))
    min_tokens = draw(
        st.one_of(st.none(), st.integers(0, 40 if max_tokens is None else max_tokens))
    )
    return MessageTokenLimiter(
        max_tokens_per_message=draw(st.one_of(st.none(), st.integers(0, 25))),
        max_tokens=max_tokens,
        min_tokens=min_tokens,
    )


class Halve:
    def compress_text(self, text: str, **params: Any) -> dict[str, Any]:
        return {"compressed_prompt": text[: len(text) // 2]}


others = st.sampled_from(
    [
        TextMessageContentName(),
        TextMessageContentName(position="end"),
        TextMessageCompressor(text_compressor=Halve()),
        TextMessageCompressor(text_compressor=Halve(), filter_dict={"role": ["tool"]}),
    ]
)
any_transform = st.one_of(history_limiters, token_limiters(), others)


def check_pairs(h: History, out: list[dict[str, Any]]) -> None:
    errors = pairing_errors(out, pending_last=h.pending)
    assert not errors, errors


def check_prefixes(before: list[dict[str, Any]], out: list[dict[str, Any]]) -> None:
    """Every text is a (token) prefix of the text it came from."""
    for m in out:
        old, new = before[m["_seq"]], m
        # A stored tool message's own content is rebuilt from its (cut) responses.
        rebuilt = old.get("tool_responses") and old.get("role") == "tool"
        pairs = [] if rebuilt else [(old.get("content"), new.get("content"))]
        pairs += zip(
            [r["content"] for r in old.get("tool_responses") or ()],
            [r["content"] for r in new.get("tool_responses") or ()],
            strict=True,
        )
        for a, b in pairs:
            if isinstance(a, str) and isinstance(b, str):
                assert a.startswith(b.rstrip("\ufffd")), (a, b)


@PROPERTY
@given(histories(orphans=True), history_limiters)
def test_history_limiter(h: History, limiter: MessageHistoryLimiter) -> None:
    snapshot = copy.deepcopy(h.messages)
    out = limiter.apply_transform(h.messages)
    assert h.messages == snapshot
    if out is h.messages:
        assert limiter._max_messages is None or len(out) <= limiter._max_messages
        return
    check_pairs(h, out)
    kept = kept_indices(h.messages, out)
    check_whole_units(h, kept)
    limit = limiter._max_messages
    assert limit is not None
    assert len(out) <= limit
    # The newest units are kept, as many as fit: the next older one would not.
    tail = [u for u in h.units if not (limiter._keep_first_message and u[0] == 0)]
    newest = [u for u in tail if u[0] in kept]
    if newest and newest != tail[-len(newest) :]:
        pytest.fail(f"kept units {newest} are not the newest of {tail}")
    edge = newest[0][0] if newest else len(h.messages)
    older = [u for u in tail if u[1] <= edge]
    if older:
        start, stop = older[-1]
        # Results without their call between them took their slots, as in AutoGen.
        skipped = edge - stop
        assert all(i in h.orphans for i in range(stop, edge))
        assert len(out) + skipped + (stop - start) > limit, "a unit that fits was dropped"


@PROPERTY
@given(histories(orphans=True), token_limiters())
def test_token_limiter(h: History, limiter: MessageTokenLimiter) -> None:
    snapshot = copy.deepcopy(h.messages)
    out = limiter.apply_transform(h.messages)
    assert h.messages == snapshot
    if out is h.messages:
        return  # under min_tokens
    check_pairs(h, out)
    check_whole_units(h, kept_indices(h.messages, out))
    check_prefixes(h.messages, out)
    counts = [n for m in out for n in sent_tokens(m)]
    assert sum(counts) <= limiter._max_tokens
    assert all(n <= limiter._max_tokens_per_message for n in counts)
    if h.units:
        assert out, "the newest unit is always kept"
        start, stop = h.units[-1]
        assert [m["_seq"] for m in out[-(stop - start) :]] == list(range(start, stop))


@PROPERTY
@given(histories(), others)
def test_text_transforms_keep_every_message(h: History, transform: Any) -> None:
    snapshot = copy.deepcopy(h.messages)
    out = transform.apply_transform(h.messages)
    assert h.messages == snapshot
    assert kept_indices(h.messages, out) == list(range(len(h.messages)))
    check_pairs(h, out)


@PROPERTY
@given(
    histories(pending=False),
    st.lists(any_transform, min_size=1, max_size=4),
    st.booleans(),
)
def test_combinations_in_any_order_reach_a_strict_server(
    server: openai.OpenAI, h: History, chain: list[Any], verbose: bool
) -> None:
    assume(h.messages)  # an empty history raises IndexError, as in AutoGen
    snapshot = copy.deepcopy(h.messages)
    with IOStream.set_default(IOScripted()):
        out = TransformMessages(transforms=chain, verbose=verbose)._transform_messages(h.messages)
    assert h.messages == snapshot
    check_pairs(h, out)
    check_whole_units(h, kept_indices(h.messages, out))
    # TransformMessages sets a leading system message aside: the transforms see the rest.
    start = 1 if h.messages and h.messages[0]["role"] == "system" else 0
    limits = [t._max_messages for t in chain if isinstance(t, MessageHistoryLimiter)]
    if limits and None not in limits:
        assert len(out) - start <= min(limits)
    last_texts = [i for i, t in enumerate(chain) if not isinstance(t, MessageHistoryLimiter)]
    if last_texts and isinstance(chain[last_texts[-1]], MessageTokenLimiter):
        # The token limiter changed the text last: its budget holds (the system message aside).
        limiter = chain[last_texts[-1]]
        if limiter._max_tokens < sys.maxsize and limiter._min_tokens == 0:
            assert sum(n for m in out[start:] for n in sent_tokens(m)) <= limiter._max_tokens
    request = request_messages([{"role": "system", "content": "You are helpful."}], out)
    answer = server.chat.completions.create(model="fake-model", messages=request)  # type: ignore[arg-type]
    assert answer.choices[0].message.content == "ok"
