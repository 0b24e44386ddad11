#!/usr/bin/env bash
# The install story, checked: build the sdist and the wheel (python -m build), install the wheel
# (with the mcp extra) into a fresh virtual environment outside the checkout, and run the main job
# (scripts/demo.sh) with that install's fisk-ai. Catches missing package data (the settings
# schema), missing dependencies and entry points that only work from a source tree.
# Needs network access to PyPI (build's isolated environment, the wheel's dependencies).
# Everything goes to a temporary folder that is removed at the end; the checkout is left clean.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
PY=${PYTHON:-python3}
BUILD_PY=$REPO/.venv/bin/python
[ -x "$BUILD_PY" ] || BUILD_PY=$PY
work=$(mktemp -d)
had_egg_info=no
[ -e fisk_ls.egg-info ] && had_egg_info=yes
cleanup() {
  rm -rf "$work"
  [ "$had_egg_info" = yes ] || rm -rf "$REPO/fisk_ls.egg-info"  # left by the sdist build
}
trap cleanup EXIT

echo "--- python -m build (sdist + wheel) -> $work/dist"
# From outside the checkout: `python -m` puts the current folder first on sys.path, where an
# ignored build/ folder (setuptools' output) would shadow the build package.
(cd "$work" && "$BUILD_PY" -m build --sdist --wheel --outdir "$work/dist" "$REPO") \
  >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
wheel=$(ls "$work"/dist/fisk_ls-*.whl)
sdist=$(ls "$work"/dist/fisk_ls-*.tar.gz)
echo "built $(basename "$sdist") and $(basename "$wheel")"
for member in fisk_ls/knowledge/settings.schema.json fisk_ls/cli/app.py fisk_ls/lsp/server.py; do
  "$BUILD_PY" -c "import sys, zipfile; sys.exit(0 if '$member' in zipfile.ZipFile('$wheel').namelist() else 1)" \
    || { echo "the wheel lacks $member"; exit 1; }
done

echo "--- fresh venv: pip install '$(basename "$wheel")[mcp]'"
"$PY" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --disable-pip-version-check "$wheel[mcp]" 2>&1 \
  | grep -v "^WARNING: Location" || true
cd "$work"  # outside the checkout: nothing can be imported from the source tree
"$work/venv/bin/python" -c "import fisk_ls, sys; assert '$REPO' not in fisk_ls.__file__, fisk_ls.__file__"
"$work/venv/bin/python" -m fisk_ls.knowledge.settings_schema --check
"$work/venv/bin/fisk-ai" --version
"$work/venv/bin/fisk-ai" mcp --help >/dev/null
"$work/venv/bin/fisk-ls" --help >/dev/null

echo "--- the main job (scripts/demo.sh) with the installed fisk-ai"
FISK_AI="$work/venv/bin/fisk-ai" FISK_AI_STORE_DIR="$work/store" bash "$REPO/scripts/demo.sh"
echo "wheel install ok"
