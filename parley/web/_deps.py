"""The ``web`` extra's packages, checked when :mod:`parley.web` is imported, so that a missing
one is one clear error naming the extra rather than a failure deep inside the server."""

from __future__ import annotations

__all__ = ["INSTALL_HINT"]

INSTALL_HINT = "pip install 'parley[web]'"

try:
    import starlette  # noqa: F401
    import uvicorn  # noqa: F401
except ImportError as e:  # pragma: no cover - the test environment has the extra
    raise ImportError(
        f"parley.web needs Starlette and uvicorn, which are not installed ({e}): {INSTALL_HINT}",
        name=e.name,
    ) from e
