"""Message transforms (AutoGen's ``transforms``): limit, truncate, compress and label a history
before an agent replies to it. Use them through :class:`.transform_messages.TransformMessages`
or call ``apply_transform`` directly.

Where parley differs from AutoGen 0.2 on purpose (README, "Differences from AutoGen 0.2"):

- **Tool calls stay with their results.** The limiters keep or drop an assistant message with
  ``tool_calls`` (or a legacy ``function_call``) together with the results that answer it, as
  one unit (:mod:`._units`), in both stored forms (parley's ``{"role": "tool",
  "tool_responses": [...]}`` and one ``{"role": "tool", "tool_call_id": ...}`` message per
  call). AutoGen cut between a call and its results and then, when a result led the history,
  removed the *newest* message instead, so the request failed with OpenAI's 400. A result
  whose call is not before it counts and stays where it is (as in AutoGen) but never opens
  what is kept (:func:`._units.drop_opening_orphans`).
- ``MessageHistoryLimiter`` keeps the history's order (AutoGen 0.2.35 put the oldest kept
  message second when ``keep_first_message`` was off).
- **No transform changes the caller's messages**; a changed message is a new dict, unchanged ones
  are shared (AutoGen's ``TextMessageCompressor`` rewrote the caller's dicts).
- ``MessageTokenLimiter(max_tokens=N)`` without ``max_tokens_per_message`` fills the budget
  (AutoGen kept only the newest message), and with neither limit nothing is cut (AutoGen kept
  the newest two messages); the texts of a stored tool result, which are what the
  model reads, are the ones counted and cut.
- ``TextMessageContentName`` labels multimodal (list) content too (AutoGen raised), and
  ``TextMessageCompressor`` keeps compressed plain-string items of list content (AutoGen dropped
  them) and compresses the tool results the model reads.
- Capping and "model not found" lines are printed through the current ``IOStream``.
"""

from __future__ import annotations

import sys
from typing import Any, Protocol

from . import transforms_util
from ._output import say
from ._text_transforms import TextMessageCompressor, TextMessageContentName
from ._texts import (
    DEFAULT_MODEL,
    Slot,
    content_tokens,
    replace_texts,
    sent_texts,
    truncate_content,
)
from ._units import Unit, drop_opening_orphans, first_unit, units_newest_first

__all__ = [
    "MessageHistoryLimiter",
    "MessageTokenLimiter",
    "MessageTransform",
    "TextMessageCompressor",
    "TextMessageContentName",
]


def _messages_of(messages: list[dict[str, Any]], kept: list[Unit]) -> list[dict[str, Any]]:
    return [m for u in kept for m in messages[u.start : u.stop]]


