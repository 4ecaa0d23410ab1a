#!/usr/bin/env bash
# kill-trials.sh: kill -9 `sagasu index` at random moments and check that the
# index survives every time.
#
#   scripts/kill-trials.sh [TRIALS] [FILES] [MAXDELAY]   # defaults: 20, 1500, 8 s
#
# Each trial starts `sagasu index` on the same SQLite index (odd trials
# resume what earlier ones left, even ones rewrite everything with --force,
# so kills land both in first writes and in replacements of stored sources),
# kills it with SIGKILL after a random delay of up to MAXDELAY seconds,
# then checks the database: `PRAGMA integrity_check` must say ok, `sagasu
# info` and `sagasu query` must work, and no source may be stored twice.
# After the last trial one uninterrupted run must finish the job: every file
# indexed exactly once. It prints one line per trial and a summary, and exits
# non-zero when any check failed. Needs sqlite3 (Debian package sqlite3).
set -euo pipefail

TRIALS=${1:-20}
FILES=${2:-1500}
MAXDELAY=${3:-8}
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

command -v sqlite3 >/dev/null || { echo "kill-trials: sqlite3 is missing: apt-get install sqlite3" >&2; exit 1; }
(cd "$ROOT" && CGO_ENABLED=0 go build -o "$WORK/sagasu" ./cmd/sagasu)
BIN=$WORK/sagasu
DB=$WORK/idx.db

# A corpus of real prose: the repository's docs, repeated under numbered names
# with a line that makes every copy distinct.
mkdir -p "$WORK/corpus"
mapfile -t docs < <(cd "$ROOT" && ls docs/*.md README.md)
for ((i = 0; i < FILES; i++)); do
	f=${docs[i % ${#docs[@]}]}
	{ printf '# Copy %d of %s\n\n' "$i" "$f"; cat "$ROOT/$f"; } >"$WORK/corpus/$(printf '%05d' "$i").md"
done
size=$(du -sm "$WORK/corpus" | cut -f1)
echo "corpus: $FILES files, ${size} MB; $TRIALS trials"

failed=0
corrupt=0
check() { # check TRIAL: prints "ok" or what is wrong
	local what=""
	[[ -f $DB ]] || { echo "no database yet"; return 0; }
	local ic
	ic=$(sqlite3 "$DB" 'PRAGMA integrity_check;' 2>&1 | head -3 | tr '\n' ' ')
	[[ $ic == "ok " ]] || what+="integrity_check: $ic; "
	"$BIN" --db "$DB" info >/dev/null 2>"$WORK/err" || what+="info failed: $(head -c 200 "$WORK/err"); "
	"$BIN" --db "$DB" query "configuration settings" >/dev/null 2>"$WORK/err" || what+="query failed: $(head -c 200 "$WORK/err"); "
	local dups
	dups=$(sqlite3 "$DB" 'SELECT count(*) FROM (SELECT uri FROM sources GROUP BY uri HAVING count(*) > 1);' 2>&1)
	[[ $dups == 0 ]] || what+="duplicate sources: $dups; "
	echo "${what:-ok}"
}

for ((t = 1; t <= TRIALS; t++)); do
	delay=$(awk -v s="$RANDOM" -v m="$MAXDELAY" 'BEGIN { srand(s); printf "%.2f", 0.2 + rand() * (m - 0.2) }')
	force=()
	((t % 2 == 0)) && force=(--force)
	(cd "$WORK" && exec "$BIN" --db "$DB" index "${force[@]}" corpus >/dev/null 2>&1) &
	pid=$!
	sleep "$delay"
	if kill -9 "$pid" 2>/dev/null; then how="killed after ${delay}s"; else how="finished before ${delay}s"; fi
	wait "$pid" 2>/dev/null || true
	n=$(sqlite3 "$DB" 'SELECT count(*) FROM sources;' 2>/dev/null || echo "?")
	res=$(check)
	[[ $res == ok || $res == "no database yet" ]] || { failed=$((failed + 1)); [[ $res == *integrity_check* ]] && corrupt=$((corrupt + 1)); }
	printf 'trial %2d: %-8s %-22s sources %5s  %s\n' "$t" "${force[*]:-resume}" "$how" "$n" "$res"
done

(cd "$WORK" && "$BIN" --db "$DB" index corpus >/dev/null 2>"$WORK/err") || { echo "final run failed: $(cat "$WORK/err")"; failed=$((failed + 1)); }
n=$(sqlite3 "$DB" 'SELECT count(*) FROM sources;')
res=$(check)
echo "after a full run: $n sources (want $FILES), $res"
[[ $n == "$FILES" && $res == ok ]] || failed=$((failed + 1))
echo "summary: $TRIALS kill -9 trials, $corrupt corrupt, $failed failed checks"
[[ $failed == 0 ]]
