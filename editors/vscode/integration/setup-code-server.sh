#!/usr/bin/env bash
# Installs code-server 4.99.4 (VS Code 1.99, the last 4.x made for Node 20) and
# playwright-core into $CODE_SERVER_DIR (default /tmp/kernaut-code-server) from the npm
# registry alone: code-server's postinstall downloads ripgrep and native-module
# binaries from GitHub, which this machine cannot reach, so the same steps are done by
# hand with the scripts skipped: Debian's ripgrep, and the native modules built from
# source against /usr's Node headers.
# Needs: apt-get install -y chromium ripgrep libkrb5-dev build-essential python3
set -euo pipefail
dir="${CODE_SERVER_DIR:-/tmp/kernaut-code-server}"
version="${CODE_SERVER_VERSION:-4.99.4}"
mkdir -p "$dir"
cd "$dir"
[ -f package.json ] || echo '{"name":"kernaut-code-server","private":true}' > package.json
export npm_config_nodedir="${npm_config_nodedir:-/usr}"
npm install --no-audit --no-fund --ignore-scripts "code-server@$version" playwright-core@1
# argon2 (code-server's password hashing, loaded at start): build from source.
(cd node_modules/argon2 && ../.bin/node-pre-gyp install --fallback-to-build --nodedir="$npm_config_nodedir")
cs="$dir/node_modules/code-server"
cd "$cs/lib/vscode"
npm install --omit=dev --ignore-scripts --no-audit --no-fund
mkdir -p node_modules/@vscode/ripgrep/bin
ln -sf "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
# node-pty's own post-install step (compile_commands.json) wants npx to fetch node-gyp
# and fails; the module itself is built by then, so the .node files are checked instead.
npm rebuild @vscode/spdlog native-watchdog @vscode/deviceid kerberos node-pty >/dev/null 2>&1 || true
for f in @vscode/spdlog/build/Release/spdlog.node native-watchdog/build/Release/watchdog.node \
  node-pty/build/Release/pty.node kerberos/build/Release/kerberos.node; do
  [ -f "node_modules/$f" ] || { echo "native module missing: $f" >&2; exit 1; }
done
# What postinstall.sh does after its npm install.
ln -sfn node_modules node_modules.asar
(cd bin/remote-cli && ln -sf code-linux.sh code-server)
(cd bin/helpers && ln -sf browser-linux.sh browser.sh)
(cd extensions && npm install --omit=dev --ignore-scripts --no-audit --no-fund)
node "$cs/out/node/entry.js" --version
