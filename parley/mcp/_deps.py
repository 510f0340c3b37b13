"""The ``mcp`` extra, checked when :mod:`parley.mcp` is imported, so that a missing SDK is one
clear error naming the extra rather than a failure deep inside a connection."""

from __future__ import annotations

__all__ = ["INSTALL_HINT"]

INSTALL_HINT = "pip install 'parley[mcp]'"

try:
    import mcp  # noqa: F401
except ImportError as e:  # pragma: no cover - the test environment has the extra
    raise ImportError(
        f"parley.mcp needs the MCP SDK (the 'mcp' package), which is not installed ({e}): "
        f"{INSTALL_HINT}",
        name=e.name,
    ) from e
