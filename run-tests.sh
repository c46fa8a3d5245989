#!/usr/bin/env bash
# The whole test suite: set up .venv, check the import contracts (setup.cfg's
# [importlinter]), then run pytest (extra arguments go to pytest).
#   ./run-tests.sh                 # everything
#   ./run-tests.sh -m unit         # the fast tier: no cluster, no game, under a minute
source "$(dirname "$0")/tools/venv.sh"
source "$ROOT/tools/chromium.sh"
cd "$ROOT"
lint-imports --no-cache
exec python -m pytest "$@"
