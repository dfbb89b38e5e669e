#!/bin/sh
# Copies the current build (packages/*/dist + package.json) to DIR as a runnable tree whose
# dependencies resolve to this checkout's node_modules, so a bench can run the previous build
# beside the new one in the same run (e.g. `--cli DIR/packages/server/dist/cli.js`).
#   bench/snapshot-build.sh /tmp/ma-baseline
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:?usage: bench/snapshot-build.sh DIR}
rm -rf "$dir"
mkdir -p "$dir/node_modules/@memory-agents"
for package in "$root"/packages/*/; do
  name=$(basename "$package")
  mkdir -p "$dir/packages/$name"
  cp "$package/package.json" "$dir/packages/$name/"
  [ -d "$package/dist" ] && cp -a "$package/dist" "$dir/packages/$name/"
  # A package's own dependencies (npm nests a version the root does not hold, e.g. onnxruntime-node).
  [ -d "$package/node_modules" ] && ln -s "$package/node_modules" "$dir/packages/$name/node_modules"
  ln -s "../../packages/$name" "$dir/node_modules/@memory-agents/$name"
done
for entry in "$root"/node_modules/* "$root"/node_modules/.bin; do
  [ "$(basename "$entry")" = "@memory-agents" ] && continue
  ln -s "$entry" "$dir/node_modules/$(basename "$entry")"
done
echo "$dir/packages/server/dist/cli.js"
