#!/usr/bin/env bash
# Builds the fisk-ls wheel the extension ships (server/fisk_ls-*.whl, git-ignored): the extension
# installs it into an environment of its own when fisk-ls is not on PATH (src/common/setup.ts).
# Usage: bash editors/vscode/scripts/bundle-server.sh [PYTHON]   (default: the checkout's .venv, else python3)
# `pip wheel` runs from outside the checkout (an ignored build/ folder there could shadow packages);
# its isolated build environment comes from the package index or pip's cache.
set -euo pipefail
EXT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPO=$(cd "$EXT_DIR/../.." && pwd)
PY=${1:-$REPO/.venv/bin/python}
[ -x "$PY" ] || PY=python3
had_egg_info=no
[ -e "$REPO/fisk_ls.egg-info" ] && had_egg_info=yes
work=$(mktemp -d)
trap 'rm -rf "$work"; [ "$had_egg_info" = yes ] || rm -rf "$REPO/fisk_ls.egg-info"' EXIT
(cd "$work" && "$PY" -m pip wheel -q --disable-pip-version-check --no-deps -w "$work/dist" "$REPO")
rm -f "$EXT_DIR"/server/fisk_ls-*.whl
mkdir -p "$EXT_DIR/server"
cp "$work"/dist/fisk_ls-*.whl "$EXT_DIR/server/"
ls "$EXT_DIR"/server/fisk_ls-*.whl
