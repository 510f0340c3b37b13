"""Addresses: whether a host a server binds only reaches this machine."""

from __future__ import annotations

import ipaddress

__all__ = ["http_url", "is_loopback"]


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) only reaches this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def http_url(host: str, port: int, rest: str = "/") -> str:
    """The ``http://`` address of a server bound to ``host``:``port`` (a wildcard address
    becomes this machine's loopback, an IPv6 address gets its brackets), then ``rest``."""
    host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}{rest}"
