"""OpenAI-shaped requests as Bedrock Converse's arguments, and Converse's answers read back
(pure translation, no boto3)."""

from __future__ import annotations

import base64
import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.oai.bedrock import BedrockClient, model_name
from parley.oai.providers._anthropic_messages import CONTINUE
from parley.oai.providers._bedrock_messages import conversation, converse_request, image_format
from parley.oai.providers._bedrock_replies import StreamReader, read_response

PNG = base64.b64encode(b"\x89PNG fake").decode()


def _call(call_id: str, name: str = "add", arguments: str = '{"a": 1}') -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Add.",
            "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}},
        },
    }
]


def test_system_blocks_merged_turns_and_an_image() -> None:
    system, messages = conversation(
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "One."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Two."},
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                ],
            },
            {"role": "assistant", "content": "Three."},
            {"role": "user", "content": "   "},
            {"role": "user", "content": "Four."},
        ],
        with_tools=False,
    )
    assert system == [{"text": "Be brief."}]
    assert messages == [
        {
            "role": "user",
            "content": [
                {"text": "One."},
                {"text": "Two."},
                {"image": {"format": "png", "source": {"bytes": b"\x89PNG fake"}}},
            ],
        },
        {"role": "assistant", "content": [{"text": "Three."}]},
        {"role": "user", "content": [{"text": "Four."}]},  # the blank text is dropped
    ]


def test_without_system_prompts_the_system_message_is_the_users_first_words() -> None:
    system, messages = conversation(
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi."}],
        with_tools=False,
        system_prompts=False,
    )
    assert system == []
    assert messages == [{"role": "user", "content": [{"text": "Be brief."}, {"text": "Hi."}]}]


def test_a_conversation_starting_with_the_assistant_gets_a_user_turn_first() -> None:
    _, messages = conversation([{"role": "assistant", "content": "Hello."}], with_tools=False)
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[0]["content"] == [{"text": CONTINUE}]


def test_an_image_url_is_refused_with_a_clear_error() -> None:
    image = {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}
    with pytest.raises(ValueError, match="inline data only"):
        conversation([{"role": "user", "content": [image]}], with_tools=False)
    assert image_format("image/jpg") == "jpeg"
    with pytest.raises(ValueError, match="png, jpeg, gif and webp"):
        image_format("image/tiff")


def test_tool_calls_and_results_become_tool_use_and_tool_result() -> None:
    _, messages = conversation(
        [
            {"role": "user", "content": "Add twice."},
            {"role": "assistant", "content": None, "tool_calls": [_call("a"), _call("b", "")]},
            {"role": "tool", "tool_call_id": "b", "content": "2"},
            {"role": "tool", "tool_call_id": "a", "content": ""},
        ],
        with_tools=True,
    )
    assert messages[1:] == [
        {
            "role": "assistant",
            "content": [
                {"toolUse": {"toolUseId": "a", "name": "add", "input": {"a": 1}}},
                {"toolUse": {"toolUseId": "b", "name": "", "input": {"a": 1}}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "b", "content": [{"text": "2"}]}},
                {"toolResult": {"toolUseId": "a", "content": []}},
            ],
        },
    ]


