"""``parley sandbox build`` and ``parley sandbox status``: parley's Docker images from the
installed package (the work is ``parley.coding.images``; this is its command line).

Environment variables give defaults that the options override: ``PARLEY_SANDBOX_PACKAGES``
(extra Debian packages, space separated), ``PARLEY_DEBIAN_MIRROR``, ``PARLEY_DEBIAN_SUITE`` and
``PARLEY_SANDBOX_REBUILD=1``.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Add ``sandbox`` to the ``parley`` command's subcommands (``sub``, from add_subparsers)."""
    parser = sub.add_parser("sandbox", help="build parley's Docker sandbox image, or show it")
    actions = parser.add_subparsers(dest="action", required=True)
    build = actions.add_parser(
        "build",
        help="build the image: from python:3-slim where a registry is reachable, "
        "else from Debian's packages (mmdebstrap)",
    )
    build.add_argument("--tag", help="the image's name (default: parley-sandbox:latest)")
    build.add_argument(
        "--packages",
        nargs="+",
        default=None,
        metavar="PKG",
        help="extra Debian packages for the image, e.g. python3-numpy",
    )
    build.add_argument(
        "--jupyter",
        action="store_true",
        help="build the Jupyter Kernel Gateway image of DockerJupyterServer instead",
    )
    build.add_argument(
        "--method",
        choices=("auto", "dockerfile", "debian"),
        default="auto",
        help="how to build (default: the Dockerfile if python:3-slim can be had, else Debian)",
    )
    build.add_argument("--base", help="the Dockerfile method's base image (default: python:3-slim)")
    build.add_argument("--rebuild", action="store_true", help="build even if the image exists")
    build.add_argument("--suite", help="the Debian release (default: this machine's or bookworm)")
    build.add_argument("--mirror", help="a Debian mirror URL (default: mmdebstrap's)")
    status = actions.add_parser("status", help="which images exist and which one parley uses")
    status.add_argument("--jupyter", action="store_true", help="only the Jupyter image")


def run(args: argparse.Namespace) -> int:
    """Carry out ``parley sandbox ...``; the exit code."""
    from .coding.images import build_image, image_status
    from .exceptions import ImageBuildError

    kind = "jupyter" if args.jupyter else "sandbox"
    try:
        if args.action == "status":
            kinds = [kind] if args.jupyter else ["sandbox", "jupyter"]
            for each in kinds:
                _print_status(image_status(each))
            return 0
        packages = args.packages
        if packages is None:
            packages = os.environ.get("PARLEY_SANDBOX_PACKAGES", "").split()
        built = build_image(
            kind,
            tag=args.tag,
            packages=packages,
            method=args.method,
            base=args.base,
            rebuild=args.rebuild or bool(os.environ.get("PARLEY_SANDBOX_REBUILD")),
            suite=args.suite or os.environ.get("PARLEY_DEBIAN_SUITE") or None,
            mirror=args.mirror or os.environ.get("PARLEY_DEBIAN_MIRROR") or None,
        )
    except (ImageBuildError, RuntimeError) as error:
        print(f"parley sandbox: error: {error}", file=sys.stderr)
        return 1
    print(built.tag)
    return 0


def _print_status(status: Any) -> None:
    title = "sandbox image (code execution)" if status.kind == "sandbox" else "Jupyter image"
    print(f"{title}, in the order parley looks for them:")
    for state in status.candidates:
        if state.present:
            print(f"  {state.name:<32} present, {state.size_mb} MiB, created {state.created}")
        else:
            print(f"  {state.name:<32} absent")
    if status.chosen is not None:
        print(f"parley uses {status.chosen}")
    else:
        flag = " --jupyter" if status.kind == "jupyter" else ""
        print(f"none present: build one with `parley sandbox build{flag}`")
