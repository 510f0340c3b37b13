"""OpenAI-shaped messages and tools as Anthropic's Messages API takes them.

Anthropic's rules, and what is done to meet them:

- the system prompt is a parameter, not a message: system messages are joined into ``system``;
- turns alternate, starting and ending with the user: consecutive messages of one role are
  merged into one turn (their blocks in order); a conversation that starts or ends with the
  assistant gets a user turn "Please continue." there (AutoGen's words), since an assistant
  turn last would be taken as the start of the reply to continue;
- a ``tool_use`` block must be answered by a ``tool_result`` in the very next user turn, the
  results first in it, and both need the request to declare tools: tool messages become
  ``tool_result`` blocks of a user turn (consecutive results in one turn); a call without its
  result there, a result without its call, or any of them in a request without tools (a group
  chat's speaker selection) is written as text instead, so nothing the chat said is lost;
- empty or blank text blocks are refused: they are dropped;
- a content part's own ``cache_control`` (a prompt-cache breakpoint the caller placed) stays
  on its block; a system message that has one makes ``system`` a list of text blocks.

A message's ``name`` is dropped, as AutoGen's client drops it: Anthropic's messages have no
such field, and a prefix in the text would teach the model to write one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ._messages import (
    ImageData,
    content_parts,
    content_text,
    function_specs,
    parse_arguments,
    split_system,
)

__all__ = ["CONTINUE", "to_anthropic", "tool_choice", "tools"]

CONTINUE = "Please continue."

Block = dict[str, Any]


def _image(image: ImageData) -> Block:
    if image.data is not None:
        source = {"type": "base64", "media_type": image.media_type, "data": image.data}
    else:
        source = {"type": "url", "url": image.url}
    return {"type": "image", "source": source}


def _marks(content: Any) -> list[Any]:
    """Per content part, the caller's own ``cache_control`` (None where it has none)."""
    if not isinstance(content, list):
        return []
    return [p.get("cache_control") if isinstance(p, Mapping) else None for p in content]


def _blocks(content: Any) -> list[Block]:
    blocks: list[Block] = []
    marks = _marks(content)
    for i, part in enumerate(content_parts(content)):
        if isinstance(part, ImageData):
            block = _image(part)
        elif part.strip():
            block = {"type": "text", "text": part}
        else:
            continue
        if i < len(marks) and marks[i] is not None:
            block["cache_control"] = marks[i]  # the caller's own prompt-cache breakpoint
        blocks.append(block)
    return blocks


def _system(messages: Sequence[Mapping[str, Any]]) -> str | list[Block] | None:
    """The system prompt: one text, or its blocks when a system message marks its own
    cache breakpoint (a text block per system message, marked as its parts were)."""
    found = [m for m in messages if m.get("role") == "system"]
    if not any(any(_marks(m.get("content"))) for m in found):
        return split_system(messages)[0] or None
    blocks: list[Block] = []
    for m in found:
        text = content_text(m.get("content"))
        if text.strip():
            block: Block = {"type": "text", "text": text}
            mark = next((c for c in _marks(m.get("content")) if c is not None), None)
            if mark is not None:
                block["cache_control"] = mark
            blocks.append(block)
    return blocks or None


def _calls(message: Mapping[str, Any], position: int) -> list[Block]:
    """An assistant message's tool calls (and legacy function call) as tool_use blocks."""
    calls = list(message.get("tool_calls") or ())
    if message.get("function_call"):
        calls.append({"id": f"function_call_{position}", "function": message["function_call"]})
    return [
        {
            "type": "tool_use",
            "id": str(call.get("id")),
            "name": str(call["function"]["name"]),
            "input": parse_arguments(call["function"].get("arguments")),
        }
        for call in calls
    ]


def _result(call_id: str, content: Any) -> Block:
    blocks = _blocks(content)
    if any(b["type"] == "image" for b in blocks):
        return {"type": "tool_result", "tool_use_id": call_id, "content": blocks}
    return {"type": "tool_result", "tool_use_id": call_id, "content": content_text(content)}


def _turns(messages: Sequence[Mapping[str, Any]]) -> list[tuple[str, list[Block]]]:
    """The messages as (role, blocks) turns, same-role neighbours merged."""
    turns: list[tuple[str, list[Block]]] = []
    last_function_call: str | None = None
    for position, m in enumerate(messages):
        role = m.get("role")
        if role == "assistant":
            blocks = _blocks(m.get("content")) + _calls(m, position)
            if m.get("function_call"):
                last_function_call = f"function_call_{position}"
            role_ = "assistant"
        elif role == "tool":
            blocks = [_result(str(m.get("tool_call_id")), m.get("content"))]
            role_ = "user"
        elif role == "function":
            blocks = [_result(last_function_call or str(m.get("name")), m.get("content"))]
            role_ = "user"
        else:
            blocks = _blocks(m.get("content"))
            role_ = "user"
        if not blocks:
            continue
        if turns and turns[-1][0] == role_:
            turns[-1][1].extend(blocks)
        else:
            turns.append((role_, blocks))
    return turns


