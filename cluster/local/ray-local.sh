#!/usr/bin/env bash
# A local multi-node Ray cluster on one machine, for tests and demos (see docs/cluster.md):
# one head node and two worker nodes, each its own raylet with its own ports and temp dir.
#
#   ray-local.sh start             start the head, then the workers (no-op for nodes already up)
#   ray-local.sh stop              stop every node of this cluster (only this cluster's processes)
#   ray-local.sh status            the nodes (alive / dead) with their resources; exit 1 if no head
#   ray-local.sh kill-worker N     SIGKILL worker node N (1 or 2): its raylet and all its processes
#   ray-local.sh start-worker N    start worker node N again (after kill-worker)
#   ray-local.sh address           print the GCS address (for ray.init / RAY_ADDRESS)
#
# Nodes (custom resources pin work to a node: e.g. resources={"worker_1": 0.01}):
#   head      CPUs $MEDGRAPH_RAY_HEAD_CPUS (1),   resources {"head": 1}
#   worker 1  CPUs $MEDGRAPH_RAY_WORKER_CPUS (2), resources {"worker": 1, "worker_1": 1}
#   worker 2  CPUs $MEDGRAPH_RAY_WORKER_CPUS (2), resources {"worker": 1, "worker_2": 1}
# Logical CPUs may exceed the physical ones; they only bound how many actors Ray places.
#
# Environment (all optional):
#   MEDGRAPH_RAY_PORT (6390)             GCS port of the head (not 6379: no clash with another Ray or Redis)
#   MEDGRAPH_RAY_DASHBOARD_PORT (8275)   dashboard + job API: ray job submit --address http://127.0.0.1:PORT
#   MEDGRAPH_RAY_CLIENT_PORT (10391)     Ray Client server of the head (ray://127.0.0.1:PORT)
#   MEDGRAPH_RAY_PORT_BASE (16400)       node i (0 head, 1, 2) uses BASE+20*i .. BASE+20*i+7 for its
#                                        node manager, object manager, agents and metrics, and the
#                                        worker-process ports BASE+1000+100*i .. +99
#   MEDGRAPH_RAY_DIR (/tmp/medgraph-ray) temp dirs: DIR/head, DIR/w1, DIR/w2 (sessions, logs, sockets)
#   MEDGRAPH_RAY_OBJECT_STORE_MB (256)   object store per node
#   MEDGRAPH_RAY_HEAD_CPUS (1)  MEDGRAPH_RAY_WORKER_CPUS (2)  MEDGRAPH_RAY_WORKERS (2)
#   MEDGRAPH_RAY_BIN (the repository's .venv/bin/ray, else ray on PATH)
#
# The nodes run with the interpreter of that ray binary, and its bin directory first on PATH, so
# `python` in a job submitted with `ray job submit` is the same interpreter (with MedGraph installed).
#
# Exit codes: 0 ok, 1 failure, 2 usage, 3 prerequisite missing (no ray binary).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"

GCS_PORT="${MEDGRAPH_RAY_PORT:-6390}"
DASH_PORT="${MEDGRAPH_RAY_DASHBOARD_PORT:-8275}"
CLIENT_PORT="${MEDGRAPH_RAY_CLIENT_PORT:-10391}"
BASE="${MEDGRAPH_RAY_PORT_BASE:-16400}"
RAY_DIR="${MEDGRAPH_RAY_DIR:-/tmp/medgraph-ray}"
OBJ_MB="${MEDGRAPH_RAY_OBJECT_STORE_MB:-256}"
HEAD_CPUS="${MEDGRAPH_RAY_HEAD_CPUS:-1}"
WORKER_CPUS="${MEDGRAPH_RAY_WORKER_CPUS:-2}"
WORKERS="${MEDGRAPH_RAY_WORKERS:-2}"
IP=127.0.0.1

err() { echo "ray-local: $*" >&2; }
info() { echo "ray-local: $*"; }

find_ray() {
  local ray="${MEDGRAPH_RAY_BIN:-}"
  if [[ -z "$ray" && -x "$REPO/.venv/bin/ray" ]]; then ray="$REPO/.venv/bin/ray"; fi
  if [[ -z "$ray" ]]; then ray="$(command -v ray || true)"; fi
  if [[ -z "$ray" || ! -x "$ray" ]]; then
    err "no ray binary (make install, or set MEDGRAPH_RAY_BIN)"
    exit 3
  fi
  RAY="$ray"
  RAY_BIN_DIR="$(cd "$(dirname "$ray")" && pwd)"
  PY="$RAY_BIN_DIR/python"
  [[ -x "$PY" ]] || PY="$(command -v python3)"
}

# the environment every node (and so every job driver and worker process) inherits
node_env() {
  export PATH="$RAY_BIN_DIR:$PATH"
  export RAY_AUTH_MODE="${RAY_AUTH_MODE:-disabled}"
  export RAY_USAGE_STATS_ENABLED="${RAY_USAGE_STATS_ENABLED:-0}"
  unset RAY_ADDRESS  # `ray start` must not join a cluster named in the caller's environment
}

