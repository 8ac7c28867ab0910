"""The Serve app as the cluster runs it, on the local dev servers, for the services tests and
``benchmarks/chaos.py``.

``start_replicated(services, root, records, literature, overrides)`` builds ``records`` into the
disposable Neo4j + GDS dev server and a Qdrant-server collection of its own, keeps the app state
(users, keys, sessions, memories) in a PostgreSQL schema of its own and the quotas and the
concurrency cap under a Redis key prefix of its own, and serves the app through real Serve HTTP
with two ingress, two retriever and two agent replicas, keys required, gap completion reading
``literature``. ``services`` holds the servers' URLs: ``qdrant``, ``redis``, ``postgres``.
``ReplicatedApp.close()`` shuts Serve down and removes what it wrote (the graph's product labels
included: the dev server is disposable).
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from medgraph.testing.net import free_port

REPO = Path(__file__).resolve().parents[1]
NEO4J_URI = f"bolt://{os.environ.get('NEO4J_DEV_HOST', '127.0.0.1')}:{os.environ.get('NEO4J_DEV_PORT', '7687')}"
ADMIN_KEY = "mgk_00000000beef_" + "R" * 43


@dataclass
class ReplicatedApp:
    url: str
    cfg: Any  # MedGraphConfig
    admin: dict[str, str]  # the admin key's headers
    services: dict[str, str]
    app_db: str  # the app state's URL (its schema in search_path)
    schema: str
    prefix: str  # of the Redis keys
    collection: str

    def close(self) -> None:
        import psycopg
        import redis
        from ray import serve

        serve.shutdown()  # type: ignore[no-untyped-call]
        wipe_graph(self.cfg)
        httpx.delete(f"{self.services['qdrant']}/collections/{self.collection}", timeout=30)
        client = redis.Redis.from_url(self.services["redis"])
        for key in client.scan_iter(match=f"{self.prefix}:*"):
            client.delete(key)
        with psycopg.connect(self.services["postgres"], autocommit=True) as db:
            db.execute(f'DROP SCHEMA "{self.schema}" CASCADE')


def start_replicated(services: dict[str, str], root: Path, records: list[dict[str, Any]], literature: Path,
                     overrides: Sequence[str] = ()) -> ReplicatedApp:
    """Build ``records`` into the server stores and serve them replicated (see the module docstring);
    ``overrides`` (``a.b=c``) come last, e.g. the quotas and the concurrency cap."""
    import psycopg

    from jobs.build_corpus import build_corpus
    from medgraph.auth.keys import ApiKeyStore
    from medgraph.config import load_config
    from serve.demo import start

    tag = uuid.uuid4().hex[:10]
    schema, prefix, collection = f"medgraph_replicas_{tag}", f"medgraph-test-{tag}", f"replicas_{tag}"
    with psycopg.connect(services["postgres"], autocommit=True) as db:
        db.execute(f'CREATE SCHEMA "{schema}"')  # a generated name, not user input
    app_db = f"{services['postgres']}?options={quote(f'-csearch_path={schema}', safe='')}"
    corpus = root / "corpus"
    corpus.mkdir()
    (corpus / "docs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    shutil.copytree(literature, root / "literature")
    sets = [
        f'stores.graph={{kind: neo4j, uri: "{NEO4J_URI}", password_env: NEO4J_DEV_PASSWORD}}',
        f'stores.vector={{kind: qdrant_server, url: "{services["qdrant"]}", collection: {collection}}}',
        f"app.path={app_db}", f"redis.url={services['redis']}", f"redis.prefix={prefix}",
        f"serve.port={free_port()}", "serve.tier_admin=false", "auth.required=true", "retrieval.ppr_refresh_s=0.5",
        "serve.ingress.num_replicas=2", "serve.retriever.num_replicas=2", "serve.agent.num_replicas=2",
        f'gaps.sources=[{{"kind": "local", "path": "{root / "literature"}"}}]', *overrides,
    ]
    cfg = load_config(REPO / "configs" / "local.yaml", sets)
    app = ReplicatedApp("", cfg, {"Authorization": f"Bearer {ADMIN_KEY}"}, services, app_db, schema, prefix,
                        collection)
    try:
        wipe_graph(cfg)
        summary = build_corpus(cfg, [str(corpus)])
        if summary["status"] != "succeeded":
            raise RuntimeError(f"building the corpus failed: {summary}")
        ApiKeyStore(cfg.app.path).bootstrap_admin(ADMIN_KEY)
        app.url = start(cfg)
    except BaseException:
        app.close()
        raise
    return app


def wipe_graph(cfg: Any) -> None:
    """Delete the product's nodes from the (disposable) Neo4j server ``cfg`` points at."""
    from medgraph.stores import make_graph_store

    store: Any = make_graph_store(cfg.stores.graph)  # a Neo4jGraphStore: its driver
    try:
        with store._driver.session() as session:
            session.run("MATCH (n) WHERE n:Entity OR n:Chunk OR n:Document OR n:Run OR n:Failure OR n:Community "
                        "OR n:CommunityBuild DETACH DELETE n").consume()
    finally:
        store.close()
