#!/usr/bin/env bash
# fisk-ls against Emacs eglot, a client this project did not write: initialize, open a markdown
# file, the server's commands through workspace/executeCommand, shutdown and exit, run three
# times (no settings; topK 2 from eglot-workspace-configuration; an out-of-range topK, which
# the server names in a window/showMessage). Manual (not part of scripts/test.sh). Needs
# Debian's emacs-nox, elpa-eglot and elpa-markdown-mode (Emacs 28.2, eglot 1.9):
#   apt-get install -y emacs-nox elpa-eglot elpa-markdown-mode
# The server indexes a copy of docs/ in a temporary git repository, into a temporary store.
# The JSON-RPC traffic of each run goes to $FISK_EGLOT_EVENTS_DIR (default: that folder).
set -uo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
FISK_LS=${FISK_LS:-$PWD/.venv/bin/fisk-ls}
command -v emacs >/dev/null || { echo "emacs is not installed (see the comment above)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export FISK_AI_STORE_DIR="$work/stores" XDG_CACHE_HOME="$work/cache"  # not the user's cache
mkdir -p "$work/project/docs"
cp docs/*.md README.md SECURITY.md "$work/project/docs/"
git -C "$work/project" init -q  # eglot finds the project through project.el (a VC root)
events=${FISK_EGLOT_EVENTS_DIR:-$work}
status=0
for config in "" "((:fisk :topK 2))" "((:fisk :topK 30))"; do
  echo "=== eglot-workspace-configuration: ${config:-none}"
  (cd "$work/project" && FISK_EGLOT_CONFIG=$config \
    FISK_EGLOT_EVENTS="$events/eglot-events-$(tr -dc 0-9 <<<"${config:-0}").log" \
    emacs --batch -Q -l "$REPO/scripts/outside-clients/eglot-check.el" \
    "$FISK_LS" "$work/project" docs/README.md </dev/null 2>&1) || status=1
done
exit $status
