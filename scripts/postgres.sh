#!/usr/bin/env bash
# postgres.sh: a local PostgreSQL 15 + pgvector 0.8.0 server for sagasu's tests
# and benchmarks, then its DSN on the last line of stdout.
#
#   DSN=$(scripts/postgres.sh | tail -n1)
#   SAGASU_TEST_POSTGRES=$DSN go test ./internal/store/postgres/
#
# It installs PostgreSQL 15 and postgresql-server-dev-15 from Debian, builds
# pgvector 0.8.0 from Debian trixie's source package (bookworm has no binary
# package for it), runs initdb as the postgres user into .tools/pg/data (which
# git ignores) and starts the server on 127.0.0.1. Every step is skipped when
# already done, so a re-run only prints the DSN. Run it as root (it uses
# apt-get and runuser); progress goes to stderr.
#
# Environment:
#   SAGASU_PG_PORT   port to listen on (default 54329)
#   SAGASU_PG_DIR    where the cluster lives (default <repo>/.tools/pg)
#
#   scripts/postgres.sh status   exit 0 when a server with pgvector and our
#                                database answers on the port (whoever runs it)
#   scripts/postgres.sh stop     stop the cluster this script made (in
#                                .tools/pg, or its /tmp fallback), if running;
#                                a server of someone else's is left alone
# (the stop line is also in .tools/pg/server.env as PG_STOP)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PORT=${SAGASU_PG_PORT:-54329}
DIR=${SAGASU_PG_DIR:-$ROOT/.tools/pg}
DATA=$DIR/data
PGBIN=/usr/lib/postgresql/15/bin
PGVECTOR_VERSION=0.8.0
DB=sagasu
DSN="postgres://postgres@127.0.0.1:$PORT/$DB?sslmode=disable"

log() { echo "postgres.sh: $*" >&2; }
psql_q() { PGOPTIONS="-c client_min_messages=warning" "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PORT" -U postgres -d "${2:-postgres}" -tAc "$1"; }

answers() { [[ -x $PGBIN/psql ]] && [[ $(psql_q "SELECT 1 FROM pg_available_extensions WHERE name = 'vector' AND default_version = '$PGVECTOR_VERSION'" "$DB" 2>/dev/null) == 1 ]]; }

case ${1:-start} in
start) ;;
status)
	answers
	exit
	;;
stop)
	for d in "$DATA" "/tmp/sagasu-pg-$PORT/data"; do
		if [[ -f $d/PG_VERSION ]] && runuser -u postgres -- "$PGBIN/pg_ctl" -D "$d" status >/dev/null 2>&1; then
			log "stopping the cluster in $d"
			runuser -u postgres -- "$PGBIN/pg_ctl" -D "$d" -m fast -w stop >&2
		fi
	done
	exit 0
	;;
*)
	log "unknown command ${1@Q}: use start (the default), status or stop"
	exit 2
	;;
esac

# Fast path: a server on the port that has pgvector and our database.
if answers; then
	echo "$DSN"
	exit 0
fi

if [[ $(id -u) != 0 ]]; then
	log "needs root (apt-get, runuser): run it with sudo, or start a PostgreSQL with pgvector yourself and set SAGASU_TEST_POSTGRES"
	exit 1
fi

