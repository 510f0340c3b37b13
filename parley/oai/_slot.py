"""One config of an ``OpenAIWrapper``'s list: its client, its policies, and its requests.

A config entry holds three kinds of keys (see :mod:`parley.oai._config`): the client's settings
build the client once; the rest are the config's stored defaults, merged under every call's
arguments when a request is made for this config. The entry wins over the call, as in AutoGen:
``create(model="x")`` does not override an entry's ``model``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._credentials import remember_environment, remember_in
from ..exceptions import ConfigError
from . import _templating
from ._config import split_config
from ._retry import RetryPolicy
from .providers._registry import make_client, provider_for
from .rate_limiters import TimeRateLimiter

__all__ = ["Attempt", "Slot"]


@dataclass(slots=True)
class Attempt:
    """A request for one config: the body to send and the options that steer it."""

    slot: Slot
    params: dict[str, Any]
    extras: dict[str, Any]


class Slot:
    """A config entry with its client (None until a custom ``model_client_cls`` is registered),
    retry policy and rate limiter."""

    def __init__(self, index: int, entry: dict[str, Any], base_client: dict[str, Any]) -> None:
        client_kwargs, _, _ = split_config(entry)
        self.index = index
        self.entry = entry  # the full entry, as custom clients receive it
        self.defaults = {k: v for k, v in entry.items() if k not in client_kwargs}
        self.client_kwargs = {**base_client, **client_kwargs}
        # The config's credentials (and those its SDK may read from the environment) are
        # scrubbed from every error text, span and page from now on.
        remember_in(self.client_kwargs)
        remember_environment()
        self.placeholder: str | None = entry.get("model_client_cls")
        self.client: Any = None
        provider = provider_for(entry.get("api_type"))
        if self.placeholder is None and provider is not None:
            self.client = make_client(provider, {**self.client_kwargs, "model": entry.get("model")})
        elif self.placeholder is None:
            from .providers._openai import OpenAIClient, missing_credentials

            problem = missing_credentials(self.client_kwargs, entry.get("api_type"))
            if problem:
                raise ConfigError(f"config {index} (model {entry.get('model')!r}): {problem}")
            self.client = OpenAIClient(
                self.client_kwargs,
                api_type=entry.get("api_type"),
                api_version=entry.get("api_version"),
            )
        max_retries = self.client_kwargs.get("max_retries")
        budget = entry.get("retry_budget")
        self.policy = RetryPolicy(
            max_retries=2 if max_retries is None else int(max_retries),
            budget=RetryPolicy.budget if budget is None else float(budget),
        )
        rate = entry.get("api_rate_limit")
        self.limiter = TimeRateLimiter(float(rate)) if rate else None

    def attempt(self, config: Mapping[str, Any]) -> Attempt:
        """The request ``create(**config)`` makes of this config: templates filled, a prompt
        turned into a user message, extras set apart."""
        _, extras, params = _split_call({**config, **self.defaults})
        if ("messages" in params) == ("prompt" in params):
            raise ValueError("Either prompt or messages should be in create config but not both.")
        context = extras.get("context")
        allow = bool(extras.get("allow_format_str_template"))
        if "prompt" in params:
            prompt = _templating.instantiate(params.pop("prompt"), context, allow)
            params["messages"] = _templating.prompt_to_messages(prompt)
        elif context:
            params["messages"] = _templating.instantiate_messages(
                params["messages"], context, allow
            )
        if self.placeholder is None:
            params.pop("model_client_cls", None)
        api_type = extras.get("api_type")
        if api_type and str(api_type).startswith("azure") and isinstance(params.get("model"), str):
            # Azure deployment names cannot hold dots ("gpt-3.5" is deployed as "gpt-35").
            params["model"] = params["model"].replace(".", "")
        return Attempt(self, params, extras)


def _split_call(full: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    client, extras, params = split_config(full)
    # A per-request timeout is a request option; other client settings belong in the config.
    if "timeout" in client:
        params["timeout"] = client.pop("timeout")
    client.pop("max_retries", None)
    if client:
        raise TypeError(
            f"{sorted(client)} configure the model client, not a request: put them in the "
            "llm_config or its config_list entries"
        )
    return client, extras, params
