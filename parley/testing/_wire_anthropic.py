"""Anthropic's Messages API (``POST /v1/messages``) as a wire: content blocks, ``tool_use`` and
``tool_result``, its named SSE events, its error shape and the checks it makes."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from ._prompt_cache import PromptCache, anthropic_cache_usage, check_anthropic_breakpoints
from ._render import Ids, pieces
from ._script import ErrorReply, Reply
from ._validation import RequestError
from ._wire import (
    Answer,
    OpenAIMessage,
    Wire,
    answer,
    arguments_object,
    bearer,
    data_uri,
    forced_call,
    function_tool,
    openai_chat,
    prompt_tokens,
    schema_format,
    sse_event,
)

__all__ = ["Anthropic"]

_ARG_PIECE = 16


def _invalid(message: str) -> RequestError:
    return RequestError(message, type="invalid_request_error")


def _blocks(content: Any) -> list[Mapping[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []


def _result_text(content: Any) -> str:
    return (
        content
        if isinstance(content, str)
        else "".join(b.get("text", "") for b in _blocks(content))
    )


def _chat_messages(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One Anthropic message as OpenAI messages: tool results become ``tool`` messages."""
    out = OpenAIMessage(message.get("role"))
    for block in _blocks(message.get("content")):
        kind = block.get("type")
        if kind == "text":
            out.text(block.get("text", ""))
        elif kind == "image":
            out.image(_image_url(block))
        elif kind == "tool_use":
            out.call(block.get("id"), block.get("name"), block.get("input", {}))
        elif kind == "tool_result":
            content = block.get("content", "")
            out.result(block.get("tool_use_id"), _result_text(content))
            # A result's images reach the responder as OpenAI's chat carries them: in the
            # user message after the results.
            for image in (b for b in _blocks(content) if b.get("type") == "image"):
                out.image(_image_url(image))
    return out.messages()


def _image_url(block: Mapping[str, Any]) -> Any:
    source = block.get("source") or {}
    return source.get("url") or data_uri(source.get("media_type"), source.get("data"))


