"""What the page shows of a message, a tool call or an error: plain JSON-able data.

Everything here is data for ``textContent`` in the page, never HTML: the page escapes nothing
because it never parses what it shows. Texts are capped, so one huge tool result or code
output cannot make every browser (and every late joiner's snapshot) carry megabytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from .._credentials import redact
from ..code_utils import CODE_BLOCK_PATTERN, content_text

__all__ = ["MAX_TEXT", "capped", "error_text", "message_view", "plain", "segments"]

MAX_TEXT = 50_000  # characters of one text shown; the rest is cut with a marker
_FENCE = re.compile(CODE_BLOCK_PATTERN, re.DOTALL)


def capped(text: str, limit: int = MAX_TEXT) -> str:
    """``text``, cut to ``limit`` characters with a marker saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... {len(text) - limit} more characters not shown]"


def plain(value: Any) -> Any:
    """``value`` as JSON data: containers walked, anything else JSON cannot hold as its str."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return capped(value)
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return capped(str(value))


def segments(text: str) -> list[dict[str, str]]:
    """``text`` cut into prose and fenced code blocks, as the page shows them."""
    out: list[dict[str, str]] = []
    at = 0
    for match in _FENCE.finditer(text):
        if match.start() > at:
            out.append({"kind": "text", "text": text[at : match.start()]})
        out.append({"kind": "code", "language": match.group(1) or "", "text": match.group(2)})
        at = match.end()
    if at < len(text):
        out.append({"kind": "text", "text": text[at:]})
    return out


def _arguments(raw: Any) -> str:
    if isinstance(raw, str):
        try:  # pretty-printed when it is JSON, as the model sent it when it is not
            return json.dumps(json.loads(raw), indent=2, ensure_ascii=False)
        except ValueError:
            return raw
    return json.dumps(plain(raw), indent=2, ensure_ascii=False)


def _tool_calls(message: Mapping[str, Any]) -> list[dict[str, str]]:
    calls = []
    for call in message.get("tool_calls") or ():
        if not isinstance(call, Mapping):
            continue
        function = call.get("function") or {}
        calls.append(
            {
                "id": str(call.get("id") or ""),
                "name": str(function.get("name") or ""),
                "arguments": capped(_arguments(function.get("arguments"))),
            }
        )
    legacy = message.get("function_call")
    if isinstance(legacy, Mapping):
        calls.append(
            {
                "id": "",
                "name": str(legacy.get("name") or ""),
                "arguments": capped(_arguments(legacy.get("arguments"))),
            }
        )
    return calls


def _tool_results(message: Mapping[str, Any]) -> list[dict[str, str]]:
    results = []
    for response in message.get("tool_responses") or ():
        if isinstance(response, Mapping):
            results.append(
                {
                    "id": str(response.get("tool_call_id") or ""),
                    "text": capped(content_text(response.get("content"))),
                }
            )
    return results


def message_view(message: Any) -> dict[str, Any]:
    """A message as the page shows it: its role and name, its text cut into prose and code
    blocks, its tool calls (arguments pretty-printed) and tool results."""
    if not isinstance(message, Mapping):
        message = {"content": message}
    text = capped(content_text(message.get("content")))
    results = _tool_results(message)
    return {
        "role": str(message.get("role") or ""),
        "name": str(message.get("name") or ""),
        # A bundle of tool results repeats them in its content: shown once, as results.
        "segments": [] if results else segments(text),
        "tool_calls": _tool_calls(message),
        "tool_results": results,
    }


def error_text(error: BaseException) -> str:
    """``Type: message`` of an error, without the configured credentials (a server's error
    may echo the key) or anything that looks like one (:mod:`parley._credentials`)."""
    return capped(redact(f"{type(error).__name__}: {error}"), 2000)
