"""What the legacy ``Completion`` API sends: which endpoint a model uses, the request built from a
``create`` call's config and context, and the legacy price table.

A config mixes three kinds of keys (see :mod:`parley.oai._config`): the openai client's settings
(``api_key``, ``base_url`` -- ``api_base`` is the openai<1 spelling and accepted --, ...), options
read by ``Completion`` itself (:data:`LEGACY_OPTIONS`: retries, cache seed, templating, price),
and the request body. Only the body is sent, and only the body names the cache entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...exceptions import ConfigError
from .. import _templating
from .._config import split_config
from ..providers._registry import RESPONSES

__all__ = [
    "CHAT_MODELS",
    "LEGACY_OPTIONS",
    "PRICE_1K",
    "Request",
    "build_request",
    "construct_params",
    "looks_like_chat_model",
]

# The chat models FLAML's Completion knew (2023); looks_like_chat_model also knows newer names.
CHAT_MODELS = frozenset(
    {
        "gpt-3.5-turbo",
        "gpt-3.5-turbo-0301",
        "gpt-3.5-turbo-0613",
        "gpt-3.5-turbo-16k",
        "gpt-3.5-turbo-16k-0613",
        "gpt-35-turbo",
        "gpt-35-turbo-16k",
        "gpt-4",
        "gpt-4-32k",
        "gpt-4-32k-0314",
        "gpt-4-0314",
        "gpt-4-0613",
        "gpt-4-32k-0613",
    }
)

# USD per 1000 tokens, one price for both directions or (prompt, completion). Models missing
# here fall back to parley's current table (parley.oai.client.OAI_PRICE1K).
PRICE_1K: dict[str, float | tuple[float, float]] = {
    "text-ada-001": 0.0004,
    "text-babbage-001": 0.0005,
    "text-curie-001": 0.002,
    "code-cushman-001": 0.024,
    "code-davinci-002": 0.1,
    "text-davinci-002": 0.02,
    "text-davinci-003": 0.02,
    "gpt-3.5-turbo": (0.0015, 0.002),
    "gpt-3.5-turbo-instruct": (0.0015, 0.002),
    "gpt-3.5-turbo-0301": (0.0015, 0.002),
    "gpt-3.5-turbo-0613": (0.0015, 0.002),
    "gpt-3.5-turbo-16k": (0.003, 0.004),
    "gpt-3.5-turbo-16k-0613": (0.003, 0.004),
    "gpt-35-turbo": (0.0015, 0.002),
    "gpt-35-turbo-16k": (0.003, 0.004),
    "gpt-35-turbo-instruct": (0.0015, 0.002),
    "gpt-4": (0.03, 0.06),
    "gpt-4-32k": (0.06, 0.12),
    "gpt-4-0314": (0.03, 0.06),
    "gpt-4-32k-0314": (0.06, 0.12),
    "gpt-4-0613": (0.03, 0.06),
    "gpt-4-32k-0613": (0.06, 0.12),
}

# Read by Completion, never sent: retry settings, the per-call cache seed, templating, pricing.
LEGACY_OPTIONS = frozenset(
    {
        "max_retry_period",
        "retry_wait_time",
        "request_timeout",
        "cache_seed",
        "allow_format_str_template",
        "price",
    }
)
# Newer chat families the 2023 set does not list ("-instruct" models are completion models).
_CHAT_PREFIXES = ("gpt-3.5-turbo", "gpt-35-turbo", "gpt-4", "gpt-5", "o1", "o3", "o4", "chatgpt")


def looks_like_chat_model(model: str, chat_models: frozenset[str] | set[str]) -> bool:
    """Whether ``model`` is served by the chat endpoint: a name in ``chat_models`` (Azure's
    ``gpt-35`` spelling included), or a current chat family that is not an ``-instruct`` model."""
    if model in chat_models or model.replace("gpt-35-turbo", "gpt-3.5-turbo") in chat_models:
        return True
    return model.startswith(_CHAT_PREFIXES) and "instruct" not in model


def construct_params(
    context: Mapping[str, Any] | None,
    config: Mapping[str, Any],
    *,
    chat: bool,
    allow_format_str_template: bool = False,
) -> dict[str, Any]:
    """The request of ``config`` with its templates filled from ``context``: for a chat model a
    ``prompt`` becomes one user message, for a completion model it stays a prompt.

    ``KeyError('model')`` without a model, as AutoGen; ``ValueError`` without a prompt or
    messages, or with both.
    """
    params = dict(config)
    if "model" not in params:
        raise KeyError("model")
    prompt = params.pop("prompt", None)
    messages = params.pop("messages", None)
    if prompt is None and messages is None:
        raise ValueError("Either prompt or messages should be in config for chat models.")
    if prompt is not None and messages is not None:
        raise ValueError("Either prompt or messages should be in config, not both.")
    if messages is not None:
        params["messages"] = _templating.instantiate_messages(
            messages, context, allow_format_str_template
        )
        return params
    filled = _templating.instantiate(prompt, context, allow_format_str_template)
    if chat:
        params["messages"] = [{"role": "user", "content": filled}]
    else:
        params["prompt"] = filled
    return params


@dataclass(frozen=True, slots=True)
class Request:
    """One ``create`` call for one config: the body to send, the client to send it with, and
    ``Completion``'s own options."""

    body: dict[str, Any]
    client_kwargs: dict[str, Any]
    api_type: str | None
    api_version: str | None
    options: dict[str, Any]

    @property
    def chat(self) -> bool:
        return "messages" in self.body


def build_request(
    context: Mapping[str, Any] | None,
    config: Mapping[str, Any],
    *,
    chat_models: frozenset[str] | set[str],
    force_chat: bool,
) -> Request:
    """Sort ``config`` into body, client settings and options, and fill its templates."""
    merged = dict(config)
    if "api_base" in merged:
        merged.setdefault("base_url", merged.pop("api_base"))
    options = {k: merged.pop(k) for k in LEGACY_OPTIONS if k in merged}
    if "timeout" in merged:  # openai>=1's name for request_timeout
        options.setdefault("request_timeout", merged.pop("timeout"))
    client, extras, body = split_config(merged)
    if extras.get("api_type") == RESPONSES:
        # The legacy API only knows the chat and text-completions endpoints: sending the
        # request there would quietly ignore what the config asked for.
        raise ConfigError(
            f"api_type {RESPONSES!r} (OpenAI's Responses API) is not supported by the legacy "
            "Completion / ChatCompletion API: use parley.OpenAIWrapper(config_list=[...]) "
            "(or an agent's llm_config), which sends it to /responses"
        )
    client.pop("max_retries", None)  # Completion's own retry settings apply
    model = body.get("model")
    if model is None:
        raise KeyError("model")
    chat = force_chat or looks_like_chat_model(str(model), chat_models)
    allow = bool(options.get("allow_format_str_template"))
    return Request(
        construct_params(context, body, chat=chat, allow_format_str_template=allow),
        client,
        extras.get("api_type"),
        extras.get("api_version"),
        options,
    )
