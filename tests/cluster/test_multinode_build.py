"""The corpus build on a 3-node Ray cluster, submitted with ``ray job submit`` as a cluster user does.

The cluster is cluster/local/ray-local.sh (a head and two worker nodes on this machine, each its own
raylet), on ports of its own (below) so that it never meets a developer's ``make ray-local-start``.
The build (configs/local-cluster.yaml: Neo4j + GDS, Qdrant server, hashing embedder) runs over
PubMedQA abstracts of ../shared/data (``MEDGRAPH_CLUSTER_TEST_DOCS``, default 50), uploaded as the
job's working directory. Checked through the CLI and the stores only:

The reference is the same corpus indexed in this process, Ray-free, by the same pipeline code into the
embedded stores (``medgraph.eval.retrieval.open_index``): chunks, mentions, entities and vectors a
build must end with. Checked against it:

- ``ray job stop`` mid-build ends the job as STOPPED; the resubmitted build SUCCEEDS, skips exactly
  the documents the stopped one completed, writes the rest, and ends with the reference counts
  (driver failure; skipping complete documents is also what makes a re-run write nothing, which
  tests/integration/test_build_corpus.py checks on one node);
- killing a worker node (its raylet and every process of it) mid-build: the job still succeeds with
  exactly the reference counts, no chunk lost or duplicated (node failure).

Both builds are checked through the CLI (status, logs with the JSON summary) and the stores.

Needs Neo4j (``make neo4j-start``), the Qdrant server binary of ../shared/bin (or
``MEDGRAPH_QDRANT_URL``) and the shared data: missing ones skip, or fail under
``MEDGRAPH_REQUIRE_NEO4J=1`` / ``MEDGRAPH_REQUIRE_SHARED=1`` (CI).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.conftest import REPO, wait_for, wipe_collection, wipe_graph
from tests.helpers import store_counts

pytestmark = pytest.mark.integration

SCRIPT = REPO / "cluster" / "local" / "ray-local.sh"
CONFIG = "configs/local-cluster.yaml"  # relative: the job runs in the uploaded working directory
BIN = Path(sys.executable).parent
RAY = str(BIN / "ray") if (BIN / "ray").exists() else "ray"
N_DOCS = int(os.environ.get("MEDGRAPH_CLUSTER_TEST_DOCS", "50"))
COLLECTION = "cluster_test_chunks"
# the test cluster's ports and temp dirs (cluster/local/ray-local.sh reads these)
CLUSTER_ENV = {
    "MEDGRAPH_RAY_PORT": "6395",
    "MEDGRAPH_RAY_DASHBOARD_PORT": "8285",
    "MEDGRAPH_RAY_CLIENT_PORT": "10395",
    "MEDGRAPH_RAY_PORT_BASE": "17400",
    "MEDGRAPH_RAY_DIR": "/tmp/medgraph-ray-tests",
}
DASHBOARD = f"http://127.0.0.1:{CLUSTER_ENV['MEDGRAPH_RAY_DASHBOARD_PORT']}"
GCS = f"127.0.0.1:{CLUSTER_ENV['MEDGRAPH_RAY_PORT']}"
JOB_TIMEOUT_S = 420
FINAL = ("SUCCEEDED", "FAILED", "STOPPED")
GRAPH_COUNTS = ("documents", "documents_partial", "chunks", "mentions", "entities")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env.update(CLUSTER_ENV, RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0")
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def _run(*args: str, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(list(args), env=_env(), capture_output=True, text=True, timeout=timeout, cwd=REPO)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


def cluster(*args: str, timeout: float = 180) -> str:
    return _run(str(SCRIPT), *args, timeout=timeout).stdout


def alive_nodes() -> list[dict[str, Any]]:
    """``ray.nodes()`` of the test cluster, alive ones only (this process joins and leaves)."""
    import ray

    ray.init(address=GCS, log_to_driver=False, logging_level="ERROR")
    try:
        return [n for n in ray.nodes() if n["Alive"]]
    finally:
        ray.shutdown()


# --- jobs through the CLI -------------------------------------------------------------------------


class Build:
    """Submits builds of one corpus into one pair of stores and reads them back."""

    def __init__(self, home: Path, corpus: Path, qdrant_url: str, neo4j_uri: str) -> None:
        self.home, self.corpus, self.qdrant_url, self.neo4j_uri = home, corpus, qdrant_url, neo4j_uri
        env_vars = {"MEDGRAPH_HOME": str(home), "QDRANT_URL": qdrant_url, "NEO4J_URI": neo4j_uri,
                    "MEDGRAPH_COLLECTION": COLLECTION}
        if os.environ.get("NEO4J_DEV_PASSWORD"):
            env_vars["NEO4J_DEV_PASSWORD"] = os.environ["NEO4J_DEV_PASSWORD"]
        self.env_vars = env_vars

    def config(self) -> Any:
        from medgraph.config import load_config

        saved = {k: os.environ.get(k) for k in self.env_vars}
        os.environ.update(self.env_vars)
        try:
            return load_config(REPO / CONFIG)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    def wipe(self) -> None:
        wipe_graph(self.neo4j_uri)
        wipe_collection(self.qdrant_url, COLLECTION)

    def counts(self) -> dict[str, int]:
        return store_counts(self.config())

    def graph_counts(self) -> dict[str, int]:
        from medgraph.stores import make_graph_store

        graph = make_graph_store(self.config().stores.graph)
        try:
            return graph.counts()
        finally:
            graph.close()

    def submit(self) -> str:
        job_id = f"mg-build-{uuid.uuid4().hex[:8]}"
        _run(RAY, "job", "submit", "--address", DASHBOARD, "--submission-id", job_id, "--no-wait",
             "--working-dir", str(REPO), "--runtime-env-json", json.dumps({"env_vars": self.env_vars}),
             "--", "python", "-m", "jobs.build_corpus", "--config", CONFIG, "--input", str(self.corpus), "--json")
        return job_id


def job_status(job_id: str) -> str:
    from ray.job_submission import JobSubmissionClient

    return str(JobSubmissionClient(DASHBOARD).get_job_status(job_id).value)


def wait_job(job_id: str, timeout_s: float = JOB_TIMEOUT_S) -> str:
    """Wait until the job ends; the final status as ``ray job status`` reports it."""
    wait_for(lambda: job_status(job_id) in FINAL, timeout_s, every_s=1.0, what=f"end of job {job_id}")
    out = _run(RAY, "job", "status", "--address", DASHBOARD, job_id).stdout
    match = re.search(rf"Job '{job_id}' (succeeded|failed|was stopped)|Status for job '{job_id}': (\w+)", out)
    assert match, out
    word = match.group(1) or match.group(2)
    return {"succeeded": "SUCCEEDED", "failed": "FAILED", "was stopped": "STOPPED"}.get(word, word)


def job_logs(job_id: str) -> str:
    return _run(RAY, "job", "logs", "--address", DASHBOARD, job_id).stdout


def summary_of(logs: str) -> dict[str, Any]:
    """The JSON summary ``--json`` prints at the end of the job's output."""
    start = logs.rfind('{\n  "run_id"')
    assert start >= 0, f"no JSON summary in the job logs:\n{logs[-3000:]}"
    return json.JSONDecoder().raw_decode(logs[start:])[0]


