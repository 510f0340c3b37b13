#!/usr/bin/env bash
# pgvector's `vector` extension for the PostgreSQL server of Debian's `postgresql` package (the
# @pytest.mark.pgvector tests and notebooks/retrieve_chat_pgvector.ipynb). Does nothing when the
# extension is already installed. Debian's binary package (postgresql-<major>-pgvector) is used
# where the release has one; bookworm has none, so there the extension is built from Debian's
# source package of pgvector (taken from trixie through a private apt state: the system's apt
# sources are not changed) against postgresql-server-dev-<major>, and installed with `make
# install` into that server's directories. Needs root (or sudo).
set -euo pipefail

pg_config=$(ls -d /usr/lib/postgresql/*/bin/pg_config 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "$pg_config" ]; then
    echo "build-pgvector: no PostgreSQL server (Debian's postgresql package) is installed" >&2
    exit 1
fi
if [ -f "$("$pg_config" --sharedir)/extension/vector.control" ]; then
    exit 0
fi
major=$("$pg_config" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
sudo=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "build-pgvector: run as root" >&2; exit 1; }
    sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
if apt-cache show "postgresql-$major-pgvector" >/dev/null 2>&1; then
    echo "build-pgvector: installing postgresql-$major-pgvector"
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "postgresql-$major-pgvector" >/dev/null
    exit 0
fi

echo "build-pgvector: building pgvector for PostgreSQL $major from Debian's source package"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/apt/sources" "$work/src"
cat > "$work/apt/sources/pgvector-src.sources" <<SOURCES
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
apt_private=(
    -o "Dir::Etc::SourceList=/dev/null"
    -o "Dir::Etc::SourceParts=$work/apt/sources"
    -o "Dir::State::Lists=$work/apt/lists"
    -o "Dir::Cache=$work/apt/cache"
    -o "APT::Sandbox::User=root"
)
apt-get "${apt_private[@]}" update -qq
# apt checks the files against the signed release's checksums; dpkg-source checks them again.
(cd "$work/src" && apt-get "${apt_private[@]}" source -qq --download-only pgvector)
dpkg-source -x "$work"/src/pgvector_*.dsc "$work/src/pgvector" >/dev/null
# OPTFLAGS="": portable code (upstream's default is -march=native).
make -s -C "$work/src/pgvector" PG_CONFIG="$pg_config" OPTFLAGS="" >/dev/null
"${sudo[@]}" make -s -C "$work/src/pgvector" PG_CONFIG="$pg_config" OPTFLAGS="" install >/dev/null
