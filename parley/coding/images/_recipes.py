"""What goes into each of parley's images, whichever way it is built.

An image has one recipe and two ways to be made (``parley.coding.images``): a Dockerfile shipped
in this package (``dockerfiles/``), built over ``python:3-slim`` where a registry can be reached,
or a Debian root file system made by mmdebstrap from Debian's packages and imported, where none
can. Both give the same shape: Python 3 as ``python``, the non-root user ``sandbox`` (uid/gid
1000) owning ``/workspace``, the working directory.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..docker._engine import PARLEY_IMAGE, PARLEY_JUPYTER_IMAGE

__all__ = ["JUPYTER", "RECIPES", "SANDBOX", "Recipe"]


@dataclass(frozen=True)
class Recipe:
    """One image parley builds."""

    kind: str
    """``"sandbox"`` (code execution) or ``"jupyter"`` (the kernel gateway)."""
    default_tag: str
    tag_env: str
    """The environment variable naming the image parley uses, e.g. ``PARLEY_SANDBOX_IMAGE``."""
    dockerfile: str
    """The file in ``dockerfiles/`` of the registry route."""
    debian_packages: tuple[str, ...]
    """The Debian route's packages, on top of the ``minbase`` variant."""
    wheels: tuple[str, ...] = ()
    """Pure-Python distributions Debian lacks, fetched by the host's pip (the Debian route
    unpacks them into ``/usr/lib/python3/dist-packages``)."""
    cmd: tuple[str, ...] = ("/bin/sh",)
    expose: tuple[str, ...] = ()
    smoke_test: str = "import os, sys; print(os.getuid(), sys.version_info[0])"
    """Python run in the new image as the sandbox user without network; must print ``1000 3``."""


SANDBOX = Recipe(
    kind="sandbox",
    default_tag=PARLEY_IMAGE,
    tag_env="PARLEY_SANDBOX_IMAGE",
    dockerfile="sandbox.Dockerfile",
    debian_packages=("python3", "python-is-python3", "procps", "ca-certificates"),
)

# Debian 12's Jupyter stack is notebook 6 / jupyter_client 7, which kernel gateway 2.5 (the last
# release before it moved to jupyter_server 2) runs on; the gateway itself is not in Debian.
JUPYTER = Recipe(
    kind="jupyter",
    default_tag=PARLEY_JUPYTER_IMAGE,
    tag_env="PARLEY_JUPYTER_IMAGE",
    dockerfile="jupyter.Dockerfile",
    debian_packages=(
        *SANDBOX.debian_packages,
        "python3-ipykernel",
        "python3-jupyter-client",
        "python3-notebook",
        "python3-requests",
    ),
    wheels=("jupyter_kernel_gateway==2.5.2",),
    cmd=(
        "python",
        "-m",
        "kernel_gateway",
        "--KernelGatewayApp.ip=0.0.0.0",
        "--KernelGatewayApp.port=8888",
    ),
    expose=("8888/tcp",),
    smoke_test=(
        "import os, sys, kernel_gateway, ipykernel; print(os.getuid(), sys.version_info[0])"
    ),
)

RECIPES = {recipe.kind: recipe for recipe in (SANDBOX, JUPYTER)}

PACKAGES_LABEL = "org.parley.packages"
"""The image label listing the extra Debian packages it was built with (sorted, spaced)."""


def packages_label(packages: Sequence[str]) -> str:
    return " ".join(sorted(set(packages)))
