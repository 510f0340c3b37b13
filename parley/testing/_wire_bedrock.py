"""Amazon Bedrock's Converse API as a wire: ``POST /model/{modelId}/converse`` and
``/converse-stream`` (AWS event-stream frames), ``toolUse``/``toolResult`` blocks, usage
``inputTokens``/``outputTokens``, errors named in the ``x-amzn-ErrorType`` header. The SigV4
signature is not verified; with an api key the access key id in it must be that key."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from ._eventstream import event_message
from ._render import Ids, pieces
from ._script import ErrorReply, Reply, make_error
from ._validation import RequestError
from ._wire import (
    Answer,
    OpenAIMessage,
    Wire,
    answer,
    arguments_object,
    data_uri,
    function_tool,
    json_bytes,
    openai_chat,
    schema_format,
)

__all__ = ["Bedrock"]

_ARG_PIECE = 16


def _result_text(content: Any) -> str:
    parts = []
    for block in content or ():
        if "text" in block:
            parts.append(block["text"])
        elif "json" in block:
            parts.append(json.dumps(block["json"]))
    return "".join(parts)


def _chat_messages(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = OpenAIMessage(message.get("role"))
    for block in message.get("content") or ():
        if "text" in block:
            out.text(block["text"])
        elif "image" in block:
            out.image(_image_url(block["image"]))
        elif "toolUse" in block:
            use = block["toolUse"]
            out.call(use.get("toolUseId"), use.get("name"), use.get("input", {}))
        elif "toolResult" in block:
            result = block["toolResult"]
            out.result(result.get("toolUseId"), _result_text(result.get("content")))
            # A result's images reach the responder as OpenAI's chat carries them: in the
            # user message after the results.
            for part in result.get("content") or ():
                if "image" in part:
                    out.image(_image_url(part["image"]))
    return out.messages()


def _image_url(image: Mapping[str, Any]) -> Any:
    return data_uri(f"image/{image.get('format')}", image.get("source", {}).get("bytes"))


class Bedrock(Wire):
    protocol: ClassVar[str] = "bedrock"
    stream_action: ClassVar[str | None] = "converse-stream"
    what: ClassVar[str] = "Bedrock Converse"
    stream_type: ClassVar[str] = "application/vnd.amazon.eventstream"
    pattern: ClassVar[re.Pattern[str] | None] = re.compile(
        r"^/model/(?P<model>.+)/(?P<action>converse|converse-stream)$"
    )

    def authorized(self, headers: Mapping[str, str], query: Mapping[str, str], key: str) -> bool:
        return f"Credential={key}/" in headers.get("authorization", "")

    def unauthorized(self) -> ErrorReply:
        return make_error(
            403,
            "The security token included in the request is invalid.",
            type="UnrecognizedClientException",
        )

    def validate(self, body: Any, params: Mapping[str, str], *, strict: bool) -> None:
        messages = body.get("messages") if isinstance(body, Mapping) else None
        if not isinstance(messages, list) or not messages:
            raise RequestError("A conversation must start with a user message.")
        if not strict:
            return
        _check_output_config(body.get("outputConfig"))
        previous_role = None
        calls: set[str] = set()
        for i, m in enumerate(messages):
            role = m.get("role")
            if role not in ("user", "assistant") or (previous_role is None and role != "user"):
                raise RequestError(
                    "A conversation must start with a user message. Try again with a "
                    "conversation that starts with a user message."
                )
            if role == previous_role:
                raise RequestError(
                    "A conversation must alternate between user and assistant roles. Make "
                    "sure the conversation alternates between user and assistant roles and "
                    "try again."
                )
            blocks = m.get("content") or []
            for block in blocks:
                result = block.get("toolResult")
                if result is not None and result.get("toolUseId") not in calls:
                    raise RequestError(
                        f"The number of toolResult blocks at messages.{i}.content exceeds the "
                        "number of toolUse blocks of previous turn."
                    )
            calls = {b["toolUse"].get("toolUseId") for b in blocks if "toolUse" in b}
            previous_role = role

    def to_chat(self, body: Any, params: Mapping[str, str]) -> dict[str, Any]:
        specs = [
            t["toolSpec"]
            for t in (body.get("toolConfig") or {}).get("tools", ())
            if "toolSpec" in t
        ]
        tools = [
            function_tool(
                s.get("name"), s.get("description"), (s.get("inputSchema") or {}).get("json")
            )
            for s in specs
        ]
        options = self.names.chat_options(body.get("inferenceConfig") or {})
        text_format = (body.get("outputConfig") or {}).get("textFormat")
        if isinstance(text_format, Mapping):
            definition = (text_format.get("structure") or {}).get("jsonSchema") or {}
            schema = json.loads(definition.get("schema") or "{}")
            options["response_format"] = schema_format(schema, definition.get("name"))
        return openai_chat(
            params["model"],
            _result_text(body.get("system")),
            (m for message in body["messages"] for m in _chat_messages(message)),
            tools,
            stream=self.streams(body, params, {}),
            **options,
        )

    def body(self, reply: Reply, chat: Mapping[str, Any], ids: Ids) -> Any:
        a = answer(reply, chat, ids)
        content: list[dict[str, Any]] = [{"text": a.choice.content}] if a.choice.content else []
        content += [
            {
                "toolUse": {
                    "toolUseId": cid,
                    "name": tc.name,
                    "input": arguments_object(tc.arguments),
                }
            }
            for tc, cid in zip(a.choice.tool_calls, a.call_ids, strict=True)
        ]
        return {
            "output": {"message": {"role": "assistant", "content": content}},
            "stopReason": self.names.finish_reason(a),
            "usage": _usage(a),
            "metrics": {"latencyMs": 1},
        }

    def frames(
        self, reply: Reply, chat: Mapping[str, Any], ids: Ids, query: Mapping[str, str]
    ) -> Iterator[bytes]:
        a = answer(reply, chat, ids)
        yield _event("messageStart", role="assistant")
        index = 0
        if a.choice.content:
            for piece in pieces(a.choice.content):
                yield _event("contentBlockDelta", delta={"text": piece}, contentBlockIndex=index)
            yield _event("contentBlockStop", contentBlockIndex=index)
            index += 1
        for tc, cid in zip(a.choice.tool_calls, a.call_ids, strict=True):
            start = {"toolUse": {"toolUseId": cid, "name": tc.name}}
            yield _event("contentBlockStart", start=start, contentBlockIndex=index)
            for piece in pieces(tc.arguments, _ARG_PIECE):
                delta = {"toolUse": {"input": piece}}
                yield _event("contentBlockDelta", delta=delta, contentBlockIndex=index)
            yield _event("contentBlockStop", contentBlockIndex=index)
            index += 1
        yield _event("messageStop", stopReason=self.names.finish_reason(a))
        yield _event("metadata", usage=_usage(a), metrics={"latencyMs": 1})

    def error_headers(self, error: ErrorReply) -> dict[str, str]:
        kind = error.type or self.names.error_name(error.status)
        return {"x-amzn-ErrorType": f"{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/"}

    def error_payload(self, error: ErrorReply, message: str) -> Any:
        return {"message": message}


def _event(name: str, **payload: Any) -> bytes:
    return event_message(name, json_bytes(payload))


def _usage(a: Answer) -> dict[str, int]:
    return {
        "inputTokens": a.prompt_tokens,
        "outputTokens": a.completion_tokens,
        "totalTokens": a.prompt_tokens + a.completion_tokens,
    }


def _check_output_config(config: Any) -> None:
    """Converse's checks of ``outputConfig.textFormat`` (boto3 checks the shape before
    sending: this is what the service itself refuses)."""
    text_format = config.get("textFormat") if isinstance(config, Mapping) else None
    if text_format is None:
        return
    definition = (text_format.get("structure") or {}).get("jsonSchema") or {}
    try:
        schema = json.loads(str(definition.get("schema")))
    except ValueError as e:
        raise RequestError(f"The provided JSON schema is not valid JSON: {e}") from e
    if not isinstance(schema, Mapping):
        raise RequestError("The provided JSON schema must be a JSON object.")
