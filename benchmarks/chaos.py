"""Chaos under load: one dependency taken away while clients use the replicated Serve app.

    python benchmarks/chaos.py [--clients 16] [--duration 60] [--cases postgres_pause redis_stop ...]
                               [--json-out PATH]

The app is the one of tests/services/test_replicated_serving.py (``benchmarks.replicated``:
Neo4j + GDS, the Qdrant server, PostgreSQL app state, Redis; two ingress, two retriever and two
agent replicas; keys required), with the daily quotas lifted and a concurrency cap of
``MAX_CONCURRENT``. The servers are the ones ``make neo4j-start qdrant-start redis-start
postgres-start`` started, found as the tests find them (``MEDGRAPH_QDRANT_URL``,
``MEDGRAPH_REDIS_URL``, ``MEDGRAPH_APP_DB_URL``; their folders under ``MEDGRAPH_HOME``, default
``.medgraph``), and stopped, paused and restarted with the same scripts (``Services``).

For each case (``CASES``) N closed-loop clients run for D seconds: ``POST /chat``,
``POST /chat/stream`` (SSE, with progress events), ``POST /chat`` continuing the client's session
(a message appended) and ``POST /admin/users`` (a key issued). The dependency goes at D/3 and is
brought back at 2D/3 (a killed replica comes back by itself: Serve replaces it); the clients go on
until D, and at least ``AFTER_RETURN_S`` after the dependency is back, until a good answer came.
``/health/live`` is probed every 0.5 s. Afterwards every acknowledged write is read back: each
issued key must work, each appended message must be in its session's history (read from the app
database). A case's report: requests by outcome (2xx, 503, other 5xx, other 4xx, no response
within ``client_timeout_s``, streams cut off), p50 / p99 latency, seconds from the dependency's
return to the first good answer, writes acknowledged and lost, the liveness probe's worst latency,
the streams that were running when the dependency went, and ``goals_failed`` (``goal_failures``).
Prints one JSON document (date, command, CPUs, ``uptime`` before and after, the cases).
Each case leaves every server running and the app ready, or raises.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

CASES = {
    "postgres_stop": "PostgreSQL stopped",
    "postgres_pause": "PostgreSQL paused (SIGSTOP of the postmaster and its backends)",
    "redis_stop": "Redis stopped",
    "neo4j_stop": "Neo4j stopped",
    "qdrant_stop": "the Qdrant server stopped",
    "retriever_kill": "one retriever replica killed (ray.kill)",
    "ingress_kill": "one ingress replica killed (ray.kill)",
}
QUESTIONS = [
    "What are the side effects of metformin?",
    "What are the side effects of contrast media?",
    "How do alcohol-based hand rubs prevent infections in outpatient clinics?",
    "Why is metformin paused before contrast media are given?",
]
# each client's round of operations (rotated by the client's number)
MIX = ["chat", "stream", "append", "chat", "key", "stream", "append", "chat"]
MAX_CONCURRENT = 4  # auth.max_concurrent: questions answered at once across the ingress replicas
# the server's own time limits (the ingress gives a question answer + wake + gaps + request time)
SERVER_LIMITS = ["serve.request_timeout_s=30", "serve.store_timeout_s=5", "serve.answer_timeout_s=30",
                 "tiers.wake_timeout_s=30", "gaps.time_budget_s=10"]
PROBE_EVERY_S = 0.5
AFTER_RETURN_S = 10.0  # clients run at least this long after the dependency's return
RECOVERY_WAIT_S = 60.0  # ... and on until a good answer, at most this long after it
READY_TIMEOUT_S = 120.0  # the app ready again after a case


def app_overrides(max_concurrent: int = MAX_CONCURRENT) -> list[str]:
    return ["auth.per_user_daily=1000000000", "auth.global_daily=1000000000",
            f"auth.max_concurrent={max_concurrent}", "auth.max_queue=256", *SERVER_LIMITS]


def client_timeout_s(cfg: Any) -> float:
    """Well above the longest the server takes to answer or give up on a question."""
    s = cfg.serve
    return 2 * (s.answer_timeout_s + cfg.tiers.wake_timeout_s + cfg.gaps.time_budget_s + s.request_timeout_s)


# --- the servers ---------------------------------------------------------------------------------


class NotControllable(RuntimeError):
    """``service``'s server is not one these scripts started: it cannot be stopped and restarted here."""

    def __init__(self, service: str, message: str) -> None:
        super().__init__(message)
        self.service = service


