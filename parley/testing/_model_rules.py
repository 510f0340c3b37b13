"""What OpenAI's chat-completions and Responses APIs refuse for the model a request names, by
the model profile table (:mod:`parley._model_profiles`): the strict ``FakeLLMServer`` answers
these with the real API's 400 (its wording, ``param`` and ``code``), so a request parley did
not adapt fails on the fake as it would in production. A model no family matches is not
checked."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .._model_profiles import ModelProfile, profile_for, profile_table
from ._validation import RequestError

__all__ = ["check_model_rules", "check_responses_rules"]


def _unsupported_parameter(name: str, hint: str = "") -> RequestError:
    return RequestError(
        f"Unsupported parameter: '{name}' is not supported with this model.{hint}",
        name,
        "unsupported_parameter",
    )


def _unsupported_value(name: str, value: Any, rest: str) -> RequestError:
    shown = value if isinstance(value, str) else json.dumps(value)
    return RequestError(
        f"Unsupported value: '{name}' does not support {shown} with this model.{rest}",
        name,
        "unsupported_value",
    )


def _effort(profile: ModelProfile, value: Any, name: str = "reasoning_effort") -> None:
    allowed = profile.reasoning_effort
    if allowed is None:
        raise _unsupported_parameter(name)
    if value not in allowed:
        listed = ", ".join(f"'{v}'" for v in allowed[:-1]) + f", and '{allowed[-1]}'"
        raise _unsupported_value(name, f"'{value}'", f" Supported values are: {listed}.")


def check_responses_rules(body: Mapping[str, Any]) -> None:
    """Raise :class:`RequestError` for what ``body``'s model does not take on the Responses
    API (``POST /v1/responses``), where a sampling parameter a reasoning model ignores is
    refused whatever its value."""
    profile = profile_for(body.get("model"))
    if profile == profile_table()[0]:
        return
    for key, accepted in (("temperature", profile.temperature), ("top_p", profile.top_p)):
        if not accepted and body.get(key) is not None:
            raise RequestError(
                f"Unsupported parameter: '{key}' is not supported with this model.", key
            )
    reasoning = body.get("reasoning")
    if isinstance(reasoning, Mapping) and reasoning.get("effort") is not None:
        _effort(profile, reasoning["effort"], "reasoning.effort")
    include = body.get("include")
    if (
        profile.reasoning_effort is None
        and isinstance(include, list)
        and "reasoning.encrypted_content" in include
    ):
        raise RequestError("Encrypted content is not supported with this model.", "include")
    if not profile.tools and body.get("tools"):
        raise _unsupported_parameter("tools")
    if not profile.streaming and body.get("stream"):
        raise _unsupported_value("stream", True, " Streaming is not supported.")


def check_model_rules(body: Mapping[str, Any]) -> None:
    """Raise :class:`RequestError` for what ``body``'s model does not take."""
    profile = profile_for(body.get("model"))
    if profile == profile_table()[0]:
        return
    if profile.token_limit == "max_completion_tokens" and "max_tokens" in body:
        raise _unsupported_parameter("max_tokens", " Use 'max_completion_tokens' instead.")
    for key, accepted in (("temperature", profile.temperature), ("top_p", profile.top_p)):
        if not accepted and key in body and body[key] != 1:
            raise _unsupported_value(key, body[key], " Only the default (1) value is supported.")
    if body.get("reasoning_effort") is not None:
        _effort(profile, body["reasoning_effort"])
    if not profile.parallel_tool_calls and "parallel_tool_calls" in body:
        raise _unsupported_parameter("parallel_tool_calls")
    if not profile.tools:
        for key in ("tools", "functions"):
            if body.get(key):
                raise _unsupported_parameter(key)
    if not profile.streaming and body.get("stream"):
        raise _unsupported_value("stream", True, " Streaming is not supported.")
    fmt = body.get("response_format")
    if not profile.json_schema and isinstance(fmt, Mapping) and fmt.get("type") == "json_schema":
        raise _unsupported_value("response_format", "'json_schema'", "")
    if profile.system_role == "user":
        # o1-mini and o1-preview take neither system nor developer messages.
        messages = body.get("messages")
        for i, m in enumerate(messages if isinstance(messages, list) else ()):
            role = m.get("role") if isinstance(m, Mapping) else None
            if role in ("system", "developer"):
                raise _unsupported_value(f"messages[{i}].role", f"'{role}'", "")
