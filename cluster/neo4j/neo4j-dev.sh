#!/usr/bin/env bash
# Local Neo4j 5.26 + OpenGDS 2.13 server for development and CI (see README.md).
#
#   neo4j-dev.sh build            compile + copy jars (target/lib, target/plugins) with Maven
#   neo4j-dev.sh start [--wipe]   start in the background (builds first if needed); no-op if running
#   neo4j-dev.sh wait [SECONDS]   block until RETURN gds.version() answers over Bolt
#   neo4j-dev.sh status           exit 0 if running (prints Bolt answer), 1 if not
#   neo4j-dev.sh stop             SIGTERM via the pid file, wait for a clean shutdown
#   neo4j-dev.sh restart [--wipe] stop + start
#   neo4j-dev.sh run [--wipe]     run in the foreground (containers, debugging)
#   neo4j-dev.sh logs             tail the server log
#
# Environment (all optional):
#   NEO4J_DEV_HOST (127.0.0.1)  NEO4J_DEV_PORT (7687)
#   NEO4J_DEV_RUN_DIR (run: pid file + log)  NEO4J_DEV_HOME (data directory, $RUN_DIR/data)
#   NEO4J_DEV_HEAP (2g)  NEO4J_DEV_PAGECACHE (256m)  NEO4J_DEV_TX_MEMORY (1g)
#   NEO4J_DEV_PASSWORD (unset = auth disabled; else user neo4j gets this password, >= 8 chars)
#   NEO4J_DEV_WIPE=1 (wipe the data directory on start)
#   NEO4J_DEV_WAIT_TIMEOUT (180 s)  NEO4J_DEV_STOP_TIMEOUT (60 s)
#   NEO4J_DEV_JAVA_OPTS (extra JVM flags)  NEO4J_DEV_PYTHON (python used by `wait`)
#
# Exit codes: 0 ok, 1 failure (not running / timed out / crashed), 2 usage,
#             3 prerequisite missing (Java 17+ or Maven) so callers can skip.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RUN_DIR="${NEO4J_DEV_RUN_DIR:-$HERE/run}"  # pid file, log, default data directory
PID_FILE="$RUN_DIR/neo4j-dev.pid"
LOG_FILE="$RUN_DIR/neo4j-dev.log"
TARGET="$HERE/target"
MAIN_CLASS="org.medgraph.neo4j.Neo4jDevServer"

HOST="${NEO4J_DEV_HOST:-127.0.0.1}"
PORT="${NEO4J_DEV_PORT:-7687}"
DATA_HOME="${NEO4J_DEV_HOME:-$RUN_DIR/data}"
HEAP="${NEO4J_DEV_HEAP:-2g}"
PAGECACHE="${NEO4J_DEV_PAGECACHE:-256m}"
TX_MEMORY="${NEO4J_DEV_TX_MEMORY:-1g}"
WAIT_TIMEOUT="${NEO4J_DEV_WAIT_TIMEOUT:-180}"
STOP_TIMEOUT="${NEO4J_DEV_STOP_TIMEOUT:-60}"

# JDK 17 module flags: union of what Neo4j's neo4j.conf and GDS's own test JVMs use.
JVM_FLAGS=(
  "-Xmx${HEAP}"
  "-XX:+UseG1GC" "-XX:+ExitOnOutOfMemoryError"
  "--add-opens=java.base/java.lang=ALL-UNNAMED"
  "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED"
  "--add-opens=java.base/java.nio=ALL-UNNAMED"
  "--add-opens=java.base/java.io=ALL-UNNAMED"
  "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED"
  "--add-opens=java.base/java.util.stream=ALL-UNNAMED"
  "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED"
  "--add-opens=java.base/sun.net.www.protocol.http=ALL-UNNAMED"
  "--enable-native-access=ALL-UNNAMED"
  "-Dio.netty.tryReflectionSetAccessible=true"
  "-Djol.skipHotspotSAAttach=true"
  "-Dfile.encoding=UTF-8"
)

err() { echo "neo4j-dev: $*" >&2; }
info() { echo "neo4j-dev: $*"; }

require_java() {
  if ! command -v java >/dev/null 2>&1; then
    err "java not found on PATH (need Java 17+); skipping"
    exit 3
  fi
  local v
  v="$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1)"
  if [[ -z "$v" || "$v" -lt 17 ]]; then
    err "Java 17+ required, found: $(java -version 2>&1 | head -1)"
    exit 3
  fi
}

require_maven() {
  if ! command -v mvn >/dev/null 2>&1; then
    err "mvn not found on PATH (need Maven 3.6+ to build); skipping"
    exit 3
  fi
}

