#!/usr/bin/env bash
# Installs Playwright MCP (@playwright/mcp) at a pinned version into
# .tools/playwright-mcp, which git ignores, Debian's chromium when
# /usr/bin/chromium is missing, and Debian's fonts-noto-cjk when no Japanese
# font is installed (scripts/cjk-fonts.sh). Never downloads a browser through npm:
# scripts are not run and PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD is set.
# Idempotent: a second run with the same pin installs nothing.
# The last line printed is the path of the server's cli.
#
# It also writes .tools/playwright-mcp/config.json, which gives chromium the
# flags that keep it from reaching for the network (this machine has none
# beyond package registries, and chromium would stall on it).
#
# Run the server as internal/mcpclient's tests do (mcpclient.Playwright adds
# --sandbox, or --no-sandbox as root, and the guarded proxy in the environment):
#   node <cli> --headless --isolated --browser chromium \
#     --executable-path /usr/bin/chromium --config <root>/.tools/playwright-mcp/config.json
set -euo pipefail

PLAYWRIGHT_MCP_VERSION=0.0.83

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/.tools/playwright-mcp"
cli="$dir/node_modules/@playwright/mcp/cli.js"
stamp="playwright-mcp-$PLAYWRIGHT_MCP_VERSION"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "playwright-mcp: node and npm are needed (apt-get install nodejs npm)" >&2
	exit 1
fi

if [ ! -x /usr/bin/chromium ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "playwright-mcp: /usr/bin/chromium is missing; run as root or: sudo apt-get install -y chromium" >&2
		exit 1
	fi
	echo "playwright-mcp: installing Debian's chromium with apt-get" >&2
	apt-get update >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >&2
fi

# Japanese pages need a CJK font to render as text (never fails).
bash "$root/scripts/cjk-fonts.sh"

if ! { [ -f "$dir/.installed" ] && [ "$(cat "$dir/.installed")" = "$stamp" ] && [ -f "$cli" ]; }; then
	mkdir -p "$dir"
	cat >"$dir/package.json" <<JSON
{
  "name": "sagasu-playwright-mcp",
  "private": true,
  "description": "Playwright MCP for sagasu's executor and tests (installed by scripts/playwright-mcp.sh)",
  "dependencies": {
    "@playwright/mcp": "$PLAYWRIGHT_MCP_VERSION"
  }
}
JSON
	echo "playwright-mcp: installing @playwright/mcp@$PLAYWRIGHT_MCP_VERSION into $dir" >&2
	# --ignore-scripts and PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: no browser is downloaded.
	(cd "$dir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 PUPPETEER_SKIP_DOWNLOAD=1 \
		npm install --no-audit --no-fund --ignore-scripts --loglevel=error >&2)
	echo "$stamp" >"$dir/.installed"
fi

# --browser chromium on the command line picks the chromium channel, whose
# default is no sandbox; these flags are added to Playwright's own.
config="$dir/config.json"
want='{
  "browser": {
    "browserName": "chromium",
    "launchOptions": {
      "args": [
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-domain-reliability",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-gpu",
        "--disable-dev-shm-usage"
      ]
    }
  }
}'
if [ ! -f "$config" ] || [ "$(cat "$config")" != "$want" ]; then
	printf '%s\n' "$want" >"$config"
fi

echo "$cli"
