#!/usr/bin/env bash
# A private Redis server for development and the tests (shared quotas, concurrency gate and
# query-analysis cache; docs/operations.md).
#
#   redis-dev.sh start DIR    start redis-server in the background on 127.0.0.1:$REDIS_PORT with
#                             DIR as its working directory (pid file, log); no RDB snapshots, no
#                             append-only file; writes redis://127.0.0.1:$REDIS_PORT/0 to DIR/url.
#                             A no-op when its server is already running.
#   redis-dev.sh status DIR   exit 0 and print the URL when it answers PING, 1 otherwise
#   redis-dev.sh stop DIR     shut it down (by its pid file) and remove DIR/url
#
# Environment: REDIS_PORT (6391), REDIS_DEV_WAIT (10 s: how long start waits for PING).
# Exit codes: 0 ok, 1 failure, 2 usage, 3 redis-server missing (apt-get install redis-server) so
# callers can skip.
set -euo pipefail

PORT="${REDIS_PORT:-6391}"
WAIT="${REDIS_DEV_WAIT:-10}"
URL="redis://127.0.0.1:${PORT}/0"

err() { echo "redis-dev: $*" >&2; }
usage() { err "usage: $0 start|stop|status DIR"; exit 2; }

[[ $# -eq 2 ]] || usage
CMD="$1"
DIR="$2"
PID_FILE="$DIR/redis.pid"

ping() {
  if command -v redis-cli >/dev/null 2>&1; then
    redis-cli -h 127.0.0.1 -p "$PORT" ping 2>/dev/null | grep -q PONG
  else  # the bare protocol over bash's /dev/tcp
    local reply
    exec 9<>"/dev/tcp/127.0.0.1/$PORT" 2>/dev/null || return 1
    printf 'PING\r\n' >&9
    read -r -t 2 reply <&9 || reply=""
    exec 9>&-
    [[ "$reply" == +PONG* ]]
  fi
}

running() { [[ -f "$PID_FILE" ]] && kill -0 "$(cat "$PID_FILE")" 2>/dev/null; }

case "$CMD" in
  start)
    if ! command -v redis-server >/dev/null 2>&1; then
      err "redis-server not found on PATH (apt-get install redis-server); skipping"
      exit 3
    fi
    mkdir -p "$DIR"
    DIR="$(cd "$DIR" && pwd)"
    PID_FILE="$DIR/redis.pid"
    if running && ping; then echo "$URL" > "$DIR/url"; echo "redis-dev: already running at $URL"; exit 0; fi
    if ping; then err "port $PORT is taken by another server (set REDIS_PORT)"; exit 1; fi
    redis-server --bind 127.0.0.1 --port "$PORT" --dir "$DIR" --daemonize yes \
      --pidfile "$PID_FILE" --logfile "$DIR/redis.log" --save "" --appendonly no \
      --protected-mode yes --maxmemory-policy noeviction
    for _ in $(seq 1 $((WAIT * 10))); do
      if ping; then echo "$URL" > "$DIR/url"; echo "redis-dev: running at $URL (dir $DIR)"; exit 0; fi
      sleep 0.1
    done
    err "redis-server did not answer within ${WAIT} s; see $DIR/redis.log"
    exit 1
    ;;
  status)
    if running && ping; then echo "$URL"; exit 0; fi
    exit 1
    ;;
  stop)
    rm -f "$DIR/url"
    if ! running; then rm -f "$PID_FILE"; exit 0; fi
    pid="$(cat "$PID_FILE")"
    kill -TERM "$pid"
    for _ in $(seq 1 50); do
      kill -0 "$pid" 2>/dev/null || { rm -f "$PID_FILE"; exit 0; }
      sleep 0.1
    done
    err "redis-server (pid $pid) did not stop"
    exit 1
    ;;
  *) usage ;;
esac
