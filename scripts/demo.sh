#!/usr/bin/env bash
# The main job: install fisk-ls, index this repository's docs, search them.
# FISK_AI=/path/to/fisk-ai uses that install instead of bootstrapping .venv (scripts/wheel.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${FISK_AI:-}" ]; then
  bash scripts/bootstrap.sh
fi
export FISK_AI_STORE_DIR=${FISK_AI_STORE_DIR:-$PWD/.demo-store}
FISK=${FISK_AI:-.venv/bin/fisk-ai}
$FISK knowledge index README.md docs
$FISK knowledge search "how do I register the MCP server with a client"
$FISK knowledge search "citation format relpath ordinal" --top-k 3
# An agent's question in a user's words, with the strings it would add in the docs' vocabulary
$FISK knowledge search "my agent keeps asking in its own words and misses the right section" \
  --also "also extra search strings knowledge_search" \
  --also "Send up to four extra strings in also: keywords, a hypothetical answer, a rephrasing." \
  --also "how do agents pass their own search strings" --top-k 3
