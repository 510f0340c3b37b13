"""The native model clients, chosen by a config entry's ``api_type`` (AutoGen's rule: the first
provider whose name the ``api_type`` starts with).

Each provider's client lives in its own module at AutoGen's path (``parley.oai.anthropic``'s
``AnthropicClient``, ...) and is imported only when a config names it, so ``import parley``
never imports a provider SDK. A missing SDK raises ``ImportError`` naming the extra to install.

A provider also names its *client keys*: the entry keys that configure the client (credentials,
endpoints, regions) rather than a request. They go to the client's constructor and are kept out
of the request parameters, so they never reach a cache key, a log or a trace.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["PROVIDERS", "RESPONSES", "Provider", "make_client", "provider_for"]

RESPONSES = "responses"
"""The ``api_type`` of OpenAI's Responses API (AG2's name): the openai client's settings,
requests sent to ``/responses`` (:mod:`parley.oai.providers._openai_responses`)."""

_AWS_KEYS = frozenset(
    {"aws_access_key", "aws_secret_key", "aws_session_token", "aws_region", "aws_profile_name"}
)


@dataclass(frozen=True)
class Provider:
    """One native provider: its ``api_type`` prefixes, client class and extra."""

    names: tuple[str, ...]  # api_type prefixes, as AutoGen matches them
    module: str  # below parley.oai
    cls: str
    extra: str  # pip install 'parley[<extra>]'
    client_keys: frozenset[str] = frozenset()

    @property
    def name(self) -> str:
        return self.names[0]

    @property
    def install_hint(self) -> str:
        return f"pip install 'parley[{self.extra}]'"


PROVIDERS: tuple[Provider, ...] = (
    Provider(
        ("anthropic",),
        "anthropic",
        "AnthropicClient",
        "anthropic",
        _AWS_KEYS | {"gcp_project_id", "gcp_region", "gcp_auth_token"},
    ),
    Provider(
        ("google", "gemini"),
        "gemini",
        "GeminiClient",
        "gemini",
        frozenset(
            {
                "project_id",
                "location",
                "google_application_credentials",
                "credentials",
                "vertexai",
                "use_vertexai",
            }
        ),
    ),
    Provider(("bedrock",), "bedrock", "BedrockClient", "bedrock", _AWS_KEYS),
    Provider(("ollama",), "ollama", "OllamaClient", "ollama", frozenset({"client_host"})),
    Provider(("mistral",), "mistral", "MistralAIClient", "mistral"),
    Provider(("together",), "together", "TogetherClient", "together"),
    Provider(("groq",), "groq", "GroqClient", "groq"),
    Provider(("cohere",), "cohere", "CohereClient", "cohere"),
    Provider(("cerebras",), "cerebras", "CerebrasClient", "cerebras"),
)


def provider_for(api_type: Any) -> Provider | None:
    """The native provider an ``api_type`` selects; None for OpenAI, Azure and anything else."""
    if not isinstance(api_type, str):
        return None
    for provider in PROVIDERS:
        if api_type.startswith(provider.names):
            return provider
    return None


def make_client(provider: Provider, config: Mapping[str, Any]) -> Any:
    """``provider``'s client built from ``config`` (the entry's model, client settings and
    credentials); ImportError naming the extra when its SDK is not installed."""
    module = importlib.import_module(f"parley.oai.{provider.module}")
    cls = getattr(module, provider.cls)
    return cls(**dict(config))