def test_request_parameters_under_autogens_names() -> None:
    request = converse_request(
        {
            "messages": [{"role": "user", "content": "Hi."}],
            "max_tokens": 50,
            "temperature": 0.2,
            "top_p": 0.9,
            "stop": "END",
            "top_k": 5,
            "seed": 3,
            "additional_model_request_fields": {"top_k": 7, "thinking": {"type": "disabled"}},
            "guardrailConfig": {"guardrailIdentifier": "g", "guardrailVersion": "1"},
            "n": 2,  # no Converse counterpart: not sent
            "tools": TOOLS,
            "tool_choice": {"type": "function", "function": {"name": "add"}},
        },
        "anthropic.claude-3-haiku-20240307-v1:0",
    )
    assert request["modelId"] == "anthropic.claude-3-haiku-20240307-v1:0"
    assert request["inferenceConfig"] == {
        "maxTokens": 50,
        "temperature": 0.2,
        "topP": 0.9,
        "stopSequences": ["END"],
    }
    assert request["additionalModelRequestFields"] == {
        "top_k": 7,
        "seed": 3,
        "thinking": {"type": "disabled"},
    }
    assert request["guardrailConfig"]["guardrailIdentifier"] == "g"
    assert request["toolConfig"] == {
        "tools": [
            {
                "toolSpec": {
                    "name": "add",
                    "description": "Add.",
                    "inputSchema": {"json": TOOLS[0]["function"]["parameters"]},
                }
            }
        ],
        "toolChoice": {"tool": {"name": "add"}},
    }
    assert "n" not in request
    assert "system" not in request


def test_tool_choice_none_offers_no_tool_and_writes_earlier_calls_as_text() -> None:
    messages = [
        {"role": "user", "content": "Add."},
        {"role": "assistant", "content": None, "tool_calls": [_call("a")]},
        {"role": "tool", "tool_call_id": "a", "content": "1"},
    ]
    request = converse_request({"messages": messages, "tools": TOOLS, "tool_choice": "none"}, "m")
    assert "toolConfig" not in request
    assert request["messages"][1]["content"] == [{"text": '(called the tool add with {"a": 1})'}]
    required = converse_request(
        {"messages": messages, "tools": TOOLS, "tool_choice": "required"}, "m"
    )
    assert required["toolConfig"]["toolChoice"] == {"any": {}}


_roles = st.sampled_from(["user", "assistant", "system", "calls", "results"])


@given(st.lists(st.tuples(_roles, st.text(max_size=4)), max_size=14), st.booleans())
def test_turns_alternate_from_the_user_and_every_result_follows_its_call(
    script: list[tuple[str, str]], with_tools: bool
) -> None:
    messages: list[dict[str, Any]] = []
    pending: list[str] = []
    for n, (kind, text) in enumerate(script):
        if kind == "calls":
            pending = [f"c{n}a", f"c{n}b"]
            calls = [_call(i) for i in pending]
            messages.append({"role": "assistant", "content": text or None, "tool_calls": calls})
        elif kind == "results":
            # A result may answer the last calls, or nothing at all.
            call_id = pending.pop() if pending else f"stray{n}"
            messages.append({"role": "tool", "tool_call_id": call_id, "content": text})
        else:
            messages.append({"role": kind, "content": text})
    _, turns = conversation(messages, with_tools=with_tools)
    roles = [t["role"] for t in turns]
    assert roles[:1] == ["user"]
    assert all(a != b for a, b in itertools.pairwise(roles))
    assert all(t["content"] for t in turns)

    def ids(turn: dict[str, Any], kind: str, key: str) -> set[str]:
        return {b[kind][key] for b in turn["content"] if kind in b}

    for before, turn in itertools.pairwise([{"content": []}, *turns, {"content": []}]):
        # Every toolResult answers a toolUse of the turn before, and every toolUse is answered.
        assert ids(turn, "toolResult", "toolUseId") == ids(before, "toolUse", "toolUseId")
    if not with_tools:
        assert not any("toolUse" in b or "toolResult" in b for t in turns for b in t["content"])
    assert all(b.get("text", "x").strip() for t in turns for b in t["content"])


def test_a_converse_response_as_a_chat_completion() -> None:
    response = {
        "ResponseMetadata": {"RequestId": "req-1"},
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {"text": "Let me "},
                    {"text": "add."},
                    {"toolUse": {"toolUseId": "tu1", "name": "add", "input": {"a": 1}}},
                ],
            }
        },
        "stopReason": "tool_use",
        "usage": {"inputTokens": 10, "outputTokens": 4, "cacheReadInputTokens": 5},
    }
    completion = read_response(response, "m")
    choice = completion.choices[0]
    assert (completion.id, completion.model, choice.finish_reason) == (
        "chatcmpl-req-1",
        "m",
        "tool_calls",
    )
    assert choice.message.content == "Let me add."
    (call,) = choice.message.tool_calls
    assert (call.id, call.function.name, call.function.arguments) == ("tu1", "add", '{"a": 1}')
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (15, 4)