def run_build(build: Build) -> tuple[dict[str, Any], str]:
    job_id = build.submit()
    status = wait_job(job_id)
    logs = job_logs(job_id)
    assert status == "SUCCEEDED", logs[-5000:]
    return summary_of(logs), logs


def job_actors_by_worker() -> dict[int, list[str]]:
    """The alive Ray Data actors of the running build, by worker node (1, 2; 0 = head)."""
    from ray.util.state import list_actors, list_nodes

    workers = {}
    for node in list_nodes(address=DASHBOARD, filters=[("state", "=", "ALIVE")], detail=True):
        names = [k for k in node.resources_total if k.startswith("worker_")]
        workers[node.node_id] = int(names[0].split("_")[1]) if names else 0
    out: dict[int, list[str]] = {}
    for actor in list_actors(address=DASHBOARD, filters=[("state", "=", "ALIVE")], detail=True, limit=1000):
        if actor.class_name.startswith("MapWorker") and actor.node_id in workers:
            out.setdefault(workers[actor.node_id], []).append(actor.class_name)
    return out


def wait_partial(build: Build, total_chunks: int, timeout_s: float = 240) -> dict[str, int]:
    """Block until the build has written some chunks but not all of them."""
    def partial() -> dict[str, int] | None:
        counts = build.graph_counts()
        return counts if 0 < counts["chunks"] < total_chunks else None

    return wait_for(partial, timeout_s, every_s=0.3, what="a partly written corpus")


def wait_actors_on_a_worker(build: Build, total_chunks: int, timeout_s: float = 240) -> tuple[dict[str, int], dict[int, list[str]]]:
    """Block until the running build has actors on a worker node and has not written every chunk yet.

    Waiting for written chunks instead is a race: the writer on the head node can start writing only
    after the extract and embed actors on the workers have finished and gone."""
    def mid_build() -> tuple[dict[str, int], dict[int, list[str]]] | None:
        placed = job_actors_by_worker()
        if not (placed.get(1) or placed.get(2)):
            return None
        counts = build.graph_counts()
        return (counts, placed) if counts["chunks"] < total_chunks else None

    return wait_for(mid_build, timeout_s, every_s=0.2, what="a build with actors on a worker node")


def settled(build: Build, quiet_s: float = 3.0) -> dict[str, int]:
    """The graph counts once they stop changing (the job's actors end shortly after its driver)."""
    last = build.graph_counts()
    while True:
        time.sleep(quiet_s)
        now = build.graph_counts()
        if now == last:
            return now
        last = now