class Services:
    """Stops, pauses and restarts the dev servers with the scripts of the Makefile's targets; checks
    first that the folder's server is the one the app uses (the URL its ``url`` file names)."""

    def __init__(self, urls: dict[str, str], home: Path | None = None) -> None:
        self.urls = urls
        self.home = (home or REPO / os.environ.get("MEDGRAPH_HOME", ".medgraph")).resolve()
        self.shared_bin = Path(os.environ.get("SHARED_BIN", REPO.parent / "shared" / "bin"))

    FOLDERS = {"postgres": "postgres-server", "redis": "redis-server", "qdrant": "qdrant-server"}

    def folder(self, service: str) -> Path:
        """The folder of ``service``'s server under ``MEDGRAPH_HOME``; raises ``RuntimeError`` when
        it is not the server at the URL the app uses (``NotControllable``)."""
        folder = self.home / self.FOLDERS[service]
        written = (folder / "url").read_text().strip() if (folder / "url").exists() else ""
        if written != self.urls[service].split("?")[0]:
            raise NotControllable(service, f"{folder} is not the {service} server at {self.urls[service]} (its url file: "
                               f"{written or 'none'}); start it with make {service}-start or set MEDGRAPH_HOME")
        return folder

    def check(self) -> None:
        """Raises ``NotControllable`` unless every server can be stopped and started here."""
        for service in self.FOLDERS:
            self.folder(service)
        try:
            self._run("cluster/neo4j/neo4j-dev.sh", "status")
        except RuntimeError as exc:
            raise NotControllable("neo4j", f"the Neo4j server is not the one of make neo4j-start ({exc})") from None

    @staticmethod
    def _run(*cmd: str, env: dict[str, str] | None = None, timeout: float = 300) -> None:
        done = subprocess.run(cmd, env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=timeout,
                              cwd=REPO)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()[-500:]}")

    def stop(self, service: str) -> None:
        if service == "postgres":
            self._run("cluster/postgres/pg-dev.sh", "stop", str(self.folder(service)))
        elif service == "redis":
            self._run("cluster/redis/redis-dev.sh", "stop", str(self.folder(service)))
        elif service == "qdrant":
            self._run(str(self.shared_bin / "qdrant-dev.sh"), "stop", str(self.folder(service)))
        elif service == "neo4j":
            self._run("cluster/neo4j/neo4j-dev.sh", "stop")
        else:
            raise ValueError(service)

    def start(self, service: str) -> None:
        """Start ``service`` again (its data kept) and return once it answers."""
        if service == "postgres":
            folder = str(self.home / "postgres-server")
            self._run("cluster/postgres/pg-dev.sh", "start", folder)
            self._run("cluster/postgres/pg-dev.sh", "wait", folder)
        elif service == "redis":
            port = str(urlsplit(self.urls["redis"]).port)
            self._run("cluster/redis/redis-dev.sh", "start", str(self.home / "redis-server"), env={"REDIS_PORT": port})
        elif service == "qdrant":
            port = urlsplit(self.urls["qdrant"]).port or 6333
            grpc = os.environ.get("QDRANT_TEST_GRPC_PORT", str(port + 1))
            self._run(str(self.shared_bin / "qdrant-dev.sh"), "start", str(self.home / "qdrant-server"),
                      env={"QDRANT_HTTP_PORT": str(port), "QDRANT_GRPC_PORT": grpc})
        elif service == "neo4j":  # never --wipe: the corpus must come back with the server
            env = {"NEO4J_DEV_PYTHON": sys.executable}
            self._run("cluster/neo4j/neo4j-dev.sh", "start", env=env)
            self._run("cluster/neo4j/neo4j-dev.sh", "wait", env=env)
        else:
            raise ValueError(service)

    def postgres_pids(self) -> list[int]:
        """The postmaster's pid, then its children's (the backends and background workers)."""
        data = self.folder("postgres") / "data"
        postmaster = int((data / "postmaster.pid").read_text().split()[0])
        children = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:  # the process ended
                continue
            if int(fields[1]) == postmaster:
                children.append(int(stat.parent.name))
        return [postmaster, *children]

    def pause_postgres(self, paused: list[int]) -> None:
        """SIGSTOP the postmaster (first: it forks no new backend while paused), then its children;
        ``paused`` gets each pid as it stops, for ``resume``."""
        postmaster = self.postgres_pids()[0]
        os.kill(postmaster, signal.SIGSTOP)
        paused.append(postmaster)
        for pid in self.postgres_pids()[1:]:
            os.kill(pid, signal.SIGSTOP)
            paused.append(pid)

    @staticmethod
    def resume(pids: list[int]) -> None:
        for pid in reversed(pids):
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass


