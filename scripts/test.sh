#!/usr/bin/env bash
# Install everything the tests need and run them: lint, types, then pytest (arguments go to pytest).
# The virtualenv is $PARLEY_VENV, by default .venv in the repository.
set -euo pipefail
cd "$(dirname "$0")/.."

venv="${PARLEY_VENV:-.venv}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
py="$venv/bin/python"
"$py" -m pip install -q --disable-pip-version-check -e '.[dev]'
bash scripts/install-system-deps.sh

"$py" -m ruff check .
"$py" -m ruff format --check .
"$py" -m mypy
# The @pytest.mark.docker tests run code in this image, built once from Debian's packages.
export PARLEY_SANDBOX_IMAGE="${PARLEY_SANDBOX_IMAGE:-parley-sandbox:latest}"
bash scripts/build-sandbox-image.sh "$PARLEY_SANDBOX_IMAGE"
exec "$py" -m pytest "$@"
