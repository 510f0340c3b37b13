"""Adapt a chat-completions request to its model's profile before it is sent
(:mod:`parley._model_profiles` reads the table).

AutoGen 0.2 scripts send ``max_tokens``, ``temperature`` and ``system`` messages the way 2024's
models took them; OpenAI's reasoning models (o-series, gpt-5) refuse the first two with a 400
and want ``developer`` messages. The rules, each chosen so that an unchanged script keeps
running when nothing it asked for is lost, and fails before sending when something would be:

* ``max_tokens`` is sent as ``max_completion_tokens`` where the family wants it (the same
  limit; on a reasoning model it also bounds the hidden reasoning tokens). Both keys with
  different values: a ConfigError.
* ``temperature`` / ``top_p`` for a family that takes only the default: the default (1) and
  ``None`` are dropped (nothing changes); ``temperature=0``, what 0.2 scripts set for
  repeatable replies, is dropped with a warning (a reasoning model has no greedy decoding to
  give); any other value is a ConfigError naming the fix: the script asked for a sampling the
  model cannot give.
* ``system`` messages travel in the family's role: ``developer`` (same meaning, OpenAI's newer
  name; the leading system messages, an agent's instructions), or ``user`` for the models that
  take neither (o1-mini, o1-preview; every system message).
* ``parallel_tool_calls`` where the family refuses it: dropped with a warning.
* ``reasoning_effort`` outside the family's values, ``tools`` for a family without tools,
  ``stream`` for one that cannot stream, a ``json_schema`` response format for one without
  structured output: a ConfigError.

Each change that is not a no-op is logged once per process per (family, change)
(:func:`forget_warnings` starts the count again: a test of the warnings runs after others have
logged them). A model that matches no family (and has no ``model_profile`` in its config) is sent as it is.

A request for OpenAI's Responses API (``api_type: "responses"``, :func:`adapt_responses`) is
fitted by the same rules but two, which the translation to that API does for every model
(:mod:`parley.oai.providers._responses_items`): any token limit travels as
``max_output_tokens``, and leading system messages as ``instructions`` (a ``user`` family still
gets them as user messages). Beyond the profile, the chat-completions parameters that API has
no place for are fitted for every model: the ones that only nudge sampling (``seed``,
``frequency_penalty``, ``presence_penalty``) are dropped with a warning; the ones whose loss
would change the reply (``stop`` cuts it, ``logit_bias`` bans or forces tokens, ``n > 1`` asks
for several) are a ConfigError; their defaults are dropped silently.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from .._model_profiles import ModelProfile, profile_for, profile_table
from ..exceptions import ConfigError

__all__ = [
    "ProfileAdapter",
    "adapt_responses",
    "cached_input_rate",
    "forget_warnings",
    "is_reasoning_model",
]

logger = logging.getLogger(__name__)

_warned: set[tuple[str | None, str, bool]] = set()
_warned_lock = threading.Lock()


def forget_warnings() -> None:
    """Forget which adaptations were logged: each is logged once more, the next time it is
    made."""
    with _warned_lock:
        _warned.clear()


def _warn_once(profile: ModelProfile | None, change: str) -> None:
    """Log ``change`` once per process per (family, change); ``profile`` None: a change made
    for the Responses API, whatever the model."""
    key = (None if profile is None else profile.family, change, profile is None)
    if key in _warned:
        return
    with _warned_lock:
        if key in _warned:
            return
        _warned.add(key)
    if profile is None:
        logger.warning("api_type 'responses': %s (once per process)", change)
        return
    logger.warning(
        "model family %r: %s (parley's model profile; once per process)",
        profile.family or "custom",
        change,
    )


def _fix(model: Any, profile: ModelProfile, problem: str, fix: str) -> ConfigError:
    return ConfigError(
        f"model {model!r} (model family {profile.family or 'custom'!r}) {problem}: {fix}; "
        'or, if this endpoint does take it, set "model_profile" in the config entry '
        "(website/docs/model-profiles.md)"
    )


def _responses_fix(model: Any, problem: str, fix: str) -> ConfigError:
    return ConfigError(
        f"model {model!r}: the Responses API (api_type 'responses') {problem}: {fix}, or "
        "leave out api_type 'responses' to use chat completions "
        "(website/docs/reasoning-models.md)"
    )


def _sampling(
    body: dict[str, Any], key: str, profile: ModelProfile, model: Any, drop_zero: bool
) -> None:
    value = body[key]
    if value is None or value == 1:
        del body[key]  # the default: dropping it changes nothing
    elif drop_zero and value == 0:
        del body[key]
        _warn_once(profile, f"{key}=0 is not sent: these models take only the default 1")
    else:
        raise _fix(
            model,
            profile,
            f"takes no {key} but the default 1, and {key}={value!r} was set",
            f"remove {key} from the llm_config (or set it to 1)",
        )


def _roles(messages: Any, role: str, profile: ModelProfile) -> Any:
    """``messages`` with system messages in ``role``: every one for ``user`` (the models that
    take no system message refuse any), else the leading ones, the instructions an agent
    sends (the API reads a later system message as a developer one anyway; walking a long
    history on every request would cost more than the rest of the adaptation)."""
    if not isinstance(messages, list):
        return messages
    out: list[Any] | None = None
    for i, m in enumerate(messages):
        if isinstance(m, Mapping) and m.get("role") == "system":
            if out is None:
                out = list(messages)
            out[i] = {**m, "role": role}  # a new dict: the caller's message stays as it is
        elif role != "user":
            break
    if out is None:
        return messages
    _warn_once(profile, f"system messages are sent with the role {role!r}")
    return out


def _refusals(body: Mapping[str, Any], profile: ModelProfile, model: Any) -> None:
    effort = body.get("reasoning_effort")
    if effort is not None and (
        profile.reasoning_effort is None or effort not in profile.reasoning_effort
    ):
        allowed = profile.reasoning_effort
        raise _fix(
            model,
            profile,
            f"takes no reasoning_effort={effort!r}",
            "remove reasoning_effort" if allowed is None else f"use one of {list(allowed)}",
        )
    if not profile.tools and (body.get("tools") or body.get("functions")):
        raise _fix(
            model, profile, "takes no tools", "register no tools or functions with this agent"
        )
    if not profile.streaming and body.get("stream"):
        raise _fix(model, profile, "cannot stream", "remove stream=True")
    if not profile.json_schema:
        fmt = body.get("response_format")
        if isinstance(fmt, Mapping) and fmt.get("type") == "json_schema":
            raise _fix(
                model,
                profile,
                "has no JSON-schema output",
                "remove response_format or use another model",
            )


def adapt(params: dict[str, Any], profile: ModelProfile) -> dict[str, Any]:
    """``params`` as ``profile``'s family takes them: a new dict if anything changes (the
    argument is never changed), else ``params`` itself. A ConfigError where adapting would
    change what the request means."""
    model = params.get("model")
    _refusals(params, profile, model)
    body = params
    if profile.token_limit == "max_completion_tokens" and "max_tokens" in params:
        body = dict(params)
        limit = body.pop("max_tokens")
        if body.get("max_completion_tokens", limit) != limit:
            raise _fix(
                model,
                profile,
                f"reads max_completion_tokens, and both max_tokens={limit!r} and "
                f"max_completion_tokens={body['max_completion_tokens']!r} were set",
                "keep only max_completion_tokens",
            )
        body["max_completion_tokens"] = limit
        _warn_once(
            profile, "max_tokens is sent as max_completion_tokens (it also bounds reasoning tokens)"
        )
    return _shared_rules(params, body, profile, model, profile.system_role != "system")


def _shared_rules(
    params: dict[str, Any], body: dict[str, Any], profile: ModelProfile, model: Any, roles: bool
) -> dict[str, Any]:
    """The rules both APIs apply: sampling, parallel tool calls and (``roles``) the system
    role. ``body`` is ``params`` or already a copy of it."""
    for key, accepted, drop_zero in (
        ("temperature", profile.temperature, True),
        ("top_p", profile.top_p, False),
    ):
        if not accepted and key in body:
            if body is params:
                body = dict(params)
            _sampling(body, key, profile, model, drop_zero)
    if not profile.parallel_tool_calls and "parallel_tool_calls" in body:
        if body is params:
            body = dict(params)
        del body["parallel_tool_calls"]
        _warn_once(profile, "parallel_tool_calls is not sent: these models do not take it")
    if roles:
        messages = body.get("messages")
        roled = _roles(messages, profile.system_role, profile)
        if roled is not messages:
            if body is params:
                body = dict(params)
            body["messages"] = roled
    return body


# Chat-completions parameters the Responses API has no place for: each one's defaults (dropped
# silently), and for another value either None (it only nudges sampling: dropped with a
# warning) or why it is refused (the reply would differ from the one asked for) and the fix.
_CHAT_ONLY: dict[str, tuple[tuple[Any, ...], tuple[str, str] | None]] = {
    "seed": ((), None),
    "frequency_penalty": ((0,), None),
    "presence_penalty": ((0,), None),
    "stop": (
        ([], ""),
        ("takes no stop sequences, so the reply would not be cut there", "remove stop"),
    ),
    "logit_bias": (
        ({},),
        ("takes no logit_bias, so the tokens it bans or favours would not be", "remove it"),
    ),
    "n": ((1,), ("gives one reply per request and n asks for several", "remove n")),
}
_TOKEN_KEYS = ("max_tokens", "max_completion_tokens", "max_output_tokens")


def _chat_only(params: dict[str, Any], model: Any) -> dict[str, Any]:
    body = params
    for key in _CHAT_ONLY.keys() & body.keys():
        defaults, refusal = _CHAT_ONLY[key]
        value = body[key]
        if value is not None and (isinstance(value, bool) or value not in defaults):
            if refusal is not None:
                problem, fix = refusal
                raise _responses_fix(model, f"{problem} ({key}={value!r})", fix)
            _warn_once(None, f"{key} is not sent: the Responses API takes none")
        if body is params:
            body = dict(params)
        del body[key]
    limits = {body[k] for k in _TOKEN_KEYS if body.get(k) is not None}
    if len(limits) > 1:
        given = ", ".join(f"{k}={body[k]!r}" for k in _TOKEN_KEYS if body.get(k) is not None)
        raise _responses_fix(
            model, f"reads one limit, max_output_tokens, and {given} were set", "keep only one"
        )
    return body


def adapt_responses(params: dict[str, Any], profile: ModelProfile | None) -> dict[str, Any]:
    """``params`` fitted for the Responses API: its chat-only parameters, then ``profile``'s
    rules (None: a model the table does not know) but the token limit's name and the
    ``developer`` role, which the translation handles. Never changes ``params``."""
    model = params.get("model")
    body = _chat_only(params, model)
    if profile is None:
        return body
    _refusals(body, profile, model)
    return _shared_rules(params, body, profile, model, profile.system_role == "user")


def is_reasoning_model(profile: ModelProfile | None) -> bool:
    """Whether ``profile``'s family reasons before it answers (it takes ``reasoning_effort``):
    its reasoning items are worth keeping for the next turn."""
    return profile is not None and profile.reasoning_effort is not None


class ProfileAdapter:
    """A config's adapter: its ``model_profile`` override (checked when the config is built)
    and the profile of each model it has sent for."""

    __slots__ = ("_by_model", "_override", "_where")

    def __init__(self, override: object = None, where: str = "config") -> None:
        self._override = override
        self._where = where
        self._by_model: dict[Any, ModelProfile | None] = {}
        if override is not None:
            profile_for(None, override, where)  # a bad override fails here, not at a request

    def profile(self, model: object) -> ModelProfile:
        return profile_for(model, self._override, self._where)

    def known(self, model: object) -> ModelProfile | None:
        """``model``'s profile, or None when it is the table's defaults (which change
        nothing: such a model is sent as it is)."""
        try:
            return self._by_model[model]
        except (KeyError, TypeError):
            found = self.profile(model)
            profile = None if found == profile_table()[0] else found
            if len(self._by_model) < 256:
                try:
                    self._by_model[model] = profile
                except TypeError:
                    pass
            return profile

    def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        """``params`` fitted for the chat-completions API."""
        profile = self.known(params.get("model"))
        if profile is None:
            return params
        return adapt(params, profile)

    def responses(self, params: dict[str, Any]) -> dict[str, Any]:
        """``params`` fitted for the Responses API (:func:`adapt_responses`)."""
        return adapt_responses(params, self.known(params.get("model")))

    def cached_input_rate(self, model: object) -> float | None:
        """USD per 1k cached prompt tokens of ``model`` (None: billed as input)."""
        return cached_input_rate(self.profile(model))


def cached_input_rate(profile: ModelProfile) -> float | None:
    """USD per 1k cached prompt tokens by ``profile`` (the table is per 1M), or None."""
    rate = profile.cached_input_per_1m
    return None if rate is None else rate / 1000