def replica_actors(deployment: str, app_name: str = "medgraph") -> list[str]:
    """Names of the live replica actors of ``deployment``."""
    import ray

    prefix = f"SERVE_REPLICA::{app_name}#{deployment}#"
    return sorted(a["name"] for a in ray.util.list_named_actors(all_namespaces=True)
                  if a.get("namespace") == "serve" and a["name"].startswith(prefix))


def kill_replica(deployment: str) -> str:
    import ray

    name = replica_actors(deployment)[0]
    ray.kill(ray.get_actor(name, namespace="serve"), no_restart=True)
    return name


def wait_replicas(deployment: str, killed: str, count: int, timeout: float = 180) -> None:
    """Until Serve runs ``count`` replicas of ``deployment`` again, none of them ``killed``."""
    from ray import serve

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        names = replica_actors(deployment)
        status = serve.status().applications["medgraph"].deployments[deployment]
        if killed not in names and len(names) == count and status.replica_states.get("RUNNING", 0) == count:
            return
        time.sleep(0.25)
    raise RuntimeError(f"{deployment}: {count} replicas did not come back within {timeout:.0f} s")


class Outage:
    """Takes one case's dependency away (``take``) and brings it back (``restore``: returns once it
    answers again; a killed replica is replaced by Serve, ``restore`` waits for that)."""

    def __init__(self, case: str, services: Services, cfg: Any) -> None:
        self.case, self.services, self.cfg = case, services, cfg
        self.paused: list[int] = []
        self.killed = ""

    def take(self) -> None:
        kind, _, what = self.case.partition("_")
        if self.case == "postgres_pause":
            self.services.pause_postgres(self.paused)
        elif what == "stop":
            self.services.stop(kind)
        elif what == "kill":
            self.killed = kill_replica(kind)
        else:
            raise ValueError(self.case)

    def restore(self) -> None:
        kind, _, what = self.case.partition("_")
        if self.case == "postgres_pause":
            self.services.resume(self.paused)
        elif what == "stop":
            self.services.start(kind)
        else:
            wait_replicas(kind, self.killed, getattr(self.cfg.serve, kind).num_replicas)


# --- the clients ---------------------------------------------------------------------------------


@dataclass
class Call:
    kind: str  # chat | stream | append | key
    t0: float  # seconds since the case began
    t1: float
    status: int  # the HTTP status (a stream's error event: its status); 0: no response
    good: bool = False  # an answer with citations, a key issued, a message appended
    cut: bool = False  # a stream that ended without its last event
    max_gap_s: float = 0.0  # a stream's longest wait between two events
    note: str = ""


