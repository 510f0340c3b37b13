"""The ``mcpServers`` configuration Claude Desktop, Cursor and Claude Code users already have,
checked once into typed, immutable :class:`ServerConfig` entries.

An entry is a command (stdio: ``command``, ``args``, ``env``, ``cwd``) or a URL (``url``,
``headers``; streamable HTTP unless ``type``/``transport`` says ``"sse"``). parley adds one key,
``timeout``: the seconds a tool call may take. The caller's dicts are read, never changed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..exceptions import MCPConfigError

__all__ = ["ServerConfig", "load_config"]

Transport = Literal["stdio", "http", "sse"]

# Spellings of the transport used by the clients whose files users bring.
_TRANSPORTS: dict[str, Transport] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamable_http": "http",
    "streamablehttp": "http",
    "sse": "sse",
}
_KNOWN_KEYS = frozenset(
    {"command", "args", "env", "cwd", "url", "headers", "type", "transport", "timeout"}
)
# Keys other clients write that do not change how a server is reached.
_IGNORED_KEYS = frozenset({"disabled", "autoApprove", "alwaysAllow", "description", "envFile"})


@dataclass(frozen=True)
class ServerConfig:
    """One MCP server: how to reach it and how long a tool call may take (None: no limit)."""

    name: str
    transport: Transport
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float | None = None

    def __repr__(self) -> str:
        # Environment values and headers often hold keys: never shown.
        where = self.url if self.command is None else " ".join((self.command, *self.args))
        return f"ServerConfig({self.name!r}, {self.transport}, {where!r})"


def load_config(config: Mapping[str, Any] | str | os.PathLike[str]) -> list[ServerConfig]:
    """The servers of an ``{"mcpServers": {...}}`` dict or JSON file (a bare ``{name: entry}``
    mapping is accepted too), in their order; disabled entries (``"disabled": true``) skipped."""
    if isinstance(config, (str, os.PathLike)):
        path = Path(config)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as e:
            raise MCPConfigError(str(path), f"cannot read the config file: {e}") from e
    else:
        data = config
    if not isinstance(data, Mapping):
        raise MCPConfigError(
            "<config>", f"the config must be a JSON object, got {type(data).__name__}"
        )
    servers = data.get("mcpServers", data)
    if not isinstance(servers, Mapping):
        raise MCPConfigError("<config>", "'mcpServers' must be an object of server entries")
    return [
        _entry(str(name), entry)
        for name, entry in servers.items()
        if not (isinstance(entry, Mapping) and entry.get("disabled") is True)
    ]


def _entry(name: str, entry: Any) -> ServerConfig:
    if not isinstance(entry, Mapping):
        raise MCPConfigError(name, f"the entry must be an object, got {type(entry).__name__}")
    unknown = set(entry) - _KNOWN_KEYS - _IGNORED_KEYS
    if unknown:
        raise MCPConfigError(name, f"unknown keys {sorted(unknown)}; known: {sorted(_KNOWN_KEYS)}")
    timeout = entry.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0
    ):
        raise MCPConfigError(
            name, f"'timeout' must be a positive number of seconds, got {timeout!r}"
        )
    transport = _transport(name, entry)
    if transport == "stdio":
        return ServerConfig(
            name,
            "stdio",
            command=_text(name, entry, "command"),
            args=tuple(_strings(name, entry.get("args", []), "args")),
            env=dict(_string_map(name, entry.get("env", {}), "env")),
            cwd=None if entry.get("cwd") is None else _text(name, entry, "cwd"),
            timeout=None if timeout is None else float(timeout),
        )
    url = _text(name, entry, "url")
    if not url.startswith(("http://", "https://")):
        raise MCPConfigError(name, f"'url' must be an http(s) URL, got {url!r}")
    return ServerConfig(
        name,
        transport,
        url=url,
        headers=dict(_string_map(name, entry.get("headers", {}), "headers")),
        timeout=None if timeout is None else float(timeout),
    )


def _transport(name: str, entry: Mapping[str, Any]) -> Transport:
    given = entry.get("transport", entry.get("type"))
    if given is None:
        if "command" in entry:
            return "stdio"
        if "url" in entry:
            return "http"
        raise MCPConfigError(name, "the entry needs 'command' (stdio) or 'url' (HTTP, SSE)")
    kind = _TRANSPORTS.get(str(given).lower())
    if kind is None:
        raise MCPConfigError(
            name, f"unknown transport {given!r}; use 'stdio', 'http' (streamable HTTP) or 'sse'"
        )
    if (kind == "stdio") != ("command" in entry):
        raise MCPConfigError(name, f"transport {given!r} does not fit the entry's keys")
    return kind


def _text(name: str, entry: Mapping[str, Any], key: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value:
        raise MCPConfigError(name, f"{key!r} must be a non-empty string, got {value!r}")
    return value


def _strings(name: str, value: Any, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise MCPConfigError(name, f"{key!r} must be a list of strings")
    return list(value)


def _string_map(name: str, value: Any, key: str) -> Mapping[str, str]:
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise MCPConfigError(name, f"{key!r} must be an object of strings")
    return value
