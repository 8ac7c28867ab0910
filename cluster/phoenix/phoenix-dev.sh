#!/usr/bin/env bash
# The tracing backend for development, the demo and the tests: Arize Phoenix (OpenTelemetry-native,
# stores traces in SQLite under DIR, a UI and a REST API; docs/operations.md, "Tracing").
#
#   phoenix-dev.sh install DIR  a virtual environment of its own in DIR/venv with arize-phoenix
#                               $PHOENIX_VERSION (its dependencies never meet the app's)
#   phoenix-dev.sh start DIR    install if needed, start `phoenix serve` in the background on
#                               127.0.0.1:$PHOENIX_PORT (UI, REST API and OTLP/HTTP at /v1/traces),
#                               data in DIR/data; writes the OTLP traces URL to DIR/url. A no-op
#                               when it is already running.
#   phoenix-dev.sh status DIR   exit 0 and print the URL when /healthz answers, 1 otherwise
#   phoenix-dev.sh stop DIR     stop it (by its pid file) and remove DIR/url
#
# Environment: PHOENIX_PORT (6006), PHOENIX_DEV_WAIT (90 s: how long start waits), PHOENIX_PYTHON
# (python3.11). Exit codes: 0 ok, 1 failure, 2 usage.
set -euo pipefail

PORT="${PHOENIX_PORT:-6006}"
WAIT="${PHOENIX_DEV_WAIT:-90}"
VERSION="${PHOENIX_VERSION:-20.26.1}"
PYTHON="${PHOENIX_PYTHON:-python3.11}"
BASE="http://127.0.0.1:${PORT}"

err() { echo "phoenix-dev: $*" >&2; }
usage() { err "usage: $0 install|start|stop|status DIR"; exit 2; }

[[ $# -eq 2 ]] || usage
CMD="$1"
mkdir -p "$2"
DIR="$(cd "$2" && pwd)"
PID_FILE="$DIR/phoenix.pid"

healthy() { curl -fsS -m 2 "$BASE/healthz" >/dev/null 2>&1; }
running() { [[ -f "$PID_FILE" ]] && kill -0 "$(cat "$PID_FILE")" 2>/dev/null; }

install() {
  if [[ -x "$DIR/venv/bin/phoenix" ]] && "$DIR/venv/bin/python" -c "import phoenix, sys; \
sys.exit(0 if phoenix.__version__ == '$VERSION' else 1)" 2>/dev/null; then
    return 0
  fi
  echo "phoenix-dev: installing arize-phoenix $VERSION into $DIR/venv"
  "$PYTHON" -m venv "$DIR/venv"
  "$DIR/venv/bin/pip" install --quiet --disable-pip-version-check "arize-phoenix==$VERSION"
}

case "$CMD" in
  install)
    install
    ;;
  start)
    if running && healthy; then echo "$BASE/v1/traces" > "$DIR/url"; echo "phoenix-dev: already running at $BASE"; exit 0; fi
    if healthy; then err "port $PORT is taken by another server (set PHOENIX_PORT)"; exit 1; fi
    install
    mkdir -p "$DIR/data"
    PHOENIX_WORKING_DIR="$DIR/data" PHOENIX_HOST=127.0.0.1 PHOENIX_PORT="$PORT" PHOENIX_GRPC_PORT=0 \
      PHOENIX_TELEMETRY_ENABLED=false nohup "$DIR/venv/bin/phoenix" serve > "$DIR/phoenix.log" 2>&1 &
    echo $! > "$PID_FILE"
    for _ in $(seq 1 $((WAIT * 2))); do
      if healthy; then echo "$BASE/v1/traces" > "$DIR/url"; echo "phoenix-dev: running at $BASE (dir $DIR)"; exit 0; fi
      if ! running; then err "phoenix exited; see $DIR/phoenix.log"; tail -20 "$DIR/phoenix.log" >&2; exit 1; fi
      sleep 0.5
    done
    err "phoenix did not answer within ${WAIT} s; see $DIR/phoenix.log"
    exit 1
    ;;
  status)
    if healthy; then echo "$BASE/v1/traces"; exit 0; fi
    exit 1
    ;;
  stop)
    if running; then
      kill "$(cat "$PID_FILE")" 2>/dev/null || true
      for _ in $(seq 1 50); do running || break; sleep 0.2; done
      running && kill -9 "$(cat "$PID_FILE")" 2>/dev/null || true
    fi
    rm -f "$PID_FILE" "$DIR/url"
    ;;
  *)
    usage
    ;;
esac
