"""The ``ag-ui`` extra's packages, checked when :mod:`parley.ag_ui` is imported, so that a
missing one is one clear error naming the extra rather than a failure deep inside a request."""

from __future__ import annotations

__all__ = ["INSTALL_HINT"]

INSTALL_HINT = "pip install 'parley[ag-ui]'"

try:
    import ag_ui.core  # noqa: F401
    import starlette  # noqa: F401
    import uvicorn  # noqa: F401
except ImportError as e:  # pragma: no cover - the test environment has the extra
    raise ImportError(
        f"parley.ag_ui needs the ag-ui-protocol package, Starlette and uvicorn, which are not "
        f"all installed ({e}): {INSTALL_HINT}",
        name=e.name,
    ) from e
