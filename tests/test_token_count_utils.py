"""parley.token_count_utils: AutoGen's counts and parley's deliberate fixes (README, "Token
counting works offline")."""

from __future__ import annotations

import logging

import pytest

from parley.token_count_utils import (
    count_token,
    get_max_token_limit,
    num_tokens_from_functions,
    percentile_used,
    token_left,
)

USER = {"role": "user", "content": "hello world"}


def test_text_and_message_counts() -> None:
    assert count_token("hello world") == 2
    assert count_token(USER) == 9
    assert count_token([USER]) == 9
    assert count_token({**USER, "name": "bob"}) == 11
    assert count_token({"role": "user", "content": None}) == 7
    assert count_token({**USER, "name": "bob"}, model="gpt-3.5-turbo-0301") == 10
    call = {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": "{}"}}
    assert count_token(call) == 18
    # Two messages: each pays its overhead, the reply priming is paid once.
    assert count_token([USER, USER]) == 2 * 9 - 3


def test_bad_input_type() -> None:
    with pytest.raises(
        ValueError, match="input must be str, list or dict, but we got <class 'int'>"
    ):
        count_token(5)  # type: ignore[arg-type]


def test_model_redirections(caplog: pytest.LogCaptureFixture) -> None:
    for model in (
        "gpt-3.5-turbo",
        "gpt-4",
        "gpt-4-turbo",
        "claude-3-opus",
        "gemini-pro",
        "mistral-large",
    ):
        assert count_token(USER, model=model) == 9, model
    with pytest.raises(NotImplementedError, match="not implemented for model llama-3"):
        count_token([USER], model="llama-3")
    # A text is counted with cl100k_base when tiktoken does not know the model, with a warning.
    # (A model name no other test uses: the warning is said once per model and process.)
    with caplog.at_level(logging.WARNING, logger="parley.token_count_utils"):
        assert count_token("hello world", model="llama-3-test-redirections") == 2
        assert count_token("hello", model="llama-3-test-redirections") == 1
    assert caplog.text.count("Model llama-3-test-redirections not found. Using cl100k_base") == 1


def test_gpt_4o_uses_its_own_tokenizer() -> None:
    # o200k_base and cl100k_base split this differently; AutoGen counted gpt-4o messages with
    # gpt-4's tokenizer.
    text = "Größe naïve café Ελληνικά русский 日本語"
    from parley._tokenizer import get_encoding

    o200k = len(get_encoding("o200k_base").encode(text))
    cl100k = len(get_encoding("cl100k_base").encode(text))
    assert o200k != cl100k
    assert count_token(text, model="gpt-4o") == o200k
    assert count_token({"role": "user", "content": text}, model="gpt-4o") == 3 + 1 + o200k + 3


def test_special_token_strings_are_plain_text() -> None:
    assert count_token("<|endoftext|>") > 1


def test_multimodal_content() -> None:
    text_only = count_token({"role": "user", "content": "describe this"})
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 100_000}}
    low = {"type": "image_url", "image_url": {"url": "https://x/y.png", "detail": "low"}}
    parts = [{"type": "text", "text": "describe this"}, image]
    assert count_token({"role": "user", "content": parts}) == text_only + 765
    assert count_token(
        {"role": "user", "content": [{"type": "text", "text": "describe this"}, low]}
    ) == (text_only + 85)


def test_max_token_limits() -> None:
    assert get_max_token_limit() == 4096
    assert get_max_token_limit("gpt-3.5-turbo") == 16385
    assert get_max_token_limit("gpt-35-turbo") == 16385
    assert get_max_token_limit("gpt35-turbo") == 16385
    assert get_max_token_limit("gpt4") == 8192
    assert get_max_token_limit("gpt-4-32k") == 32768
    assert get_max_token_limit("gpt-4o-mini") == 128000
    # Newer than AutoGen 0.2's table, which raised KeyError for these.
    assert get_max_token_limit("gpt-4o-2024-11-20") == 128000
    assert get_max_token_limit("o1") == 200000
    assert get_max_token_limit("gpt-4.1") == 1047576
    with pytest.raises(KeyError):
        get_max_token_limit("unknown")


def test_token_left_and_percentile_used() -> None:
    assert token_left("hello world") == 4094
    # (AutoGen's documented gpt-4 example, 8191, was evidently made with a one-token input.)
    assert token_left("hello", model="gpt-4") == 8191
    assert token_left("hello world", model="gpt-4") == 8190
    assert percentile_used("hello world") == 0.00048828125
    assert percentile_used("hello world", model="gpt-4") == 2 / 8192


def test_num_tokens_from_functions(caplog: pytest.LogCaptureFixture) -> None:
    bare = {"name": "f", "description": "d"}
    assert num_tokens_from_functions([bare]) == 12
    assert num_tokens_from_functions([{**bare, "parameters": {"properties": {}}}]) == 21
    one = {"x": {"type": "string", "description": "an x"}}
    # + "x" (1) + type: 2 + "string" (1) + description: 2 + "an x" (2) + 11
    assert num_tokens_from_functions([{**bare, "parameters": {"properties": one}}]) == 12 + 19
    enum = {"u": {"enum": ["celsius", "fahrenheit"]}}
    e = num_tokens_from_functions([{**bare, "parameters": {"properties": enum}}])
    from parley._tokenizer import get_encoding

    enc = get_encoding("cl100k_base")
    options = sum(3 + len(enc.encode(o)) for o in ("celsius", "fahrenheit"))
    assert e == 12 + 1 - 3 + options + 11
    with caplog.at_level(logging.WARNING, logger="parley.token_count_utils"):
        num_tokens_from_functions([{**bare, "parameters": {"properties": {"n": {"minimum": 0}}}}])
    assert "Not supported field minimum" in caplog.text
    with pytest.raises(KeyError, match="description"):
        num_tokens_from_functions([{"name": "f"}])


def test_unserialisable_values_are_skipped(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="parley.token_count_utils"):
        n = count_token({"role": "user", "content": "hello world", "extra": object()})
    assert n == 9
    assert "not JSON serializable" in caplog.text
