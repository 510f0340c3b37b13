"""A tool's image result through each provider's client and SDK to the fake server, which
checks each API's rules: inside the result where the API takes it (Anthropic, Bedrock, the
Responses API, Gemini 3), else as text with the images in a user message (turn) right after
the results (OpenAI-shaped APIs, Ollama, Cohere, Gemini before 3)."""

from __future__ import annotations

from typing import Any

import pytest

from parley import AssistantAgent, UserProxyAgent, register_function
from parley.testing import FakeLLMServer

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5E"
    "rkJggg=="
)
PIXEL = f"data:image/png;base64,{PNG}"
NOTE = "[image 1: sent in the user message after the results]"


def chart() -> list[dict[str, Any]]:
    return [
        {"type": "text", "text": "the chart:"},
        {"type": "image_url", "image_url": {"url": PIXEL}},
    ]


def count(n: int) -> int:
    return n


def run(server: FakeLLMServer, model: str, api_type: str | None) -> Any:
    """A chat whose model calls chart and count at once; the request after their results."""
    extra = {} if api_type is None else {"api_type": api_type}
    llm = {"config_list": server.config_list(model, **extra), "cache_seed": None}
    assistant = AssistantAgent("assistant", llm_config=llm)
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
    register_function(chart, caller=assistant, executor=user, description="Draw the chart.")
    register_function(count, caller=assistant, executor=user, description="Count.")
    server.add_reply(
        tool_calls=[
            {"name": "chart", "arguments": {}, "id": "call_1"},
            {"name": "count", "arguments": {"n": 4}, "id": "call_2"},
        ]
    )
    server.add_reply("TERMINATE")
    user.initiate_chat(assistant, message="Draw it.", silent=True)
    request = server.received[1]
    # Every wire: the responder sees the image, after both results.
    assert request.image_urls == [PIXEL]
    chat = request.chat["messages"]
    assert [m["role"] for m in chat[-3:]] == ["tool", "tool", "user"]
    return request


@pytest.mark.parametrize(
    ("api_type", "model"),
    [(None, "gpt-4o"), ("groq", "llama-3.2-90b-vision"), ("mistral", "pixtral-12b")],
)
def test_openai_shaped_apis_get_the_image_in_a_user_message(
    fake_llm: FakeLLMServer, api_type: str | None, model: str
) -> None:
    messages = run(fake_llm, model, api_type).json["messages"]
    results = [m for m in messages if m["role"] == "tool"]
    assert [m["content"] for m in results] == [f"the chart:\n\n{NOTE}", "4"]
    assert messages[-1]["role"] == "user"
    assert messages[-1]["content"][0]["text"] == "The image returned by the tool call call_1:"


def test_anthropic_takes_the_image_inside_the_tool_result(fake_llm: FakeLLMServer) -> None:
    body = run(fake_llm, "claude-sonnet-4-6", "anthropic").json
    results = body["messages"][-1]["content"]
    assert results[0] == {
        "type": "tool_result",
        "tool_use_id": "call_1",
        "content": [
            {"type": "text", "text": "the chart:"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        ],
    }
    assert results[1] == {"type": "tool_result", "tool_use_id": "call_2", "content": "4"}


def test_bedrock_takes_the_image_inside_the_tool_result(fake_llm: FakeLLMServer) -> None:
    body = run(fake_llm, "anthropic.claude-3-5-sonnet-20240620-v1:0", "bedrock").json
    first = body["messages"][-1]["content"][0]["toolResult"]
    assert first["toolUseId"] == "call_1"
    assert first["content"][0] == {"text": "the chart:"}
    assert first["content"][1]["image"]["format"] == "png"
    assert first["content"][1]["image"]["source"]["bytes"] == PNG


def test_the_responses_api_takes_the_image_in_the_output(fake_llm: FakeLLMServer) -> None:
    body = run(fake_llm, "gpt-4o", "responses").json
    outputs = [i for i in body["input"] if i.get("type") == "function_call_output"]
    assert outputs[0]["output"] == [
        {"type": "input_text", "text": "the chart:"},
        {"type": "input_image", "image_url": PIXEL},
    ]
    assert outputs[1]["output"] == "4"


def test_gemini_3_takes_the_image_inside_the_function_response(fake_llm: FakeLLMServer) -> None:
    body = run(fake_llm, "gemini-3-flash-preview", "google").json
    last = body["contents"][-1]
    assert last["role"] == "user"
    response = last["parts"][0]["functionResponse"]
    assert response["response"] == {"result": "the chart:\n\n[image 1: attached to this result]"}
    (media,) = response["parts"]
    blob = media.get("inlineData") or media["inline_data"]
    assert blob.get("mimeType", blob.get("mime_type")) == "image/png"
    assert blob["data"] == PNG
    assert all("functionResponse" in p for p in last["parts"])


def test_earlier_gemini_gets_the_image_in_a_turn_after_the_results(
    fake_llm: FakeLLMServer,
) -> None:
    body = run(fake_llm, "gemini-2.5-flash", "google").json
    answers, images = body["contents"][-2:]
    assert [p["functionResponse"]["response"]["result"] for p in answers["parts"]] == [
        f"the chart:\n\n{NOTE}",
        "4",
    ]
    assert "parts" not in answers["parts"][0]["functionResponse"]  # 2.5 refuses them
    assert images["role"] == "user"
    assert images["parts"][0] == {"text": "The image returned by the tool call call_1:"}


def test_ollama_gets_the_image_in_a_user_message(fake_llm: FakeLLMServer) -> None:
    messages = run(fake_llm, "llava", "ollama").json["messages"]
    assert [m["content"] for m in messages if m["role"] == "tool"] == [
        f"the chart:\n\n{NOTE}",
        "4",
    ]
    assert messages[-1]["role"] == "user"
    assert messages[-1]["images"] == [PNG]


def test_cohere_gets_the_image_in_a_user_message(fake_llm: FakeLLMServer) -> None:
    llm = {"config_list": fake_llm.config_list("command-a-vision", api_type="cohere")}
    assistant = AssistantAgent("assistant", llm_config={**llm, "cache_seed": None})
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
    register_function(chart, caller=assistant, executor=user, description="Draw the chart.")
    fake_llm.add_reply(tool_calls=[{"name": "chart", "arguments": {}, "id": "call_1"}])
    fake_llm.add_reply("TERMINATE")
    user.initiate_chat(assistant, message="Draw it.", silent=True)
    messages = fake_llm.received[1].json["messages"]
    assert messages[-2] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": f"the chart:\n\n{NOTE}",
    }
    assert messages[-1]["content"][1] == {"type": "image_url", "image_url": {"url": PIXEL}}


def test_an_image_result_in_a_request_without_tools_is_noted_as_text() -> None:
    """A request that declares no tools (a group chat's speaker selection) carries results
    as text: Anthropic's and Bedrock's note the image instead of failing."""
    from parley.oai.providers._anthropic_messages import to_anthropic

    call = {"id": "c1", "type": "function", "function": {"name": "chart", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": chart()},
    ]
    _, turns = to_anthropic(messages, with_tools=False)
    assert turns[-1] == {
        "role": "user",
        "content": [{"type": "text", "text": "(the tool chart returned: the chart:[image])"}],
    }
