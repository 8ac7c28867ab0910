"""Fixtures of the multi-node tests: the Qdrant server and the Neo4j server the builds write into.

``qdrant_url``: ``$MEDGRAPH_QDRANT_URL`` when set (``make test`` starts the server and sets it),
else a Qdrant server started here from ``../shared/bin/qdrant-dev.sh`` (``$MEDGRAPH_SHARED_BIN``)
on free ports with its storage in a tmp dir, stopped after the session, so the tests also run
alone. Missing binary or no answer: the tests skip with the reason, unless
``MEDGRAPH_REQUIRE_SHARED=1`` (CI), in which case they fail.

``neo4j_uri``: the local dev server as tests/services use it (``make neo4j-start``;
``bolt://$NEO4J_DEV_HOST:$NEO4J_DEV_PORT``, password from ``NEO4J_DEV_PASSWORD``); skips when
nothing answers unless ``MEDGRAPH_REQUIRE_NEO4J=1``. The builds write the product's labels
(Document, Chunk, Entity, Run, Failure) into the default database, so, like
tests/services/test_neo4j_build_and_serve.py, each test wipes those labels before it runs and
the module wipes them at the end: do not run these tests against a Neo4j holding data you keep.
"""

from __future__ import annotations

import os
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from medgraph.testing.net import free_port
from tests.helpers import require_disposable_neo4j, unavailable

REPO = Path(__file__).resolve().parents[2]
NEO4J_URI = f"bolt://{os.environ.get('NEO4J_DEV_HOST', '127.0.0.1')}:{os.environ.get('NEO4J_DEV_PORT', '7687')}"
GRAPH_LABELS = ("Entity", "Chunk", "Document", "Run", "Failure")


def shared_bin_dir() -> Path:
    return Path(os.environ.get("MEDGRAPH_SHARED_BIN", REPO.parent / "shared" / "bin")).resolve()


def qdrant_ready(url: str, timeout_s: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(f"{url.rstrip('/')}/readyz", timeout=timeout_s) as resp:
            return resp.status == 200
    except OSError:
        return False


@pytest.fixture(scope="session")
def qdrant_url(tmp_path_factory) -> Iterator[str]:
    url = os.environ.get("MEDGRAPH_QDRANT_URL")
    if url:
        if not qdrant_ready(url):
            unavailable(f"no Qdrant server answering at MEDGRAPH_QDRANT_URL={url}", "MEDGRAPH_REQUIRE_SHARED")
        yield url
        return
    script = shared_bin_dir() / "qdrant-dev.sh"
    if not (script.is_file() and (script.parent / "qdrant").is_file()):
        unavailable(f"Qdrant server binary not found at {script.parent} (set MEDGRAPH_SHARED_BIN, "
                    "or MEDGRAPH_QDRANT_URL for a running server)", "MEDGRAPH_REQUIRE_SHARED")
    data = tmp_path_factory.mktemp("qdrant-server")
    http, grpc = free_port(), free_port()
    env = {**os.environ, "QDRANT_HTTP_PORT": str(http), "QDRANT_GRPC_PORT": str(grpc)}
    started = subprocess.run([str(script), "start", str(data)], env=env, capture_output=True, text=True)
    try:
        if started.returncode != 0:
            unavailable(f"Qdrant server did not start: {started.stdout}{started.stderr}", "MEDGRAPH_REQUIRE_SHARED")
        yield f"http://127.0.0.1:{http}"
    finally:
        subprocess.run([str(script), "stop", str(data)], env=env, capture_output=True, text=True)


def wipe_collection(url: str, collection: str) -> None:
    from qdrant_client import QdrantClient

    client = QdrantClient(url=url, timeout=30, check_compatibility=False)
    try:
        if client.collection_exists(collection):
            client.delete_collection(collection)
    finally:
        client.close()


def wipe_graph(uri: str) -> None:
    """Remove every node of the product's labels (the tests/services scheme)."""
    from medgraph.config.models import Neo4jGraphStoreConfig
    from medgraph.stores import make_graph_store

    store = make_graph_store(Neo4jGraphStoreConfig(kind="neo4j", uri=uri, password_env="NEO4J_DEV_PASSWORD"))
    try:
        where = " OR ".join(f"n:{label}" for label in GRAPH_LABELS)
        with store._driver.session() as session:
            session.run(f"MATCH (n) WHERE {where} DETACH DELETE n").consume()
    finally:
        store.close()


@pytest.fixture(scope="module")
def neo4j_uri() -> Iterator[str]:
    from medgraph.stores.errors import StoreUnavailable

    require_disposable_neo4j(NEO4J_URI)
    try:
        wipe_graph(NEO4J_URI)
    except StoreUnavailable as exc:
        unavailable(f"no Neo4j answering at {NEO4J_URI} ({exc}); start it with make neo4j-start",
                    "MEDGRAPH_REQUIRE_NEO4J")
    yield NEO4J_URI
    wipe_graph(NEO4J_URI)


def wait_for(predicate, timeout_s: float, every_s: float = 0.5, what: str = "condition"):
    """Poll ``predicate`` until it returns a truthy value (returned) or ``timeout_s`` passes."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not reached within {timeout_s:.0f} s")
        time.sleep(every_s)
