#!/usr/bin/env bash
# Install the Debian packages listed in scripts/debian-packages.txt that are not installed yet,
# then pgvector's extension for Debian's PostgreSQL (scripts/build-pgvector.sh).
# Needs root (or sudo); does nothing when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t wanted < <(grep -Ev '^\s*(#|$)' scripts/debian-packages.txt | awk '{print $1}')
missing=()
for pkg in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ "${#missing[@]}" -eq 0 ]; then
    exec bash scripts/build-pgvector.sh
fi
if ! command -v apt-get >/dev/null; then
    echo "install-system-deps: need Debian packages ${missing[*]}, but there is no apt-get here" >&2
    exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install-system-deps: run as root to install ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
fi
echo "install-system-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
bash scripts/build-pgvector.sh
