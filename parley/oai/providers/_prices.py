"""The native providers' price tables, read from ``prices.json`` beside this module: one table
of data for every provider (with where each price comes from), instead of a dict literal of the
same shape in each provider's module. A provider that prices its prompt cache apart has
``cache_rates`` there too."""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any, NamedTuple

__all__ = ["CacheRates", "provider_cache_rates", "provider_prices"]


@functools.cache
def _table() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("prices.json").read_text(encoding="utf-8")
    providers: dict[str, Any] = json.loads(text)["providers"]
    return providers


def provider_prices(provider: str) -> dict[str, tuple[float, float]]:
    """USD per 1k (input, output) tokens of ``provider``'s models (none for a provider the
    table does not list), a new dict on each call: a client's ``PRICES`` may be changed by its
    user without touching another's."""
    prices = _table().get(provider, {}).get("prices", {})
    return {model: (float(pair[0]), float(pair[1])) for model, pair in prices.items()}


class CacheRates(NamedTuple):
    """A provider's prompt-cache prices, as multiples of its base input price."""

    read: float
    write_5m: float
    write_1h: float


def provider_cache_rates(provider: str) -> CacheRates | None:
    """``provider``'s prompt-cache prices (its ``cache_rates`` in the table), or None where
    cached prompt tokens are billed as input."""
    rates = _table().get(provider, {}).get("cache_rates")
    if not rates:
        return None
    return CacheRates(float(rates["read"]), float(rates["write_5m"]), float(rates["write_1h"]))
