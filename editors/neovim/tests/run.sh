#!/usr/bin/env bash
# Headless Neovim tests of the fisk plugin against the real fisk-ls server.
#
#   bash editors/neovim/tests/run.sh [spec ...]      (from the repository root, or anywhere)
#
# FISK_LS  absolute path of the fisk-ls executable (default: `command -v fisk-ls`)
# NVIM     nvim 0.10+ (default: `command -v nvim`)
# FISK_TEST_TIMEOUT  seconds allowed per spec file (default 180)
# FISK_TEST_VERBOSE  set to show vim.notify messages
# FISK_SCREENSHOTS=0 skips tests/screenshots.sh (run after the specs when no spec is named);
#   ARTIFACTS_DIR and FISK_UPDATE_SCREENSHOTS=1 as described there
#
# Each spec runs in its own nvim with --clean and private XDG and TMPDIR directories; servers it
# leaves behind are killed. Prints `ok - …` / `FAIL - …` lines and `N passed, N failed`.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FISK_LS=${FISK_LS:-$(command -v fisk-ls || true)}
NVIM=${NVIM:-$(command -v nvim || true)}
per_spec=${FISK_TEST_TIMEOUT:-180}

passed=0
failed=0

if [ -z "$NVIM" ] || ! "$NVIM" --version >/dev/null 2>&1; then
  echo "FAIL - setup: nvim not found (set NVIM)"; echo "0 passed, 1 failed"; exit 1
fi
if [ -z "$FISK_LS" ] || [ ! -x "$FISK_LS" ]; then
  echo "FAIL - setup: fisk-ls not found (set FISK_LS to its absolute path; got '${FISK_LS}')"
  echo "0 passed, 1 failed"; exit 1
fi
now_ms() {
  if [ -n "${EPOCHREALTIME:-}" ]; then local t=${EPOCHREALTIME/[.,]/}; echo $((t / 1000)); else echo $(($(date +%s) * 1000)); fi
}
absolute() { case "$1" in /*) echo "$1" ;; */*) echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")" ;; *) command -v "$1" ;; esac; }
FISK_LS=$(absolute "$FISK_LS")
NVIM=$(absolute "$NVIM")

work=$(mktemp -d "${TMPDIR:-/tmp}/fisk-nvim-tests.XXXXXX")
token="fisk-nvim-test-$$-$RANDOM"

# Kill, by pid, every process that carries this run's token in its environment (the servers that
# nvim started and that outlived it: Neovim starts language servers detached).
reap() {
  local pid
  for pid in $(grep -l -s -a -- "FISK_NVIM_TEST_TOKEN=$token" /proc/[0-9]*/environ 2>/dev/null \
      | cut -d/ -f3); do
    [ "$pid" = "$$" ] && continue
    kill -9 "$pid" 2>/dev/null || true
  done
}
cleanup() { reap; rm -rf "$work"; }
trap cleanup EXIT

# `fisk-ls` on PATH, so setup() with no options (cmd = { "fisk-ls" }) finds the server under test.
mkdir -p "$work/bin"
ln -s "$FISK_LS" "$work/bin/fisk-ls"

echo "# nvim: $("$NVIM" --version | head -n1)  fisk-ls: $FISK_LS"

specs=()
if [ $# -gt 0 ]; then
  for s in "$@"; do specs+=("$(absolute "$s")"); done
else
  specs=("$here"/spec/*_spec.lua)
fi

for spec in "${specs[@]}"; do
  name=$(basename "$spec" .lua)
  home="$work/$name"
  mkdir -p "$home"/{config,data,state,cache,tmp}
  out="$home/output.txt"
  results="$home/results.txt"
  : >"$results"
  start=$(now_ms)
  (
    cd "$home/tmp" || exit 1
    export FISK_NVIM_TEST_TOKEN="$token" FISK_LS FISK_TEST_RESULTS="$results" PATH="$work/bin:$PATH"
    export XDG_CONFIG_HOME="$home/config" XDG_DATA_HOME="$home/data" \
      XDG_STATE_HOME="$home/state" XDG_CACHE_HOME="$home/cache" TMPDIR="$home/tmp"
    exec timeout -k 5 "$per_spec" "$NVIM" --headless --clean -n -i NONE -l "$spec" </dev/null
  ) >"$out" 2>&1
  rc=$?
  reap
  ms=$(($(now_ms) - start))
  grep -E '^(ok|FAIL) - |^       |^# skipped: ' "$results"
  p=$(grep -c '^ok - ' "$results")
  f=$(grep -c '^FAIL - ' "$results")
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    f=1
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
      echo "FAIL - $name: timed out after ${per_spec}s"
    else
      echo "FAIL - $name: nvim exited with $rc"
    fi
  fi
  if [ "$f" -gt 0 ]; then  # what nvim printed besides the results (errors, messages)
    echo "# other output of $name (last 30 lines):"
    grep -v -E '^(ok|FAIL) - |^       |^[0-9]+ passed, [0-9]+ failed$' "$out" | tail -n 30 | sed 's/^/#   /'
  fi
  echo "# $name: $p passed, $f failed (${ms} ms)"
  passed=$((passed + p))
  failed=$((failed + f))
done

# The README's screenshots (a real Neovim in tmux), unless only some specs were asked for.
if [ $# -eq 0 ] && [ "${FISK_SCREENSHOTS:-1}" != 0 ]; then
  shots=$(FISK_NVIM_TEST_TOKEN="$token" FISK_LS="$FISK_LS" NVIM="$NVIM" TMPDIR="$work" bash "$here/screenshots.sh" 2>&1)
  rc=$?
  echo "$shots"
  p=$(grep -c '^ok - ' <<<"$shots")
  f=$(grep -c '^FAIL - ' <<<"$shots")
  [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1 && echo "FAIL - screenshots.sh exited with $rc"
  reap
  passed=$((passed + p))
  failed=$((failed + f))
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
