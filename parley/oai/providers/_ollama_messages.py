"""OpenAI-shaped requests as Ollama ``/api/chat`` messages and options (pure functions;
:mod:`parley.oai.ollama` sends them).

Natively, tool calls keep their shape (with arguments as objects) and a tool result is a
``tool`` message naming its function. When tool calls are emulated (see
:mod:`parley.oai.providers._ollama_tools`), a call is the JSON the model was asked to write, and results
are user text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ._messages import (
    FunctionSpec,
    content_parts,
    content_text,
    parse_arguments,
    split_system,
)
from ._ollama_tools import STEP_ONE, STEP_TWO, tool_instructions, tool_results_text
from ._params import validate_parameter
from ._tool_images import images_after_results

__all__ = ["options", "to_messages"]

# AutoGen's names -> Ollama's options (AutoGen's Ollama client took both max_tokens and
# num_predict).
_OPTIONS = {
    "max_tokens": "num_predict",
    "num_predict": "num_predict",
    "num_ctx": "num_ctx",
    "repeat_penalty": "repeat_penalty",
    "seed": "seed",
    "temperature": "temperature",
    "top_k": "top_k",
    "top_p": "top_p",
    "min_p": "min_p",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
}


# The options AutoGen's client checked, with the value it used for one of the wrong type.
_CHECKED: dict[str, tuple[type | tuple[type, ...], Any]] = {
    "max_tokens": (int, 128),
    "num_predict": (int, 128),
    "repeat_penalty": ((int, float), 1.1),
    "seed": (int, 42),
    "temperature": ((int, float), 0.8),
    "top_k": (int, 40),
    "top_p": ((int, float), 0.9),
}


def options(params: Mapping[str, Any]) -> dict[str, Any]:
    """The request's ``options`` object: the options given, those AutoGen's client knew
    checked as it checked them (a wrong type is its default, with a ``UserWarning``)."""
    out: dict[str, Any] = {}
    for old, new in _OPTIONS.items():
        if params.get(old) is None:
            continue
        check = _CHECKED.get(old)
        out[new] = (
            validate_parameter(params, old, check[0], False, check[1], None, None)
            if check
            else params[old]
        )
    stop = params.get("stop")
    if stop:
        out["stop"] = [stop] if isinstance(stop, str) else list(stop)
    return out


def _user(content: Any) -> dict[str, Any]:
    texts: list[str] = []
    images: list[str] = []
    for part in content_parts(content):
        if isinstance(part, str):
            texts.append(part)
        elif part.data is None:
            raise ValueError(f"Ollama takes inline images only, not the URL {part.url!r}")
        else:
            images.append(part.data)
    message: dict[str, Any] = {"role": "user", "content": "".join(texts)}
    if images:
        message["images"] = images
    return message


def _calls(message: Mapping[str, Any]) -> list[tuple[str, str, Any]]:
    """(id, name, arguments) of an assistant message's tool calls and legacy function call."""
    calls = [
        (
            str(c.get("id")),
            str(c.get("function", {}).get("name")),
            parse_arguments(c.get("function", {}).get("arguments")),
        )
        for c in message.get("tool_calls") or ()
    ]
    legacy = message.get("function_call")
    if legacy:
        calls.append(("", str(legacy.get("name")), parse_arguments(legacy.get("arguments"))))
    return calls


def to_messages(
    messages: Sequence[Mapping[str, Any]],
    specs: Sequence[FunctionSpec] = (),
    *,
    emulate: bool = False,
) -> list[dict[str, Any]]:
    """Ollama's messages; with ``emulate``, tool calls and results as text, and ``specs`` (the
    tools offered, none when hidden) described in the system prompt.

    As AutoGen's client sent them: names left out; a system message that ends the
    conversation (a summary's prompt, ``summary_method="reflection_with_llm"``) sent as the
    user's, in place; a conversation that ends with the assistant followed by a user
    "Please continue.". Other system messages are joined into the first."""
    messages = images_after_results(messages)  # Ollama's tool messages carry no image
    ends_with_system = len(messages) > 1 and messages[-1].get("role") == "system"
    system, rest = split_system(messages[:-1] if ends_with_system else messages)
    if ends_with_system:
        rest.append({"role": "user", "content": messages[-1].get("content")})
    if emulate and specs:
        system = f"{system}\n\n{tool_instructions(specs)}" if system else tool_instructions(specs)
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    names: dict[str, str] = {}  # tool call id -> function name
    results: list[tuple[str, Any]] = []  # emulated results waiting to become one user message

    def flush_results() -> None:
        if results:
            out.append({"role": "user", "content": tool_results_text(results)})
            results.clear()

    for message in rest:
        role = message.get("role")
        if role in ("tool", "function"):
            call_id = str(message.get("tool_call_id"))
            name = names.get(call_id) if role == "tool" else message.get("name")
            if name is None:
                raise ValueError(f"tool result {call_id!r} answers no tool call before it")
            if emulate:
                results.append((str(name), message.get("content")))
            else:
                text = content_text(message.get("content"))
                out.append({"role": "tool", "content": text, "tool_name": name})
            continue
        flush_results()
        if role != "assistant":
            out.append(_user(message.get("content")))
            continue
        calls = _calls(message)
        names.update((call_id, name) for call_id, name, _ in calls)
        reply: dict[str, Any] = {"role": "assistant", "content": content_text(message["content"])}
        if calls and emulate:
            said = [{"name": name, "arguments": args} for _, name, args in calls]
            reply["content"] = json.dumps(said)
        elif calls:
            reply["tool_calls"] = [
                {"function": {"name": name, "arguments": args}} for _, name, args in calls
            ]
        out.append(reply)
    ends_in_results = bool(results)
    flush_results()
    if out and out[-1]["role"] == "assistant":
        out.append({"role": "user", "content": "Please continue."})
    if emulate and out and out[-1]["role"] == "user":
        # Which step the two-step protocol is at, as AutoGen's client told the model.
        if ends_in_results:
            out[-1]["content"] += STEP_TWO
        elif specs:
            out[-1]["content"] += STEP_ONE
    return out