@dataclass
class Run:
    """What one case's clients did and what they wrote."""
    url: str
    admin: dict[str, str]
    keys: list[str]  # one user key per client
    case: str
    timeout_s: float
    start: float = field(default_factory=time.monotonic)
    calls: list[Call] = field(default_factory=list)
    issued: list[str] = field(default_factory=list)  # API keys acknowledged (201)
    appended: list[tuple[str, str]] = field(default_factory=list)  # (session ID, message) acknowledged (200)
    probes: list[tuple[float, float, int]] = field(default_factory=list)  # (t, latency s, status)
    stop: threading.Event = field(default_factory=threading.Event)

    def now(self) -> float:
        return time.monotonic() - self.start


def _good_answer(body: dict[str, Any]) -> bool:
    return not body.get("refused") and bool(body.get("citations"))


def _stream(http: httpx.Client, run: Run, headers: dict[str, str], question: str, t0: float) -> Call:
    with http.stream("POST", "/chat/stream", headers=headers, json={"message": question, "progress": True}) as r:
        if r.status_code != 200:
            r.read()
            return Call("stream", t0, run.now(), r.status_code, note=r.text[:200])
        last, gap = time.monotonic(), 0.0
        try:
            for line in r.iter_lines():
                if not line.startswith("data: "):
                    continue
                gap, last = max(gap, time.monotonic() - last), time.monotonic()
                event = json.loads(line[6:])
                if "error" in event:
                    return Call("stream", t0, run.now(), int(event.get("status", 500)), max_gap_s=gap,
                                note=event["error"])
                if event.get("done"):
                    return Call("stream", t0, run.now(), 200, good=_good_answer(event), max_gap_s=gap)
        except httpx.HTTPError as exc:  # the connection broke, or no event within the client's timeout
            return Call("stream", t0, run.now(), 200, cut=True, max_gap_s=gap, note=f"{type(exc).__name__}: {exc}")
        return Call("stream", t0, run.now(), 200, cut=True, max_gap_s=gap, note="the stream ended without 'done'")


def _one(http: httpx.Client, run: Run, index: int, n: int) -> Call:
    kind = MIX[(index + n) % len(MIX)]
    headers = {"Authorization": f"Bearer {run.keys[index]}"}
    question = QUESTIONS[(index + n) % len(QUESTIONS)]
    t0 = run.now()
    if kind == "stream":
        return _stream(http, run, headers, question, t0)
    if kind == "key":
        r = http.post("/admin/users", headers=run.admin, json={"user_id": f"chaos-{run.case}-{index}-{n}"})
        if r.status_code == 201:
            run.issued.append(r.json()["api_key"])
        return Call(kind, t0, run.now(), r.status_code, good=r.status_code == 201, note=r.text[:200])
    body: dict[str, Any] = {"message": question}
    if kind == "append":
        body = {"message": f"{question} (chaos {uuid.uuid4().hex[:8]})", "session_id": f"chaos-{run.case}-{index}"}
    r = http.post("/chat", headers=headers, json=body)
    good = r.status_code == 200 and _good_answer(r.json())
    if kind == "append" and r.status_code == 200:
        run.appended.append((body["session_id"], body["message"]))
    return Call(kind, t0, run.now(), r.status_code, good=good, note="" if good else r.text[:200])


def client(run: Run, index: int) -> None:
    with httpx.Client(base_url=run.url, timeout=run.timeout_s) as http:
        n = 0
        while not run.stop.is_set():
            t0 = run.now()
            try:
                call = _one(http, run, index, n)
            except httpx.HTTPError as exc:  # no response within the client's timeout, or the connection failed
                call = Call(MIX[(index + n) % len(MIX)], t0, run.now(), 0, note=f"{type(exc).__name__}: {exc}")
            run.calls.append(call)
            n += 1


