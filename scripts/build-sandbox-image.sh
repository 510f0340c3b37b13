#!/usr/bin/env bash
# build-sandbox-image.sh [TAG] — build parley's Docker sandbox image; a thin call of
# `parley sandbox build` (parley/coding/images: one implementation), kept for CI and old notes.
#
# The image (default tag parley-sandbox:latest) is what DockerCommandLineCodeExecutor and
# `use_docker=...` run code in: python:3-slim plus a non-root user where a registry is reachable,
# else a Debian root file system made by mmdebstrap from Debian's packages (python3, procps,
# ca-certificates, the user `sandbox` uid/gid 1000). An existing image is reused.
#
# Environment: PARLEY_SANDBOX_REBUILD=1 builds again; PARLEY_SANDBOX_PACKAGES adds Debian
# packages; PARLEY_DEBIAN_MIRROR / PARLEY_DEBIAN_SUITE steer the Debian build;
# PARLEY_SANDBOX_METHOD=dockerfile|debian|auto (default auto). The Python that runs parley is
# $PARLEY_VENV/bin/python, else .venv/bin/python in this repository, else python3.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
tag="${1:-parley-sandbox:latest}"
py="${PARLEY_VENV:-$repo/.venv}/bin/python"
[ -x "$py" ] || py=python3
PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}" exec "$py" -m parley sandbox build \
    --tag "$tag" --method "${PARLEY_SANDBOX_METHOD:-auto}"
