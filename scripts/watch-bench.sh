#!/usr/bin/env bash
# watch-bench.sh: what `sagasu index --watch` costs, measured on the real
# binary: its CPU time and memory while it watches a tree in which nothing
# changes, and the time from saving a file to the sync line that says it is
# written (searchable from then on), median of SAVES saves.
#
#   scripts/watch-bench.sh [FILES] [IDLE_SECONDS] [SAVES]   (default 10000 30 20)
#
# It builds sagasu into a temporary folder and removes everything it made.
set -euo pipefail
files=${1:-10000}
idle=${2:-30}
saves=${3:-20}
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
pid=
here=$(cd "$(dirname "$0")/.." && pwd)
(cd "$here" && CGO_ENABLED=0 go build -o "$work/sagasu" ./cmd/sagasu)
tree="$work/tree"
dirs=$(( files / 20 > 0 ? files / 20 : 1 ))
for ((d = 0; d < dirs; d++)); do mkdir -p "$tree/d$d"; done
for ((i = 0; i < files; i++)); do
  printf '# File %d\n\nSome text about topic %d and its details.\n' "$i" $(( i % 97 )) > "$tree/d$(( i % dirs ))/f$i.md"
done
out="$work/out"
"$work/sagasu" --db "$work/idx.db" index --watch "$tree" > "$out" 2> "$work/err" &
pid=$!
until grep -q watching "$work/err" 2>/dev/null; do sleep 0.1; done
sleep 3 # let the catch-up sync after the first run finish
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
c0=$(cpu)
sleep "$idle"
c1=$(cpu)
rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
watches=$(awk '/^inotify/ {n++} END {print n+0}' /proc/"$pid"/fdinfo/* 2>/dev/null)
echo "idle watch over $files files in $dirs folders for ${idle}s: cpu $(( (c1 - c0) * 1000 / ticks )) ms ($(awk -v c=$(( c1 - c0 )) -v t="$ticks" -v s="$idle" 'BEGIN {printf "%.3f", c * 1000 / t / s}') ms/s), rss $(( rss / 1024 )) MB, peak rss $(( hwm / 1024 )) MB, inotify watches $watches"

took=()
for ((i = 0; i < saves; i++)); do
  before=$(grep -c "synced" "$out" || true)
  start=$(date +%s%N)
  printf '# Saved\n\nThe word is quokka%d.\n' "$i" > "$tree/d0/saved.md"
  until [ "$(grep -c "synced" "$out" || true)" -gt "$before" ]; do sleep 0.002; done
  end=$(date +%s%N)
  took+=($(( (end - start) / 1000000 )))
  sleep 0.5
done
sorted=($(printf '%s\n' "${took[@]}" | sort -n))
echo "save to searchable over $saves saves: median ${sorted[$(( saves / 2 ))]} ms, min ${sorted[0]} ms, max ${sorted[$(( saves - 1 ))]} ms (debounce 300 ms)"
echo "load: $(uptime)"
