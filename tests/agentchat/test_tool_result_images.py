"""Tools that return images: the result reaches the model as images, through the real openai
SDK to the fake server (which refuses an image in a tool message, as OpenAI does); text
results stay exactly as before; a durable chat replays an image result; token counts and cost
hold."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import openai
import pytest

from parley import AssistantAgent, UserProxyAgent, register_function
from parley.durable import ChatStore, resume
from parley.testing import FakeLLMServer
from parley.token_count_utils import count_token

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5E"
    "rkJggg=="
)
PIXEL = f"data:image/png;base64,{PNG}"
GIF = "data:image/gif;base64," + base64.b64encode(b"GIF89a" + b"\0" * 20).decode()


def chart(title: str) -> list[dict[str, Any]]:
    return [
        {"type": "text", "text": f"the {title} chart:"},
        {"type": "image_url", "image_url": {"url": PIXEL}},
    ]


def pair(server: FakeLLMServer, *functions: Any) -> tuple[AssistantAgent, UserProxyAgent]:
    assistant = AssistantAgent("assistant", llm_config=server.llm_config(cache_seed=None))
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
    for function in functions:
        register_function(function, caller=assistant, executor=user, description="a tool")
    return assistant, user


def test_images_follow_all_tool_results_in_a_user_message(fake_llm: FakeLLMServer) -> None:
    def total(a: int, b: int) -> int:
        return a + b

    def gallery() -> list[dict[str, Any]]:
        return [
            {"type": "image_url", "image_url": {"url": GIF, "detail": "low"}},
            {"type": "text", "text": "two pictures"},
            {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        ]

    assistant, user = pair(fake_llm, chart, total, gallery)
    fake_llm.add_reply(
        tool_calls=[
            {"name": "chart", "arguments": {"title": "sales"}, "id": "call_a"},
            {"name": "total", "arguments": {"a": 2, "b": 3}, "id": "call_b"},
            {"name": "gallery", "arguments": {}, "id": "call_c"},
        ]
    )
    fake_llm.add_reply("TERMINATE")
    result = user.initiate_chat(assistant, message="go", silent=True)

    messages = fake_llm.requests[1]["messages"]
    tools = [m for m in messages if m["role"] == "tool"]
    # Each result follows its call, as text: its images noted where they were.
    assert [m["tool_call_id"] for m in tools] == ["call_a", "call_b", "call_c"]
    assert tools[0]["content"] == (
        "the sales chart:\n\n[image 1: sent in the user message after the results]"
    )
    assert tools[1]["content"] == "5"
    assert tools[2]["content"] == (
        "[image 1: sent in the user message after the results]\n\ntwo pictures\n\n"
        "[image 2: sent in the user message after the results]"
    )
    # ... and one user message after all of them carries the images, labelled by call.
    assert messages[-1] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "The image returned by the tool call call_a:"},
            {"type": "image_url", "image_url": {"url": PIXEL}},
            {"type": "text", "text": "The 2 images returned by the tool call call_c:"},
            {"type": "image_url", "image_url": {"url": GIF, "detail": "low"}},
            {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        ],
    }
    assert fake_llm.received[1].image_urls == [PIXEL, GIF, "https://example.com/a.png"]
    # The history keeps the parts; the bundled message's own text shows "<image>".
    stored = result.chat_history[2]
    assert stored["tool_responses"][0]["content"] == chart("sales")
    assert stored["content"] == "the sales chart:<image>\n\n5\n\n<image>two pictures<image>"


def test_the_fake_server_refuses_an_image_in_a_tool_message(fake_llm: FakeLLMServer) -> None:
    # What the chat's request would be without the move: OpenAI answers it with a 400.
    client = openai.OpenAI(base_url=fake_llm.base_url, api_key="sk-test", max_retries=0)
    call = {"id": "c1", "type": "function", "function": {"name": "chart", "arguments": "{}"}}
    with pytest.raises(openai.BadRequestError, match="only allowed for messages with role 'user'"):
        client.chat.completions.create(
            model="fake-model",
            messages=[
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c1", "content": chart("x")},  # type: ignore[typeddict-item]
            ],
        )


@pytest.mark.parametrize(
    ("returned", "sent"),
    [
        # Text, data and lists without an image: exactly as before (JSON text).
        ("plain", "plain"),
        ({"a": 1}, '{"a": 1}'),
        ([{"type": "text", "text": "only text"}], '[{"type": "text", "text": "only text"}]'),
        # Image parts that are not well-formed: not reinterpreted.
        (
            [{"type": "image_url", "image_url": {"url": "data:image/svg+xml;base64,PHN2Zy8+"}}],
            '[{"type": "image_url", "image_url": {"url": "data:image/svg+xml;base64,PHN2Zy8+"}}]',
        ),
        (
            [{"type": "image_url", "image_url": {"url": PIXEL}, "extra": 1}],
            f'[{{"type": "image_url", "image_url": {{"url": "{PIXEL}"}}, "extra": 1}}]',
        ),
        (
            [{"type": "image_url", "image_url": "https://example.com/a.png"}],
            '[{"type": "image_url", "image_url": "https://example.com/a.png"}]',
        ),
    ],
)
def test_other_results_are_sent_as_text_as_before(
    fake_llm: FakeLLMServer, returned: Any, sent: str
) -> None:
    def tool() -> Any:
        return returned

    assistant, user = pair(fake_llm, tool)
    fake_llm.add_reply(tool_calls=[{"name": "tool", "arguments": {}}])
    fake_llm.add_reply("TERMINATE")
    user.initiate_chat(assistant, message="go", silent=True)
    messages = fake_llm.requests[1]["messages"]
    assert messages[-1]["role"] == "tool"
    assert messages[-1]["content"] == sent


def test_a_function_map_function_returning_parts(fake_llm: FakeLLMServer) -> None:
    """A function in ``function_map`` (unwrapped, AutoGen's str(result) for other results)
    sends its image parts the same way; its other results stay str()."""
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config(cache_seed=None))
    user = UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config=False,
        function_map={"chart": chart, "pairs": lambda: [(1, 2)]},
    )
    fake_llm.add_reply(
        tool_calls=[
            {"name": "chart", "arguments": {"title": "t"}},
            {"name": "pairs", "arguments": {}},
        ]
    )
    fake_llm.add_reply("TERMINATE")
    user.initiate_chat(assistant, message="go", silent=True)
    messages = fake_llm.requests[1]["messages"]
    assert [m["content"] for m in messages if m["role"] == "tool"] == [
        "the t chart:\n\n[image 1: sent in the user message after the results]",
        "[(1, 2)]",
    ]
    assert fake_llm.received[1].image_urls == [PIXEL]


def test_a_durable_chat_replays_an_image_result(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    runs: list[str] = []

    def build() -> tuple[AssistantAgent, UserProxyAgent]:
        def counted_chart(title: str) -> list[dict[str, Any]]:
            runs.append(title)
            return chart(title)

        counted_chart.__name__ = "chart"
        return pair(fake_llm, counted_chart)

    store = ChatStore(tmp_path / "chats.db")
    assistant, user = build()
    fake_llm.add_reply(tool_calls=[{"name": "chart", "arguments": {"title": "t"}, "id": "c1"}])
    fake_llm.add_error(400, "the model call after the tool fails")
    with pytest.raises(openai.BadRequestError):
        user.initiate_chat(assistant, message="go", store=store, chat_id="chat-1", silent=True)
    assert store.status("chat-1") == "running"

    fake_llm.reset()
    fake_llm.add_reply("TERMINATE")
    assistant, user = build()
    result = resume("chat-1", store=store, sender=user, recipient=assistant)
    assert runs == ["t"]  # replayed from the journal, not run again
    assert result.chat_history[2]["tool_responses"][0]["content"] == chart("t")
    # The request after the replayed result carries its image as the live one did.
    (request,) = fake_llm.received
    assert request.image_urls == [PIXEL]
    assert request.json["messages"][-2]["role"] == "tool"


def test_token_counts_and_cost_of_image_results(fake_llm: FakeLLMServer) -> None:
    big = (
        "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 30_000).decode()
    )

    def photo() -> list[dict[str, Any]]:
        return [{"type": "image_url", "image_url": {"url": big}}]

    assistant, user = pair(fake_llm, photo)
    fake_llm.add_reply(tool_calls=[{"name": "photo", "arguments": {}}])
    fake_llm.add_reply("TERMINATE", usage={"prompt_tokens": 900, "completion_tokens": 3})
    result = user.initiate_chat(assistant, message="go", silent=True)
    history = result.chat_history
    # An image counts as an image (765 tokens at high detail), not as 40,000 characters of
    # base64, in the stored history and in the request the model got.
    stored = count_token(history, "gpt-4o")
    assert 765 < stored < 1000
    sent = count_token(fake_llm.requests[1]["messages"], "gpt-4o")
    assert 765 < sent < 2000
    usage = result.cost["usage_including_cached_inference"]["fake-model"]
    assert usage["prompt_tokens"] >= 900
    assert usage["completion_tokens"] >= 3
