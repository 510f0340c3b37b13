"""Turn a scripted :class:`Reply` into the bodies and SSE events of OpenAI's legacy text
completions (``POST /v1/completions``, the API of ``gpt-3.5-turbo-instruct`` and
``davinci-002``).

The request's batch semantics are OpenAI's: a list of k prompts with ``n`` choices each is
answered with k * n choices, choice ``i`` answering prompt ``i // n``. A scripted reply's
choices are repeated to fill them (one choice: every answer is its text). ``echo`` puts each
prompt before its answer; ``logprobs`` gets the right shape with made-up, deterministic values
over the text's ``cl100k_base`` tokens.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._render import (
    Frame,
    Ids,
    approx_tokens,
    cut_at_stop,
    frame_for,
    include_usage,
    pieces,
    stop_sequences,
    usage_for,
)
from ._script import Choice, Reply
from ._validation import prompt_texts

__all__ = ["text_completion_body", "text_stream_events", "unsendable"]

TOKEN_LOGPROB = -0.1
# The made-up runners-up of every token in ``top_logprobs``, the likeliest first.
_ALTERNATIVES = (" the", ",", ".", " and", " of", " a")


def unsendable(reply: Reply) -> str | None:
    """Why ``reply`` cannot answer a text completion, or None."""
    if any(c.tool_calls or c.function_call is not None for c in reply.choices):
        return (
            "FakeLLMServer: the scripted reply has tool calls or a function call, but it answers "
            "a text-completion request (POST /v1/completions), and text completions have no "
            "tool calls: script a text reply for it."
        )
    return None


class _Answer:
    """One choice of the response: its index, its text (the prompt first, with ``echo``),
    where that text starts in prompt + completion, and the scripted choice."""

    __slots__ = ("choice", "index", "offset", "text")

    def __init__(self, index: int, text: str, offset: int, choice: Choice) -> None:
        self.index, self.text, self.offset, self.choice = index, text, offset, choice


def _prompt_text(prompt: str | list[int]) -> str:
    if isinstance(prompt, str):
        return prompt
    from .._tokenizer import get_encoding

    return get_encoding("cl100k_base").decode(prompt, errors="replace")


def _answers(reply: Reply, request: Mapping[str, Any]) -> list[_Answer]:
    prompts = [_prompt_text(p) for p in prompt_texts(request.get("prompt"))]
    n = request.get("n")
    n = n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else 1
    choices = reply.choices
    wanted = len(prompts) * n
    if wanted % len(choices) == 0:
        choices = choices * (wanted // len(choices))
    echo = request.get("echo") is True
    stops = stop_sequences(request)
    answers = []
    for index, choice in enumerate(choices):
        prompt = prompts[min(index // n, len(prompts) - 1)]
        text = cut_at_stop(choice.content or "", stops)
        answers.append(
            _Answer(index, prompt + text if echo else text, 0 if echo else len(prompt), choice)
        )
    return answers


def _prompt_tokens(request: Mapping[str, Any]) -> int:
    # As the chat path approximates: about four characters a token; token prompts count theirs.
    return sum(
        len(p) if isinstance(p, list) else approx_tokens(p)
        for p in prompt_texts(request.get("prompt"))
    )


def _logprobs_wanted(request: Mapping[str, Any]) -> int | None:
    k = request.get("logprobs")
    return k if isinstance(k, int) and not isinstance(k, bool) else None


def _tokens(text: str) -> list[str]:
    """``text`` cut at its cl100k_base tokens; a token that ends inside a character is joined
    with the next, so the pieces always add up to the text."""
    from .._tokenizer import get_encoding

    encoding = get_encoding("cl100k_base")
    out: list[str] = []
    pending = b""
    for token in encoding.encode_ordinary(text):
        pending += encoding.decode_single_token_bytes(token)
        try:
            out.append(pending.decode("utf-8"))
        except UnicodeDecodeError:
            continue
        pending = b""
    if pending:
        out.append(pending.decode("utf-8", errors="replace"))
    return out


def _logprobs(tokens: list[str], offset: int, k: int) -> dict[str, Any]:
    """OpenAI's logprobs object: every token likeliest at TOKEN_LOGPROB, with ``k`` entries in
    its ``top_logprobs`` (itself and k - 1 runners-up; itself alone for k = 0)."""
    offsets = []
    for token in tokens:
        offsets.append(offset)
        offset += len(token)
    top = []
    for token in tokens:
        others = [a for a in _ALTERNATIVES if a != token][: max(k - 1, 0)]
        top.append({token: TOKEN_LOGPROB, **{a: -2.5 - j for j, a in enumerate(others)}})
    return {
        "tokens": tokens,
        "token_logprobs": [TOKEN_LOGPROB] * len(tokens),
        "top_logprobs": top,
        "text_offset": offsets,
    }


def _head(frame: Frame) -> dict[str, Any]:
    return frame.head("text_completion")


def text_completion_body(reply: Reply, request: Mapping[str, Any], ids: Ids) -> dict[str, Any]:
    """The JSON body of a non-streamed text completion."""
    answers = _answers(reply, request)
    k = _logprobs_wanted(request)
    body = _head(frame_for(reply, request, ids.text_completion()))
    body["choices"] = [
        {
            "text": a.text,
            "index": a.index,
            "logprobs": None if k is None else _logprobs(_tokens(a.text), a.offset, k),
            "finish_reason": a.choice.effective_finish_reason,
        }
        for a in answers
    ]
    body["usage"] = usage_for(reply, _prompt_tokens(request), (a.choice for a in answers))
    return body


def text_stream_events(reply: Reply, request: Mapping[str, Any], ids: Ids) -> list[dict[str, Any]]:
    """The SSE ``data:`` payloads of a streamed text completion, without the final ``[DONE]``.

    As for chat: choices one after the other, word by word (token by token, each with its
    logprobs, when logprobs are asked for), each ending with a chunk carrying its
    ``finish_reason``; then the usage chunk if ``stream_options.include_usage`` asks for it.
    """
    answers = _answers(reply, request)
    k = _logprobs_wanted(request)
    frame = frame_for(reply, request, ids.text_completion())
    with_usage = include_usage(request)
    events = []

    def chunk(choice: dict[str, Any] | None) -> dict[str, Any]:
        c = _head(frame)
        c["choices"] = [] if choice is None else [choice]
        if with_usage:
            c["usage"] = None
        return c

    for a in answers:
        offset = a.offset
        for piece in pieces(a.text) if k is None else _tokens(a.text):
            logprobs = None if k is None else _logprobs([piece], offset, k)
            offset += len(piece)
            events.append(
                chunk(
                    {"text": piece, "index": a.index, "logprobs": logprobs, "finish_reason": None}
                )
            )
        end = {
            "text": "",
            "index": a.index,
            "logprobs": None,
            "finish_reason": a.choice.effective_finish_reason,
        }
        events.append(chunk(end))
    if with_usage:
        last = chunk(None)
        last["usage"] = usage_for(reply, _prompt_tokens(request), (a.choice for a in answers))
        events.append(last)
    return events
