"""Building an image from Debian's packages: mmdebstrap makes a root file system, the engine
imports it. No image registry is contacted, only a Debian mirror (and, for a recipe with
``wheels``, the host's pip and its package index).

mmdebstrap runs in ``root`` mode as root and in ``unshare`` mode otherwise (which needs
unprivileged user namespaces); the customize hooks run inside the finished file system before
it is packed. Documentation, manuals and translations are left out to keep the image small.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ...exceptions import ImageBuildError
from ._recipes import PACKAGES_LABEL, Recipe, packages_label

if TYPE_CHECKING:
    from docker import DockerClient

__all__ = ["build_from_debian", "default_suite"]

_PIP_SECONDS = 300
_MMDEBSTRAP_SECONDS = 1800
_EXCLUDED_DOCS = (
    "--dpkgopt=path-exclude=/usr/share/man/*",
    "--dpkgopt=path-exclude=/usr/share/info/*",
    "--dpkgopt=path-exclude=/usr/share/locale/*",
    "--dpkgopt=path-exclude=/usr/share/doc/*",
    "--dpkgopt=path-include=/usr/share/doc/*/copyright",
)
# Run by mmdebstrap's hook shell in the finished root file system ($1): the `sandbox` user the
# code runs as, written directly so that no passwd tooling is needed and the ids are fixed, and
# /workspace owned by it.
_USER_HOOKS = (
    'echo "sandbox:x:1000:1000:parley sandbox:/home/sandbox:/bin/sh" >> "$1/etc/passwd"',
    'echo "sandbox:x:1000:" >> "$1/etc/group"',
    'echo "sandbox:*:19000:0:99999:7:::" >> "$1/etc/shadow"',
    'mkdir -p "$1/home/sandbox" "$1/workspace" && chown 1000:1000 "$1/home/sandbox" "$1/workspace"',
    'rm -rf "$1/var/cache/apt/"* "$1/var/lib/apt/lists/"* "$1/var/log/"*.log',
)
_SITE = "/usr/lib/python3/dist-packages"


def default_suite() -> str:
    """This machine's Debian release if it runs Debian, else bookworm."""
    try:
        fields = dict(
            line.split("=", 1)
            for line in Path("/etc/os-release").read_text().splitlines()
            if "=" in line
        )
    except OSError:
        return "bookworm"
    if fields.get("ID", "").strip('"') == "debian":
        codename = fields.get("VERSION_CODENAME", "").strip('"')
        if codename:
            return codename
    return "bookworm"


def build_from_debian(
    client: DockerClient,
    recipe: Recipe,
    tag: str,
    *,
    packages: Sequence[str],
    suite: str | None,
    mirror: str | None,
    log: Callable[[str], None],
) -> str:
    """Build and tag the image; its id. Raises :class:`ImageBuildError` saying what is missing."""
    mmdebstrap = shutil.which("mmdebstrap")
    if mmdebstrap is None:
        raise ImageBuildError(
            "building the image from Debian's packages needs mmdebstrap: "
            "apt-get install mmdebstrap (or build where an image registry is reachable)"
        )
    suite = suite or default_suite()
    wanted = [*recipe.debian_packages, *packages]
    log(f"building {tag} from Debian {suite} ({mirror or 'default mirror'}): {', '.join(wanted)}")
    with tempfile.TemporaryDirectory(prefix="parley-image-") as scratch:
        hooks = list(_USER_HOOKS)
        if recipe.wheels:
            unpacked = Path(scratch, "site")
            _unpack_wheels(recipe.wheels, Path(scratch, "wheels"), unpacked, log)
            hooks.insert(0, f"copy-in {' '.join(_quoted(p) for p in unpacked.iterdir())} {_SITE}")
        rootfs = Path(scratch, "rootfs.tar")
        command = [
            mmdebstrap,
            "--variant=minbase",
            f"--mode={'root' if os.geteuid() == 0 else 'unshare'}",
            "--format=tar",
            f"--include={','.join(wanted)}",
            *_EXCLUDED_DOCS,
            *(f"--customize-hook={hook}" for hook in hooks),
            suite,
            str(rootfs),
            *([mirror] if mirror else []),
        ]
        _run(command, "mmdebstrap", _MMDEBSTRAP_SECONDS)
        log("importing the root file system into the Docker engine")
        from docker.utils import parse_repository_tag

        repository, version = parse_repository_tag(tag)
        result = client.api.import_image_from_file(
            str(rootfs),
            repository=repository,
            tag=version or "latest",
            changes=_changes(recipe, packages),
        )
    image_id = _imported_id(result)
    if image_id is None:
        raise ImageBuildError(f"the Docker engine did not import the root file system: {result}")
    return image_id


def _changes(recipe: Recipe, packages: Sequence[str]) -> list[str]:
    """The Dockerfile instructions a plain root file system lacks."""
    quoted = ", ".join(f'"{part}"' for part in recipe.cmd)
    return [
        f'LABEL {PACKAGES_LABEL}="{packages_label(packages)}"',
        f"CMD [{quoted}]",
        "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "ENV LANG=C.UTF-8",
        "ENV PYTHONUNBUFFERED=1",
        "WORKDIR /workspace",
        *(f"EXPOSE {port}" for port in recipe.expose),
    ]


def _unpack_wheels(
    requirements: Sequence[str], wheels: Path, site: Path, log: Callable[[str], None]
) -> None:
    """Fetch pure-Python wheels with the host's pip (its index, cache and configuration) and
    unpack them, as pip would install them, into ``site``."""
    log(f"fetching {', '.join(requirements)} with pip")
    _run(
        [
            sys.executable, "-m", "pip", "download", "--disable-pip-version-check",
            "--no-deps", "--only-binary=:all:", "--dest", str(wheels), *requirements,
        ],
        "pip download",
        _PIP_SECONDS,
        hint="pip must reach a package index (or set PIP_FIND_LINKS to a folder holding the "
        "wheels) to build this image from Debian's packages",
    )  # fmt: skip
    site.mkdir()
    for wheel in wheels.glob("*.whl"):
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(site)


def _run(command: list[str], what: str, timeout: float, hint: str = "") -> None:
    try:
        done = subprocess.run(
            command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired as error:
        raise ImageBuildError(f"{what} did not finish within {timeout:g} s") from error
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-15:])
        raise ImageBuildError(
            f"{what} failed (exit code {done.returncode}){'; ' + hint if hint else ''}:\n{tail}"
        )


def _quoted(path: Path) -> str:
    text = str(path)
    if any(c.isspace() or c in "'\"\\" for c in text):
        raise ImageBuildError(f"unexpected characters in a temporary path: {text!r}")
    return text


def _imported_id(result: object) -> str | None:
    """The image id in the engine's answer to an import (one JSON document per line)."""
    import json

    for line in str(result).splitlines():
        try:
            status = json.loads(line).get("status", "")
        except (ValueError, AttributeError):
            continue
        if isinstance(status, str) and status.startswith("sha256:"):
            return status.removeprefix("sha256:")
    return None
