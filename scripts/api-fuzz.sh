#!/usr/bin/env bash
# Fuzzes the web page's HTTP API (GET /api/openapi.json) with schemathesis
# against a real `sagasu serve` on loopback, with a token, bounded in time.
#
#   bash scripts/api-fuzz.sh                 # 120 s of fuzzing
#   FUZZ_SECONDS=600 bash scripts/api-fuzz.sh
#
# It builds sagasu, indexes a few documents (and a .env beside them that
# must never come back), starts the server, runs schemathesis (pinned, in a
# virtualenv under .tools/, from PyPI) with every check, then checks that
# the server is still up and never panicked, that every source indexed
# before is still there with the same content, and that the .env was
# neither indexed nor answered. Exits non-zero on any failure. Not part of
# `make test`: it takes minutes and needs PyPI once.
set -euo pipefail

SCHEMATHESIS_VERSION=4.32.5
FUZZ_SECONDS="${FUZZ_SECONDS:-120}"

root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${SAGASU_FUZZ_VENV:-$root/.tools/schemathesis}"
work="$(mktemp -d)"
out="${SAGASU_ARTIFACTS:-$work}/api-fuzz"
mkdir -p "$out"
serve_pid=""
cleanup() {
	if [ -n "$serve_pid" ]; then kill "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true; fi
	rm -rf "$work/ws"
}
trap cleanup EXIT

if [ ! -x "$venv/bin/st" ] || ! "$venv/bin/st" --version 2>/dev/null | grep -q "$SCHEMATHESIS_VERSION"; then
	echo "api-fuzz: installing schemathesis $SCHEMATHESIS_VERSION into $venv" >&2
	python3 -m venv "$venv"
	"$venv/bin/pip" install -q "schemathesis==$SCHEMATHESIS_VERSION"
fi

echo "api-fuzz: building sagasu" >&2
(cd "$root" && CGO_ENABLED=0 go build -o "$work/sagasu" ./cmd/sagasu)
bin="$work/sagasu"

ws="$work/ws"
mkdir -p "$ws/docs"
printf '# API keys\n\n## Rotate the keys\n\nRun acme keys rotate, then restart the server.\n' >"$ws/docs/keys.md"
printf '# Deploy\n\nDeploy with acme deploy; it uploads the build folder.\n' >"$ws/docs/deploy.md"
printf '# 設定\n\nサイドバーは設定ファイルで指定します。\n' >"$ws/docs/ja.md"
printf 'API_KEY=sk-fuzz-must-never-come-back\n' >"$ws/.env"
db="$ws/.sagasu/sagasu.db"
export HOME="$ws" XDG_CONFIG_HOME="$ws/.config" SAGASU_LLM= SAGASU_EMBEDDER=
(cd "$ws" && "$bin" --db "$db" index docs >/dev/null)

snapshot() { # every source's URI and the SHA-256 of its content
	(cd "$ws" && "$bin" --db "$db" list --json) | python3 -c '
import json, sys, subprocess, hashlib
bin, db = sys.argv[1], sys.argv[2]
for s in sorted(json.load(sys.stdin)["sources"], key=lambda s: s["uri"]):
    out = subprocess.run([bin, "--db", db, "get", "--json", s["id"]], capture_output=True, check=True).stdout
    print(s["uri"], hashlib.sha256(json.loads(out)["content"].encode()).hexdigest())
' "$bin" "$db"
}
snapshot >"$out/before.txt"

(cd "$ws" && exec "$bin" --db "$db" serve --listen 127.0.0.1:0) >"$out/serve.log" 2>&1 &
serve_pid=$!
link=""
for _ in $(seq 100); do
	link="$(grep -o 'http://127\.0\.0\.1:[0-9]*/#token=[0-9a-f]*' "$out/serve.log" || true)"
	[ -n "$link" ] && break
	sleep 0.1
done
[ -n "$link" ] || { echo "api-fuzz: sagasu serve printed no link:" >&2; cat "$out/serve.log" >&2; exit 1; }
base="${link%%/#token=*}"
token="${link##*token=}"
echo "api-fuzz: fuzzing $base for ${FUZZ_SECONDS}s (report in $out)" >&2

status=0
# Run from the report folder: schemathesis keeps its example database
# (.schemathesis/) in the working directory.
(cd "$out" && "$venv/bin/st" --config-file "$root/scripts/api-fuzz.toml" run "$base/api/openapi.json" \
	-H "Authorization: Bearer $token" \
	--checks all --max-time "$FUZZ_SECONDS" --request-timeout 10 --workers 2 \
	--seed "${FUZZ_SEED:-24}" --no-color --output-sanitize true \
	--report junit,ndjson --report-dir "$out" >"$out/schemathesis.txt" 2>&1) || status=$?
tail -n 40 "$out/schemathesis.txt"

fail() { echo "api-fuzz: $*" >&2; status=1; }
kill -0 "$serve_pid" 2>/dev/null || fail "sagasu serve died during the run (see $out/serve.log)"
grep -q "panic" "$out/serve.log" && fail "sagasu serve panicked (see $out/serve.log)"
# A 5xx is a finding even when a check did not flag it.
if grep -qE '"status_code": ?5[0-9][0-9]' "$out"/*.ndjson 2>/dev/null; then
	fail "the server answered 5xx (see $out/*.ndjson)"
fi
kill "$serve_pid" && wait "$serve_pid" 2>/dev/null || true
serve_pid=""
snapshot >"$out/after.txt"
# Everything indexed before is still there, unchanged (the run may add).
missing="$(comm -23 "$out/before.txt" "$out/after.txt")"
[ -z "$missing" ] || fail "sources lost or changed by the run: $missing"
grep -q "\.env" "$out/after.txt" && fail "the .env was indexed"
grep -rq "sk-fuzz-must-never-come-back" "$out"/*.ndjson 2>/dev/null && fail "an answer carried the .env's content"
echo "api-fuzz: $(wc -l <"$out/before.txt") sources before, $(wc -l <"$out/after.txt") after; schemathesis exit $status" >&2
exit "$status"
