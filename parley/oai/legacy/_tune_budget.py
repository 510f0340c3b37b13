"""Keeping ``Completion.tune`` within its optimization budget, with requests in flight at once.

A request's cost is known only after its reply, and a trial sends up to ``max_concurrency``
requests together: checking the money spent before each one let a whole round through when the
budget had room for one request only. So each request first *reserves* its worst-case cost (its
prompt's tokens counted, plus ``max_tokens`` for every completion it asks for, at the highest
price among the models it may reach); it is sent only when what was spent plus what is reserved
plus its own reservation stays within the budget, and the reservation is replaced by the actual
cost when the reply comes in.

The worst case assumes the provider bills no more prompt tokens than parley counts (a small
margin covers tokenizer and chat-format differences) and no more completion tokens than
``max_tokens``; a request whose output cannot be bounded (a chat model without ``max_tokens``
whose context window parley does not know) cannot be reserved and is not sent.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from typing import Any

from ...token_count_utils import count_token, get_max_token_limit
from ._params import construct_params
from ._tune_space import TrialRequest

__all__ = ["SpendGuard", "worst_case_cost"]

logger = logging.getLogger("parley.oai.completion")

# Billed prompt tokens may differ a little from parley's count (another tokenizer, the chat
# format's framing): reserve this much more.
_PROMPT_MARGIN = 1.1
_PROMPT_SLACK = 8
_COMPLETION_DEFAULT_MAX_TOKENS = 16  # the text-completion API's own default
_FALLBACK_CHAT_MODEL = "gpt-4-0613"


def _prompt_tokens(body: Mapping[str, Any], model: str) -> int:
    text = body.get("messages") if "messages" in body else body.get("prompt")
    if isinstance(text, list) and all(isinstance(m, Mapping) for m in text):
        try:
            tokens = count_token(list(text), model)
        except NotImplementedError:
            # A chat format parley does not know (a local or self-hosted model): counted as
            # gpt-4's, as AutoGen counts models whose tokenizer is not public.
            tokens = count_token(list(text), _FALLBACK_CHAT_MODEL)
    else:
        tokens = count_token(str(text or ""), model)
    return math.ceil(tokens * _PROMPT_MARGIN) + _PROMPT_SLACK


def _output_limit(params: Mapping[str, Any], model: str, chat: bool, prompt_tokens: int) -> float:
    limit = params.get("max_tokens")
    if limit is not None:
        return float(limit)
    if not chat:
        return float(_COMPLETION_DEFAULT_MAX_TOKENS)
    try:
        # Unbounded by the request: a chat answer ends at the model's context window at most.
        return float(max(get_max_token_limit(model) - prompt_tokens, 0))
    except KeyError:
        return math.inf


def worst_case_cost(
    request: TrialRequest,
    instance: Mapping[str, Any],
    count: int,
    *,
    is_chat_model: Callable[[str], bool],
    price_of: Callable[[str, Any], Any],
) -> float:
    """The most one request for ``count`` completions of ``instance`` can cost (USD; ``inf``
    when its output has no bound)."""
    params = {k: v for k, v in request.params.items() if k != "price"}
    # A config-list entry's model and price win over the tuned ones: any entry may answer.
    allow = bool(params.pop("allow_format_str_template", False))
    worst = 0.0
    for model, price in request.served_by():
        chat = is_chat_model(model)
        body = construct_params(
            instance, {**params, "model": model}, chat=chat, allow_format_str_template=allow
        )
        prompt = _prompt_tokens(body, model)
        output = _output_limit(params, model, chat, prompt) * count
        rates = price_of(model, price)
        in_price, out_price = (0.0, 0.0) if rates is None else (float(rates[0]), float(rates[1]))
        cost = prompt * in_price / 1000 + (output * out_price / 1000 if out_price else 0.0)
        worst = max(worst, cost)
    return worst


class SpendGuard:
    """The optimization budget of one run: ``spent`` (settled, kept by the run's state through
    ``get_spent``) plus the reservations of requests in flight never exceed ``budget``.

    All requests of a run are made on one event loop, so reserve and settle need no lock."""

    def __init__(self, budget: float | None, get_spent: Callable[[], float]) -> None:
        self.budget = budget
        self._spent = get_spent
        self.reserved = 0.0
        self.refused = False  # a request did not fit: the run stops spending

    def exhausted(self) -> bool:
        """Whether the run must not send anything more."""
        return self.budget is not None and (self.refused or self._spent() >= self.budget)

    def reserve(self, amount: float, what: str) -> bool:
        """Hold ``amount`` for a request about to be sent; False (and nothing held) when the
        budget cannot cover it on top of what is spent and held."""
        if self.budget is None:
            return True
        left = self.budget - self._spent() - self.reserved
        if self.refused or not amount <= left:
            if not self.refused:
                logger.info(
                    "optimization budget: %s could cost up to %.6f USD and %.6f USD is left; "
                    "not sent, tuning stops spending",
                    what,
                    amount,
                    max(left, 0.0),
                )
            self.refused = True
            return False
        self.reserved += amount
        return True

    def release(self, amount: float) -> None:
        """Give back a reservation once its request has been settled (or not sent)."""
        if self.budget is not None:
            self.reserved = max(self.reserved - amount, 0.0)