class Anthropic(Wire):
    protocol: ClassVar[str] = "anthropic"
    what: ClassVar[str] = "Anthropic messages"
    paths: ClassVar[tuple[str, ...]] = ("/v1/messages",)

    def authorized(self, headers: Mapping[str, str], query: Mapping[str, str], key: str) -> bool:
        return headers.get("x-api-key") == key or bearer(headers, key)

    def unauthorized(self) -> ErrorReply:
        from ._script import make_error

        return make_error(401, "invalid x-api-key", type="authentication_error")

    def validate(self, body: Any, params: Mapping[str, str], *, strict: bool) -> None:
        if not isinstance(body, Mapping):
            raise _invalid("The request body must be a JSON object.")
        for key in ("model", "messages") + (("max_tokens",) if strict else ()):
            if key not in body:
                raise _invalid(f"{key}: Field required")
        messages = body["messages"]
        if not isinstance(messages, list):
            raise _invalid("messages: Input should be a valid list")
        if strict:
            _check_messages(messages)
            _check_tool_choice(body)
            _check_output_config(body.get("output_config"))
            check_anthropic_breakpoints(body)

    def cached(self, reply: Reply, body: Any, chat: Mapping[str, Any], cache: Any) -> Reply:
        assert isinstance(cache, PromptCache)
        if any(k in (reply.usage or {}) for k in _CACHE_FIELDS):
            return reply  # scripted counts stand
        prompt = prompt_tokens(reply, chat)
        counts = anthropic_cache_usage(body, cache, prompt)
        if counts is None:
            return reply
        return dataclasses.replace(
            reply, usage={**(reply.usage or {}), "prompt_tokens": prompt, **counts}
        )

    def to_chat(self, body: Any, params: Mapping[str, str]) -> dict[str, Any]:
        system = body.get("system")
        tools = [
            function_tool(t.get("name"), t.get("description"), t.get("input_schema"))
            for t in body.get("tools") or ()
        ]
        options = self.names.chat_options(body)  # the stream flag among them
        choice = _chat_tool_choice(body.get("tool_choice"))
        if choice is not None:
            options["tool_choice"] = choice
        output_format = (body.get("output_config") or {}).get("format")
        if isinstance(output_format, Mapping):
            options["response_format"] = schema_format(output_format.get("schema"))
        return openai_chat(
            body.get("model"),
            system if isinstance(system, str) else _result_text(system),
            (m for message in body["messages"] for m in _chat_messages(message)),
            tools,
            **options,
        )

    def answering(self, reply: Reply, chat: Mapping[str, Any]) -> Reply | str:
        # A request whose tool_choice names a tool is answered with that tool_use only.
        return forced_call(reply, chat)

    def body(self, reply: Reply, chat: Mapping[str, Any], ids: Ids) -> Any:
        a = answer(reply, chat, ids)
        message = _message(a, ids)
        message["content"] = [block for block, _ in _content(a)]
        message["stop_reason"] = self.names.finish_reason(a)
        message["stop_sequence"] = a.stopped_at
        message["usage"] = _usage(reply, a, a.completion_tokens)
        return message

    def frames(
        self, reply: Reply, chat: Mapping[str, Any], ids: Ids, query: Mapping[str, str]
    ) -> Iterator[bytes]:
        a = answer(reply, chat, ids)
        start = _message(a, ids)
        start.update(content=[], stop_reason=None, stop_sequence=None)
        start["usage"] = _usage(reply, a, 1)
        yield sse_event("message_start", {"type": "message_start", "message": start})
        for index, (block, rest) in enumerate(_content(a)):
            empty = {**block, "text": ""} if block["type"] == "text" else {**block, "input": {}}
            yield _event("content_block_start", index=index, content_block=empty)
            for delta in rest:
                yield _event("content_block_delta", index=index, delta=delta)
            yield _event("content_block_stop", index=index)
        delta = {"stop_reason": self.names.finish_reason(a), "stop_sequence": a.stopped_at}
        yield _event("message_delta", delta=delta, usage={"output_tokens": a.completion_tokens})
        yield _event("message_stop")

    def error_payload(self, error: ErrorReply, message: str) -> Any:
        kind = error.type or self.names.error_name(error.status)
        return {"type": "error", "error": {"type": kind, "message": message}}


_CACHE_FIELDS = ("cache_read_input_tokens", "cache_creation_input_tokens", "cache_creation")


def _usage(reply: Reply, a: Answer, output: int) -> dict[str, Any]:
    """Anthropic's usage: ``input_tokens`` are the prompt tokens neither read from nor written
    to the prompt cache, whose counts (scripted or simulated) come beside them."""
    given = reply.usage or {}
    cache = {k: given[k] for k in _CACHE_FIELDS if k in given}
    cached = int(cache.get("cache_read_input_tokens", 0)) + int(
        cache.get("cache_creation_input_tokens", 0)
    )
    return {"input_tokens": max(a.prompt_tokens - cached, 0), "output_tokens": output, **cache}


def _event(name: str, **fields: Any) -> bytes:
    return sse_event(name, {"type": name, **fields})


def _message(a: Answer, ids: Ids) -> dict[str, Any]:
    return {
        "id": ids.response("msg_fake_"),
        "type": "message",
        "role": "assistant",
        "model": a.model,
    }


