#!/usr/bin/env bash
# Prints the kernaut-lsp the editor tests talk to: $KERNAUT_LSP when set, else the debug
# build of this checkout (cargo builds it when it is missing or older than the sources).
# The tests always run against the real server: what they assert is what a user sees.
set -euo pipefail
if [ -n "${KERNAUT_LSP:-}" ]; then
  echo "$KERNAUT_LSP"
  exit 0
fi
repo="$(cd "$(dirname "$0")/../.." && pwd)"
command -v cargo >/dev/null || { echo "KERNAUT_LSP is not set and cargo is not installed to build kernaut-lsp" >&2; exit 2; }
(cd "$repo" && cargo build -q -p kernaut-lsp >&2)
echo "${CARGO_TARGET_DIR:-$repo/target}/debug/kernaut-lsp"
