#!/usr/bin/env bash
# unprivileged-tests.sh: the tests of unreadable files and folders, run as the
# user nobody. As root every read succeeds, so these tests skip there; here a
# skip is a failure (SAGASU_TEST_UNPRIVILEGED=1 tells them so). When this
# script does not run as root, `go test` already ran them unprivileged.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
GO=${GO:-go}
if [[ $(id -u) != 0 ]]; then
	echo "unprivileged-tests.sh: not root: go test ran the permission tests already"
	exit 0
fi
if ! command -v runuser >/dev/null; then
	echo "unprivileged-tests.sh: runuser (util-linux) is needed to run tests as nobody" >&2
	exit 1
fi
bins=$(mktemp -d)
trap 'rm -rf "$bins"' EXIT
chmod 755 "$bins"
# package => the tests that need a user whom permissions apply to
declare -A tests=(
	[./internal/source]='^TestWalkUnreadable$'
	[./internal/agentcache]='^TestUnreadableFolderIsAClearErrorAndLosesNothing$'
	[./internal/loop]='^TestRunWithAnUnreadableCache$'
)
status=0
for pkg in "${!tests[@]}"; do
	bin=$bins/$(basename "$pkg").test
	"$GO" test -c -o "$bin" "$pkg"
	chmod 755 "$bin"
	echo "unprivileged-tests.sh: $pkg ${tests[$pkg]} as nobody"
	log=$bins/$(basename "$pkg").log
	rc=0
	(cd "$bins" && runuser -u nobody -- env HOME="$bins" TMPDIR=/tmp SAGASU_TEST_UNPRIVILEGED=1 \
		"$bin" -test.run "${tests[$pkg]}" -test.count=1 -test.v) >"$log" 2>&1 || rc=$?
	grep -E '^\s*(--- |\S+\.go:[0-9]+:)' "$log" || true
	if ((rc != 0)) || grep -q -- '--- SKIP' "$log" || ! grep -q -- '--- PASS' "$log"; then
		cat "$log"
		status=1
	fi
done
exit $status