def _content(a: Answer) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Each content block with the deltas that stream it."""
    out: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    text = a.choice.content
    if text:
        deltas = [{"type": "text_delta", "text": p} for p in pieces(text)]
        out.append(({"type": "text", "text": text}, deltas))
    for tc, call_id in zip(a.choice.tool_calls, a.call_ids, strict=True):
        block = {"type": "tool_use", "id": call_id, "name": tc.name}
        deltas = [
            {"type": "input_json_delta", "partial_json": p}
            for p in pieces(tc.arguments, _ARG_PIECE)
        ]
        out.append(({**block, "input": arguments_object(tc.arguments)}, deltas))
    return out


def _check_messages(messages: list[Any]) -> None:
    if not messages:
        raise _invalid("messages: at least one message is required")
    previous_role = None
    previous_calls: set[str] = set()
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, Mapping) else None
        if role == "system":
            raise _invalid(
                f'messages.{i}.role: Unexpected role "system". The Messages API accepts a '
                'top-level `system` parameter, not "system" as an input message role.'
            )
        if role not in ("user", "assistant"):
            raise _invalid(f"messages.{i}.role: Input should be 'user' or 'assistant'")
        if i == 0 and role != "user":
            raise _invalid('messages: first message must use the "user" role')
        if role == previous_role:
            raise _invalid(
                'messages: roles must alternate between "user" and "assistant", but found '
                f'multiple "{role}" roles in a row'
            )
        blocks = _blocks(m.get("content"))
        for j, block in enumerate(blocks):
            if block.get("type") == "tool_result":
                _check_result_content(block.get("content"), f"messages.{i}.content.{j}")
            if (
                block.get("type") == "tool_result"
                and block.get("tool_use_id") not in previous_calls
            ):
                raise _invalid(
                    f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` "
                    f"blocks: {block.get('tool_use_id')}. Each `tool_result` block must have a "
                    "corresponding `tool_use` block in the previous message."
                )
        previous_calls = {str(b.get("id")) for b in blocks if b.get("type") == "tool_use"}
        previous_role = role


_RESULT_BLOCKS = ("text", "image", "search_result", "document")


def _check_result_content(content: Any, where: str) -> None:
    """A tool_result's content: a string, or blocks of the types the API takes there."""
    if content is None or isinstance(content, str):
        return
    if not isinstance(content, list):
        raise _invalid(f"{where}.content: Input should be a valid string or list")
    for k, block in enumerate(content):
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind not in _RESULT_BLOCKS:
            raise _invalid(
                f"{where}.content.{k}: Input tag {kind!r} found using 'type' does not match any "
                f"of the expected tags: {', '.join(repr(t) for t in _RESULT_BLOCKS)}"
            )
        if kind == "image" and not isinstance(block.get("source"), Mapping):
            raise _invalid(f"{where}.content.{k}.image.source: Field required")


def _chat_tool_choice(choice: Any) -> Any:
    """Anthropic's ``tool_choice`` as OpenAI's."""
    if not isinstance(choice, Mapping):
        return None
    kind = choice.get("type")
    if kind == "tool":
        return {"type": "function", "function": {"name": choice.get("name")}}
    return {"any": "required", "auto": "auto", "none": "none"}.get(str(kind))


def _check_tool_choice(body: Mapping[str, Any]) -> None:
    choice = body.get("tool_choice")
    if choice is None:
        return
    kind = choice.get("type") if isinstance(choice, Mapping) else None
    if kind not in ("auto", "any", "tool", "none"):
        raise _invalid(
            "tool_choice: Input tag does not match any of the expected tags: 'auto', 'any', "
            "'tool', 'none'"
        )
    names = {t.get("name") for t in body.get("tools") or () if isinstance(t, Mapping)}
    if kind != "none" and not names:
        raise _invalid("tool_choice: tool_choice may only be specified while providing tools.")
    if kind == "tool" and choice.get("name") not in names:
        raise _invalid(f"tool_choice: Tool '{choice.get('name')}' not found in the provided tools.")


def _check_output_config(config: Any) -> None:
    if config is None:
        return
    if not isinstance(config, Mapping):
        raise _invalid("output_config: Input should be a valid dictionary")
    fmt = config.get("format")
    if fmt is None:
        return
    if not isinstance(fmt, Mapping) or fmt.get("type") != "json_schema":
        raise _invalid("output_config.format.type: Input should be 'json_schema'")
    schema = fmt.get("schema")
    if not isinstance(schema, Mapping):
        raise _invalid("output_config.format.schema: Field required")
