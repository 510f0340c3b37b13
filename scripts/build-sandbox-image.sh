#!/usr/bin/env bash
# build-sandbox-image.sh [TAG] — build parley's Docker sandbox image from Debian's packages.
#
# The image (default tag parley-sandbox:latest) is what DockerCommandLineCodeExecutor and
# `use_docker=...` run code in when no image registry can be reached: a minimal Debian root
# filesystem made by mmdebstrap (variant minbase) with python3 (`python` runs python3),
# procps, ca-certificates and a non-root user `sandbox` (uid/gid 1000), imported with
# `docker import`. No registry is contacted: only a Debian package mirror (the packages are
# downloaded with apt, like any Debian package install).
#
# Use it:
#     sudo scripts/build-sandbox-image.sh                # -> parley-sandbox:latest
#     export PARLEY_SANDBOX_IMAGE=parley-sandbox:latest  # parley's default image from now on
#   or pass image="parley-sandbox:latest" to DockerCommandLineCodeExecutor.
#
# If an image with TAG already exists it is reused (the script exits 0 at once); set
# PARLEY_SANDBOX_REBUILD=1 to build it again. Needs root (mmdebstrap creates device nodes and
# file ownerships), a running Docker engine and `mmdebstrap` (apt-get install mmdebstrap).
# Takes about a minute on a 2-core machine with a nearby mirror.
#
# Offline or air-gapped machines:
#   * point PARLEY_DEBIAN_MIRROR at a mirror you can reach, e.g. a local apt-cacher-ng
#     (http://cache.lan:3142/debian), an internal mirror, or a `file:///srv/debian` copy;
#     PARLEY_DEBIAN_SUITE picks the release (default: this machine's, else bookworm);
#   * or build on a connected machine and carry the image over:
#         docker save parley-sandbox:latest | gzip > parley-sandbox.tar.gz   # there
#         gunzip -c parley-sandbox.tar.gz | docker load                     # here
# Extra Debian packages for the image (space separated): PARLEY_SANDBOX_PACKAGES,
# e.g. "python3-numpy python3-pip".
set -euo pipefail

tag="${1:-parley-sandbox:latest}"
log() { printf 'build-sandbox-image: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v docker >/dev/null || die "the docker command is not installed"
docker info >/dev/null 2>&1 || die "cannot reach the Docker engine (is it running? are you allowed to use it?)"

if [ -z "${PARLEY_SANDBOX_REBUILD:-}" ] && docker image inspect "$tag" >/dev/null 2>&1; then
    log "image $tag already exists; reusing it (PARLEY_SANDBOX_REBUILD=1 builds it again)"
    exit 0
fi

[ "$(id -u)" -eq 0 ] || die "run as root (e.g. with sudo): mmdebstrap needs it to build the root filesystem"
command -v mmdebstrap >/dev/null || die "mmdebstrap is not installed: apt-get install mmdebstrap"

suite="${PARLEY_DEBIAN_SUITE:-}"
if [ -z "$suite" ] && [ -r /etc/os-release ]; then
    # shellcheck disable=SC1091  # only ID and VERSION_CODENAME are read, in a subshell
    suite="$(. /etc/os-release; if [ "${ID:-}" = debian ]; then printf '%s' "${VERSION_CODENAME:-}"; fi)"
fi
suite="${suite:-bookworm}"
mirrors=()
[ -n "${PARLEY_DEBIAN_MIRROR:-}" ] && mirrors=("$PARLEY_DEBIAN_MIRROR")
packages="python3,python-is-python3,procps,ca-certificates"
for extra in ${PARLEY_SANDBOX_PACKAGES:-}; do packages="$packages,$extra"; done

log "building $tag from Debian $suite (${PARLEY_DEBIAN_MIRROR:-default mirror}) with $packages"
start=$SECONDS
image_id=""
cleanup() {
    # A failed build must not leave a half-imported, untagged image behind.
    if [ -n "$image_id" ] && ! docker image inspect "$tag" >/dev/null 2>&1; then
        docker rmi "$image_id" >/dev/null 2>&1 || true
    fi
}
trap cleanup EXIT

# The customize hooks run in the finished root filesystem ($1) before it is packed:
# - the `sandbox` user (uid/gid 1000) that the executor runs code as; written directly so that
#   no passwd tooling is needed and the ids are fixed;
# - /workspace, the executor's mount point, owned by that user.
# Documentation, manuals and translations are left out to keep the image small.
# shellcheck disable=SC2016  # $1 is expanded by mmdebstrap's hook shell, not here
image_id="$(
    mmdebstrap --variant=minbase --mode=root --format=tar \
        --include="$packages" \
        --dpkgopt='path-exclude=/usr/share/man/*' \
        --dpkgopt='path-exclude=/usr/share/info/*' \
        --dpkgopt='path-exclude=/usr/share/locale/*' \
        --dpkgopt='path-exclude=/usr/share/doc/*' \
        --dpkgopt='path-include=/usr/share/doc/*/copyright' \
        --customize-hook='echo "sandbox:x:1000:1000:parley sandbox:/home/sandbox:/bin/sh" >> "$1/etc/passwd"' \
        --customize-hook='echo "sandbox:x:1000:" >> "$1/etc/group"' \
        --customize-hook='echo "sandbox:*:19000:0:99999:7:::" >> "$1/etc/shadow"' \
        --customize-hook='mkdir -p "$1/home/sandbox" "$1/workspace" && chown 1000:1000 "$1/home/sandbox" "$1/workspace"' \
        --customize-hook='rm -rf "$1/var/cache/apt/"* "$1/var/lib/apt/lists/"* "$1/var/log/"*.log' \
        "$suite" - "${mirrors[@]}" </dev/null |
        docker import \
            --change 'CMD ["/bin/sh"]' \
            --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
            --change 'ENV LANG=C.UTF-8' \
            --change 'WORKDIR /workspace' \
            --message "parley sandbox: Debian $suite minbase + python3, by scripts/build-sandbox-image.sh" \
            - | sed 's/^sha256://'
)"
[ -n "$image_id" ] || die "docker import produced no image"
docker tag "$image_id" "$tag"

# Smoke test: no network, as the sandbox user, the way the executor runs code.
got="$(docker run --rm --network none --user 1000:1000 "$tag" python -c 'import os, sys; print(os.getuid(), sys.version_info[0])')"
[ "$got" = "1000 3" ] || die "smoke test failed: expected '1000 3', got '$got'"

size="$(docker image inspect --format '{{.Size}}' "$tag")"
log "built $tag ($((size / 1024 / 1024)) MiB) in $((SECONDS - start)) s"