@pytest.mark.parametrize(
    ("stop", "finish"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("guardrail_intervened", "content_filter"),
        ("content_filtered", "content_filter"),
        ("something_new", "stop"),
    ],
)
def test_stop_reasons(stop: str, finish: str) -> None:
    response = {"output": {"message": {"content": [{"text": "x"}]}}, "stopReason": stop}
    assert read_response(response, "m").choices[0].finish_reason == finish


def test_stream_events_as_chunks() -> None:
    reader = StreamReader({}, "m", 0)
    events = [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockDelta": {"delta": {"text": "Hi"}, "contentBlockIndex": 0}},
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {
            "contentBlockStart": {
                "start": {"toolUse": {"toolUseId": "t1", "name": "now"}},
                "contentBlockIndex": 1,
            }
        },
        {"contentBlockStop": {"contentBlockIndex": 1}},
        {
            "contentBlockStart": {
                "start": {"toolUse": {"toolUseId": "t2", "name": "add"}},
                "contentBlockIndex": 2,
            }
        },
        {"contentBlockDelta": {"delta": {"toolUse": {"input": '{"a":'}}, "contentBlockIndex": 2}},
        {"contentBlockDelta": {"delta": {"toolUse": {"input": " 1}"}}, "contentBlockIndex": 2}},
        {"contentBlockStop": {"contentBlockIndex": 2}},
        {"messageStop": {"stopReason": "tool_use"}},
        {"metadata": {"usage": {"inputTokens": 3, "outputTokens": 9}}},
    ]
    chunks = [c for e in events for c in reader.read(e)]
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    assert deltas[0].content == "Hi"
    calls = [d.tool_calls[0] for d in deltas if d.tool_calls]
    assert [(c.index, c.id, c.function.name, c.function.arguments) for c in calls] == [
        (0, "t1", "now", None),
        (0, None, None, "{}"),  # a call without arguments
        (1, "t2", "add", None),
        (1, None, None, '{"a":'),
        (1, None, None, " 1}"),
    ]
    assert chunks[-2].choices[0].finish_reason == "tool_calls"
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (3, 9)


@pytest.mark.parametrize(
    ("model", "price"),
    [
        ("anthropic.claude-3-5-sonnet-20241022-v2:0", (0.003, 0.015)),
        ("us.anthropic.claude-3-5-haiku-20241022-v1:0", (0.0008, 0.004)),
        ("eu.anthropic.claude-opus-4-5-20251101-v1:0", (0.005, 0.025)),
        ("meta.llama3-1-70b-instruct-v1:0", (0.00072, 0.00072)),
        ("us.amazon.nova-lite-v1:0", (0.00006, 0.00024)),
        ("mistral.mistral-large-2407-v1:0", (0.002, 0.006)),
        ("cohere.command-r-plus-v1:0", (0.003, 0.015)),
        (
            "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.meta.llama3-2-1b-instruct-v1:0",
            (0.0001, 0.0001),
        ),
    ],
)
def test_prices_by_model_id(model: str, price: tuple[float, float]) -> None:
    client = BedrockClient(model=model, aws_region="us-east-1")
    output = {"message": {"role": "assistant", "content": [{"text": "hi"}]}}
    answer = {"output": output, "usage": {"inputTokens": 1000, "outputTokens": 1000}}
    assert client.cost(read_response(answer, model)) == pytest.approx(sum(price))
    assert client.cost(read_response({"output": output}, "acme.unknown-v1")) == 0.0
    assert not model_name(model).startswith(("us.", "eu.", "arn:"))
