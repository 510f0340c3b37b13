"""Helpers AutoGen exposes from ``autogen.agentchat.utils``: usage totals, the check of a
chat's arguments, and HTML-like tags in message content.

Quoted attribute values follow AutoGen: a value opened by ``key="`` or ``key='`` holds every
word up to the next such opening, so an apostrophe inside it is kept (``text='Hello I'm a
robot'``). Differences from AutoGen, on purpose, in :func:`parse_tags_from_content`:

- The tag name is matched literally (``re.escape``); AutoGen inserted it into the regex
  unescaped, so a name such as ``"a.b"`` also matched ``<axb ...>``.
- A quoted value ends at its last closing quote that ends a word; AutoGen cut the last
  character of the whole piece instead, so ``<img src="q.png" width=3>`` gave
  ``{"src": 'q.png" width='}``; parley gives ``{"src": "q.png width=3"}`` (the words after the
  closing quote join ``src``, as loose words do everywhere in a tag). Quoted values keep their
  spaces as written and an unclosed quote runs to the end of the tag, so no character is ever
  lost.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..usage._run import DETAIL_KEYS

__all__ = ["consolidate_chat_info", "gather_usage_summary", "parse_tags_from_content"]

SUMMARY_METHODS = ("last_msg", "reflection_with_llm")


# --- usage ---------------------------------------------------------------------------------------


def _add(total: dict[str, Any], summary: dict[str, Any] | None) -> None:
    if not summary:
        return
    total["total_cost"] = total.get("total_cost", 0) + summary.get("total_cost", 0)
    for model, usage in summary.items():
        if model == "total_cost" or not isinstance(usage, dict):
            continue
        mine = total.setdefault(
            model, {"cost": 0, "prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        )
        for key in ("cost", "prompt_tokens", "completion_tokens", "total_tokens"):
            mine[key] = mine.get(key, 0) + usage.get(key, 0)
        # parley's cached and reasoning counts, where a model's responses reported them.
        for key in DETAIL_KEYS:
            if key in usage:
                mine[key] = mine.get(key, 0) + usage[key]


def gather_usage_summary(agents: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """The usage of the agents' model clients, with and without cache hits:
    ``{"usage_including_cached_inference": ..., "usage_excluding_cached_inference": ...}``.
    A model's entry holds AutoGen's four counts, and ``cached_tokens``,
    ``cache_creation_tokens`` and ``reasoning_tokens`` when its responses reported them."""
    including: dict[str, Any] = {"total_cost": 0}
    excluding: dict[str, Any] = {"total_cost": 0}
    for agent in agents:
        client = getattr(agent, "client", None)
        if client:
            _add(including, client.total_usage_summary)
            _add(excluding, client.actual_usage_summary)
    return {
        "usage_including_cached_inference": including,
        "usage_excluding_cached_inference": excluding,
    }


# --- chat arguments ------------------------------------------------------------------------------


def consolidate_chat_info(
    chat_info: Mapping[str, Any] | Iterable[Mapping[str, Any]], uniform_sender: Any = None
) -> None:
    """Check the arguments of one chat (a dict) or of a queue of chats (a list of dicts);
    ``AssertionError`` on the first problem. Nothing is changed.

    Each chat needs a ``sender`` (unless ``uniform_sender`` is the sender of them all) and a
    ``recipient``; ``summary_method`` must be ``None``, a callable, ``"last_msg"`` or
    ``"reflection_with_llm"``, and the last needs a model client on the sender or the
    recipient.
    """
    chats = [chat_info] if isinstance(chat_info, Mapping) else chat_info
    # Raised, not asserted: the checks hold under ``python -O`` too, and the texts stay
    # exactly AutoGen's (pytest rewrites asserts in plugins' packages, parley's included).
    for chat in chats:
        sender = uniform_sender
        if sender is None:
            sender = chat.get("sender")
            if sender is None:
                raise AssertionError("sender must be provided.")
        recipient = chat.get("recipient")
        if recipient is None:
            raise AssertionError("recipient must be provided.")
        method = chat.get("summary_method")
        if not (method is None or callable(method) or method in SUMMARY_METHODS):
            raise AssertionError(
                "summary_method must be a string chosen from 'reflection_with_llm' or "
                "'last_msg' or a callable, or None."
            )
        if method == "reflection_with_llm" and not (_has_client(sender) or _has_client(recipient)):
            raise AssertionError(
                "llm client must be set in either the recipient or sender when summary_method "
                "is reflection_with_llm."
            )


def _has_client(agent: Any) -> bool:
    return getattr(agent, "client", None) is not None


# --- tags ----------------------------------------------------------------------------------------

# A word of a tag's inner text (words are what lies between spaces, as in AutoGen), and a word
# opening a quoted attribute: ``key="...`` or ``key='...``.
_WORD = re.compile(r"[^ ]+")
_QUOTED_START = re.compile(r"""[^=]+=["']""")