class MessageTransform(Protocol):
    """What :class:`.transform_messages.TransformMessages` needs of a transform."""

    def apply_transform(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The transformed messages."""
        ...

    def get_logs(
        self,
        pre_transform_messages: list[dict[str, Any]],
        post_transform_messages: list[dict[str, Any]],
    ) -> tuple[str, bool]:
        """A line describing the change, and whether there was one."""
        ...


class MessageHistoryLimiter:
    """Keeps the newest messages, at most ``max_messages`` of them.

    A tool call and the results that answer it are kept or dropped together: the newest units
    that fit are kept, and the walk stops at the first unit that does not (the history stays
    contiguous). ``max_messages`` counts the messages of the list given: a stored tool result
    (``tool_responses``) is one message however many calls it answers, the request form one per
    call. With ``keep_first_message`` the first unit is kept first (unless it is a lone result,
    or does not fit) and the newest units fill the rest. A result whose call is not before it
    takes its slot and stays where it is, as in AutoGen, but never opens the kept messages (nor
    follows only system messages or the kept first message): those are dropped. The result
    never holds more than ``max_messages`` messages; when even the newest unit does not fit it
    is empty.
    """

    def __init__(self, max_messages: int | None = None, keep_first_message: bool = False):
        self._validate_max_messages(max_messages)
        self._max_messages = max_messages
        self._keep_first_message = keep_first_message

    def apply_transform(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The last units within ``max_messages``; ``messages`` itself when it fits."""
        limit = self._max_messages
        if limit is None or len(messages) <= limit:
            return messages
        kept: list[Unit] = []
        floor = 0  # the walk from the newest end stops here
        if self._keep_first_message:
            unit = first_unit(messages)
            floor = unit.stop
            if not unit.orphan and len(unit) <= limit:
                kept.append(unit)
        slots = limit - sum(len(u) for u in kept)
        newest: list[Unit] = []
        for unit in units_newest_first(messages):
            # A result without its call takes its slot, as in AutoGen, where it is.
            if unit.start < floor or len(unit) > slots:
                break
            newest.append(unit)
            slots -= len(unit)
        kept.extend(reversed(newest))
        return _messages_of(messages, drop_opening_orphans(messages, kept))

    def get_logs(
        self,
        pre_transform_messages: list[dict[str, Any]],
        post_transform_messages: list[dict[str, Any]],
    ) -> tuple[str, bool]:
        pre, post = len(pre_transform_messages), len(post_transform_messages)
        if post < pre:
            return (
                f"Removed {pre - post} messages. Number of messages reduced from {pre} to {post}.",
                True,
            )
        return "No messages were removed.", False

    def _validate_max_messages(self, max_messages: int | None) -> None:
        if max_messages is not None and max_messages < 1:
            # AutoGen's text; 1 is accepted.
            raise ValueError("max_messages must be None or greater than 1")


class MessageTokenLimiter:
    """Truncates text to ``max_tokens_per_message`` tokens a message and ``max_tokens`` in all,
    keeping the newest text (counted as tiktoken counts for ``model``).

    The walk goes from the newest message back. When the budget runs out inside a unit, that
    unit is kept with its text cut to what is left (a tool call's ``tool_calls`` are never cut;
    its results may be cut down to ``""``) and every older unit is dropped. A message that
    ``filter_dict``/``exclude_filter`` leave alone is kept whole and its tokens count. A result
    whose call is not before it is cut and counted like any message, but dropped where it
    would open the kept messages. Nothing happens while the history's text is under
    ``min_tokens``.
    """

    def __init__(
        self,
        max_tokens_per_message: int | None = None,
        max_tokens: int | None = None,
        min_tokens: int | None = None,
        model: str = DEFAULT_MODEL,
        filter_dict: dict[str, Any] | None = None,
        exclude_filter: bool = True,
    ):
        self._model = model
        self._per_message_given = max_tokens_per_message is not None
        self._max_tokens_per_message = self._validate_max_tokens(max_tokens_per_message)
        self._max_tokens = self._validate_max_tokens(max_tokens)
        self._min_tokens = self._validate_min_tokens(min_tokens, max_tokens)
        self._filter_dict = filter_dict
        self._exclude_filter = exclude_filter

    def apply_transform(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The newest messages within the token budget; ``messages`` itself while the history
        holds fewer than ``min_tokens`` text tokens."""
        if not transforms_util.min_tokens_reached(messages, self._min_tokens, model=self._model):
            return messages
        spent = [0]  # text tokens kept so far
        kept: list[Unit] = []  # newest first
        out: dict[int, dict[str, Any]] = {}  # the kept messages, cut, by index
        for unit in units_newest_first(messages):
            over = False
            for i in range(unit.stop - 1, unit.start - 1, -1):
                out[i], full = self._limit(messages[i], spent)
                over = over or full
            kept.append(unit)
            if over:
                if unit.orphan and all(u.orphan for u in kept):
                    # It would open the window (drop_opening_orphans): not kept, and the newest
                    # message that may open it is kept instead, cut to the budget left.
                    kept.pop()
                    continue
                break
        kept.reverse()
        return [
            out[i] for u in drop_opening_orphans(messages, kept) for i in range(u.start, u.stop)
        ]

    def _limit(self, message: dict[str, Any], spent: list[int]) -> tuple[dict[str, Any], bool]:
        """``message`` with its texts cut to the budget; whether the budget ran out on it."""
        texts = sent_texts(message)
        if not any(transforms_util.is_content_right_type(c) for _, c in texts):
            return message, False  # a tool call without text: kept, not counted
        model = self._model
        if not transforms_util.should_transform_message(
            message, self._filter_dict, self._exclude_filter
        ):
            spent[0] += sum(content_tokens(c, model) for _, c in texts)
            return message, False
        over = False
        new: dict[Slot, Any] = {}
        for slot, content in reversed(texts):  # newest text first, as the model reads back
            if not transforms_util.is_content_right_type(content):
                continue
            own = content_tokens(content, model)
            # AutoGen reserved the per-message limit even when none was given (sys.maxsize),
            # so max_tokens alone kept one message; without a limit a text takes its own size.
            expected = self._max_tokens_per_message if self._per_message_given else own
            left = self._max_tokens - spent[0]
            if left - expected < 0:
                cut = truncate_content(content, left, model)
                over = True
            else:
                cut = truncate_content(content, self._max_tokens_per_message, model)
            spent[0] += content_tokens(cut, model) if cut is not content else own
            if cut is not content:
                new[slot] = cut
        return (replace_texts(message, new) if new else message), over

    def get_logs(
        self,
        pre_transform_messages: list[dict[str, Any]],
        post_transform_messages: list[dict[str, Any]],
    ) -> tuple[str, bool]:
        pre = self._count(pre_transform_messages)
        post = self._count(post_transform_messages)
        if post < pre:
            return (
                f"Truncated {pre - post} tokens. Number of tokens reduced from {pre} to {post}",
                True,
            )
        return "No tokens were truncated.", False

    def _count(self, messages: list[dict[str, Any]]) -> int:
        model = self._model
        return sum(content_tokens(m["content"], model) for m in messages if "content" in m)

    def _validate_max_tokens(self, max_tokens: int | None = None) -> int:
        if max_tokens is not None and max_tokens < 0:
            raise ValueError(
                "max_tokens and max_tokens_per_message must be None or greater than or equal to 0"
            )
        from ....token_count_utils import get_max_token_limit

        try:
            allowed_tokens: int | None = get_max_token_limit(self._model)
        except Exception:
            say(f"Model {self._model} not found in token_count_utils.")
            allowed_tokens = None
        if max_tokens is not None and allowed_tokens is not None and max_tokens > allowed_tokens:
            say(
                f"Max token was set to {max_tokens}, but {self._model} can only accept "
                f"{allowed_tokens} tokens. Capping it to {allowed_tokens}."
            )
            return allowed_tokens
        return max_tokens if max_tokens is not None else sys.maxsize

    def _validate_min_tokens(self, min_tokens: int | None, max_tokens: int | None) -> int:
        if min_tokens is None:
            return 0
        if min_tokens < 0:
            raise ValueError("min_tokens must be None or greater than or equal to 0.")
        if max_tokens is not None and min_tokens > max_tokens:
            raise ValueError("min_tokens must not be more than max_tokens.")
        return min_tokens
