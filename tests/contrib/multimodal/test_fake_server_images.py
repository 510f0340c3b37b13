"""FakeLLMServer and image parts: accepted as OpenAI's API accepts them, refused (strict mode)
with its wording where it refuses them, and listed in the request log."""

from __future__ import annotations

import base64
from typing import Any

import openai
import pytest

from parley.agentchat.contrib.img_utils import pil_to_data_uri
from parley.testing import FakeLLMServer


def _client(server: FakeLLMServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0, timeout=10)


def _ask(server: FakeLLMServer, messages: list[dict[str, Any]]) -> Any:
    with _client(server) as client:
        return client.chat.completions.create(model="fake-model", messages=messages)  # type: ignore[arg-type]


def _image_message(url: Any, role: str = "user", **image: Any) -> dict[str, Any]:
    return {
        "role": role,
        "content": [
            {"type": "text", "text": "What is it?"},
            {"type": "image_url", "image_url": {"url": url, **image}},
        ],
    }


def test_images_are_accepted_and_logged(fake_llm: FakeLLMServer, picture: Any) -> None:
    uri = pil_to_data_uri(picture)
    fake_llm.add_reply("A picture.")
    messages = [
        {"role": "system", "content": "You see."},
        _image_message(uri, detail="high"),
        {"role": "assistant", "content": "Which one?"},
        _image_message("https://example.com/cat.png"),
    ]
    assert _ask(fake_llm, messages).choices[0].message.content == "A picture."
    assert fake_llm.received[-1].image_urls == [uri, "https://example.com/cat.png"]


def _refusal(server: FakeLLMServer, messages: list[dict[str, Any]]) -> openai.BadRequestError:
    with pytest.raises(openai.BadRequestError) as caught:
        _ask(server, messages)
    return caught.value


def _data_uri(mime: str, data: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


@pytest.mark.parametrize(
    ("url", "words", "param"),
    [
        ("file:///tmp/cat.png", "Expected a valid URL", "messages.[0].content.[1].image_url.url"),
        ("cat.png", "Expected a valid URL", "messages.[0].content.[1].image_url.url"),
        (
            _data_uri("text/plain", b"hello"),
            "unsupported MIME type 'text/plain'",
            "messages.[0].content.[1].image_url.url",
        ),
        (_data_uri("image/png", b"not a png at all"), "You uploaded an unsupported image", None),
        ("data:image/png;base64,@@@@", "You uploaded an unsupported image", None),
    ],
)
def test_malformed_urls_are_refused(
    fake_llm: FakeLLMServer, url: str, words: str, param: str | None
) -> None:
    error = _refusal(fake_llm, [_image_message(url)])
    assert words in error.message
    assert error.body is not None
    assert error.body["param"] == param  # type: ignore[index]


def test_other_refusals(fake_llm: FakeLLMServer, picture: Any) -> None:
    uri = pil_to_data_uri(picture)
    error = _refusal(fake_llm, [_image_message(uri, role="system")])
    assert (
        "Image URLs are only allowed for messages with role 'user', but this message with role "
        "'system' contains an image URL." in error.message
    )
    error = _refusal(fake_llm, [_image_message(uri, detail="ultra")])
    assert (
        "Invalid value: 'ultra'. Supported values are: 'auto', 'low', and 'high'." in error.message
    )
    no_image = {"role": "user", "content": [{"type": "image_url"}]}
    assert "Missing required parameter: 'messages.[0].content.[0].image_url'." in (
        _refusal(fake_llm, [no_image]).message
    )
    number = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": 3}}]}
    assert "expected a string" in _refusal(fake_llm, [number]).message
    # Nothing was answered: every request was refused before the script was read.
    assert fake_llm.pending == 0


def test_a_lenient_server_accepts_what_the_api_refuses() -> None:
    with FakeLLMServer(strict=False, default="ok") as server:
        assert _ask(server, [_image_message("cat.png")]).choices[0].message.content == "ok"
        assert server.received[-1].image_urls == ["cat.png"]
