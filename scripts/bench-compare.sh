#!/usr/bin/env bash
# Before/after benchmark in one run: builds sagasu from the working tree
# (after) and, with BEFORE=<commit>, from that commit too, then runs
# `sagasu bench` for each build in alternating rounds on a fresh index each
# time, and prints the median of each number per build.
#
#   BEFORE=0ce7421 scripts/bench-compare.sh                  # 100,000 chunks, keyword
#   BEFORE=0ce7421 CHUNKS=20000 ROUNDS=3 scripts/bench-compare.sh
#   DB=postgres://... BEFORE=0ce7421 scripts/bench-compare.sh  # a server (one schema per build)
#
# Environment: CHUNKS (100000), ROUNDS (2), CORPUS (../shared/data/scifact/
# corpus.jsonl), MODE (keyword), DB (a temporary SQLite file per run; a
# postgres:// DSN gets a schema per build). Extra arguments go to every
# `sagasu bench`. Progress goes to stderr; the table to stdout.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
chunks="${CHUNKS:-100000}"
rounds="${ROUNDS:-2}"
corpus="${CORPUS:-$root/../shared/data/scifact/corpus.jsonl}"
mode="${MODE:-keyword}"
if [[ ! -f "$corpus" ]]; then
  echo "bench-compare: no corpus at $corpus: set CORPUS to a BEIR corpus.jsonl" >&2
  exit 2
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cd "$root"
names=()
if [[ -n "${BEFORE:-}" ]]; then
  mkdir -p "$work/src-before"
  git archive "$BEFORE" | tar -x -C "$work/src-before"
  echo "building $BEFORE ..." >&2
  (cd "$work/src-before" && go build -o "$work/before" ./cmd/sagasu)
  names+=(before)
fi
echo "building the working tree ..." >&2
go build -o "$work/after" ./cmd/sagasu
names+=(after)

for ((r = 1; r <= rounds; r++)); do
  for n in "${names[@]}"; do
    db="$work/$n-$r.db"
    if [[ "${DB:-}" == postgres* ]]; then
      sep='?'; [[ "$DB" == *\?* ]] && sep='&'
      db="$DB${sep}schema=bench_${n}_$r"
    fi
    echo "round $r: $n ..." >&2
    "$work/$n" bench --json --chunks "$chunks" --corpus "$corpus" --mode "$mode" --db "$db" "$@" > "$work/$n-$r.json"
  done
done

python3 - "$work" "$rounds" "${names[@]}" <<'PY'
import json, statistics, sys
work, rounds, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
rows = [
    ("indexing MB/s", lambda d: d["mbPerSecond"], "{:.2f}"),
    ("indexing s", lambda d: d["indexSeconds"], "{:.1f}"),
    ("warm-up s", lambda d: d.get("warmSeconds", 0), "{:.2f}"),
    ("query p50 ms", lambda d: d["latencyMs"]["p50"], "{:.2f}"),
    ("query p99 ms", lambda d: d["latencyMs"]["p99"], "{:.2f}"),
    ("database MB", lambda d: d["dbBytes"] / 1e6, "{:.1f}"),
    ("database / text", lambda d: d["dbBytes"] / 1e6 / d["mb"], "{:.2f}x"),
    ("peak RSS MB", lambda d: d["peakRssMb"], "{:.0f}"),
]
runs = {n: [json.load(open(f"{work}/{n}-{r}.json")) for r in range(1, rounds + 1)] for n in names}
first = runs[names[-1]][0]
print(f"{first['chunks']} chunks, {first['mb']:.1f} MB of text, {first['queries']} {first['mode']} queries; median of {rounds} runs")
print("| | " + " | ".join(names) + " |")
print("|---|" + "---|" * len(names))
for label, get, fmt in rows:
    print(f"| {label} | " + " | ".join(fmt.format(statistics.median(get(d) for d in runs[n])) for n in names) + " |")
PY