def probe_live(run: Run) -> None:
    with httpx.Client(base_url=run.url, timeout=run.timeout_s) as http:
        while not run.stop.is_set():
            t0 = time.monotonic()
            try:
                status = http.get("/health/live").status_code
            except httpx.HTTPError:
                status = 0
            run.probes.append((run.now(), time.monotonic() - t0, status))
            run.stop.wait(max(0.0, PROBE_EVERY_S - (time.monotonic() - t0)))


# --- one case ------------------------------------------------------------------------------------


def user_keys(url: str, admin: dict[str, str], count: int, prefix: str = "chaos-client") -> list[str]:
    """One API key per client (users ``<prefix>-<i>``)."""
    keys = []
    for i in range(count):
        r = httpx.post(f"{url}/admin/users", json={"user_id": f"{prefix}-{i}-{uuid.uuid4().hex[:6]}"},
                       headers=admin, timeout=60)
        r.raise_for_status()
        keys.append(r.json()["api_key"])
    return keys


def wait_ready(url: str, admin: dict[str, str], timeout: float = READY_TIMEOUT_S) -> float:
    """Seconds until ``/health/ready`` (as admin) and a question answer; raises past ``timeout``."""
    t0 = time.monotonic()
    last = ""
    while time.monotonic() - t0 < timeout:
        try:
            ready = httpx.get(f"{url}/health/ready", headers=admin, timeout=30)
            chat = httpx.post(f"{url}/chat", headers=admin, json={"message": QUESTIONS[0]}, timeout=60)
            if ready.status_code == 200 and chat.status_code == 200 and _good_answer(chat.json()):
                return time.monotonic() - t0
            last = f"ready {ready.status_code}, chat {chat.status_code}: {chat.text[:200]}"
        except httpx.HTTPError as exc:
            last = repr(exc)
        time.sleep(1)
    raise RuntimeError(f"the app was not ready {timeout:.0f} s after the case: {last}")


def lost_writes(run: Run, app_db: str, timeout: float = 60) -> dict[str, Any]:
    """Acknowledged writes that cannot be read back: keys that do not verify (401; a key still
    failing otherwise after ``timeout`` is counted as unverified), messages missing from their
    session's history (read from the app database)."""
    from medgraph.memory.sessions import SessionStore

    lost_keys, unverified = 0, 0
    with httpx.Client(base_url=run.url, timeout=60) as http:
        for key in run.issued:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    status = http.get("/v1/models", headers={"Authorization": f"Bearer {key}"}).status_code
                except httpx.HTTPError:
                    status = 0
                if status in (200, 401) or time.monotonic() > deadline:
                    break
                time.sleep(1)
            lost_keys += status == 401
            unverified += status not in (200, 401)
    store = SessionStore(app_db)
    try:
        history: dict[str, set[str]] = {}
        for session_id, _ in run.appended:
            if session_id not in history:
                history[session_id] = {m.content for m in store.recent(session_id, 1_000_000) if m.role == "user"}
        lost_messages = sum(1 for session_id, message in run.appended if message not in history[session_id])
    finally:
        store.close()
    return {"acknowledged": len(run.issued) + len(run.appended), "lost": lost_keys + lost_messages,
            "keys": {"acknowledged": len(run.issued), "lost": lost_keys, "unverified": unverified},
            "messages": {"acknowledged": len(run.appended), "lost": lost_messages}}


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


