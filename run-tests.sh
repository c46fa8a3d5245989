#!/usr/bin/env bash
# The whole test suite: set up .venv, then the static checks (import contracts from
# setup.cfg's [importlinter], ruff's lint and format, mypy on core, settings and
# training, the docs site in strict mode), then pytest (extra arguments go to pytest), on
# two processes (pytest-xdist; SC2DASK_TEST_WORKERS=0 runs it in this one): most tests
# wait on games and clusters, so two of them share two cores well.
#   ./run-tests.sh                 # everything
#   ./run-tests.sh -m unit         # the fast tier: no cluster, no game, under a minute
#   ./run-tests.sh -m "not slow"   # all but the longest tests
source "$(dirname "$0")/tools/venv.sh"
source "$ROOT/tools/chromium.sh"
source "$ROOT/tools/slurm.sh"
cd "$ROOT"
lint-imports --no-cache
ruff check --quiet
ruff format --check --quiet
mypy
SITE="$(mktemp -d)"
NO_MKDOCS_2_WARNING=1 mkdocs build --strict --quiet --site-dir "$SITE"
rm -rf "$SITE"
exec python -m pytest -n "${SC2DASK_TEST_WORKERS:-2}" --dist loadgroup "$@"