node_dir() { if [[ "$1" == 0 ]]; then echo "$RAY_DIR/head"; else echo "$RAY_DIR/w$1"; fi; }
node_manager_port() { echo $((BASE + 20 * $1)); }

port_args() {
  local i="$1" p=$((BASE + 20 * $1)) w=$((BASE + 1000 + 100 * $1))
  PORT_ARGS=(
    --node-ip-address "$IP"
    --node-manager-port "$p"
    --object-manager-port "$((p + 1))"
    --dashboard-agent-listen-port "$((p + 2))"
    --dashboard-agent-grpc-port "$((p + 3))"
    --runtime-env-agent-port "$((p + 4))"
    --metrics-export-port "$((p + 5))"
    --min-worker-port "$w"
    --max-worker-port "$((w + 99))"
    --temp-dir "$(node_dir "$i")"
    --object-store-memory "$((OBJ_MB * 1024 * 1024))"
    --disable-usage-stats
  )
}

port_in_use() { (exec 3<>"/dev/tcp/$IP/$1") 2>/dev/null; }

# pid of node i's raylet (found by its node-manager port, unique to this cluster's node), or empty
raylet_pid() {
  local port
  port="$(node_manager_port "$1")"
  pgrep -f -- "raylet.*--node_manager_port=$port( |$)" 2>/dev/null | head -1 || true
}

