#!/usr/bin/env bash
# sagasu's keyword cost curve: `sagasu bench --mode keyword` at each size,
# one after the other on fresh indexes, as one table (indexing MB/s and CPU
# per 100 MB, index size, warm / store / cold / one-shot p50, serving RSS
# and peak RSS), with the load average before and after each run.
#
#   bash scripts/curve.sh                         # 10,000, 100,000 and 1,000,000 chunks
#   SIZES="10000 30000" bash scripts/curve.sh
#   SAGASU=bin/sagasu bash scripts/curve.sh
#
# Environment: SIZES ("10000 100000 1000000"), CORPUS
# (../shared/data/scifact/corpus.jsonl), SAGASU (a sagasu binary; built
# from this tree when unset). The million-chunk run takes tens of minutes
# and about 2 GB of disk in a temporary folder. Not part of make test.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sizes="${SIZES:-10000 100000 1000000}"
corpus="${CORPUS:-$root/../shared/data/scifact/corpus.jsonl}"
if [[ ! -f "$corpus" ]]; then
  echo "curve: no corpus at $corpus: set CORPUS to a BEIR corpus.jsonl" >&2
  exit 2
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
sagasu="${SAGASU:-}"
if [[ -z "$sagasu" ]]; then
  echo "curve: building sagasu" >&2
  (cd "$root" && CGO_ENABLED=0 go build -trimpath -o "$work/sagasu" ./cmd/sagasu)
  sagasu="$work/sagasu"
fi
for n in $sizes; do
  echo "curve: $n chunks" >&2
  before="$(cut -d' ' -f1 /proc/loadavg)"
  "$sagasu" --json --db "$work/curve.db" bench --chunks "$n" --corpus "$corpus" --mode keyword >"$work/$n.json"
  after="$(cut -d' ' -f1 /proc/loadavg)"
  echo "$before $after" >"$work/$n.load"
  rm -f "$work/curve.db"*
done
python3 - "$work" $sizes <<'EOF'
import json, sys
work, sizes = sys.argv[1], sys.argv[2:]
rows = [
    ("chunks / MB of text", lambda r: f"{r['chunks']:,} / {r['mb']:.1f}"),
    ("indexing MB/s (wall)", lambda r: f"{r['mbPerSecond']:.2f}"),
    ("indexing CPU s per 100 MB", lambda r: f"{100 * r.get('indexCpuSeconds', 0) / r['mb']:.1f}"),
    ("index MB (× the text)", lambda r: f"{r['dbBytes'] / 1e6:.1f} ({r['dbBytes'] / 1e6 / r['mb']:.2f}×)"),
    ("warm p50 / p99 ms (engine.Search)", lambda r: f"{r['latencyMs']['p50']:.2f} / {r['latencyMs']['p99']:.2f}"),
    ("store p50 / p99 ms (IDs and scores)", lambda r: f"{r['storeLatencyMs']['p50']:.2f} / {r['storeLatencyMs']['p99']:.2f}" if r.get('storeLatencyMs') else ""),
    ("cold p50 / p99 ms", lambda r: f"{r['coldLatencyMs']['p50']:.2f} / {r['coldLatencyMs']['p99']:.2f}" if r.get('coldLatencyMs') else ""),
    ("open + query p50 ms", lambda r: f"{r['oneShotMs']['p50']:.2f}" if r.get('oneShotMs') else ""),
    ("keyword cache MB / load s", lambda r: f"{r.get('keywordCacheMb', 0):.0f} / {r.get('warmSeconds', 0):.1f}"),
    ("RSS serving / peak indexing MB", lambda r: f"{r.get('serveRssMb', 0):.0f} / {r.get('indexPeakRssMb', 0):.0f}"),
]
res = {n: json.load(open(f"{work}/{n}.json")) for n in sizes}
loads = {n: open(f"{work}/{n}.load").read().split() for n in sizes}
print("| | " + " | ".join(f"{int(n):,}" for n in sizes) + " |")
print("|---|" + "---:|" * len(sizes))
for label, f in rows:
    print(f"| {label} | " + " | ".join(f(res[n]) for n in sizes) + " |")
print("| load average before → after | " + " | ".join(f"{a} → {b}" for a, b in (loads[n] for n in sizes)) + " |")
EOF
