#!/usr/bin/env bash
# Headless Neovim test of the kernaut plugin against a language server:
#   KERNAUT_LSP=/path/to/kernaut-lsp editors/nvim/test/run.sh
# Without KERNAUT_LSP it builds this checkout's server (editors/test-server/server-path.sh).
# Needs Neovim 0.7 or newer (Debian: apt-get install -y neovim).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
editors="$(cd "$here/../.." && pwd)"
KERNAUT_LSP="$("$editors/test-server/server-path.sh")"
export KERNAUT_LSP
nvim="${NVIM_BIN:-nvim}"
command -v "$nvim" >/dev/null || { echo "$nvim not found (apt-get install -y neovim)" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$editors/fixtures/hover.cu" "$work/hover.cu"
export KERNAUT_TEST_FILE="$work/hover.cu"
export KERNAUT_TEST_LOG="$work/cache/nvim/lsp.log"
export XDG_CACHE_HOME="$work/cache" XDG_STATE_HOME="$work/state" XDG_DATA_HOME="$work/data" XDG_CONFIG_HOME="$work/config"
echo "== $("$nvim" --version | head -1), server: $KERNAUT_LSP"
rc=0
timeout 120 "$nvim" --headless -u NONE -i NONE -n \
  --cmd "set rtp^=$editors/nvim" \
  -c "luafile $here/test.lua" </dev/null || rc=$?
if [ "$rc" -ne 0 ] && [ -s "$KERNAUT_TEST_LOG" ]; then
  echo "-- lsp log (last 40 lines)"; tail -40 "$KERNAUT_TEST_LOG"
fi
exit "$rc"