# every process of node i and their descendants (worker processes, agents, dashboard modules):
# roots are the node's raylet (found by its node-manager port) and the processes that name the
# node's temp dir on their command line (log monitor; on the head also GCS, dashboard, monitor),
# plus on the head the Ray Client server (by its port). Nothing of another node or cluster.
node_pids() {
  local dir roots=() pids=() frontier kids p
  dir="$(node_dir "$1")"
  p="$(raylet_pid "$1")"
  [[ -n "$p" ]] && roots+=("$p")
  for p in $(pgrep -f -- "$dir/" 2>/dev/null || true); do roots+=("$p"); done
  if [[ "$1" == 0 ]]; then
    for p in $(pgrep -f -- "ray.util.client.server.*--port=$CLIENT_PORT( |$)" 2>/dev/null || true); do roots+=("$p"); done
    for p in $(pgrep -f -- "gcs_server.*--gcs_server_port=$GCS_PORT( |$)" 2>/dev/null || true); do roots+=("$p"); done
  fi
  frontier=()
  for p in "${roots[@]}"; do [[ "$p" != "$$" && "$p" != "$BASHPID" ]] && frontier+=("$p"); done
  while ((${#frontier[@]})); do
    pids+=("${frontier[@]}")
    kids="$(pgrep -P "$(IFS=,; echo "${frontier[*]}")" 2>/dev/null || true)"
    # shellcheck disable=SC2206
    frontier=($kids)
  done
  ((${#pids[@]})) || return 0
  printf '%s\n' "${pids[@]}" | sort -un
}

head_up() { port_in_use "$GCS_PORT" && [[ -n "$(raylet_pid 0)" ]]; }

start_head() {
  if head_up; then
    info "head already running (GCS $IP:$GCS_PORT)"
    return 0
  fi
  for p in "$GCS_PORT" "$DASH_PORT" "$CLIENT_PORT"; do
    if port_in_use "$p"; then
      err "port $p is in use by another process (set MEDGRAPH_RAY_PORT / MEDGRAPH_RAY_DASHBOARD_PORT / MEDGRAPH_RAY_CLIENT_PORT)"
      exit 1
    fi
  done
  port_args 0
  mkdir -p "$(node_dir 0)"
  info "starting head: GCS $IP:$GCS_PORT, dashboard http://$IP:$DASH_PORT, $HEAD_CPUS CPU"
  "$RAY" start --head --port "$GCS_PORT" "${PORT_ARGS[@]}" \
    --include-dashboard true --dashboard-host "$IP" --dashboard-port "$DASH_PORT" \
    --ray-client-server-port "$CLIENT_PORT" \
    --num-cpus "$HEAD_CPUS" --num-gpus 0 --resources '{"head": 1}' \
    >"$RAY_DIR/head.start.log" 2>&1 || { err "head failed to start:"; tail -n 30 "$RAY_DIR/head.start.log" >&2; exit 1; }
}

start_worker() {
  local i="$1"
  if [[ -n "$(raylet_pid "$i")" ]]; then
    info "worker $i already running"
    return 0
  fi
  head_up || { err "head not running: start it first ($0 start)"; exit 1; }
  port_args "$i"
  mkdir -p "$(node_dir "$i")"
  info "starting worker $i: $WORKER_CPUS CPU, node manager port $(node_manager_port "$i")"
  "$RAY" start --address "$IP:$GCS_PORT" "${PORT_ARGS[@]}" \
    --num-cpus "$WORKER_CPUS" --num-gpus 0 --resources "{\"worker\": 1, \"worker_$i\": 1}" \
    >"$RAY_DIR/w$i.start.log" 2>&1 || { err "worker $i failed to start:"; tail -n 30 "$RAY_DIR/w$i.start.log" >&2; exit 1; }
}

# block until `count` nodes are alive in the GCS (the raylets register asynchronously)
wait_nodes() {
  local count="$1" timeout="${2:-60}"
  "$PY" - "$IP:$GCS_PORT" "$count" "$timeout" <<'PY'
import sys, time
from ray._raylet import GcsClient
address, count, timeout = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
deadline = time.monotonic() + timeout
while True:
    try:
        alive = [n for n in GcsClient(address=address).get_all_node_info(timeout=5).values() if n.state == 0]
    except Exception as exc:  # noqa: BLE001 - GCS not answering yet
        alive, last = [], exc
    if len(alive) >= count:
        sys.exit(0)
    if time.monotonic() > deadline:
        print(f"ray-local: {len(alive)} of {count} nodes alive after {timeout:.0f} s", file=sys.stderr)
        sys.exit(1)
    time.sleep(0.5)
PY
}

cmd_start() {
  find_ray
  node_env
  mkdir -p "$RAY_DIR"
  start_head
  local i
  for ((i = 1; i <= WORKERS; i++)); do start_worker "$i"; done
  wait_nodes $((WORKERS + 1))
  info "cluster up: $((WORKERS + 1)) nodes; RAY_ADDRESS=$IP:$GCS_PORT, jobs: ray job submit --address http://$IP:$DASH_PORT"
}

cmd_start_worker() {
  local i="${1:?usage: ray-local.sh start-worker N}"
  [[ "$i" =~ ^[0-9]+$ && "$i" -ge 1 ]] || { err "worker number must be >= 1"; exit 2; }
  find_ray
  node_env
  start_worker "$i"
}

kill_pids() {
  local sig="$1"; shift
  (($#)) || return 0
  kill "-$sig" "$@" 2>/dev/null || true
}

wait_gone() {
  local deadline=$((SECONDS + $1)); shift
  local p alive
  while :; do
    alive=()
    for p in "$@"; do kill -0 "$p" 2>/dev/null && alive+=("$p"); done
    ((${#alive[@]})) || return 0
    ((SECONDS < deadline)) || { kill_pids KILL "${alive[@]}"; return 0; }
    sleep 0.2
  done
}

cmd_kill_worker() {
  local i="${1:?usage: ray-local.sh kill-worker N}"
  [[ "$i" =~ ^[0-9]+$ && "$i" -ge 1 ]] || { err "worker number must be >= 1"; exit 2; }
  local pids
  # shellcheck disable=SC2207
  pids=($(node_pids "$i"))
  if ((${#pids[@]} == 0)); then
    err "worker $i is not running"
    exit 1
  fi
  info "killing worker $i: ${#pids[@]} processes (raylet $(raylet_pid "$i"))"
  kill_pids KILL "${pids[@]}"
  wait_gone 10 "${pids[@]}"
}

cmd_stop() {
  local i pids all=()
  # workers first, then the head (its GCS last); SIGTERM, then SIGKILL what is left after 15 s
  for ((i = 9; i >= 0; i--)); do
    # shellcheck disable=SC2207
    pids=($(node_pids "$i"))
    all+=("${pids[@]}")
  done
  if ((${#all[@]} == 0)); then
    info "not running"
    return 0
  fi
  # shellcheck disable=SC2207
  all=($(printf '%s\n' "${all[@]}" | sort -un))
  info "stopping ${#all[@]} processes"
  kill_pids TERM "${all[@]}"
  wait_gone 15 "${all[@]}"
  info "stopped"
}

cmd_status() {
  find_ray
  if ! head_up; then
    info "not running (no head at $IP:$GCS_PORT)"
    return 1
  fi
  "$PY" - "$IP:$GCS_PORT" "$BASE" <<'PY'
import sys
from ray._raylet import GcsClient
address, base = sys.argv[1], int(sys.argv[2])
nodes = GcsClient(address=address).get_all_node_info(timeout=10).values()
names = {base + 20 * i: ("head" if i == 0 else f"worker {i}") for i in range(10)}
rows = sorted(nodes, key=lambda n: n.node_manager_port)
alive = sum(1 for n in rows if n.state == 0)
print(f"ray-local: {alive} of {len(rows)} nodes alive (GCS {address})")
for n in rows:
    res = {k: v for k, v in dict(n.resources_total).items() if not k.startswith("node:") and k != "memory"
           and k != "object_store_memory"}
    state = "ALIVE" if n.state == 0 else "DEAD"
    name = names.get(n.node_manager_port, "?")
    print(f"  {name:9s} {state:5s} {n.node_id.hex()[:12]} port {n.node_manager_port} {res}")
PY
}

usage() { sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'; }

main() {
  local cmd="${1:-}"
  [[ $# -gt 0 ]] && shift
  case "$cmd" in
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    kill-worker) cmd_kill_worker "$@" ;;
    start-worker) cmd_start_worker "$@" ;;
    address) echo "$IP:$GCS_PORT" ;;
    -h|--help|help) usage ;;
    *) usage >&2; exit 2 ;;
  esac
}

main "$@"