# --- fixtures -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ray_cluster() -> Any:
    cluster("stop")  # a cluster left behind by an interrupted run
    try:
        cluster("start")
        wait_for(lambda: len(alive_nodes()) == 3, 60, what="3 alive nodes")
        yield
    finally:
        cluster("stop")


@pytest.fixture(scope="module")
def corpus(shared_data, tmp_path_factory) -> Path:
    data = json.loads((shared_data / "pubmedqa" / "ori_pqal.json").read_text(encoding="utf-8"))
    picked = {k: data[k] for k in sorted(data)[:N_DOCS]}
    root = tmp_path_factory.mktemp("cluster-corpus")
    (root / "pubmedqa.json").write_text(json.dumps(picked), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def build(ray_cluster, corpus, qdrant_url, neo4j_uri, tmp_path_factory) -> Any:
    from jobs.build_corpus import ensure_vocabulary

    b = Build(tmp_path_factory.mktemp("cluster-home"), corpus, qdrant_url, neo4j_uri)
    ensure_vocabulary(b.config())  # once, on the shared disk: every job and node reads it
    b.wipe()
    yield b
    wipe_collection(qdrant_url, COLLECTION)


@pytest.fixture(scope="module")
def reference(build, corpus, tmp_path_factory) -> dict[str, int]:
    """What a complete build of ``corpus`` holds, indexed Ray-free in this process (same pipeline code,
    same chunking, NER, linking and embedder settings; embedded stores)."""
    from medgraph.eval.retrieval import open_index

    index = open_index(corpus / "pubmedqa.json", build.config(), home=tmp_path_factory.mktemp("reference"))
    try:
        counts = {k: v for k, v in index.graph.counts().items() if k in ("chunks", "mentions", "entities")}
        counts["vectors"] = index.vectors.count()
    finally:
        index.close()
    assert counts["vectors"] == counts["chunks"] > N_DOCS and counts["mentions"] > counts["chunks"]
    return counts


def check_complete(build: Build, reference: dict[str, int], summary: dict[str, Any], logs: str) -> dict[str, int]:
    """A SUCCEEDED build's summary and logs, and the stores holding exactly the reference corpus."""
    assert summary["status"] == "succeeded" and not summary["failures"], summary
    assert "joined Ray cluster" in logs
    counts = build.counts()
    assert counts["documents"] == N_DOCS and counts["documents_partial"] == 0
    assert {k: counts[k] for k in reference} == reference
    assert {k: summary["store"][k] for k in GRAPH_COUNTS} == {k: counts[k] for k in GRAPH_COUNTS}
    assert summary["store"].get("vectors", counts["vectors"]) == counts["vectors"]
    return counts


# --- tests ----------------------------------------------------------------------------------------


def test_cluster_has_a_head_and_two_worker_nodes(ray_cluster) -> None:
    nodes = alive_nodes()
    assert len(nodes) == 3
    resources = [n["Resources"] for n in nodes]
    assert sum(1 for r in resources if r.get("head")) == 1
    assert sorted(k for r in resources for k in r if k.startswith("worker_")) == ["worker_1", "worker_2"]
    assert "3 of 3 nodes alive" in cluster("status")


def test_stopped_build_resumes_where_it_stopped(build, reference) -> None:
    """Driver failure: ``ray job stop`` mid-build (STOPPED), then the same build again."""
    build.wipe()
    job_id = build.submit()
    wait_partial(build, reference["chunks"])
    _run(RAY, "job", "stop", "--address", DASHBOARD, job_id, timeout=120)
    assert wait_job(job_id, timeout_s=60) == "STOPPED"
    stopped = settled(build)
    assert stopped["chunks"] < reference["chunks"]
    assert stopped["documents"] < N_DOCS

    summary, logs = run_build(build)
    assert summary["documents_skipped"] == stopped["documents"] > 0
    assert summary["documents_written"] == N_DOCS - stopped["documents"]
    check_complete(build, reference, summary, logs)


def test_build_survives_losing_a_worker_node(build, reference) -> None:
    """Node failure: a worker node (its raylet and all its processes) is killed mid-build: worker 1,
    or worker 2 when only that one holds actors of the build at that moment."""
    build.wipe()
    job_id = build.submit()
    victim = 1
    try:
        before, placed = wait_actors_on_a_worker(build, reference["chunks"])
        victim = 1 if placed.get(1) else 2
        cluster("kill-worker", str(victim))
        status = wait_job(job_id)
        logs = job_logs(job_id)
        assert status == "SUCCEEDED", logs[-5000:]
        assert before["chunks"] < reference["chunks"]
        check_complete(build, reference, summary_of(logs), logs)
    finally:
        if job_status(job_id) not in FINAL:
            _run(RAY, "job", "stop", "--address", DASHBOARD, job_id, check=False)
        cluster("start-worker", str(victim))
        wait_for(lambda: len(alive_nodes()) == 3, 90, what=f"worker {victim} back")
