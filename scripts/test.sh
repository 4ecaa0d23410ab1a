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
#                         when it exists; without it the data tests skip)
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

# PostgreSQL with pgvector.
if [[ -z ${SAGASU_TEST_POSTGRES:-} ]]; then
	if ! dsn=$(bash scripts/postgres.sh); then
		say "PostgreSQL setup failed (scripts/postgres.sh above); fix it or set SAGASU_TEST_POSTGRES to a server of your own" >&2
		exit 1
	fi
	export SAGASU_TEST_POSTGRES=${dsn##*$'\n'}
fi
say "PostgreSQL: $(sed -E 's#^[a-z]+://([^@]*@)?([^/?]*).*#\2#' <<<"$SAGASU_TEST_POSTGRES")"

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
"$GO" test -count=1 -json ${GOTESTFLAGS:-} ./... | "$GO" run ./scripts/testreport

# The permission tests again, as an unprivileged user.
bash scripts/unprivileged-tests.sh
