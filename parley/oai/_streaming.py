"""Consume a streamed completion: print tokens as they arrive, return the whole response.

Content deltas of the first choice go to the current IOStream the moment they arrive, and are
reported (``token_delta``, :mod:`parley._core.reports`) to whoever listens; tool-call
and function-call deltas are merged by index; the result is an ordinary ``ChatCompletion``, so
callers cannot tell a streamed response from another. Usage comes from the stream's usage
chunk when the server sends one (parley asks OpenAI for it); otherwise it is estimated.
A legacy text completion's stream (``text_completion`` chunks) is collected the same way into
one ``Completion``: texts joined per choice, logprobs joined, its first choice's text echoed.

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
from collections.abc import AsyncIterable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from .._core import reports as _reports

__all__ = ["collect_stream", "collect_text_stream", "echo_silenced", "estimate_tokens"]

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


class _Drained:
    """What every stream gives besides its choices: the first chunk (id, model, time), the
    usage chunk's usage, and how many choice chunks came."""

    __slots__ = ("chunks", "head", "usage")

    def __init__(self, head: Any, usage: Any, chunks: int) -> None:
        self.head, self.usage, self.chunks = head, usage, chunks

    def usage_dict(self, prompt: int) -> dict[str, Any]:
        """The stream's usage, or an estimate: ``prompt`` tokens, a token per chunk."""
        if self.usage is not None:
            return dict(self.usage.model_dump())
        return {
            "prompt_tokens": prompt,
            "completion_tokens": self.chunks,
            "total_tokens": prompt + self.chunks,
        }

    def reply(self, kind: str, choices: list[dict[str, Any]], prompt: int) -> dict[str, Any]:
        """The whole reply's JSON, of ``object`` ``kind``: the first chunk's id, time and model,
        the collected ``choices`` and the usage (see :meth:`usage_dict`)."""
        head = self.head
        return {
            "id": head.id,
            "object": kind,
            "created": head.created,
            "model": head.model,
            "system_fingerprint": getattr(head, "system_fingerprint", None),
            "choices": choices,
            "usage": self.usage_dict(prompt),
        }


async def _drain(stream: AsyncIterable[Any], add: Callable[[Any], str | None]) -> _Drained:
    """Feed each choice of each chunk to ``add``, which returns the new text to echo (printed
    for the first choice only)."""
    from ..io import IOStream

    out = None if _silenced.get() else IOStream.get_default()
    head: Any = None
    usage: Any = None
    chunks = 0
    printed = False
    echoed = out is not None
    streamed = False  # reported as token_delta
    try:
        async for chunk in stream:
            head = head or chunk
            if chunk.usage is not None:
                usage = chunk.usage
            for c in chunk.choices:
                chunks += 1
                text = add(c)
                if c.index == 0 and text:
                    _reports.token_delta(text, echoed)
                    streamed = True
                    if out is not None:
                        out.print(text, end="", flush=True)
                        printed = True
    except BaseException as e:
        if streamed:
            _reports.token_delta("", echoed, reset=True)
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
    return _Drained(head, usage, chunks)


async def collect_stream(stream: AsyncIterable[Any], params: Mapping[str, Any]) -> Any:
    """Drain ``stream`` (ChatCompletionChunk objects), echoing content, into a ChatCompletion."""
    from openai.types.chat import ChatCompletion

    choices: dict[int, _Choice] = {}

    def add(c: Any) -> str | None:
        choice = choices.setdefault(c.index, _Choice())
        choice.add(c.delta)
        if c.finish_reason is not None:
            choice.finish_reason = c.finish_reason
        return c.delta.content  # type: ignore[no-any-return]

    drained = await _drain(stream, add)
    if not choices:  # each client's guard (oai._reply_checks) names the provider
        raise ValueError("the model's stream ended without a reply: no chunk had a choice")
    answers = [
        {
            "index": i,
            "message": choices[i].message(),
            "finish_reason": choices[i].finish_reason or "stop",
            "logprobs": None,
        }
        for i in sorted(choices)
    ]
    prompt = estimate_tokens(_prompt_text(params.get("messages") or []))
    return ChatCompletion.model_validate(drained.reply("chat.completion", answers, prompt))


class _TextChoice:
    __slots__ = ("finish_reason", "logprobs", "text")

    def __init__(self) -> None:
        self.text: list[str] = []
        self.finish_reason: str | None = None
        self.logprobs: dict[str, list[Any]] | None = None

    def add(self, c: Any) -> None:
        self.text.append(c.text or "")
        if c.finish_reason is not None:
            self.finish_reason = c.finish_reason
        if c.logprobs is not None:
            # Each chunk carries the logprobs of its own tokens: the lists are joined.
            joined = self.logprobs if self.logprobs is not None else {}
            for key, values in c.logprobs.model_dump().items():
                if values is not None:
                    joined.setdefault(key, []).extend(values)
            self.logprobs = joined

    def choice(self, index: int) -> dict[str, Any]:
        return {
            "index": index,
            "text": "".join(self.text),
            "finish_reason": self.finish_reason or "stop",
            "logprobs": self.logprobs,
        }


def _prompt_tokens(prompt: Any) -> int:
    """An estimate of a text completion's prompt tokens: a text's, or a token list's length."""
    if isinstance(prompt, str):
        return estimate_tokens(prompt)
    if isinstance(prompt, list) and all(isinstance(p, int) for p in prompt):
        return len(prompt)
    if isinstance(prompt, list):
        return sum(_prompt_tokens(p) for p in prompt)
    return 0


async def collect_text_stream(stream: AsyncIterable[Any], params: Mapping[str, Any]) -> Any:
    """Drain ``stream`` (a legacy text completion's chunks, each an ``openai.types.Completion``),
    echoing the first choice's text, into one Completion."""
    from openai.types import Completion

    choices: dict[int, _TextChoice] = {}

    def add(c: Any) -> str | None:
        choices.setdefault(c.index, _TextChoice()).add(c)
        return c.text  # type: ignore[no-any-return]

    drained = await _drain(stream, add)
    answers = [choices[i].choice(i) for i in sorted(choices)]
    prompt = _prompt_tokens(params.get("prompt"))
    return Completion.model_validate(drained.reply("text_completion", answers, prompt))
