"""The model profile table (``parley/oai/model_profiles.json``): what each model family accepts
on OpenAI's chat-completions API, read once.

Low in the layers on purpose: the request adapter (:mod:`parley.oai._profiles`) and the strict
``FakeLLMServer`` (:mod:`parley.testing`) read the same table, so the fake refuses exactly what
the adapter fixes. A model's profile is the family whose name is the longest prefix of the
model's name (a router prefix such as ``openai/`` is dropped first); no match: the table's
defaults, which change nothing in a request.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from .exceptions import ConfigError

__all__ = ["ModelProfile", "profile_for", "profile_table"]

_TABLE_PATH = Path(__file__).parent / "oai" / "model_profiles.json"
_TOKEN_LIMITS = ("max_tokens", "max_completion_tokens")
_SYSTEM_ROLES = ("system", "developer", "user")


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """One family's row of the table (field meanings: the table's ``fields``)."""

    family: str | None
    temperature: bool
    top_p: bool
    token_limit: str
    system_role: str
    tools: bool
    parallel_tool_calls: bool
    streaming: bool
    images: bool
    reasoning_effort: tuple[str, ...] | None
    json_schema: bool
    context_window: int | None
    max_output_tokens: int | None
    cached_input_per_1m: float | None


_FIELD_NAMES = frozenset(f.name for f in fields(ModelProfile)) - {"family"}


def _bad(where: str, key: str, value: Any, wanted: str) -> ConfigError:
    return ConfigError(f"{where}: {key!r} must be {wanted}, got {value!r}")


def _checked(where: str, row: Mapping[str, Any]) -> dict[str, Any]:
    """``row``'s fields, each checked; an unknown field or a wrong value is a ConfigError."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if key not in _FIELD_NAMES:
            raise ConfigError(
                f"{where}: unknown model profile field {key!r}; known: {sorted(_FIELD_NAMES)}"
            )
        if key == "token_limit" and value not in _TOKEN_LIMITS:
            raise _bad(where, key, value, f"one of {list(_TOKEN_LIMITS)}")
        if key == "system_role" and value not in _SYSTEM_ROLES:
            raise _bad(where, key, value, f"one of {list(_SYSTEM_ROLES)}")
        if key == "reasoning_effort":
            if value is not None and (
                not isinstance(value, list) or not all(isinstance(v, str) for v in value)
            ):
                raise _bad(where, key, value, "a list of strings or null")
            value = None if value is None else tuple(value)
        elif key in ("context_window", "max_output_tokens"):
            if value is not None and (type(value) is not int or value <= 0):
                raise _bad(where, key, value, "a positive integer or null")
        elif key == "cached_input_per_1m":
            if value is not None and (
                not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0
            ):
                raise _bad(where, key, value, "a number >= 0 or null")
        elif key not in ("token_limit", "system_role") and not isinstance(value, bool):
            raise _bad(where, key, value, "true or false")
        out[key] = value
    return out


@functools.cache
def profile_table() -> tuple[ModelProfile, dict[str, ModelProfile]]:
    """(the defaults, the families by name), read and checked on first use."""
    raw = json.loads(_TABLE_PATH.read_text(encoding="utf-8"))
    defaults = ModelProfile(
        family=None, **_checked("model_profiles.json defaults", raw["defaults"])
    )
    families = {
        name: replace(defaults, family=name, **_checked(f"model_profiles.json {name!r}", row))
        for name, row in raw["families"].items()
    }
    return defaults, families


@functools.lru_cache(maxsize=1024)
def _matched(model: str) -> ModelProfile:
    defaults, families = profile_table()
    name = model.strip().lower().rsplit("/", 1)[-1]
    best: str | None = None
    for family in families:
        if name.startswith(family) and (best is None or len(family) > len(best)):
            best = family
    return defaults if best is None else families[best]


def profile_for(model: object, override: object = None, where: str = "config") -> ModelProfile:
    """The profile of ``model``, with a config entry's ``model_profile`` ``override`` over it:
    a family name, or a dict of fields (its ``family`` names the base profile)."""
    base = _matched(model) if isinstance(model, str) else profile_table()[0]
    if override is None:
        return base
    families = profile_table()[1]
    if isinstance(override, str):
        override = {"family": override}
    if not isinstance(override, Mapping):
        raise ConfigError(
            f"{where}: model_profile must be a family name or a dict of profile fields, "
            f"got {override!r}"
        )
    row = dict(override)
    family = row.pop("family", None)
    if family is not None:
        if family not in families:
            raise ConfigError(
                f"{where}: model_profile names the unknown family {family!r}; "
                f"known: {sorted(families)}"
            )
        base = families[family]
    return replace(base, **_checked(f"{where}: model_profile", row))
