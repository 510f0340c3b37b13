"""Validate ``llm_config`` / ``config_list`` entries, and sort their keys into three kinds.

Kinds, as AutoGen's ``OpenAIWrapper`` sorts them: keys that configure the openai *client object* (``api_key``, ``base_url``,
``timeout``, ...), parley/AutoGen's own *extras* that are never sent (``cache_seed``,
``filter_func``, ``price``, ...), and everything else, which is a *request parameter*.

Validation happens once, at construction, with pydantic; the error names the entry and the
field. The caller's dicts are only read.

Errors never show a secret: the input of a field whose name looks like a credential
(``api_key``, ``azure_ad_token``, anything :func:`parley._credentials.looks_secret` names)
is not shown, nor is anything in ``extra_headers``, ``extra_query`` or
``extra_body`` (they pass credentials through under any name), nor an entry that is not a dict.
Secrets the client sends as text must be ``str``: a ``bytes`` key would go out as ``b'...'``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from .._credentials import looks_secret
from ..exceptions import ConfigError
from .providers._registry import PROVIDERS, provider_for

__all__ = [
    "EXTRA_KWARGS",
    "client_kwarg_names",
    "split_config",
    "validate_config_list",
]

# parley/AutoGen options: read by the wrapper, never sent to the API.
EXTRA_KWARGS = frozenset(
    {
        "agent",
        "cache",
        "cache_seed",
        "filter_func",
        "allow_format_str_template",
        "context",
        "api_version",
        "api_type",
        "tags",
        "price",
        "api_rate_limit",
        "retry_budget",
        "azure_ad_token_provider_scope",
    }
)


# Keyword-only constructor parameters of openai's OpenAI and AzureOpenAI (1.x to 3.x), listed
# rather than read from the SDK so that building an agent does not import openai (half a second).
# api_version is missing on purpose: it is an extra, routed to Azure clients only.
_CLIENT_KWARGS = frozenset(
    {
        "api_key",
        "organization",
        "project",
        "webhook_secret",
        "base_url",
        "websocket_base_url",
        "timeout",
        "max_retries",
        "default_headers",
        "default_query",
        "http_client",
        "_strict_response_validation",
        "azure_endpoint",
        "azure_deployment",
        "azure_ad_token",
        "azure_ad_token_provider",
        "admin_api_key",
        "data_residency",
        "provider",
        "workload_identity",
    }
)


# Credentials the openai client sends as text; anything but a str would be sent as its repr.
_TEXT_SECRETS = frozenset({"api_key", "azure_ad_token", "admin_api_key", "webhook_secret"})
_BINARY = (bytes, bytearray, memoryview)
# Passed through to the request as they are, and so often carrying credentials under any name.
_OPAQUE_FIELDS = frozenset({"extra_headers", "extra_query", "extra_body"})
_NOT_SHOWN = "the value is not shown: it may hold a secret"


def client_kwarg_names() -> frozenset[str]:
    """The config keys that configure the openai client object rather than a request."""
    return _CLIENT_KWARGS


@functools.lru_cache(maxsize=1)
def _entry_model() -> Any:
    """The pydantic model of an entry, built on first use (pydantic stays out of import parley)."""
    from pydantic import BaseModel, ConfigDict, Field, StrictStr, field_validator

    class ConfigEntry(BaseModel):
        """The fields parley checks in a config entry; any other key passes through unchanged."""

        model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)

        model: str | None = None
        api_key: str | None = None
        base_url: str | None = None
        api_type: str | None = None
        api_version: str | None = None
        tags: list[str] | None = None
        price: list[float] | float | None = None
        api_rate_limit: float | None = Field(default=None, gt=0)
        model_client_cls: str | None = None
        max_retries: int | None = Field(default=None, ge=0)
        retry_budget: float | None = Field(default=None, ge=0)
        timeout: float | None = Field(default=None, gt=0)
        temperature: float | None = Field(default=None, ge=0, le=2)
        top_p: float | None = Field(default=None, ge=0, le=1)
        max_tokens: int | None = Field(default=None, gt=0)
        n: int | None = Field(default=None, ge=1)
        cache_seed: int | str | None = None
        allow_format_str_template: bool | None = None
        extra_headers: dict[StrictStr, StrictStr] | None = None
        extra_query: dict[StrictStr, Any] | None = None
        extra_body: dict[StrictStr, Any] | None = None

        @field_validator("price")
        @classmethod
        def _price_shape(cls, v: list[float] | float | None) -> list[float] | float | None:
            if isinstance(v, list) and (len(v) != 2 or any(p < 0 for p in v)):
                raise ValueError(
                    "price must be [prompt_price_per_1k, completion_price_per_1k], both >= 0"
                )
            if isinstance(v, float) and v < 0:
                raise ValueError("price must be >= 0")
            return v

        @field_validator("api_type")
        @classmethod
        def _known_api_type(cls, v: str | None) -> str | None:
            if v is None or v == "openai" or v.startswith("azure") or provider_for(v):
                return v
            names = ", ".join(repr(n) for p in PROVIDERS for n in p.names)
            raise ValueError(
                f"unknown api_type {v!r}: expected 'openai', 'azure' or one of {names}"
            )

    return ConfigEntry


def _describe(error: Any, where: str) -> str:
    problems = []
    for e in error.errors():
        loc = e["loc"]
        msg = e["msg"].removeprefix("Value error, ")
        field = ".".join(str(p) for p in loc) or "(entry)"
        if (loc and loc[0] in _OPAQUE_FIELDS) or any(looks_secret(part) for part in loc):
            shown = _NOT_SHOWN
        else:
            shown = f"got {_masked(e.get('input'), 0)!r}"
        problems.append(f"{where}: field {field!r}: {msg} ({shown})")
    return "; ".join(problems)


class _Hidden:
    def __repr__(self) -> str:
        return "<not shown>"


def _masked(value: Any, depth: int) -> Any:
    """``value`` for an error message, with what lies under credential-like keys hidden."""
    if depth > 8:
        return _Hidden()
    if isinstance(value, Mapping):
        return {
            k: _Hidden() if looks_secret(k) or k in _OPAQUE_FIELDS else _masked(v, depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        masked = [_masked(v, depth + 1) for v in value]
        return tuple(masked) if isinstance(value, tuple) else masked
    return value


def _check_secrets(entry: Mapping[str, Any], where: str) -> None:
    for key, value in entry.items():
        if value is None:
            continue
        if (key in _TEXT_SECRETS and not isinstance(value, str)) or (
            isinstance(value, _BINARY) and looks_secret(key)
        ):
            hint = ", decode it first" if isinstance(value, _BINARY) else ""
            raise ConfigError(
                f"{where}: field {key!r} must be a str, got {type(value).__name__}{hint} "
                f"({_NOT_SHOWN})"
            )


def validate_entry(entry: Any, where: str, *, require_model: bool) -> dict[str, Any]:
    """A validated shallow copy of one entry; ConfigError naming ``where`` and the field."""
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{where} must be a dict, got {type(entry).__name__} ({_NOT_SHOWN})")
    odd_keys = sorted({type(k).__name__ for k in entry if not isinstance(k, str)})
    if odd_keys:
        raise ConfigError(f"{where}: keys must be strings, got keys of type {', '.join(odd_keys)}")
    _check_secrets(entry, where)
    from pydantic import ValidationError

    try:
        _entry_model().model_validate(dict(entry))
    except ValidationError as e:
        raise ConfigError(_describe(e, where)) from None
    if require_model and not entry.get("model") and not entry.get("model_client_cls"):
        raise ConfigError(
            f"{where}: field 'model' is missing: every config_list entry names its model"
        )
    return dict(entry)


def validate_config_list(config_list: Any) -> list[dict[str, Any]]:
    """Validated shallow copies of the entries of ``config_list``."""
    if isinstance(config_list, (str, bytes)) or not isinstance(config_list, Sequence):
        raise ConfigError(
            f"config_list must be a list of dicts, got {type(config_list).__name__}; "
            "load a file with parley.config_list_from_json(...)"
        )
    return [
        validate_entry(e, f"config_list[{i}]", require_model=True)
        for i, e in enumerate(config_list)
    ]


def split_config(
    config: Mapping[str, Any],
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(client kwargs, extras, request params) of a merged config. A native provider's client
    keys (its credentials, region, host: :mod:`parley.oai.providers._registry`) are client kwargs."""
    client_names = client_kwarg_names()
    provider = provider_for(config.get("api_type"))
    if provider is not None and provider.client_keys:
        client_names = client_names | provider.client_keys
    client: dict[str, Any] = {}
    extras: dict[str, Any] = {}
    params: dict[str, Any] = {}
    for key, value in config.items():
        if key in EXTRA_KWARGS:
            extras[key] = value
        elif key in client_names:
            client[key] = value
        else:
            params[key] = value
    return client, extras, params
