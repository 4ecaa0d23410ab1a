#!/usr/bin/env bash
# sagasu beside the strongest keyword engines, on the same text and queries:
# tantivy (PyPI wheel 0.27.0, through its Python bindings, timed inside the
# process), Lucene 9.12.3 (Maven Central; EnglishAnalyzer, one segment) and
# PISA (PyPI pyterrier-pisa 0.4.9, block-max WAND). Prints one table:
# indexing MB/s and CPU per 100 MB, index size, query p50/p99 with IDs and
# scores (the SciFact set and the titles set), RSS while serving, SciFact
# nDCG@10 with each engine's own analysis, and the load average.
#
#   bash scripts/peers.sh                          # 100,000 chunks, every engine
#   CHUNKS=10000 PEERS="tantivy lucene" bash scripts/peers.sh
#   SAGASU=/path/to/sagasu WORK=/tmp/peers bash scripts/peers.sh   # keep the files
#
# Every engine is fed the chunks `sagasu bench --chunks N` indexes, as
# `sagasu bench --export-chunks` writes them (title, heading path and text
# as one field for the peers), and the same queries: SciFact's 300 (the
# "SciFact set") and the first 1,000 titles of the corpus (the "titles
# set"), k = 10, one client, 20 untimed queries first. Engines run one at a
# time, each index then served by a new process (so "RSS while serving" is
# a process that did not index). sagasu's query time is its store's
# (IDs and scores, as the peers return them); engine.Search, the hits with
# text, is printed under the table.
#
# Environment: CHUNKS (100000), DATA (../shared/data/scifact), PEERS
# ("tantivy lucene pisa"), PEERS_TOOLS (.tools/peers: the Python venv and
# the Lucene jars, installed on first use), SAGASU (a sagasu binary; built
# from this tree when unset), WORK (a folder for the files; a temporary one
# removed at the end when unset). Needs python3 (venv), a JDK 17 and mvn.
# Not part of make test.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
here="$root/scripts/peers"
chunks="${CHUNKS:-100000}"
data="${DATA:-$root/../shared/data/scifact}"
engines="${PEERS:-tantivy lucene pisa}"
tools="${PEERS_TOOLS:-$root/.tools/peers}"
if [[ ! -f "$data/corpus.jsonl" || ! -f "$data/queries.jsonl" || ! -f "$data/qrels/test.tsv" ]]; then
  echo "peers: no BEIR SciFact at $data: set DATA to a folder with corpus.jsonl, queries.jsonl and qrels/test.tsv" >&2
  exit 2
fi
if [[ -n "${WORK:-}" ]]; then
  work="$WORK"
  mkdir -p "$work"
else
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi
log() { echo "peers: $*" >&2; }

# --- install (once) ---
mkdir -p "$tools"
py="$tools/venv/bin/python"
if [[ ! -x "$py" ]] || ! "$py" -c 'import tantivy, pyterrier_pisa' 2>/dev/null; then
  log "installing tantivy 0.27.0 and pyterrier-pisa 0.4.9 into $tools/venv"
  python3 -m venv "$tools/venv"
  "$tools/venv/bin/pip" install -q tantivy==0.27.0 pyterrier-pisa==0.4.9
fi
lucene="$tools/lucene"
if [[ ! -f "$lucene/classes/LucenePeer.class" || "$here/LucenePeer.java" -nt "$lucene/classes/LucenePeer.class" ]]; then
  log "installing Lucene 9.12.3 into $lucene"
  for a in lucene-core lucene-analysis-common lucene-queryparser; do
    [[ -f "$lucene/$a-9.12.3.jar" ]] || mvn -q dependency:copy -Dartifact="org.apache.lucene:$a:9.12.3" -DoutputDirectory="$lucene" >&2
  done
  javac -cp "$lucene/*" -d "$lucene/classes" "$here/LucenePeer.java"
fi
sagasu="${SAGASU:-}"
if [[ -z "$sagasu" ]]; then
  log "building sagasu"
  (cd "$root" && CGO_ENABLED=0 go build -trimpath -o "$work/sagasu" ./cmd/sagasu)
  sagasu="$work/sagasu"
fi

peer() { # peer ENGINE ARGS...
  local e=$1
  shift
  case "$e" in
    tantivy) "$py" "$here/tantivy_peer.py" "$@" ;;
    pisa) "$py" "$here/pisa_peer.py" "$@" ;;
    lucene) java -cp "$lucene/*:$lucene/classes" LucenePeer "$@" ;;
    *) echo "peers: unknown engine $e (tantivy, lucene, pisa)" >&2; return 2 ;;
  esac
}

# --- the same inputs for everyone ---
cut -d' ' -f1-3 /proc/loadavg >"$work/load.txt"
log "exporting the chunks of sagasu bench --chunks $chunks"
"$sagasu" --json bench --chunks "$chunks" --corpus "$data/corpus.jsonl" --export-chunks "$work/chunks.jsonl" >"$work/export.json"
"$py" "$here/report.py" titles "$data/corpus.jsonl" 1000 "$work/titles.jsonl"
"$py" "$here/report.py" beir-chunks "$data/corpus.jsonl" "$work/scifact-chunks.jsonl"
cp "$data/qrels/test.tsv" "$work/qrels.tsv"
sets=(scifact="$data/queries.jsonl" titles="$work/titles.jsonl")

# --- sagasu ---
log "sagasu: indexing and the SciFact set"
rm -f "$work/sagasu.db"*
"$sagasu" --json --db "$work/sagasu.db" bench --chunks "$chunks" --corpus "$data/corpus.jsonl" --mode keyword >"$work/sagasu-scifact.json" 2>>"$work/sagasu.log"
log "sagasu: the titles set (a new process on the same index)"
"$sagasu" --json --db "$work/sagasu.db" bench --chunks "$chunks" --corpus "$data/corpus.jsonl" --mode keyword --queries-file "$work/titles.jsonl" >"$work/sagasu-titles.json" 2>>"$work/sagasu.log"
rm -f "$work/sagasu.db"*
log "sagasu: SciFact nDCG@10"
"$sagasu" --json eval beir --dataset "$data" --mode keyword >"$work/sagasu-eval.json" 2>>"$work/sagasu.log"

# --- the peers, one at a time ---
for e in $engines; do
  log "$e: indexing"
  rm -rf "$work/$e-index" "$work/$e-scifact-index"
  peer "$e" index "$work/chunks.jsonl" "$work/$e-index" >"$work/$e-index.json" 2>>"$work/$e.log"
  log "$e: serving both sets"
  peer "$e" serve "$work/$e-index" "${sets[@]}" >"$work/$e-serve.json" 2>>"$work/$e.log"
  rm -rf "$work/$e-index"
  log "$e: SciFact nDCG@10"
  peer "$e" index "$work/scifact-chunks.jsonl" "$work/$e-scifact-index" >/dev/null 2>>"$work/$e.log"
  peer "$e" serve "$work/$e-scifact-index" scifact="$data/queries.jsonl" --run "$work/$e-scifact.run" >"$work/$e-scifact-serve.json" 2>>"$work/$e.log"
  rm -rf "$work/$e-scifact-index"
done
cut -d' ' -f1-3 /proc/loadavg >>"$work/load.txt"
"$py" "$here/report.py" table "$work"