is_built() {
  [[ -f "$TARGET/classes/org/medgraph/neo4j/Neo4jDevServer.class" ]] \
    && compgen -G "$TARGET/lib/*.jar" >/dev/null \
    && compgen -G "$TARGET/plugins/*.jar" >/dev/null
}

cmd_build() {
  require_java
  require_maven
  info "building with Maven (first build downloads ~175 MB into ~/.m2)..."
  local t0=$SECONDS
  # stale jars from an older version would end up on the classpath: start lib/plugins afresh
  rm -rf "$TARGET/lib" "$TARGET/plugins"
  if ! (cd "$HERE" && mvn -B -q -Dstyle.color=never ${NEO4J_DEV_MAVEN_OPTS:-} package); then
    err "Maven build failed"
    exit 1
  fi
  info "built in $((SECONDS - t0)) s: $(ls "$TARGET/lib" | wc -l) jars in target/lib, $(ls "$TARGET/plugins" | wc -l) GDS jars in target/plugins"
}

# pid of the running server, or empty (removes a stale pid file)
running_pid() {
  [[ -f "$PID_FILE" ]] || return 0
  local pid
  pid="$(cat "$PID_FILE" 2>/dev/null || true)"
  if [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null \
     && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "$MAIN_CLASS"; then
    echo "$pid"
  else
    rm -f "$PID_FILE"
  fi
}

port_in_use() {
  (exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null
}

java_cmd() {
  local wipe="$1"
  JAVA_CMD=(java "${JVM_FLAGS[@]}")
  if [[ -n "${NEO4J_DEV_JAVA_OPTS:-}" ]]; then
    # shellcheck disable=SC2206
    JAVA_CMD+=(${NEO4J_DEV_JAVA_OPTS})
  fi
  JAVA_CMD+=(-cp "$TARGET/classes:$TARGET/lib/*" "$MAIN_CLASS"
    --host "$HOST" --port "$PORT" --home "$DATA_HOME" --plugins "$TARGET/plugins"
    --pagecache "$PAGECACHE" --tx-memory "$TX_MEMORY")
  if [[ "$wipe" == 1 || "${NEO4J_DEV_WIPE:-0}" == 1 ]]; then
    JAVA_CMD+=(--wipe)
  fi
}

parse_wipe() {
  WIPE=0
  for a in "$@"; do
    case "$a" in
      --wipe) WIPE=1 ;;
      *) err "unknown option $a"; exit 2 ;;
    esac
  done
}

cmd_start() {
  parse_wipe "$@"
  require_java
  local pid
  pid="$(running_pid)"
  if [[ -n "$pid" ]]; then
    info "already running (pid $pid, bolt://$HOST:$PORT)"
    return 0
  fi
  if port_in_use; then
    err "port $HOST:$PORT is already in use by another process (set NEO4J_DEV_PORT)"
    exit 1
  fi
  is_built || cmd_build
  mkdir -p "$RUN_DIR"
  java_cmd "$WIPE"
  {
    echo "=== $(date -u +%FT%TZ) starting: ${JAVA_CMD[*]}"
  } >>"$LOG_FILE"
  # nohup: survive the terminal closing; background jobs of a script ignore SIGINT.
  nohup "${JAVA_CMD[@]}" >>"$LOG_FILE" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$PID_FILE"
  sleep 1
  if ! kill -0 "$pid" 2>/dev/null; then
    rm -f "$PID_FILE"
    err "server exited immediately; last log lines:"
    tail -n 20 "$LOG_FILE" >&2
    exit 1
  fi
  info "started (pid $pid, bolt://$HOST:$PORT, log $LOG_FILE); use '$0 wait' to block until ready"
}

cmd_run() {
  parse_wipe "$@"
  require_java
  is_built || cmd_build
  java_cmd "$WIPE"
  exec "${JAVA_CMD[@]}"
}

cmd_stop() {
  local pid
  pid="$(running_pid)"
  if [[ -z "$pid" ]]; then
    info "not running"
    return 0
  fi
  info "stopping pid $pid..."
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + STOP_TIMEOUT))
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS >= deadline)); then
      err "no clean shutdown after ${STOP_TIMEOUT}s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 1
      break
    fi
    sleep 0.5
  done
  rm -f "$PID_FILE"
  info "stopped"
}

# Pick a python with the neo4j driver; install it with pip if missing. Prints the interpreter.
find_python() {
  local py="${NEO4J_DEV_PYTHON:-}"
  if [[ -z "$py" ]]; then
    for c in python3 python; do
      if command -v "$c" >/dev/null 2>&1; then py="$c"; break; fi
    done
  fi
  [[ -n "$py" ]] || return 1
  if ! "$py" -c 'import neo4j' >/dev/null 2>&1; then
    err "python neo4j driver missing; trying: $py -m pip install -q neo4j"
    "$py" -m pip install -q neo4j >&2 || return 1
    "$py" -c 'import neo4j' >/dev/null 2>&1 || return 1
  fi
  echo "$py"
}

