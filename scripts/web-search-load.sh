#!/usr/bin/env bash
# Times searches through a real `sagasu serve`, as the page makes them:
# starts BIN serve on DB, waits WARM seconds for its caches to load, sends
# every query of QUERIES (a BEIR queries.jsonl) twice to /api/search, one at
# a time, and prints the time a search took (client included), the server's
# CPU seconds from its start, and its resident memory after the searches.
#   scripts/web-search-load.sh ./sagasu /tmp/b100k.db ../shared/data/scifact/queries.jsonl
# Copy a freshly built binary before timing it (cp sagasu /tmp/s): a file
# just written by `go build` can sit in the page cache in larger pages and
# show more resident memory for the same program.
set -euo pipefail
bin="$1" db="$2" queries="$3" warm="${WARM:-8}" mode="${MODE:-keyword}"
out="$(mktemp)"
trap 'rm -f "$out"; [[ -n "${pid:-}" ]] && kill "$pid" 2>/dev/null || true' EXIT
"$bin" serve --db "$db" --listen 127.0.0.1:0 >"$out" 2>/dev/null &
pid=$!
for _ in $(seq 100); do grep -q 'token=' "$out" && break; sleep 0.1; done
url="$(grep -o 'http://[^ ]*#token=[a-f0-9]*' "$out")"
sleep "$warm"
python3 - "${url%/#*}" "${url#*token=}" "$queries" "$mode" <<'PY'
import json, sys, time, urllib.request
base, token, path, mode = sys.argv[1:]
qs = [json.loads(l)["text"] for l in open(path) if l.strip()]
start = time.time()
for q in qs * 2:
    req = urllib.request.Request(base + "/api/search", data=json.dumps({"query": q, "mode": mode}).encode(),
                                 headers={"Authorization": "Bearer " + token, "Content-Type": "application/json", "X-Sagasu": "1"})
    urllib.request.urlopen(req).read()
print("searches %d, %.2f ms a search" % (2 * len(qs), (time.time() - start) / (2 * len(qs)) * 1000), end=", ")
PY
read -r utime stime < <(awk '{print $14, $15}' "/proc/$pid/stat")
echo "server CPU $(( (utime + stime) / 100 )).$(printf '%02d' $(( (utime + stime) % 100 ))) s, RSS $(awk '/VmRSS/ {print int($2/1024)}' "/proc/$pid/status") MB, load $(cut -d' ' -f1-3 /proc/loadavg)"
