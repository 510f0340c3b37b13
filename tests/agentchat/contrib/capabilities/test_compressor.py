"""TextMessageCompressor and text_compressors (website/docs/tutorial/long-contexts.md)."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from parley.agentchat.contrib.capabilities.text_compressors import LLMLingua, TextCompressor
from parley.agentchat.contrib.capabilities.transforms import TextMessageCompressor
from parley.cache import InMemoryCache

from ._histories import call, stored


class HalfCompressor:
    """Keeps the first half of a text; reports one token a character."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def compress_text(self, text: str, **params: Any) -> dict[str, Any]:
        self.calls.append(text)
        kept = text[: len(text) // 2]
        return {
            "compressed_prompt": kept,
            "origin_tokens": len(text),
            "compressed_tokens": len(kept),
        }


def test_a_fake_compressor_fits_the_protocol() -> None:
    compressor: TextCompressor = HalfCompressor()
    assert compressor.compress_text("abcd")["compressed_prompt"] == "ab"


def test_savings_log_and_cache_keys() -> None:
    cache = InMemoryCache()
    compressor = HalfCompressor()
    transform = TextMessageCompressor(text_compressor=compressor, cache=cache)
    listed = [{"type": "text", "text": "0123456789abcdef"}]
    messages = [
        {"role": "user", "content": "abcdefgh"},
        {"role": "assistant", "content": listed},
        {"role": "assistant", "content": None},
        {"role": "user", "content": ""},
    ]
    out = transform.apply_transform(messages)
    assert [m["content"] for m in out] == ["abcd", [{"type": "text", "text": "01234567"}], None, ""]
    assert transform.get_logs(messages, out) == ("12 tokens saved with text compression.", True)
    assert cache.get("abcdefghNone") == ("abcd", 4)  # the stored tuple, as AutoGen
    assert cache.get(str(listed) + "None") == ([{"type": "text", "text": "01234567"}], 8)
    # A second pass reads the cache: the compressor is not called again.
    assert transform.apply_transform(messages) == out
    assert compressor.calls == ["abcdefgh", "0123456789abcdef"]


def test_the_callers_messages_are_not_changed() -> None:
    # AutoGen compressed the caller's dicts in place (website/docs/tutorial/long-contexts.md).
    listed = [{"type": "text", "text": "0123456789"}]
    messages = [{"role": "user", "content": "abcdefgh"}, {"role": "user", "content": listed}]
    TextMessageCompressor(text_compressor=HalfCompressor()).apply_transform(messages)
    assert messages == [
        {"role": "user", "content": "abcdefgh"},
        {"role": "user", "content": [{"type": "text", "text": "0123456789"}]},
    ]


def test_plain_string_items_keep_their_compression() -> None:
    # AutoGen compressed str items of list content and threw the result away.
    messages = [{"role": "user", "content": ["abcdefgh", {"type": "image_url"}]}]
    (out,) = TextMessageCompressor(text_compressor=HalfCompressor()).apply_transform(messages)
    assert out["content"] == ["abcd", {"type": "image_url"}]


def test_stored_tool_results_are_compressed_where_the_model_reads_them() -> None:
    messages = [call("a", "b"), stored(("a", "abcdefgh"), ("b", "12345678"))]
    out = TextMessageCompressor(text_compressor=HalfCompressor()).apply_transform(messages)
    assert [r["content"] for r in out[1]["tool_responses"]] == ["abcd", "1234"]
    assert out[1]["content"] == "abcd\n\n1234"
    assert out[0] is messages[0]


def test_min_tokens_and_filters() -> None:
    compressor = HalfCompressor()
    messages = [{"role": "system", "content": "abcdefgh"}, {"role": "user", "content": "abcdefgh"}]
    transform = TextMessageCompressor(text_compressor=compressor, min_tokens=100)
    assert transform.apply_transform(messages) is messages
    assert transform.get_logs(messages, messages) == (
        "No tokens saved with text compression.",
        False,
    )
    transform = TextMessageCompressor(text_compressor=compressor, filter_dict={"role": ["system"]})
    assert [m["content"] for m in transform.apply_transform(messages)] == ["abcdefgh", "abcd"]
    assert TextMessageCompressor(text_compressor=compressor).apply_transform([]) == []


def test_savings_are_zero_without_token_counts() -> None:
    class Plain:
        def compress_text(self, text: str, **params: Any) -> dict[str, Any]:
            return {"compressed_prompt": text[:1]}

    transform = TextMessageCompressor(text_compressor=Plain())
    out = transform.apply_transform([{"role": "user", "content": "abc"}])
    assert out[0]["content"] == "a"
    assert transform.get_logs([], out) == ("No tokens saved with text compression.", False)


def test_compression_params_reach_the_compressor() -> None:
    seen: list[dict[str, Any]] = []

    class Recording:
        def compress_text(self, text: str, **params: Any) -> dict[str, Any]:
            seen.append(params)
            return {"compressed_prompt": text}

    params = {"rate": 0.5}
    TextMessageCompressor(text_compressor=Recording(), compression_params=params).apply_transform(
        [{"role": "user", "content": "abc"}]
    )
    assert seen == [{"rate": 0.5}]


@pytest.mark.parametrize("bad", [0, -3])
def test_min_tokens_must_be_positive(bad: int) -> None:
    with pytest.raises(ValueError, match=r"^min_tokens must be greater than 0 or None$"):
        TextMessageCompressor(text_compressor=HalfCompressor(), min_tokens=bad)


def test_llmlingua_missing_names_the_extra() -> None:
    message = (
        "LLMLingua is not installed. Please install it with `pip install 'parley[long-context]'`"
    )
    with pytest.raises(ImportError) as raised:
        LLMLingua()
    assert str(raised.value) == message
    with pytest.raises(ImportError):
        TextMessageCompressor()  # the default compressor is LLMLingua


class FakePromptCompressor:
    """Stands in for llmlingua.PromptCompressor (the real one downloads a model)."""

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.calls: list[tuple[str, list[str], dict[str, Any]]] = []

    def compress_prompt(self, texts: list[str], **params: Any) -> dict[str, Any]:
        self.calls.append(("compress_prompt", texts, params))
        return {"compressed_prompt": texts[0][:3], "origin_tokens": 9, "compressed_tokens": 3}

    def structured_compress_prompt(self, texts: list[str], **params: Any) -> dict[str, Any]:
        self.calls.append(("structured_compress_prompt", texts, params))
        return {"compressed_prompt": texts[0][:1]}


@pytest.mark.parametrize(
    ("structured", "method"),
    [(False, "compress_prompt"), (True, "structured_compress_prompt")],
)
def test_llmlingua_calls_the_prompt_compressor(
    monkeypatch: pytest.MonkeyPatch, structured: bool, method: str
) -> None:
    module = types.ModuleType("llmlingua")
    module.PromptCompressor = FakePromptCompressor  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llmlingua", module)
    lingua = LLMLingua(structured_compression=structured)
    assert lingua._prompt_compressor.kwargs == {
        "model_name": "microsoft/llmlingua-2-bert-base-multilingual-cased-meetingbank",
        "use_llmlingua2": True,
        "device_map": "cpu",
    }
    result = lingua.compress_text("abcdef", rate=0.3)
    assert lingua._prompt_compressor.calls == [(method, ["abcdef"], {"rate": 0.3})]
    assert result["compressed_prompt"] in ("abc", "a")
    transform = TextMessageCompressor()  # the default compressor is LLMLingua
    out = transform.apply_transform([{"role": "user", "content": "abcdef"}])
    assert out[0]["content"] == "abc"
    assert transform.get_logs([], out) == ("6 tokens saved with text compression.", True)
