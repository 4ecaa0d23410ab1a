#!/usr/bin/env bash
# Installs playwright-core at a pinned version into .tools/web-test (which
# git ignores) for the browser test of `sagasu serve`
# (internal/web's TestBrowser). Never downloads a browser: npm runs no
# install scripts and PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD is set; the test
# drives Debian's chromium at /usr/bin/chromium, which
# scripts/playwright-mcp.sh installs. It installs Debian's fonts-noto-cjk
# when no Japanese font is present (scripts/cjk-fonts.sh). Idempotent: a second run with the same
# pin installs nothing. The last line printed is the install folder.
set -euo pipefail

PLAYWRIGHT_CORE_VERSION=1.65.1

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/.tools/web-test"
stamp="playwright-core-$PLAYWRIGHT_CORE_VERSION"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "web-test: node and npm are needed (apt-get install nodejs npm)" >&2
	exit 1
fi
if [ ! -x /usr/bin/chromium ]; then
	echo "web-test: /usr/bin/chromium is missing; run bash scripts/playwright-mcp.sh (it installs Debian's chromium)" >&2
	exit 1
fi
# Japanese text in the screenshots needs a CJK font (never fails).
bash "$root/scripts/cjk-fonts.sh"
if ! { [ -f "$dir/.installed" ] && [ "$(cat "$dir/.installed")" = "$stamp" ] && [ -d "$dir/node_modules/playwright-core" ]; }; then
	mkdir -p "$dir"
	cd "$dir"
	[ -f package.json ] || echo '{"name":"sagasu-web-test","private":true}' >package.json
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --ignore-scripts --no-audit --no-fund --save-exact \
		"playwright-core@$PLAYWRIGHT_CORE_VERSION" >&2
	echo "$stamp" >.installed
fi
echo "$dir"
