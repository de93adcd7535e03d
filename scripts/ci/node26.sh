#!/usr/bin/env bash
# Prints the path of a Node.js 26 binary, fetching it first if needed: the npm `node` package, as the
# pinned Node.js 24 is (the `node` devDependency), installed under .tools/ (gitignored). Not a
# devDependency: two `node` packages in one node_modules fight over node_modules/.bin/node.
#
#   "$(bash scripts/ci/node26.sh)" node_modules/vitest/vitest.mjs run test/unit
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
NODE26_VERSION="26.10.0"
TOOLS="$ROOT/.tools/node-$NODE26_VERSION"
NODE="$TOOLS/node_modules/node/bin/node"

if [ ! -x "$NODE" ] || [ "$("$NODE" --version 2>/dev/null)" != "v$NODE26_VERSION" ]; then
  echo "--- fetching Node.js $NODE26_VERSION (npm package node@$NODE26_VERSION) into ${TOOLS#"$ROOT"/}" >&2
  rm -rf "$TOOLS"
  mkdir -p "$TOOLS"
  printf '{"name":"node26","private":true,"allowScripts":{"node":true}}\n' >"$TOOLS/package.json"
  # The package's install script fetches the node-linux-<arch> binary package from the same registry.
  (cd "$TOOLS" && npm install --no-audit --no-fund --no-package-lock "node@$NODE26_VERSION" >&2)
  [ "$("$NODE" --version)" = "v$NODE26_VERSION" ] ||
    { echo "node26.sh: $NODE is not Node.js $NODE26_VERSION" >&2; exit 1; }
fi
echo "$NODE"
