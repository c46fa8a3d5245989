# Sourced by run-main.sh and run-tests.sh: create or update .venv from the project's files.
# The install is redone only when setup.cfg, pyproject.toml or the test constraints changed
# since the last one.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${SC2DASK_VENV:-$ROOT/.venv}"
PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "sc2dask needs Python 3.11 or newer; set PYTHON=/path/to/python3.11" >&2
    exit 1
fi
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
STAMP="$VENV/.sc2dask-installed"
WANT="$(cat "$ROOT/setup.cfg" "$ROOT/pyproject.toml" "$ROOT/tools/test-constraints.txt" | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]; then
    echo "Installing sc2dask and its dependencies into $VENV ..."
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
    "$VENV/bin/python" -m pip install --quiet -e "$ROOT[test,torch]" \
        --constraint "$ROOT/tools/test-constraints.txt"
    echo "$WANT" > "$STAMP"
fi
export PATH="$VENV/bin:$PATH"