def summarise(run: Run, taken: float, returned: float) -> dict[str, Any]:
    calls = run.calls
    answered = [c for c in calls if 200 <= c.status < 300 and not c.cut]
    counts = {
        "sent": len(calls), "answered_2xx": len(answered), "503": sum(c.status == 503 for c in calls),
        "other_5xx": sum(c.status >= 500 and c.status != 503 for c in calls),
        "other_4xx": sum(400 <= c.status < 500 for c in calls), "no_response": sum(c.status == 0 for c in calls),
        "streams_cut": sum(c.cut for c in calls),
    }
    good_after = [c.t1 for c in calls if c.good and c.kind != "key" and c.t1 >= returned]
    across = [c for c in calls if c.kind == "stream" and c.t0 < taken < c.t1]
    live_down = [lat for t, lat, _ in run.probes if taken <= t <= returned]
    bad = [c for c in calls if c.status == 0 or c.cut or (c.status >= 500 and c.status != 503) or 400 <= c.status < 500]
    return {
        "requests": counts,
        "by_kind": {k: {"sent": sum(c.kind == k for c in calls), "good": sum(c.good and c.kind == k for c in calls)}
                    for k in dict.fromkeys(MIX)},
        "latency_ms": {"p50": _pct([c.t1 - c.t0 for c in calls if c.status], 0.5),
                       "p99": _pct([c.t1 - c.t0 for c in calls if c.status], 0.99)},
        "good_answers_while_down": sum(c.good and c.kind != "key" and taken <= c.t1 < returned for c in calls),
        "first_good_answer_after_return_s": round(min(good_after) - returned, 2) if good_after else None,
        "health_live": {"probes": len(run.probes), "failed": sum(s != 200 for _, _, s in run.probes),
                        "max_ms": _pct([lat for _, lat, _ in run.probes], 1.0),
                        "max_ms_while_down": _pct(live_down, 1.0)},
        "streams_running_when_taken": {
            "count": len(across), "completed": sum(c.good for c in across),
            "503": sum(c.status == 503 for c in across), "cut": sum(c.cut for c in across),
            "max_gap_s": round(max((c.max_gap_s for c in across), default=0.0), 2)},
        "failures": [{"kind": c.kind, "t": round(c.t0, 1), "status": c.status, "note": c.note[:160]} for c in bad][:10],
    }


def goal_failures(result: dict[str, Any], recovery_s: float = 10.0, live_max_ms: float = 1000.0) -> list[str]:
    """The goals this case missed: no 5xx but 503, every request answered (no stream cut off), no
    acknowledged write lost, a good answer within ``recovery_s`` of the dependency's return, and
    (PostgreSQL paused) ``/health/live`` under ``live_max_ms`` while it was."""
    r, failed = result["requests"], []
    if r["other_5xx"]:
        failed.append(f"{r['other_5xx']} responses >= 500 other than 503")
    if r["no_response"] or r["streams_cut"]:
        failed.append(f"{r['no_response']} requests without a response, {r['streams_cut']} streams cut off")
    if result["writes"]["lost"] or result["writes"]["keys"]["unverified"]:
        failed.append(f"acknowledged writes lost: {result['writes']}")
    first = result["first_good_answer_after_return_s"]
    if first is None or first > recovery_s:
        failed.append(f"first good answer {first} s after the dependency's return (goal: {recovery_s:g} s)")
    live = result["health_live"]
    if result["case"] == "postgres_pause" and (live["failed"] or (live["max_ms_while_down"] or 0) > live_max_ms):
        failed.append(f"/health/live during the pause: {live}")
    return failed


