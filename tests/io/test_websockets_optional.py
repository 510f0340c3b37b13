"""IOWebsockets without the optional websockets package installed."""

from __future__ import annotations

import sys

import pytest

from parley.io import IOWebsockets


@pytest.fixture
def no_websockets(monkeypatch: pytest.MonkeyPatch) -> None:
    # A None entry in sys.modules makes the import fail exactly as if the package were missing.
    for name in [m for m in sys.modules if m == "websockets" or m.startswith("websockets.")]:
        monkeypatch.delitem(sys.modules, name)
    for name in ("websockets", "websockets.sync", "websockets.sync.server"):
        monkeypatch.setitem(sys.modules, name, None)


@pytest.mark.usefixtures("no_websockets")
def test_constructing_names_the_missing_package() -> None:
    with pytest.raises(
        ImportError, match=r"optional 'websockets' package .* pip install websockets"
    ):
        IOWebsockets(object())  # type: ignore[arg-type]


@pytest.mark.usefixtures("no_websockets")
def test_running_a_server_names_the_missing_package() -> None:
    with (
        pytest.raises(ImportError, match=r"pip install websockets"),
        IOWebsockets.run_server_in_thread(on_connect=lambda io: None, port=0),
    ):
        pass  # pragma: no cover
