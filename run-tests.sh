#!/usr/bin/env bash
# The whole test suite: set up .venv, then run pytest (extra arguments go to pytest).
source "$(dirname "$0")/tools/venv.sh"
source "$ROOT/tools/chromium.sh"
cd "$ROOT"
exec python -m pytest "$@"