def run_case(app: Any, services: Services, case: str, keys: list[str], duration: float,
             after_return_s: float = AFTER_RETURN_S) -> dict[str, Any]:
    """One case against the running app (``benchmarks.replicated.ReplicatedApp``) with one
    client per key; the dependency goes at ``duration``/3 and comes back at 2 ``duration``/3. The
    clients stop at ``duration``, or ``after_return_s`` after the dependency's return, whichever is
    later, and once a good answer came after the return (or ``RECOVERY_WAIT_S`` passed)."""
    run = Run(app.url, app.admin, keys, case, client_timeout_s(app.cfg))
    outage = Outage(case, services, app.cfg)
    threads = [threading.Thread(target=client, args=(run, i), daemon=True) for i in range(len(keys))]
    threads.append(threading.Thread(target=probe_live, args=(run,), daemon=True))
    for t in threads:
        t.start()
    taking, taken, returned = False, None, None
    try:
        time.sleep(max(0.0, duration / 3 - run.now()))
        taking = True
        outage.take()
        taken = run.now()
        time.sleep(max(0.0, 2 * duration / 3 - run.now()))
        restoring = run.now()
        outage.restore()
        returned = run.now()
        while run.now() < max(duration, returned + after_return_s) or (
                run.now() < returned + RECOVERY_WAIT_S
                and not any(c.good and c.kind != "key" and c.t1 >= returned for c in run.calls)):
            time.sleep(0.25)
    finally:
        if taking and returned is None:  # an error on the way: bring the dependency back anyway
            outage.restore()
        run.stop.set()
        for t in threads:
            t.join()
    ran = run.now()
    ready_after = wait_ready(app.url, app.admin)
    result = {"case": case, "what": CASES[case], "clients": len(keys), "duration_s": duration, "ran_s": round(ran, 1),
              "taken_at_s": round(taken, 1), "restore_at_s": round(restoring, 1), "returned_at_s": round(returned, 1),
              **summarise(run, taken, returned), "writes": lost_writes(run, app.app_db),
              "ready_after_case_s": round(ready_after, 1)}
    result["goals_failed"] = goal_failures(result)
    return result


# --- the benchmark -------------------------------------------------------------------------------


def service_urls() -> dict[str, str]:
    urls = {"qdrant": os.environ.get("MEDGRAPH_QDRANT_URL", ""), "redis": os.environ.get("MEDGRAPH_REDIS_URL", ""),
            "postgres": os.environ.get("MEDGRAPH_APP_DB_URL", "")}
    missing = [k for k, v in urls.items() if not v]
    if missing:
        raise SystemExit(f"no URL for {missing}: make neo4j-start qdrant-start redis-start postgres-start, then export "
                         "MEDGRAPH_QDRANT_URL, MEDGRAPH_REDIS_URL and MEDGRAPH_APP_DB_URL from .medgraph/*/url")
    return urls


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--duration", type=float, default=60.0, help="seconds per case")
    ap.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES))
    ap.add_argument("--json-out", type=Path)
    args = ap.parse_args(argv)
    import tempfile

    from benchmarks.replicated import start_replicated
    from tests.integration.test_agent_http import CORPUS

    urls = service_urls()
    services = Services(urls)
    out: dict[str, Any] = {
        "date": subprocess.run(["date"], capture_output=True, text=True).stdout.strip(),
        "command": " ".join([Path(sys.executable).name, *sys.argv]), "cpus": os.cpu_count(),
        "uptime_before": _uptime(), "clients": args.clients, "duration_s": args.duration,
        "settings": {"max_concurrent": MAX_CONCURRENT, "server_limits": SERVER_LIMITS,
                     "replicas": {"ingress": 2, "retriever": 2, "agent": 2}},
    }
    with tempfile.TemporaryDirectory(prefix="chaos-") as tmp:
        app = start_replicated(urls, Path(tmp), CORPUS, REPO / "tests" / "fixtures" / "agent" / "literature",
                               app_overrides())
        try:
            out["client_timeout_s"] = client_timeout_s(app.cfg)
            keys = user_keys(app.url, app.admin, args.clients)
            wait_ready(app.url, app.admin)
            out["cases"] = []
            for case in args.cases:
                print(f"chaos: {case} ...", file=sys.stderr, flush=True)
                out["cases"].append(run_case(app, services, case, keys, args.duration))
                print(f"chaos: {case}: {json.dumps(out['cases'][-1]['requests'])}", file=sys.stderr, flush=True)
        finally:
            app.close()
    out["uptime_after"] = _uptime()
    text = json.dumps(out, indent=2)
    print(text)
    if args.json_out:
        args.json_out.write_text(text + "\n")
    return 0 if not any(c["goals_failed"] for c in out["cases"]) else 1


if __name__ == "__main__":
    sys.exit(main())
