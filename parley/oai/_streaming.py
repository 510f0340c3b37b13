"""Consume a streamed chat completion: print tokens as they arrive, return the whole message.

Content deltas of the first choice go to the current IOStream the moment they arrive; tool-call
and function-call deltas are merged by index; the result is an ordinary ``ChatCompletion``, so
callers cannot tell a streamed response from another. Usage comes from the stream's usage
chunk when the server sends one (parley asks OpenAI for it); otherwise it is estimated.

Differences from AutoGen, on purpose:

- Nothing is echoed inside :func:`echo_silenced` ``(True)``: an agent generates its reply in
  it when the reply will not be printed (``silent=True`` on the chat or the send, or the
  agent's own ``silent``), so a silent chat shows no streamed text either. The flag is a
  context variable, so it follows the request into parley's runner loop and worker threads.
- A stream that fails part-way ends its echoed text with a line saying it was cut off and is
  not part of the chat; a retry echoes its answer again from the start.
"""

from __future__ import annotations

import contextvars
from collections.abc import AsyncIterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

__all__ = ["collect_stream", "echo_silenced", "estimate_tokens"]

_silenced: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "parley_stream_silenced", default=False
)


@contextmanager
def echo_silenced(silenced: bool) -> Iterator[None]:
    """Within the block, streamed replies are echoed unless ``silenced``. Set either way, so a
    chat inside a silent one (a nested chat) echoes by its own setting."""
    token = _silenced.set(silenced)
    try:
        yield
    finally:
        _silenced.reset(token)


def estimate_tokens(text: str) -> int:
    """A rough, dependency-free token count (about four characters a token)."""
    return (len(text) + 3) // 4


def _prompt_text(messages: Sequence[Mapping[str, Any]]) -> str:
    parts = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
        parts.append(str(content or ""))
    return "\n".join(parts)


class _Choice:
    __slots__ = ("content", "finish_reason", "function_call", "refusal", "tool_calls")

    def __init__(self) -> None:
        self.content: list[str] | None = None
        self.refusal: list[str] | None = None
        self.tool_calls: dict[int, dict[str, Any]] = {}
        self.function_call: dict[str, str] | None = None
        self.finish_reason: str | None = None

    def add(self, delta: Any) -> None:
        if delta.content is not None:
            (self.content if self.content is not None else self._start_content()).append(
                delta.content
            )
        if getattr(delta, "refusal", None):
            self.refusal = [*(self.refusal or []), delta.refusal]
        for tc in delta.tool_calls or ():
            slot = self.tool_calls.setdefault(
                tc.index, {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
            )
            slot["id"] += tc.id or ""
            if tc.function is not None:
                slot["function"]["name"] += tc.function.name or ""
                slot["function"]["arguments"] += tc.function.arguments or ""
        if delta.function_call is not None:
            fc = self.function_call or {"name": "", "arguments": ""}
            fc["name"] += delta.function_call.name or ""
            fc["arguments"] += delta.function_call.arguments or ""
            self.function_call = fc

    def _start_content(self) -> list[str]:
        self.content = []
        return self.content

    def message(self) -> dict[str, Any]:
        msg: dict[str, Any] = {
            "role": "assistant",
            "content": None if self.content is None else "".join(self.content),
            "refusal": None if self.refusal is None else "".join(self.refusal),
        }
        if self.tool_calls:
            msg["tool_calls"] = [self.tool_calls[i] for i in sorted(self.tool_calls)]
            if msg["content"] == "":
                msg["content"] = None
        if self.function_call is not None:
            msg["function_call"] = self.function_call
            if msg["content"] == "":
                msg["content"] = None
        return msg


async def collect_stream(stream: AsyncIterable[Any], params: Mapping[str, Any]) -> Any:
    """Drain ``stream`` (ChatCompletionChunk objects), echoing content, into a ChatCompletion."""
    from openai.types.chat import ChatCompletion

    from ..io import IOStream

    out = None if _silenced.get() else IOStream.get_default()
    choices: dict[int, _Choice] = {}
    head: Any = None
    usage: Any = None
    chunks = 0
    printed = False
    try:
        async for chunk in stream:
            head = head or chunk
            if chunk.usage is not None:
                usage = chunk.usage
            for c in chunk.choices:
                chunks += 1
                choice = choices.setdefault(c.index, _Choice())
                choice.add(c.delta)
                if c.finish_reason is not None:
                    choice.finish_reason = c.finish_reason
                if out is not None and c.index == 0 and c.delta.content:
                    out.print(c.delta.content, end="", flush=True)
                    printed = True
    except BaseException as e:
        if out is not None and printed:
            # Otherwise the partial text reads as the reply; the error itself goes to the caller.
            out.print(
                f"\n[cut off by {type(e).__name__}: the streamed text above is not part of the "
                "chat]",
                flush=True,
            )
        raise
    if out is not None and printed:
        out.print("", flush=True)
    if head is None:
        raise ValueError("the model's stream ended without a single chunk")
    if usage is not None:
        usage_dict = usage.model_dump()
    else:
        prompt = estimate_tokens(_prompt_text(params.get("messages") or []))
        usage_dict = {
            "prompt_tokens": prompt,
            "completion_tokens": chunks,
            "total_tokens": prompt + chunks,
        }
    return ChatCompletion.model_validate(
        {
            "id": head.id,
            "object": "chat.completion",
            "created": head.created,
            "model": head.model,
            "system_fingerprint": getattr(head, "system_fingerprint", None),
            "choices": [
                {
                    "index": i,
                    "message": choices[i].message(),
                    "finish_reason": choices[i].finish_reason or "stop",
                    "logprobs": None,
                }
                for i in sorted(choices)
            ],
            "usage": usage_dict,
        }
    )
