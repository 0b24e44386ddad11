#!/usr/bin/env bash
# The main job: install fisk-ls, index this repository's docs, search them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export FISK_AI_STORE_DIR=${FISK_AI_STORE_DIR:-$PWD/.demo-store}
FISK=.venv/bin/fisk-ai
$FISK knowledge index README.md docs
$FISK knowledge search "how do I register the MCP server with a client"
$FISK knowledge search "citation format relpath ordinal" --top-k 3
