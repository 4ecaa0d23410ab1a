#!/usr/bin/env bash
# Installs the real MCP clients the integration tests drive — the official
# TypeScript SDK (@modelcontextprotocol/sdk, with the ajv it validates with)
# and the MCP Inspector CLI — at pinned versions into .tools/mcp-clients,
# which git ignores. Idempotent: a second run with the same pins does nothing.
# Needs node and npm (Node 20 works; the Inspector's engines field asks for 22
# but its CLI runs on 20). Downloads no browser.
set -euo pipefail

SDK_VERSION=1.32.2
INSPECTOR_VERSION=1.0.3

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/.tools/mcp-clients"
stamp="sdk-$SDK_VERSION inspector-$INSPECTOR_VERSION"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "mcp-clients: node and npm are needed (apt-get install nodejs npm)" >&2
	exit 1
fi
if [ -f "$dir/.installed" ] && [ "$(cat "$dir/.installed")" = "$stamp" ] &&
	[ -d "$dir/node_modules/@modelcontextprotocol/sdk" ] && [ -d "$dir/node_modules/@modelcontextprotocol/inspector" ]; then
	exit 0
fi
mkdir -p "$dir"
cat >"$dir/package.json" <<JSON
{
  "name": "sagasu-mcp-clients",
  "private": true,
  "description": "Real MCP clients for sagasu's integration tests (installed by scripts/mcp-clients.sh)",
  "dependencies": {
    "@modelcontextprotocol/sdk": "$SDK_VERSION",
    "@modelcontextprotocol/inspector": "$INSPECTOR_VERSION"
  }
}
JSON
echo "mcp-clients: installing @modelcontextprotocol/sdk@$SDK_VERSION and @modelcontextprotocol/inspector@$INSPECTOR_VERSION into $dir" >&2
# --ignore-scripts: nothing is built or downloaded beyond the packages themselves.
(cd "$dir" && PUPPETEER_SKIP_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
	npm install --no-audit --no-fund --ignore-scripts --loglevel=error)
echo "$stamp" >"$dir/.installed"
