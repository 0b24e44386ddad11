#!/usr/bin/env bash
# Create .venv (once) and install fisk-ls with its test and MCP extras into it.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.fisk-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install -q --disable-pip-version-check -e ".[dev,mcp]" 2>&1 \
    | grep -v "^WARNING: Location" || true
  .venv/bin/python -c "import fisk_ls, apsw, sqlite_vec, pygls, mcp" # fail loudly if incomplete
  touch "$stamp"
fi