# 1. PostgreSQL 15 and its server headers from Debian.
need=()
[[ -x $PGBIN/postgres ]] || need+=(postgresql-15)
[[ -x $PGBIN/pg_config ]] && [[ -f /usr/include/postgresql/15/server/postgres.h ]] || need+=(postgresql-server-dev-15)
command -v dpkg-source >/dev/null || need+=(dpkg-dev)
command -v make >/dev/null || need+=(make)
command -v gcc >/dev/null || need+=(gcc)
if ((${#need[@]})); then
	log "installing ${need[*]}"
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi

# 2. pgvector from trixie's source package, fetched with a private apt
# configuration so the system's sources and package lists are not touched.
ctl=$("$PGBIN/pg_config" --sharedir)/extension/vector.control
if ! grep -q "default_version = '$PGVECTOR_VERSION'" "$ctl" 2>/dev/null; then
	apt=$DIR/apt
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/sources.list.d" "$DIR/build"
	echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" >"$apt/sources.list"
	aptopt=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=$apt/sources.list.d"
		-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache")
	log "fetching pgvector $PGVECTOR_VERSION source from trixie"
	apt-get "${aptopt[@]}" update -qq >&2
	ver=$(apt-cache "${aptopt[@]}" showsrc pgvector | sed -n "s/^Version: \($PGVECTOR_VERSION-.*\)/\1/p" | head -n1)
	if [[ -z $ver ]]; then
		log "trixie has no pgvector $PGVECTOR_VERSION source package (it has: $(apt-cache "${aptopt[@]}" showsrc pgvector | sed -n 's/^Version: //p' | tr '\n' ' '))"
		exit 1
	fi
	rm -rf "$DIR/build"
	mkdir -p "$DIR/build"
	(cd "$DIR/build" && apt-get "${aptopt[@]}" source -qq "pgvector=$ver" >&2)
	src=$(find "$DIR/build" -maxdepth 1 -type d -name "pgvector-*" | head -n1)
	log "building pgvector in $src"
	make -C "$src" -s with_llvm=no PG_CONFIG="$PGBIN/pg_config" -j"$(nproc)" >&2
	make -C "$src" -s with_llvm=no PG_CONFIG="$PGBIN/pg_config" install >&2
fi

# 3. A cluster of our own, owned by the postgres user. If that user cannot
# reach the folder (a checkout under a private home), use one under /tmp.
mkdir -p "$DIR"
chown postgres:postgres "$DIR"
if ! runuser -u postgres -- test -w "$DIR"; then
	DIR=/tmp/sagasu-pg-$PORT
	DATA=$DIR/data
	log "the postgres user cannot write $ROOT/.tools/pg; the cluster goes to $DIR"
	mkdir -p "$DIR"
fi
if [[ ! -f $DATA/PG_VERSION ]]; then
	log "initdb $DATA"
	mkdir -p "$DATA"
	chown postgres:postgres "$DIR" "$DATA"
	chmod 700 "$DATA"
	runuser -u postgres -- "$PGBIN/initdb" -D "$DATA" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
	# Loopback TCP only; no Unix socket, so nothing collides with a system
	# cluster. synchronous_commit=off matches the SQLite driver's durability
	# (WAL, synchronous=NORMAL): a crash may lose the last commits, never
	# corrupt the index.
	cat >>"$DATA/postgresql.conf" <<EOF

# written by sagasu scripts/postgres.sh
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = ''
max_connections = 200
shared_buffers = 512MB
maintenance_work_mem = 512MB
work_mem = 16MB
synchronous_commit = off
max_wal_size = 2GB
EOF
fi
chown postgres:postgres "$DIR"
cat >"$DIR/server.env" <<EOF
PGDATA=$DATA
PGBIN=$PGBIN
PORT=$PORT
DSN=$DSN
PG_START="runuser -u postgres -- $PGBIN/pg_ctl -D $DATA -l $DIR/postgres.log -w start"
PG_STOP="runuser -u postgres -- $PGBIN/pg_ctl -D $DATA -m fast -w stop"
EOF

# 4. Start it (a stale postmaster.pid from a killed machine is handled by pg_ctl).
if ! runuser -u postgres -- "$PGBIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
	log "starting on 127.0.0.1:$PORT"
	touch "$DIR/postgres.log"
	chown postgres:postgres "$DIR/postgres.log"
	if ! runuser -u postgres -- "$PGBIN/pg_ctl" -D "$DATA" -l "$DIR/postgres.log" -o "-p $PORT" -w -t 60 start >&2; then
		tail -n 20 "$DIR/postgres.log" >&2
		exit 1
	fi
fi
if [[ $(psql_q "SELECT 1 FROM pg_database WHERE datname = '$DB'") != 1 ]]; then
	psql_q "CREATE DATABASE $DB" >/dev/null
fi
psql_q "CREATE EXTENSION IF NOT EXISTS vector" "$DB" >/dev/null
echo "$DSN"
