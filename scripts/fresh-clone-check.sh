#!/usr/bin/env bash
# The first run of a newcomer, checked: clone the committed checkout into a temporary directory
# (so no ../shared lies beside it), `npm install` once, then `npx memory-agents --version`, start
# `serve` on a fresh data dir and call GET /v1/session with the key it printed. With --test, also
# run `npm test` there (the tests that need ../shared skip, CI unset so they may).
# Usage: bash scripts/fresh-clone-check.sh [--test]
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
server_pid=
# `serve` runs in a process group of its own (setsid): npx starts the real node process as a child,
# and killing npx alone left that node running (with the data dir open) after the check. Stopping
# the group stops both; a process still naming the data dir 10 s later fails the check.
stop_server() {
  kill -TERM -- "-$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  for _ in $(seq 1 100); do
    pgrep -f -- "$work/data" >/dev/null || { server_pid=; return 0; }
    sleep 0.1
  done
  echo "fresh clone: processes still running on $work/data after stopping serve:" >&2
  pgrep -a -f -- "$work/data" >&2 || true
  kill -KILL -- "-$server_pid" 2>/dev/null || true
  server_pid=
  return 1
}
cleanup() {
  if [ -n "$server_pid" ]; then stop_server || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
git clone -q . "$work/repo"
cd "$work/repo"
echo "fresh clone in $work/repo at $(git rev-parse --short HEAD); ../shared beside it: $([ -e ../shared ] && echo yes || echo no)"
npm install --no-audit --no-fund >"$work/install.log" 2>&1 || { tail -40 "$work/install.log"; echo "fresh clone: npm install failed" >&2; exit 1; }
echo "memory-agents --version: $(npx --no-install memory-agents --version)"
# Started from a non-interactive shell, setsid is not a group leader and does not fork: $! is the
# new group's leader and id.
setsid npx --no-install memory-agents serve --port 0 --data "$work/data" >"$work/serve.log" 2>&1 &
server_pid=$!
url=
for _ in $(seq 1 600); do
  url=$(sed -n 's/^memory-agents listening on \(http:[^ ]*\)$/\1/p' "$work/serve.log")
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/serve.log"; echo "fresh clone: serve exited before listening" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { cat "$work/serve.log"; echo "fresh clone: serve did not listen within 60 s" >&2; exit 1; }
key=$(sed -n 's/^  \(sp_[^ ]*\)$/\1/p' "$work/serve.log")
[ -n "$key" ] || { cat "$work/serve.log"; echo "fresh clone: serve printed no first key" >&2; exit 1; }
status=$(curl -s -o "$work/session.json" -w '%{http_code}' "$url/v1/session" -H "Authorization: Bearer $key")
[ "$status" = 200 ] || { cat "$work/session.json"; echo "fresh clone: GET /v1/session answered $status" >&2; exit 1; }
echo "serve on a fresh data dir: GET /v1/session 200 $(cat "$work/session.json")"
stop_server
echo "serve stopped: no process left on $work/data"
if [ "${1:-}" = "--test" ]; then
  env -u CI npm test
fi
echo "fresh clone: ok"
