"""Tiny real packages for the tests that install user functions' requirements with pip, offline.

:func:`make_wheel` writes a pure-Python wheel by hand (a zip with the ``.dist-info`` files pip
reads); :func:`offline_pip` points pip at a folder of them and nowhere else; :func:`closed_port`
is a loopback port nothing listens on, for an index that cannot be reached.
"""

from __future__ import annotations

import base64
import hashlib
import socket
import zipfile
from pathlib import Path

import pytest

TINY_MODULE = "def double(x):\n    return 2 * x\n"


def make_wheel(
    folder: Path, name: str, version: str, files: dict[str, str], requires: tuple[str, ...] = ()
) -> Path:
    """A ``py3-none-any`` wheel of ``files`` (archive path -> text) in ``folder``."""
    dist_info = f"{name}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    metadata += "".join(f"Requires-Dist: {r}\n" for r in requires)
    entries = {
        **files,
        f"{dist_info}/METADATA": metadata,
        f"{dist_info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: parley-tests\nRoot-Is-Purelib: true\n"
            "Tag: py3-none-any\n"
        ),
    }
    record = []
    for path, text in entries.items():
        data = text.encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}\n")
    entries[f"{dist_info}/RECORD"] = "".join(record) + f"{dist_info}/RECORD,,\n"
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in entries.items():
            archive.writestr(path, text)
    return wheel


def tiny_wheels(folder: Path) -> Path:
    """``folder`` holding the wheel of ``tinypkg`` 1.0 (``tinypkg.double``)."""
    make_wheel(folder, "tinypkg", "1.0", {"tinypkg.py": TINY_MODULE})
    return folder


def offline_pip(monkeypatch: pytest.MonkeyPatch, wheels: Path) -> None:
    """pip (run with this process's environment) finds packages in ``wheels`` only."""
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)
    monkeypatch.delenv("PIP_EXTRA_INDEX_URL", raising=False)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))


def unreachable_index(monkeypatch: pytest.MonkeyPatch) -> str:
    """pip's only index is a loopback port nothing listens on; its URL."""
    url = f"http://127.0.0.1:{closed_port()}/simple"
    monkeypatch.setenv("PIP_INDEX_URL", url)
    for name in ("PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX", "PIP_FIND_LINKS"):
        monkeypatch.delenv(name, raising=False)
    return url


def closed_port() -> int:
    """A loopback port that was free a moment ago (connections to it are refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port
