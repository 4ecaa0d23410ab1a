#!/usr/bin/env bash
# FAISS's HNSW beside sagasu's, on the very same vectors and queries: the
# anchor for the vector index's build time, recall and latency.
#
#   bash scripts/faiss-hnsw.sh FROM.vec              # 1,000,000 vectors
#   N=100000 EF=128,256 bash scripts/faiss-hnsw.sh FROM.vec
#
# FROM.vec is a vector file of real embeddings (scripts/vecdata makes one
# from SciFact; see docs/performance.md). `sagasu bench --export-vectors`
# extends it to N vectors exactly as `sagasu bench --vectors N
# --vectors-from FROM.vec` does, FAISS (PyPI faiss-cpu 1.15.1, installed
# once into .tools/faiss) builds IndexHNSWFlat over them with sagasu's
# defaults (M 32, efConstruction 100, inner product on unit rows) on every
# core, and then sagasu's bench builds its own graph over the same file.
# Both print build time, recall@10 against the exact scan and one-thread
# query p50/p99 at each search list length in EF, and peak RSS; the load
# average is printed before and after each.
#
# Environment: N (1000000), EF (128,256,405), QUERIES (300), SAGASU (a
# sagasu binary; built from this tree when unset), WORK (a folder for the
# exported file; a temporary one removed at the end when unset), ENGINES
# ("faiss sagasu"). Not part of make test.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
from="${1:-}"
if [[ -z $from || ! -f $from ]]; then
  echo "faiss-hnsw: give a vector file of real embeddings (scripts/vecdata makes one; see docs/performance.md), not ${from:-nothing}" >&2
  exit 2
fi
n="${N:-1000000}"
ef="${EF:-128,256,405}"
queries="${QUERIES:-300}"
engines="${ENGINES:-faiss sagasu}"
tools="$root/.tools/faiss"
log() { echo "faiss-hnsw: $*" >&2; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

if [[ -n "${WORK:-}" ]]; then
  work="$WORK"
  mkdir -p "$work"
else
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi
sagasu="${SAGASU:-}"
if [[ -z $sagasu ]]; then
  sagasu="$work/sagasu"
  (cd "$root" && go build -o "$sagasu" ./cmd/sagasu)
fi
if [[ ! -x $tools/bin/python ]] || ! "$tools/bin/python" -c 'import faiss, numpy' 2>/dev/null; then
  log "installing faiss-cpu 1.15.1 into $tools"
  python3 -m venv "$tools"
  "$tools/bin/pip" install -q faiss-cpu==1.15.1 numpy==2.4.6
fi

vecs="$work/vectors-$n.vec"
[[ -f $vecs ]] || "$sagasu" bench --vectors "$n" --vectors-from "$from" --vector-queries "$queries" --export-vectors "$vecs" >&2

first="${ef%%,*}"
rest="${ef#"$first"}"
rest="${rest#,}"
for e in $engines; do
  case $e in
  faiss)
    echo "== FAISS  (load $(load))"
    /usr/bin/time -f "faiss: %e s wall, %U+%S s CPU, peak RSS %M KB" \
      "$tools/bin/python" "$root/scripts/peers/faiss_hnsw.py" "$vecs" --ef "$ef"
    ;;
  sagasu)
    echo "== sagasu (load $(load))"
    /usr/bin/time -f "sagasu: %e s wall, %U+%S s CPU, peak RSS %M KB" \
      "$sagasu" bench --vectors "$n" --vectors-from "$vecs" --vector-queries "$queries" \
      --vector-changes 0 --hnsw-ef "$first" ${rest:+--hnsw-ef-sweep "$rest"}
    ;;
  *) log "unknown engine $e (faiss, sagasu)"; exit 2 ;;
  esac
  echo "   (load after: $(load))"
done
