#!/usr/bin/env bash
# Bounded loopback load test of `sagasu mcp --http`: builds sagasu from the
# working tree (AFTER) and, with BEFORE=<commit>, from that commit too, then
# runs scripts/mcpload on each: rounds of 1, 4, 16 and 64 concurrent MCP
# clients making sagasu_search calls (keyword search, no model), and prints
# a table per build. Extra arguments go to mcpload (-calls, -clients, -mode).
#   BEFORE=13a4a51 DOCS=/work/shared/data/vitepress-docs/en scripts/mcp-load.sh -calls 12
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
docs="${DOCS:-$root/docs}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cd "$root"
bins=()
if [[ -n "${BEFORE:-}" ]]; then
  mkdir -p "$work/before"
  git archive "$BEFORE" | tar -x -C "$work/before"
  (cd "$work/before" && go build -o "$work/sagasu-before" ./cmd/sagasu)
  bins+=(-bin "before($BEFORE)=$work/sagasu-before")
fi
go build -o "$work/sagasu-after" ./cmd/sagasu
bins+=(-bin "after($(git rev-parse --short HEAD)$(git diff --quiet || echo +dirty))=$work/sagasu-after")
go run ./scripts/mcpload "${bins[@]}" -docs "$docs" "$@"
