"""Bedrock's Converse answers read back as openai's types (pure functions; boto3 gives them as
dicts): a ``converse`` response as a ``ChatCompletion``, the events of ``converse_stream`` as
``ChatCompletionChunk``s for :func:`parley.oai.providers._base.collect`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .._reply_checks import malformed
from ._base import chunk, completion, new_id, tool_call

__all__ = ["FINISH_REASONS", "StreamReader", "finish_reason", "read_response", "token_counts"]

FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
}


# Stop reasons that explain a message without content.
_EMPTY_REASONS = frozenset(
    {"max_tokens", "model_context_window_exceeded", "guardrail_intervened", "content_filtered"}
)


def finish_reason(stop_reason: Any) -> str:
    """OpenAI's finish reason for Converse's ``stopReason``."""
    return FINISH_REASONS.get(str(stop_reason), "stop")


def token_counts(usage: Mapping[str, Any] | None) -> tuple[int, int]:
    """(prompt, completion) tokens of Converse's ``usage``; tokens read from or written to
    the prompt cache are prompt tokens too."""
    if not usage:
        return 0, 0
    prompt = sum(
        int(usage.get(k) or 0)
        for k in ("inputTokens", "cacheReadInputTokens", "cacheWriteInputTokens")
    )
    return prompt, int(usage.get("outputTokens") or 0)


def _request_id(response: Mapping[str, Any]) -> str | None:
    request_id = (response.get("ResponseMetadata") or {}).get("RequestId")
    return f"chatcmpl-{request_id}" if request_id else None


def read_response(response: Mapping[str, Any], model: str) -> Any:
    """A ``converse`` response as a ChatCompletion of ``model`` (Converse does not name it).
    An answer without a message, or with an empty one whose ``stopReason`` does not say why,
    is no reply: MalformedResponseError."""
    message = (response.get("output") or {}).get("message")
    if not isinstance(message, Mapping):
        raise malformed("bedrock", "no output message")
    if not message.get("content") and response.get("stopReason") not in _EMPTY_REASONS:
        reason = response.get("stopReason")
        raise malformed(
            "bedrock", f"the message has no content, and its stopReason ({reason}) does not say why"
        )
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in message.get("content") or ():
        if "text" in block:
            texts.append(block["text"])
        elif "toolUse" in block:
            use = block["toolUse"]
            calls.append(tool_call(use["toolUseId"], use["name"], json.dumps(use.get("input"))))
    prompt, done = token_counts(response.get("usage"))
    return completion(
        model=model,
        content="".join(texts) if texts or not calls else None,
        tool_calls=calls,
        finish_reason=finish_reason(response.get("stopReason")),
        prompt_tokens=prompt,
        completion_tokens=done,
        response_id=_request_id(response),
    )


class StreamReader:
    """``converse_stream``'s events, one at a time, as chunks: text deltas, tool-call deltas
    (one index per toolUse block), the finish reason, then the usage."""

    def __init__(self, response: Mapping[str, Any], model: str, created: int) -> None:
        self._head: dict[str, Any] = {
            "response_id": _request_id(response) or new_id(),
            "model": model,
            "created": created,
        }
        self._tools: dict[int, int] = {}  # content block index -> tool call index
        self._with_arguments: set[int] = set()

    def read(self, event: Mapping[str, Any]) -> list[Any]:
        head = self._head
        if "contentBlockStart" in event:
            start = event["contentBlockStart"]
            use = (start.get("start") or {}).get("toolUse")
            if use is None:
                return []
            index = self._tools.setdefault(start.get("contentBlockIndex", 0), len(self._tools))
            delta = {"index": index, "id": use["toolUseId"], "function": {"name": use["name"]}}
            return [chunk(**head, tool_call_delta=delta)]
        if "contentBlockDelta" in event:
            return self._delta(event["contentBlockDelta"])
        if "contentBlockStop" in event:
            block = event["contentBlockStop"].get("contentBlockIndex", 0)
            if block in self._tools and block not in self._with_arguments:
                # A call without arguments: "{}", not "".
                delta = {"index": self._tools[block], "function": {"arguments": "{}"}}
                return [chunk(**head, tool_call_delta=delta)]
            return []
        if "messageStop" in event:
            reason = finish_reason(event["messageStop"].get("stopReason"))
            return [chunk(**head, finish_reason=reason)]
        if "metadata" in event:
            usage = event["metadata"].get("usage")
            return [chunk(**head, usage=token_counts(usage))] if usage else []
        return []  # messageStart, and whatever later APIs add

    def _delta(self, event: Mapping[str, Any]) -> list[Any]:
        delta = event.get("delta") or {}
        if delta.get("text"):
            return [chunk(**self._head, content=delta["text"])]
        block = event.get("contentBlockIndex", 0)
        arguments = (delta.get("toolUse") or {}).get("input")
        if arguments and block in self._tools:
            self._with_arguments.add(block)
            call = {"index": self._tools[block], "function": {"arguments": arguments}}
            return [chunk(**self._head, tool_call_delta=call)]
        return []  # reasoning text is not part of the answer
