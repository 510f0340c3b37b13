"""The texts of a message as the model reads them, counted and cut in tokens.

Counts go through :func:`parley.token_count_utils.count_token`, so they are tiktoken's (and
AutoGen's), and are remembered per text: a chat's history grows by a message or two a turn, so a
transform run before every reply counts each message once, not once per turn.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...._tokenizer import encoding_for_model
from ....code_utils import content_text
from ....token_count_utils import count_token

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "DEFAULT_MODEL",
    "content_tokens",
    "replace_texts",
    "sent_texts",
    "text_tokens",
    "truncate_content",
    "truncate_text",
]

DEFAULT_MODEL = "gpt-3.5-turbo-0613"

# (model, text) -> tokens. Bounded by the characters it holds, not by entries: a history may
# hold a few huge tool outputs.
_counts: dict[tuple[str, str], int] = {}
_held = 0
_MAX_HELD = 32_000_000  # characters
_lock = threading.Lock()
_encodings: dict[str, tiktoken.Encoding] = {}


def text_tokens(text: str, model: str = DEFAULT_MODEL) -> int:
    """``count_token(text, model)``, remembered."""
    global _held
    key = (model, text)
    n = _counts.get(key)
    if n is None:
        n = count_token(text, model=model)
        with _lock:
            if _held + len(text) > _MAX_HELD:
                _counts.clear()
                _held = 0
            _counts[key] = n
            _held += len(text)
    return n


def content_tokens(content: Any, model: str = DEFAULT_MODEL) -> int:
    """Text tokens of a message's content (AutoGen's ``count_text_tokens``): a str; the text of
    a list's str items and ``{"text": ...}`` parts; 0 for anything else."""
    if isinstance(content, str):
        return text_tokens(content, model)
    if isinstance(content, list):
        total = 0
        for item in content:
            if isinstance(item, str):
                total += text_tokens(item, model)
            elif isinstance(item, Mapping):
                text = item.get("text", "")
                total += text_tokens(text if isinstance(text, str) else str(text), model)
        return total
    return 0


def _encoding(model: str) -> tiktoken.Encoding:
    encoding = _encodings.get(model)
    if encoding is None:
        # KeyError for a model tiktoken does not know, as AutoGen's truncation raised.
        encoding = _encodings[model] = encoding_for_model(model)
    return encoding


def truncate_text(text: str, n: int, model: str = DEFAULT_MODEL) -> str:
    """The longest token prefix of ``text`` counting at most ``n`` tokens (``text`` itself when
    it fits)."""
    encoding = _encoding(model)
    if text_tokens(text, model) <= max(n, 0):
        return text
    ids = encoding.encode_ordinary(text)
    n = max(n, 0)
    while True:
        # A cut inside a multi-byte character decodes to U+FFFD, which may count more tokens
        # than it replaced: shorten until the text really fits.
        cut = encoding.decode(ids[:n])
        if n == 0 or text_tokens(cut, model) <= n:
            return cut
        n -= 1


def truncate_content(content: Any, n: int, model: str = DEFAULT_MODEL) -> Any:
    """``content`` cut to ``n`` text tokens; the same object when it fits. In a multimodal list
    the text parts share the budget in order and other parts are kept."""
    if isinstance(content, str):
        return truncate_text(content, n, model)
    if not isinstance(content, list):
        return content
    left = max(n, 0)
    out: list[Any] = []
    changed = False
    for item in content:
        new = item
        if isinstance(item, str):
            new = truncate_text(item, left, model)
            left -= text_tokens(new, model)
        elif isinstance(item, Mapping) and item.get("type") == "text":
            text = item.get("text")
            if isinstance(text, str):
                cut = truncate_text(text, left, model)
                left -= text_tokens(cut, model)
                if cut is not text:
                    new = {**item, "text": cut}
        changed = changed or new is not item
        out.append(new)
    return out if changed else content


# -- where a message's texts are ---------------------------------------------------------------
# A stored tool message ({"role": "tool", "tool_responses": [...], "content": joined}) reaches
# the model as its responses, one message each; its own content is a summary that is not sent.

Slot = int | None  # an index into tool_responses, or None for the message's own content


def sent_texts(message: Mapping[str, Any]) -> list[tuple[Slot, Any]]:
    """The contents of ``message`` that reach the model, in request order."""
    responses = message.get("tool_responses")
    if not (isinstance(responses, list) and responses):
        return [(None, message.get("content"))]
    slots: list[tuple[Slot, Any]] = [
        (i, r.get("content")) for i, r in enumerate(responses) if isinstance(r, Mapping)
    ]
    if message.get("role") != "tool":
        slots.append((None, message.get("content")))
    return slots


def replace_texts(message: Mapping[str, Any], new: Mapping[Slot, Any]) -> dict[str, Any]:
    """A copy of ``message`` with the contents in ``new``; a stored tool message's own content
    is rebuilt from its responses as parley joins them."""
    out = dict(message)
    if any(slot is not None for slot in new):
        responses = list(message["tool_responses"])
        for slot, content in new.items():
            if slot is not None:
                responses[slot] = {**responses[slot], "content": content}
        out["tool_responses"] = responses
        if message.get("role") == "tool":
            out["content"] = "\n\n".join(
                content_text(r.get("content")) for r in responses if isinstance(r, Mapping)
            )
    if None in new:
        out["content"] = new[None]
    return out
