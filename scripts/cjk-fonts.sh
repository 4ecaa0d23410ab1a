#!/usr/bin/env bash
# Installs a CJK font (Debian's fonts-noto-cjk) when the machine has none,
# so that Japanese text in the browser tests' screenshots shows as glyphs,
# not as empty boxes. scripts/web-test.sh and scripts/playwright-mcp.sh run
# it. It never fails the caller: without root or without the Debian mirror
# it says what to run and exits 0, and the screenshots will show boxes.
set -uo pipefail

has_cjk() {
	command -v fc-list >/dev/null && [ -n "$(fc-list :lang=ja family 2>/dev/null)" ]
}

if has_cjk; then
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "cjk-fonts: no Japanese font is installed and this is not root; Japanese text in screenshots will show as boxes. Run: sudo apt-get install -y fonts-noto-cjk" >&2
	exit 0
fi
echo "cjk-fonts: installing Debian's fonts-noto-cjk with apt-get" >&2
if ! { apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends fonts-noto-cjk fontconfig >&2; }; then
	echo "cjk-fonts: apt-get could not install fonts-noto-cjk (offline, or no Debian mirror?); Japanese text in screenshots will show as boxes" >&2
	exit 0
fi
fc-cache -f >/dev/null 2>&1 || true
if has_cjk; then
	echo "cjk-fonts: $(fc-list :lang=ja family | head -n 1)" >&2
else
	echo "cjk-fonts: fonts-noto-cjk is installed but fontconfig lists no Japanese font" >&2
fi
exit 0