def _as_text(block: Block, names: Mapping[str, str]) -> Block:
    if block["type"] == "tool_use":
        arguments = json.dumps(block["input"])
        return {"type": "text", "text": f"(called the tool {block['name']} with {arguments})"}
    content = block["content"]
    text = content if isinstance(content, str) else _blocks_text(content)
    name = names.get(block["tool_use_id"], "a tool")
    return {"type": "text", "text": f"(the tool {name} returned: {text})"}


def _blocks_text(blocks: list[Block]) -> str:
    """A tool result's blocks as text: an image (which text cannot carry) as a note."""
    return "".join(b["text"] if b["type"] == "text" else f"[{b['type']}]" for b in blocks)


def _pair_tools(turns: list[tuple[str, list[Block]]], with_tools: bool) -> None:
    """Keep tool_use and tool_result blocks only where they answer each other in adjacent
    turns (and the request declares tools); write the others as text. Results go first in
    their turn."""
    names = {b["id"]: b["name"] for _, blocks in turns for b in blocks if b["type"] == "tool_use"}
    for i, (role, blocks) in enumerate(turns):
        if role == "assistant":
            following = turns[i + 1][1] if i + 1 < len(turns) else []
            answered = {b["tool_use_id"] for b in following if b["type"] == "tool_result"}
            for j, b in enumerate(blocks):
                if b["type"] == "tool_use" and not (with_tools and b["id"] in answered):
                    blocks[j] = _as_text(b, names)
        else:
            previous = turns[i - 1][1] if i > 0 else []
            asked = {b["id"] for b in previous if b["type"] == "tool_use"}
            for j, b in enumerate(blocks):
                if b["type"] == "tool_result" and not (with_tools and b["tool_use_id"] in asked):
                    blocks[j] = _as_text(b, names)
            blocks.sort(key=lambda b: b["type"] != "tool_result")  # stable: results first


def to_anthropic(
    messages: Sequence[Mapping[str, Any]], *, with_tools: bool
) -> tuple[str | list[Block] | None, list[dict[str, Any]]]:
    """(``system``, ``messages``) of an Anthropic request for OpenAI-shaped ``messages``;
    ``with_tools`` when the request declares tools. A content part's ``cache_control`` (the
    caller's own prompt-cache breakpoint) is kept on its block."""
    system = _system(messages)
    rest = [m for m in messages if m.get("role") != "system"]
    turns = _turns(rest)
    # A tool_use checked against the next turn must see the final turns: pair after the
    # continue turns are in place.
    if not turns or turns[0][0] != "user":
        turns.insert(0, ("user", [{"type": "text", "text": CONTINUE}]))
    if turns[-1][0] != "user":
        turns.append(("user", [{"type": "text", "text": CONTINUE}]))
    _pair_tools(turns, with_tools)
    return system, [{"role": role, "content": blocks} for role, blocks in turns]


def tools(params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The request's tools (and legacy functions) as Anthropic tools."""
    return [
        {"name": s.name, "description": s.description, "input_schema": s.parameters}
        for s in function_specs(params)
    ]


def tool_choice(choice: Any, parallel: Any = None) -> dict[str, Any] | None:
    """OpenAI's ``tool_choice`` (``"auto"``, ``"none"``, ``"required"``, a named function) and
    ``parallel_tool_calls`` as Anthropic's; None for neither."""
    out: dict[str, Any] | None
    if choice is None:
        out = None if parallel is None else {"type": "auto"}
    elif choice == "required":
        out = {"type": "any"}
    elif choice in ("auto", "none"):
        out = {"type": choice}
    elif isinstance(choice, Mapping) and isinstance(choice.get("function"), Mapping):
        out = {"type": "tool", "name": str(choice["function"]["name"])}
    elif isinstance(choice, Mapping) and choice.get("type") in ("auto", "any", "tool", "none"):
        out = dict(choice)  # already Anthropic's
    else:
        raise ValueError(f"unsupported tool_choice {choice!r}")
    if out is not None and parallel is False and out["type"] != "none":
        out["disable_parallel_tool_use"] = True
    return out
