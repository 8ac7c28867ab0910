#!/usr/bin/env bash
# A private PostgreSQL server for tests and local use of the app state (app.path as a URL).
#
#   pg-dev.sh start  DIR   initdb in DIR/data when missing, start on 127.0.0.1:$PG_PORT, create the
#                          database "medgraph", write its URL to DIR/url; no-op when running
#   pg-dev.sh wait   DIR   block until the server accepts connections (PG_DEV_WAIT_TIMEOUT s)
#   pg-dev.sh status DIR   exit 0 and print the URL if running, 1 if not
#   pg-dev.sh stop   DIR   fast shutdown (clients disconnected, data kept); no-op if not running
#
# DIR holds data/ (the cluster), log (the server log), port and url. Local connections are
# trusted (no password): this server listens on 127.0.0.1 only and is not for production.
# Run as root, the server runs as the "postgres" system user (DIR is chown'ed to it, so DIR's
# parents must let that user through, as /tmp does); run as another user, it runs as that user.
#
# Environment (all optional): PG_PORT (5433), PG_DEV_WAIT_TIMEOUT (60 s), PG_BINDIR (the
# directory of initdb/pg_ctl; else `pg_config --bindir`, else the newest /usr/lib/postgresql/*/bin).
#
# Exit codes: 0 ok, 1 failure (not running / timed out / did not start), 2 usage,
#             3 PostgreSQL binaries missing (apt-get install postgresql) so callers can skip.
set -euo pipefail

usage() { echo "usage: $0 start|stop|status|wait DIR" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
CMD="$1"
DIR="$2"
case "$CMD" in start|stop|status|wait) ;; *) usage ;; esac

find_bindir() {
    local candidate
    if [[ -n "${PG_BINDIR:-}" ]]; then
        echo "$PG_BINDIR"; return
    fi
    if command -v pg_config >/dev/null 2>&1; then
        candidate="$(pg_config --bindir 2>/dev/null || true)"
        if [[ -x "$candidate/initdb" && -x "$candidate/pg_ctl" ]]; then
            echo "$candidate"; return
        fi
    fi
    for candidate in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        if [[ -x "$candidate/initdb" && -x "$candidate/pg_ctl" ]]; then
            echo "$candidate"; return
        fi
    done
}

BINDIR="$(find_bindir)"
if [[ -z "$BINDIR" || ! -x "$BINDIR/initdb" || ! -x "$BINDIR/pg_ctl" || ! -x "$BINDIR/psql" ]]; then
    echo "pg-dev: PostgreSQL binaries not found (set PG_BINDIR, or apt-get install postgresql)" >&2
    exit 3
fi

[[ "$CMD" != start ]] || mkdir -p "$DIR"
if [[ -d "$DIR" ]]; then DIR="$(cd "$DIR" && pwd)"; fi
DATA="$DIR/data"
LOG="$DIR/log"
WAIT_TIMEOUT="${PG_DEV_WAIT_TIMEOUT:-60}"
if [[ -n "${PG_PORT:-}" ]]; then
    PORT="$PG_PORT"
elif [[ -s "$DIR/port" ]]; then
    PORT="$(cat "$DIR/port")"  # the port it was started on
else
    PORT=5433
fi

if [[ "$(id -u)" -eq 0 ]]; then
    DB_USER=postgres
    as_db_user() { runuser -u postgres -- "$@"; }
else
    DB_USER="$(id -un)"
    as_db_user() { "$@"; }
fi
URL="postgresql://${DB_USER}@127.0.0.1:${PORT}/medgraph"

running() { [[ -f "$DATA/PG_VERSION" ]] && as_db_user "$BINDIR/pg_ctl" -D "$DATA" status >/dev/null 2>&1; }

psql_q() { as_db_user "$BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PORT" -U "$DB_USER" "$@"; }

wait_ready() {
    local deadline=$((SECONDS + WAIT_TIMEOUT))
    until psql_q -d postgres -tAc "SELECT 1" >/dev/null 2>&1; do
        if ((SECONDS >= deadline)); then
            echo "pg-dev: no answer on 127.0.0.1:$PORT after ${WAIT_TIMEOUT}s (log: $LOG)" >&2
            return 1
        fi
        sleep 0.5
    done
}

start() {
    if [[ "$(id -u)" -eq 0 ]]; then
        chown -R postgres: "$DIR"
        if ! runuser -u postgres -- test -w "$DIR"; then
            echo "pg-dev: user postgres cannot write $DIR (a parent directory is closed to it)" >&2
            exit 1
        fi
    fi
    if [[ ! -f "$DATA/PG_VERSION" ]]; then
        as_db_user "$BINDIR/initdb" -D "$DATA" -U "$DB_USER" --auth=trust -E UTF8 --locale=C >"$DIR/initdb.log" 2>&1 \
            || { echo "pg-dev: initdb failed, see $DIR/initdb.log" >&2; tail -n 20 "$DIR/initdb.log" >&2; exit 1; }
    fi
    if ! running; then
        as_db_user "$BINDIR/pg_ctl" -D "$DATA" -l "$LOG" -w -t "$WAIT_TIMEOUT" \
            -o "-p $PORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=''" start >/dev/null \
            || { echo "pg-dev: the server did not start on 127.0.0.1:$PORT (log: $LOG)" >&2; tail -n 20 "$LOG" >&2; exit 1; }
    fi
    echo "$PORT" >"$DIR/port"
    wait_ready
    if [[ "$(psql_q -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'medgraph'")" != "1" ]]; then
        psql_q -d postgres -c "CREATE DATABASE medgraph" >/dev/null
    fi
    echo "$URL" >"$DIR/url"
    [[ "$(id -u)" -ne 0 ]] || chown postgres: "$DIR/url" "$DIR/port"
    echo "$URL"
}

case "$CMD" in
    start) start ;;
    wait) wait_ready ;;
    status)
        if running; then echo "running: $URL"; else echo "not running ($DIR)"; exit 1; fi ;;
    stop)
        if running; then
            as_db_user "$BINDIR/pg_ctl" -D "$DATA" -m fast -w -t "$WAIT_TIMEOUT" stop >/dev/null
            echo "stopped ($DIR)"
        else
            echo "not running ($DIR)"
        fi ;;
esac