# Bolt probe. With a timeout > 0 it polls (one python process; cheap TCP check first, then the
# driver) until RETURN gds.version() answers, the timeout passes, or the watched pid dies.
# Prints the GDS version; exit 0 ready, 1 timeout/error, 4 watched server died.
bolt_probe() {
  "$1" - "$HOST" "$PORT" "${2:-0}" "${3:-}" <<'PY'
import os, socket, sys, time
from neo4j import GraphDatabase
host, port, timeout, pid = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
pw = os.environ.get("NEO4J_DEV_PASSWORD")
auth = ("neo4j", pw) if pw else None
deadline = time.monotonic() + timeout
last = "nothing listening"
while True:
    if pid:
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            print(f"server process {pid} exited", file=sys.stderr)
            sys.exit(4)
        except PermissionError:
            pass
    try:
        with socket.create_connection((host, port), timeout=2):
            pass
        with GraphDatabase.driver(f"bolt://{host}:{port}", auth=auth, connection_timeout=5) as d:
            with d.session() as s:
                v = s.run("RETURN gds.version() AS v").single()["v"]
                # the mark of a disposable server: the test suites wipe only a database that has it
                s.run("MERGE (:MedGraphDisposable {server: 'neo4j-dev'})").consume()
                print(v)
                sys.exit(0)
    except Exception as e:  # noqa: BLE001 - any failure means "not ready yet"
        last = f"{type(e).__name__}: {e}"
    if time.monotonic() >= deadline:
        print(last, file=sys.stderr)
        sys.exit(1)
    time.sleep(0.5)
PY
}

cmd_wait() {
  local timeout="${1:-$WAIT_TIMEOUT}"
  local py t0=$SECONDS pid started v rc=0
  started="$(running_pid)"  # non-empty: we launched it, so fail fast if it dies
  py="$(find_python)" || py=""
  if [[ -n "$py" ]]; then
    v="$(bolt_probe "$py" "$timeout" "$started")" || rc=$?
    if ((rc == 0)); then
      info "ready after $((SECONDS - t0)) s: bolt://$HOST:$PORT gds.version()=$v"
      return 0
    fi
  else
    err "no python with the neo4j driver; falling back to the READY line in the log + TCP port check"
    while :; do
      pid="$(running_pid)"
      if [[ -n "$pid" ]] && port_in_use \
         && tail -n 50 "$LOG_FILE" 2>/dev/null | grep -q '\[neo4j-dev\] READY'; then
        info "ready after $((SECONDS - t0)) s: $(grep '\[neo4j-dev\] READY' "$LOG_FILE" | tail -1)"
        return 0
      fi
      if [[ -n "$started" && -z "$pid" ]]; then rc=4; break; fi
      if ((SECONDS - t0 >= timeout)); then rc=1; break; fi
      sleep 1
    done
  fi
  if ((rc == 4)); then
    running_pid >/dev/null  # drop the stale pid file
    err "server exited before it became ready; last log lines:"
  else
    err "timed out after ${timeout}s waiting for bolt://$HOST:$PORT"
  fi
  [[ -f "$LOG_FILE" ]] && tail -n 20 "$LOG_FILE" >&2
  return 1
}

cmd_status() {
  local pid py v
  pid="$(running_pid)"
  if [[ -z "$pid" ]]; then
    info "not running"
    return 1
  fi
  local rss
  rss="$(awk '/VmRSS/ {printf "%.0f MiB", $2/1024}' "/proc/$pid/status" 2>/dev/null || echo "?")"
  py="$(find_python 2>/dev/null)" || py=""
  if [[ -n "$py" ]] && v="$(bolt_probe "$py" 2>/dev/null)"; then
    info "running (pid $pid, RSS $rss), bolt://$HOST:$PORT answers, gds.version()=$v"
  else
    info "running (pid $pid, RSS $rss), bolt://$HOST:$PORT not answering yet"
  fi
}

usage() {
  sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'
}

main() {
  local cmd="${1:-}"
  [[ $# -gt 0 ]] && shift
  case "$cmd" in
    build) cmd_build ;;
    start) cmd_start "$@" ;;
    stop) cmd_stop ;;
    restart) cmd_stop; cmd_start "$@" ;;
    status) cmd_status ;;
    wait) cmd_wait "$@" ;;
    run) cmd_run "$@" ;;
    logs) exec tail -n 100 -f "$LOG_FILE" ;;
    -h|--help|help) usage ;;
    *) usage >&2; exit 2 ;;
  esac
}

main "$@"
