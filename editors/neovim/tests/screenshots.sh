#!/usr/bin/env bash
# The README's screenshots, made by driving a real Neovim in tmux against the real server: the live
# search (:FiskSearch, a query typed) and the vim.ui.select list (:FiskSearch with a query). Each
# screen is captured with `tmux capture-pane -e`, turned into HTML by rich (a dependency of fisk-ls)
# and photographed by headless chromium into a small PNG in $ARTIFACTS_DIR; with
# FISK_UPDATE_SCREENSHOTS=1 they are copied over editors/neovim/media/*.png (then commit them).
#
#   bash editors/neovim/tests/screenshots.sh      (run.sh runs it after the specs)
#
# FISK_LS, NVIM as for run.sh; PYTHON: a Python with rich (default: the one of fisk-ls's #! line).
# tmux and chromium come from apt when missing and this runs as root (as in CI); otherwise the
# run is skipped with a `# skipped:` line. Prints `ok - …` / `FAIL - …` lines.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
plugin=$(dirname "$here")
repo=$(cd "$plugin/../.." && pwd)
FISK_LS=${FISK_LS:-$(command -v fisk-ls || true)}
NVIM=${NVIM:-$(command -v nvim || true)}
ARTIFACTS_DIR=${ARTIFACTS_DIR:-$repo/artifacts}
[[ $ARTIFACTS_DIR != /* ]] && ARTIFACTS_DIR=$PWD/$ARTIFACTS_DIR
PYTHON=${PYTHON:-$(head -n1 "$FISK_LS" 2>/dev/null | sed -n 's/^#! *//p')}

chromium_bin() { command -v chromium || command -v chromium-browser || command -v google-chrome || true; }
if ! command -v tmux >/dev/null || [ -z "$(chromium_bin)" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q tmux chromium) >/dev/null 2>&1
  fi
fi
CHROMIUM=$(chromium_bin)
if ! command -v tmux >/dev/null || [ -z "$CHROMIUM" ] || ! "$PYTHON" -c "import rich" 2>/dev/null; then
  echo "# skipped: screenshots (needs tmux, chromium and a Python with rich)"
  exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/fisk-nvim-shots.XXXXXX")
sock="fisk-shots-$$"
cleanup() {
  # quit Neovim first, so that it stops its server; then the tmux server of this run
  tmux -L "$sock" send-keys Escape Escape ":qa!" Enter 2>/dev/null
  for ((i = 0; i < 50; i++)); do tmux -L "$sock" has-session 2>/dev/null || break; sleep 0.1; done
  tmux -L "$sock" kill-server 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work"/{project/docs/ops,project/.git,xdg/config,xdg/data,xdg/state,xdg/cache,bin} "$ARTIFACTS_DIR"
ln -s "$FISK_LS" "$work/bin/fisk-ls"

cat >"$work/project/docs/ops/logs.md" <<'EOF'
# Logs

## Rotation

Logs rotate every night at 02:00 and are kept for two weeks. Set `retention_days` in
agent.yaml to keep them longer; rotated files are compressed with zstd.

## Shipping

A sidecar ships each rotated file to the archive bucket before it is deleted.
EOF
cat >"$work/project/docs/ops/restarts.md" <<'EOF'
# Restarts

## Draining a node

Before a restart, cordon the node and wait for its queue to empty. The node rejoins the
cluster on its own afterwards; its logs stay on the local disk until the next rotation.
EOF
cat >"$work/project/docs/install.md" <<'EOF'
# Install

## With pip

Install the service with pip into a virtual environment, then run `svc init` once.

## Disk space

The service needs about 2 GB for its data and its logs, more with a long retention.
EOF
cat >"$work/init.lua" <<EOF
vim.opt.runtimepath:prepend("$plugin")
vim.o.termguicolors = true
vim.o.swapfile = false
vim.o.shortmess = vim.o.shortmess .. "I"
vim.cmd.colorscheme("habamax")
require("fisk").setup({ progress = false, semantic_offer = false })
vim.api.nvim_create_autocmd("LspProgress", { callback = function(ev)
  if ev.data.params.value.kind == "end" then vim.fn.writefile({}, "$work/indexed") end
end })
EOF

cols=120 rows=24
tmux -L "$sock" -f /dev/null new-session -d -x "$cols" -y "$rows" -c "$work/project" \
  env PATH="$work/bin:$PATH" XDG_CONFIG_HOME="$work/xdg/config" XDG_DATA_HOME="$work/xdg/data" \
  XDG_STATE_HOME="$work/xdg/state" XDG_CACHE_HOME="$work/xdg/cache" TERM=xterm-256color \
  FISK_NVIM_TEST_TOKEN="${FISK_NVIM_TEST_TOKEN:-}" \
  "$NVIM" -n -i NONE -u "$work/init.lua" docs/install.md

# wait_for TEXT SECONDS: until the pane shows TEXT.
wait_for() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    tmux -L "$sock" capture-pane -p | grep -qF -- "$1" && return 0
    sleep 0.1
  done
  return 1
}
render() {  # render NAME: the pane, as it is, to $ARTIFACTS_DIR/neovim-NAME.png
  local ansi=$work/$1.ansi html=$work/$1.html png=$ARTIFACTS_DIR/neovim-$1.png
  tmux -L "$sock" capture-pane -e -p >"$ansi"
  "$PYTHON" - "$ansi" "$html" "$cols" <<'EOF' || return 1
import io, sys
from rich.console import Console
from rich.terminal_theme import MONOKAI
from rich.text import Text
src, out, cols = sys.argv[1], sys.argv[2], int(sys.argv[3])
console = Console(record=True, width=cols, file=io.StringIO(), color_system="truecolor", force_terminal=True)
for line in open(src, encoding="utf-8").read().rstrip("\n").split("\n"):
    console.print(Text.from_ansi(line), crop=True, overflow="crop", no_wrap=True)
html = console.export_html(theme=MONOKAI, inline_styles=True)
style = "<style>body{margin:0;background:#272822} pre{margin:0;padding:6px;font-size:13px;line-height:1.25;font-family:'DejaVu Sans Mono',monospace} pre *{font-family:inherit}</style>"
open(out, "w", encoding="utf-8").write(html.replace("</head>", style + "</head>"))
EOF
  "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=$((cols * 8 + 12)),$((rows * 33 / 2 + 14)) \
    --screenshot="$png" "file://$html" >/dev/null 2>&1 || return 1
  [ -s "$png" ] || return 1
  if command -v convert >/dev/null; then convert "$png" -colors 64 "PNG8:$png" 2>/dev/null || true; fi
  echo "ok - screenshot $png ($(($(stat -c %s "$png") / 1024)) KB)"
}

failed=0
fail() { echo "FAIL - $1"; echo "#   pane:"; tmux -L "$sock" capture-pane -p | sed 's/^/#   /'; failed=1; }

for ((i = 0; i < 600; i++)); do [ -f "$work/indexed" ] && break; sleep 0.1; done
[ -f "$work/indexed" ] || fail "screenshots: the server did not index the project within 60 s"
if [ "$failed" = 0 ]; then
  tmux -L "$sock" send-keys ":FiskSearch" Enter
  wait_for "Fisk search" 10 || fail "screenshots: the live search did not open"
  tmux -L "$sock" send-keys -l "how long are rotated logs kept"
  if wait_for "logs.md:" 15; then
    sleep 0.5  # the preview follows the list
    render live || fail "screenshots: rendering the live search"
  else
    fail "screenshots: the live search showed no result"
  fi
  tmux -L "$sock" send-keys C-c
  sleep 0.3
  tmux -L "$sock" send-keys ":FiskSearch disk space logs" Enter
  if wait_for "Fisk: disk space logs" 15; then
    render select || fail "screenshots: rendering the vim.ui.select list"
  else
    fail "screenshots: the vim.ui.select list did not open"
  fi
fi

if [ "$failed" = 0 ] && [ "${FISK_UPDATE_SCREENSHOTS:-0}" = 1 ]; then
  mkdir -p "$plugin/media"
  for name in live select; do
    cp "$ARTIFACTS_DIR/neovim-$name.png" "$plugin/media/$name.png" && echo "# updated media/$name.png"
  done
fi
exit "$failed"