def parse_tags_from_content(tag: str, content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``<tag ...>`` tags in ``content``, in order: ``{"tag": tag, "attr": {...}, "match":
    re.Match}`` each, the match spanning the whole tag in the text it was found in.

    ``content`` is a str, or a list of content parts of which the ``type == "text"`` ones are
    searched. A tag is ``<``, the name (case-sensitive), exactly one space, and everything up
    to the first ``>``. Inside, ``key="value"`` and ``key='value'`` are attributes; every other
    word, ``k=v`` included, is joined with single spaces into ``attr["src"]``:
    ``<img http://x/y.png>`` -> ``{"src": "http://x/y.png"}``.
    """
    if isinstance(content, str):
        return _tags_in(tag, content)
    if isinstance(content, list):
        found = []
        for part in content:
            # A part that is not a dict fails here with AttributeError, as in AutoGen.
            if part.get("type") == "text":
                found += _tags_in(tag, part["text"])
        return found
    raise ValueError(f"content must be str or list, but got {type(content)}")


def _tags_in(tag: str, text: str) -> list[dict[str, Any]]:
    pattern = re.compile(f"<{re.escape(tag)} (.*?)>")
    return [
        {"tag": tag, "attr": _attributes(match.group(1)), "match": match}
        for match in pattern.finditer(text)
    ]


def _attributes(inner: str) -> dict[str, str]:
    attr: dict[str, str] = {}

    def add_words(text: str) -> None:
        # Loose words join src in order; an explicit src="..." replaces those before it.
        for word in _WORD.findall(text):
            attr["src"] = f"{attr['src']} {word}" if "src" in attr else word

    for piece in _pieces(inner.strip()):
        opening = _QUOTED_START.match(piece)
        if opening is None:
            add_words(piece)
            continue
        key, quote = piece[: opening.end() - 2], piece[opening.end() - 1]
        body = piece[opening.end() :]
        close = _closing_quote(body, quote)
        if close < 0:  # never closed: the value runs to the end of the piece
            attr[key] = body
        else:
            attr[key] = body[:close]
            add_words(body[close + 1 :])
    return attr


def _pieces(inner: str) -> list[str]:
    """The inner text cut before each word that opens a quoted attribute, so a quoted value
    holds every word up to the next attribute (apostrophes and all), as in AutoGen."""
    starts = [m.start() for m in _WORD.finditer(inner) if _QUOTED_START.match(m.group())]
    bounds = [0, *[s for s in starts if s > 0], len(inner)]
    pieces = (inner[a:b].strip() for a, b in itertools.pairwise(bounds))
    return [piece for piece in pieces if piece]


def _closing_quote(body: str, quote: str) -> int:
    """Where the quoted value in ``body`` ends: its last ``quote`` that ends a word, or -1."""
    at = len(body)
    while (at := body.rfind(quote, 0, at)) >= 0:
        if at + 1 == len(body) or body[at + 1] == " ":
            return at
    return -1
