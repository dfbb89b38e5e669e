#!/usr/bin/env bash
# Runs bench/index-scale.ts over a grid, one process per backend and size (RSS stays per run).
#   bench/index-scale.sh "in-memory lancedb pglite postgres" "10000 100000 1000000" [extra args]
# Each run appends one JSON line to bench/results/index-scale.jsonl (or --out).
set -u
backends=${1:-"in-memory lancedb pglite postgres"}
sizes=${2:-"10000 100000 1000000"}
shift 2 || true
cd "$(dirname "$0")/.."
for size in $sizes; do
  for backend in $backends; do
    if [ "$backend" = postgres ] && [ -z "${DATABASE_URL:-}" ]; then continue; fi
    NODE_OPTIONS="--max-old-space-size=16000" timeout 3600 npx tsx bench/index-scale.ts --backend "$backend" --size "$size" "$@" \
      || echo "{\"backend\":\"$backend\",\"size\":$size,\"failed\":true}" >> "${OUT:-bench/results/index-scale.jsonl}"
  done
done
