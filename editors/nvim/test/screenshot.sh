#!/usr/bin/env bash
# Takes docs/images/nvim-hover.png: Neovim in tmux with the kernaut plugin, hover (K) on
# __hfma2 and the bank-conflict diagnostic, read with `tmux capture-pane -e`, turned into
# HTML by aha and into a PNG by headless Chromium.
#   KERNAUT_LSP=/path/to/kernaut-lsp editors/nvim/test/screenshot.sh [OUT.png]
# Without KERNAUT_LSP: this checkout's server (editors/test-server/server-path.sh).
# Needs: tmux, neovim, aha, chromium.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
editors="$(cd "$here/../.." && pwd)"
out="${1:-$editors/../docs/images/nvim-hover.png}"
KERNAUT_LSP="$("$editors/test-server/server-path.sh")"
export KERNAUT_LSP
work="$(mktemp -d)"
sock="$work/tmux.sock"
trap 'tmux -S "$sock" kill-server 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/transpose"
cp "$editors/fixtures/hover.cu" "$work/transpose/hover.cu"
cat > "$work/init.lua" <<LUA
vim.opt.runtimepath:prepend("$editors/nvim")
vim.cmd("filetype plugin on | syntax on")
vim.o.number = true
vim.o.termguicolors = false
vim.o.background = "dark"
vim.o.laststatus = 2
vim.o.shortmess = vim.o.shortmess .. "I"
vim.o.signcolumn = "yes"
local function colors()
  vim.cmd([[
    hi Normal ctermfg=252 ctermbg=NONE
    hi NormalFloat ctermfg=252 ctermbg=236
    hi FloatBorder ctermfg=244 ctermbg=236
    hi SignColumn ctermbg=NONE
    hi LineNr ctermfg=240
    hi StatusLine ctermfg=252 ctermbg=238 cterm=NONE
    hi clear markdownError
    hi! link markdownError NormalFloat
    hi markdownItalic cterm=NONE
    hi markdownCode ctermfg=180
    hi markdownBold cterm=bold ctermfg=117
    hi DiagnosticVirtualTextWarn ctermfg=214
  ]])
end
colors()
vim.api.nvim_create_autocmd({ "Syntax", "FileType" }, { callback = colors })
vim.lsp.handlers["textDocument/hover"] = vim.lsp.with(vim.lsp.handlers.hover, { border = "rounded", max_width = 80, max_height = 16 })
require("kernaut").setup({
  cmd = { os.getenv("KERNAUT_LSP") },
  settings = { arch = "sm_90" },
  on_attach = function(_, buf)
    vim.keymap.set("n", "K", vim.lsp.buf.hover, { buffer = buf })
  end,
})
LUA
cd "$work/transpose"
tmux -S "$sock" -f /dev/null new-session -d -s shot -x 150 -y 30 \
  "env TERM=tmux-256color XDG_CACHE_HOME=$work/cache XDG_STATE_HOME=$work/state nvim -u $work/init.lua -i NONE -n hover.cu"
tmux -S "$sock" set -g status off
sleep 3
tmux -S "$sock" send-keys -t shot 7G 17\|
sleep 0.5
tmux -S "$sock" send-keys -t shot K
sleep 2
tmux -S "$sock" capture-pane -e -p -t shot > "$work/pane.ansi"
aha --black --title "nvim" < "$work/pane.ansi" > "$work/pane.html"
# A terminal-like font and line height.
sed -i 's|<pre>|<pre style="font-family: DejaVu Sans Mono, monospace; font-size: 14px; line-height: 17px; margin: 8px;">|' "$work/pane.html"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1260,540 \
  --screenshot="$out" "file://$work/pane.html" >/dev/null 2>&1
echo "wrote $out"
