#!/usr/bin/env bash
# Batch test of editors/emacs/kernaut.el with eglot:
#   KERNAUT_LSP=/path/to/kernaut-lsp editors/emacs/test/run.sh
# Without KERNAUT_LSP it builds this checkout's server (editors/test-server/server-path.sh).
# Needs Emacs 28 + eglot (Debian 12: apt-get install -y emacs-nox elpa-eglot) or Emacs 29+.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
editors="$(cd "$here/../.." && pwd)"
KERNAUT_LSP="$("$editors/test-server/server-path.sh")"
export KERNAUT_LSP
command -v emacs >/dev/null || { echo "emacs not found (apt-get install -y emacs-nox elpa-eglot)" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$editors/fixtures/hover.cu" "$work/hover.cu"
export KERNAUT_TEST_FILE="$work/hover.cu"
export HOME="$work"
echo "== $(emacs --version | head -1), server: $KERNAUT_LSP"
rc=0
echo "-- eglot"
# The server logs every diagnostics run (KERNAUT_LOG=debug): a diagnostic that never
# arrives shows, in the failure's list of messages, what the server did instead.
KERNAUT_LOG=debug timeout 180 emacs --batch -l "$here/kernaut-test.el" </dev/null 2>"$work/eglot.err" || { rc=1; tail -30 "$work/eglot.err"; }
if emacs --batch --eval "(progn (package-initialize) (require 'lsp-mode))" >/dev/null 2>&1; then
  echo "-- lsp-mode"
  cp "$editors/fixtures/hover.cu" "$work/hover.cu"
  timeout 120 emacs --batch -l "$here/kernaut-lsp-mode-test.el" </dev/null 2>"$work/lsp.err" || { rc=1; tail -30 "$work/lsp.err"; }
else
  echo "-- lsp-mode not installed (apt-get install -y elpa-lsp-mode): its test is skipped"
fi
exit "$rc"
