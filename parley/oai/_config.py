"""Validate ``llm_config`` / ``config_list`` entries, and sort their keys into three kinds.

Kinds, as AutoGen's ``OpenAIWrapper`` sorts them: keys that configure the openai *client object* (``api_key``, ``base_url``,
``timeout``, ...), parley/AutoGen's own *extras* that are never sent (``cache_seed``,
``filter_func``, ``price``, ...), and everything else, which is a *request parameter*.

Validation happens once, at construction, with pydantic; the error names the entry and the
field. The caller's dicts are only read.

Provider prompt caching: ``prompt_cache`` (a bool) and ``prompt_cache_ttl`` (``"5m"`` or
``"1h"``) are extras handed to a native provider's client (Anthropic places cache
breakpoints); OpenAI's ``prompt_cache_key`` (a str) and ``prompt_cache_retention``
(``"in-memory"`` or ``"24h"``) are request parameters, sent as they are.

Errors never show a secret: the input of a field whose name looks like a credential
(``api_key``, ``azure_ad_token``, anything :func:`parley._credentials.looks_secret` names)
is not shown, nor is anything in ``extra_headers``, ``extra_query`` or
``extra_body`` (they pass credentials through under any name), nor an entry that is not a dict.
Secrets the client sends as text must be ``str``: a ``bytes`` key would go out as ``b'...'``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from .._credentials import looks_secret
from ..exceptions import ConfigError
from ._structured import OutputSchema, output_schema_of
from .providers._registry import PROVIDERS, RESPONSES, provider_for

__all__ = [
    "EXTRA_KWARGS",
    "PROMPT_CACHE_KEYS",
    "Entry",
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
        "model_profile",
        "structured_output_retries",
        # Provider prompt caching (Anthropic's breakpoints): the provider's client reads them.
        "prompt_cache",
        "prompt_cache_ttl",
    }
)
PROMPT_CACHE_KEYS = ("prompt_cache", "prompt_cache_ttl")


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


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Entry:
    """A checked config entry, sorted and typed once where it enters (:func:`validate_entry`):
    the wrapper reads these attributes, never the dict again.

    Immutable: the mappings are read-only views of parley's own shallow copy, so neither the
    caller's dict nor this object changes later. Its repr names the keys it holds but shows no
    value except ``model`` and ``api_type``: an entry holds credentials.
    """

    model: str | None
    api_type: str | None
    api_version: str | None
    #: The class name of a custom model client, registered later with ``register_model_client``.
    model_client_cls: str | None
    max_retries: int | None
    retry_budget: float | None
    api_rate_limit: float | None
    #: The keys that configure the model client object (with an llm_config's own beneath).
    client_kwargs: Mapping[str, Any]
    #: parley/AutoGen's options, never sent (``cache_seed``, ``price``, ``filter_func``, ...).
    extras: Mapping[str, Any]
    #: The request parameters sent with every request for this entry (a typed
    #: ``response_format`` is not among them: it is :attr:`output_schema`).
    params: Mapping[str, Any]
    #: Every key of the entry as given (an llm_config's client keys excepted, as in AutoGen).
    given: Mapping[str, Any]
    #: The entry's typed ``response_format``, normalised once (None: untyped replies).
    output_schema: OutputSchema | None = None

    @classmethod
    def of(cls, items: dict[str, Any], base_client: Mapping[str, Any] | None = None) -> Entry:
        """The entry of checked ``items`` (kept: pass a dict nobody else holds), its client
        keys over ``base_client``."""
        client, extras, params = split_config(items)
        schema = output_schema_of(params.get("response_format"))
        if schema is not None:
            del params["response_format"]
        if base_client:
            client = {**base_client, **client}
        retries = client.get("max_retries")
        budget = items.get("retry_budget")
        rate = items.get("api_rate_limit")
        return cls(
            model=items.get("model"),
            api_type=items.get("api_type"),
            api_version=items.get("api_version"),
            model_client_cls=items.get("model_client_cls"),
            max_retries=None if retries is None else int(retries),
            retry_budget=None if budget is None else float(budget),
            api_rate_limit=float(rate) if rate else None,
            client_kwargs=MappingProxyType(client),
            extras=MappingProxyType(extras),
            params=MappingProxyType(params),
            given=MappingProxyType(items),
            output_schema=schema,
        )

    def under(self, base: Entry) -> Entry:
        """This entry with ``base`` (an llm_config's top level) beneath: its client keys
        configure the client, its other keys are defaults this entry's own override."""
        own = {k: v for k, v in base.given.items() if k not in base.client_kwargs}
        return Entry.of({**own, **self.given}, base.client_kwargs)

    def as_dict(self) -> dict[str, Any]:
        """A fresh dict of the entry's keys, as a custom model client receives it."""
        return dict(self.given)

    def __repr__(self) -> str:
        return (
            f"Entry(model={self.model!r}, api_type={self.api_type!r}, keys={sorted(self.given)!r})"
        )


def client_kwarg_names() -> frozenset[str]:
    """The config keys that configure the openai client object rather than a request."""
    return _CLIENT_KWARGS


@functools.lru_cache(maxsize=1)
def _entry_model() -> Any:
    """The pydantic model of an entry, built on first use (pydantic stays out of import parley)."""
    from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, field_validator

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
        structured_output_retries: int | None = Field(default=None, ge=0)
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
        prompt_cache: StrictBool | None = None
        prompt_cache_ttl: Literal["5m", "1h"] | None = None
        prompt_cache_key: StrictStr | None = None
        prompt_cache_retention: Literal["in-memory", "24h"] | None = None

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
            if v is None or v in ("openai", RESPONSES) or v.startswith("azure") or provider_for(v):
                return v
            names = ", ".join(repr(n) for p in PROVIDERS for n in p.names)
            raise ValueError(
                f"unknown api_type {v!r}: expected 'openai', 'azure', 'responses' or one of {names}"
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


def validate_entry(entry: Any, where: str, *, require_model: bool) -> Entry:
    """The checked entry, typed; ConfigError naming ``where`` and the field."""
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{where} must be a dict, got {type(entry).__name__} ({_NOT_SHOWN})")
    odd_keys = sorted({type(k).__name__ for k in entry if not isinstance(k, str)})
    if odd_keys:
        raise ConfigError(f"{where}: keys must be strings, got keys of type {', '.join(odd_keys)}")
    _check_secrets(entry, where)
    from pydantic import ValidationError

    items = dict(entry)
    try:
        _entry_model().model_validate(items)
    except ValidationError as e:
        raise ConfigError(_describe(e, where)) from None
    try:
        output_schema_of(items.get("response_format"))
    except ConfigError as e:
        raise ConfigError(f"{where}: {e}") from None
    if require_model and not items.get("model") and not items.get("model_client_cls"):
        raise ConfigError(
            f"{where}: field 'model' is missing: every config_list entry names its model"
        )
    return Entry.of(items)


def validate_config_list(config_list: Any) -> list[Entry]:
    """The checked entries of ``config_list``."""
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
    config: Mapping[str, Any], *, provider_from: Mapping[str, Any] | None = None
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(client kwargs, extras, request params) of a config. A native provider's client keys
    (its credentials, region, host: :mod:`parley.oai.providers._registry`) are client kwargs;
    the provider is named by ``provider_from``'s ``api_type`` (default: the config's own)."""
    client_names = client_kwarg_names()
    provider = provider_for((config if provider_from is None else provider_from).get("api_type"))
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
