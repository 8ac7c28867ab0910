"""Neo4j graph store: the ``GraphStore`` protocol over Neo4j 5.26 + GDS 2.13 (Bolt).

Input: documents, chunks, mentions and entities from the corpus build; seeds for PPR; entity IDs
for neighbourhoods. Output: the same records, counts and rankings as the embedded store.

Schema: ``(:Entity:<Category> {mesh_id})-[:MENTIONED_IN {start, end, surface, method, score}]->
(:Chunk {chunk_id})-[:FROM_DOC]->(:Document {doc_id})``, plus ``(:Run {run_id})`` and
``(:Failure {source, stage})``, each key under a uniqueness constraint. Writes are batched
``UNWIND $rows ... MERGE`` in managed transactions (``execute_write`` retries deadlocks and other
transient errors), so they are idempotent and safe with many concurrent writers. Every query is
parameterised; category labels are set with Cypher 5.26 dynamic labels (``SET e:$(...)``).

PPR: ``gds.pageRank.stream`` with ``sourceNodes`` on a named, undirected projection of
Entity–MENTIONED_IN–Chunk weighted by mention count; scores are divided by the seed weight total,
so they are on ``PPRIndex``'s scale. The projection name carries a signature of the graph (node
and relationship counts, latest document update), so processes share it; the first ``ppr`` after
a write re-projects it and drops stale ones. GDS 2.13 takes no seed weights: unequal weights run
one PageRank per weight group and add them (PPR is linear in the seeds). Strategy measured with
``benchmarks/graph_store.py`` (2 shared CPUs, p50 / p95 per query): named projection 97 / 141 ms
on the demo graph (634 chunks), 216 / 387 ms at 100k mentions (projection 0.3 s, once per write
generation); projecting the seeds' 2-hop subgraph per query 313 / 579 ms and 1081 / 1652 ms.
``entity_path`` estimates each entity's PPR mass from the hits (``PPRIndex`` uses the exact mass).
The query path does not need GDS: ``incidence()`` reads the Entity—Chunk incidence in pages of
chunks (by ``chunk_id``, index-ordered, one short read transaction each) for the in-process
``PPRIndex`` (``medgraph.retrieve.ppr.ProcessPPR``), and ``graph_signature()`` — the same signature,
a few count-store lookups and one index seek — tells it when to read again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import threading
import time
import uuid
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any, LiteralString, TypeVar

import numpy as np
import scipy.sparse as sp
from neo4j import Driver, GraphDatabase, ManagedTransaction
from neo4j import exceptions as neo4j_errors

from medgraph.config.models import Neo4jGraphStoreConfig
from medgraph.graph.communities import Assignment, Community, citations_from_json
from medgraph.graph.cooccurrence import Neighbours, expand
from medgraph.graph.leiden import LeidenParams, assignments_from_levels
from medgraph.graph.ppr import PPRHit
from medgraph.schemas import Chunk, Entity, Failure, Mention
from medgraph.stores import neo4j_cypher as q
from medgraph.stores.errors import StoreUnavailable
from medgraph.stores.graph import Connection, DeleteResult, DocumentRecord

log = logging.getLogger(__name__)
T = TypeVar("T")
Rows = list[dict[str, Any]]

CONNECT_TIMEOUT_S = 3.0
RETRY_TIME_S = 15.0
_NO_LIMIT = 1 << 62  # Cypher's LIMIT takes no null: "all rows"


class Neo4jGraphStore:
    """``GraphStore`` on a Neo4j server; see the module docstring."""

    def __init__(self, cfg: Neo4jGraphStoreConfig) -> None:
        self.cfg = cfg
        password = os.environ.get(cfg.password_env, "")
        auth = (cfg.user, password) if password else None
        self._driver: Driver = GraphDatabase.driver(
            cfg.uri, auth=auth, connection_timeout=CONNECT_TIMEOUT_S, connection_acquisition_timeout=10.0,
            max_transaction_retry_time=RETRY_TIME_S, notifications_min_severity="OFF",
        )
        self._lock = threading.Lock()
        self._generation = 0  # writes by this instance; with the signature, decides re-projection
        self._projection: tuple[tuple[Any, ...], int, str] | None = None
        with self._guard():
            self._driver.verify_connectivity()
            self._ensure_schema()

    # --- plumbing -----------------------------------------------------------------------

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """Turn "server unreachable" driver errors into ``StoreUnavailable``."""
        try:
            yield
        except (neo4j_errors.ServiceUnavailable, neo4j_errors.SessionExpired, OSError) as exc:
            raise StoreUnavailable(f"Neo4j at {self.cfg.uri} is unavailable: {exc}") from exc
        except neo4j_errors.AuthError as exc:
            raise StoreUnavailable(
                f"Neo4j at {self.cfg.uri} rejected the credentials (user {self.cfg.user!r}, "
                f"password from ${self.cfg.password_env}): {exc}") from exc

    def _ensure_schema(self) -> None:
        with self._driver.session(database=self.cfg.database) as session:
            for statement in q.SCHEMA:
                try:
                    session.run(statement).consume()
                except neo4j_errors.ClientError as exc:  # another process created it meanwhile
                    if "already exists" not in str(exc).lower():
                        raise

    def read(self, query: LiteralString, **params: Any) -> Rows:
        """Rows of one read query (a literal: values only as ``params``), retried like every read;
        an unreachable server is ``StoreUnavailable``."""

        def work(tx: ManagedTransaction) -> Rows:
            return [record.data() for record in tx.run(query, params)]

        with self._guard(), self._driver.session(database=self.cfg.database) as session:
            return session.execute_read(work)

    def _write(self, work: Callable[[ManagedTransaction], T]) -> T:
        with self._guard(), self._driver.session(database=self.cfg.database) as session:
            result = session.execute_write(work)
        self._generation += 1
        return result

    # --- writes -------------------------------------------------------------------------

    def upsert_documents(self, docs: list[DocumentRecord]) -> None:
        now = time.time()
        rows = [{"doc_id": d.doc_id, "title": d.title, "language": d.language, "content_hash": d.content_hash,
                 "n_chunks": d.n_chunks, "source_id": d.source_id, "source_path": d.source_path,
                 "updated_at": now} for d in sorted(docs, key=lambda d: d.doc_id)]
        if rows:
            self._write(lambda tx: tx.run(q.UPSERT_DOCUMENTS, rows=rows).consume())

    def upsert_chunks(self, chunks: list[Chunk], mentions: list[Mention], entities: list[Entity]) -> None:
        chunk_rows = [{"chunk_id": c.chunk_id, "props": _chunk_props(c)}
                      for c in sorted(chunks, key=lambda c: c.chunk_id)]
        entity_rows = [{"mesh_id": e.mesh_id, "name": e.name, "category": e.category,
                        "tree_numbers": list(e.tree_numbers), "labels": [e.category] if e.category else [],
                        "names_json": json.dumps(e.names, ensure_ascii=False)}
                       for e in sorted(entities, key=lambda e: e.mesh_id)]
        mention_rows = [{"chunk_id": m.chunk_id, "start": m.start, "end": m.end, "mesh_id": m.mesh_id,
                         "surface": m.surface, "method": m.method, "score": m.score}
                        for m in sorted(mentions, key=lambda m: (m.chunk_id, m.start, m.end)) if m.mesh_id]

        def work(tx: ManagedTransaction) -> None:
            if chunk_rows:
                tx.run(q.UPSERT_CHUNKS, rows=chunk_rows).consume()
            if entity_rows:
                tx.run(q.UPSERT_ENTITIES, rows=entity_rows).consume()
            if mention_rows:
                tx.run(q.UPSERT_MENTIONS, rows=mention_rows).consume()

        if chunk_rows or entity_rows or mention_rows:
            self._write(work)

    def complete_documents(self, doc_ids: list[str]) -> tuple[list[str], list[str]]:
        ids = list(dict.fromkeys(doc_ids))
        if not ids:
            return [], []

        def work(tx: ManagedTransaction) -> tuple[list[str], list[str]]:
            tx.run(q.LOCK_DOCUMENTS, ids=sorted(ids)).consume()  # serialise completers of one document
            rows = [r.data() for r in tx.run(q.COMPLETE, ids=ids)]
            stale = [c for r in rows for c in r["stale"]]
            _delete_chunks(tx, stale)
            return [r["doc_id"] for r in rows], stale

        return self._write(work)

    def delete_documents(self, doc_ids: list[str]) -> DeleteResult:
        def work(tx: ManagedTransaction) -> DeleteResult:
            result = DeleteResult()
            tx.run(q.LOCK_DOCUMENTS, ids=sorted(set(doc_ids))).consume()
            for row in tx.run(q.DOC_CHUNKS, ids=list(dict.fromkeys(doc_ids))).data():
                result.documents += 1
                result.chunk_ids.extend(row["chunk_ids"])
            result.entities_removed = _delete_chunks(tx, result.chunk_ids)
            tx.run("UNWIND $ids AS id MATCH (d:Document {doc_id: id}) DETACH DELETE d", ids=doc_ids).consume()
            return result

        return self._write(work) if doc_ids else DeleteResult()

    # --- runs and failures --------------------------------------------------------------

    def record_failures(self, run_id: str, failures: list[Failure]) -> None:
        rows = [{"source": f.source, "stage": f.stage, "reason": f.reason, "doc_id": f.doc_id} for f in failures]
        if rows:
            self._write(lambda tx: tx.run(
                "UNWIND $rows AS row MERGE (f:Failure {source: row.source, stage: row.stage}) "
                "SET f.reason = row.reason, f.doc_id = row.doc_id, f.run_id = $run_id, f.at = $at",
                rows=rows, run_id=run_id, at=time.time()).consume())

    def failures(self, run_id: str | None = None, limit: int | None = None) -> list[Failure]:
        query = ("MATCH (f:Failure) WHERE $run_id IS NULL OR f.run_id = $run_id "
                 "RETURN f.source AS source, f.stage AS stage, f.reason AS reason, f.doc_id AS doc_id "
                 "ORDER BY source, stage")
        if limit is not None:
            query += " LIMIT $limit"
        rows = self.read(query, run_id=run_id, limit=max(0, limit or 0))
        return [Failure(r["source"], r["stage"], r["reason"], r["doc_id"] or "") for r in rows]

    def failure_count(self, run_id: str | None = None) -> int:
        rows = self.read("MATCH (f:Failure) WHERE $run_id IS NULL OR f.run_id = $run_id RETURN count(f) AS n",
                         run_id=run_id)
        return int(rows[0]["n"]) if rows else 0

    def start_run(self, run_id: str, info: dict[str, Any]) -> None:
        self._write(lambda tx: tx.run(
            "MERGE (r:Run {run_id: $run_id}) SET r.started = $at, r.status = 'running', r.info_json = $info "
            "REMOVE r.finished, r.summary_json", run_id=run_id, at=time.time(), info=json.dumps(info)).consume())

    def report_progress(self, run_id: str, progress: dict[str, Any]) -> None:
        self._write(lambda tx: tx.run(
            "MATCH (r:Run {run_id: $run_id}) WHERE r.status = 'running' SET r.summary_json = $progress",
            run_id=run_id, progress=json.dumps(progress)).consume())

    def finish_run(self, run_id: str, status: str, summary: dict[str, Any]) -> None:
        self._write(lambda tx: tx.run(
            "MATCH (r:Run {run_id: $run_id}) SET r.finished = $at, r.status = $status, r.summary_json = $summary",
            run_id=run_id, at=time.time(), status=status, summary=json.dumps(summary)).consume())

    def last_run(self) -> dict[str, Any] | None:
        runs = self.runs(1)
        return runs[0] if runs else None

    def runs(self, limit: int = 20) -> list[dict[str, Any]]:
        rows = self.read("MATCH (r:Run) RETURN r {.*} AS r ORDER BY r.started DESC, r.run_id DESC LIMIT $limit",
                          limit=max(0, limit))
        return [{"run_id": r["run_id"], "started": r.get("started"), "finished": r.get("finished"),
                 "status": r.get("status"), "info": json.loads(r.get("info_json") or "{}"),
                 "summary": json.loads(r.get("summary_json") or "{}")} for r in (row["r"] for row in rows)]

    # --- reads --------------------------------------------------------------------------

    def document_hashes(self, complete_only: bool = True) -> dict[str, str]:
        rows = self.read("MATCH (d:Document) WHERE NOT $complete_only OR d.status = 'complete' "
                          "RETURN d.doc_id AS doc_id, d.content_hash AS h", complete_only=complete_only)
        return {r["doc_id"]: r["h"] for r in rows}

    def counts(self) -> dict[str, int]:
        return {k: int(v) for k, v in self.read(q.COUNTS)[0].items()}

    def get_chunks(self, chunk_ids: list[str]) -> list[Chunk]:
        rows = {r["chunk"]["chunk_id"]: r for r in self.read(q.GET_CHUNKS, ids=chunk_ids)} if chunk_ids else {}
        return [_chunk(rows[c]["chunk"], rows[c]["source_id"]) for c in chunk_ids if c in rows]

    def get_entity(self, mesh_id: str) -> Entity | None:
        rows = self.read("MATCH (e:Entity {mesh_id: $id}) RETURN e {.*} AS e", id=mesh_id)
        if not rows:
            return None
        e = rows[0]["e"]
        return Entity(e["mesh_id"], e.get("name") or "", e.get("category") or "", list(e.get("tree_numbers") or []),
                      json.loads(e.get("names_json") or "{}"))

    def chunk_mentions(self, chunk_id: str) -> list[Mention]:
        return [Mention(r["start"], r["end"], r["surface"], r["mesh_id"], r["category"], r["method"],
                        r["score"], chunk_id) for r in self.read(q.CHUNK_MENTIONS, id=chunk_id)]

    def chunk_entities(self, chunk_ids: list[str]) -> dict[str, set[str]]:
        """The MeSH IDs mentioned in each of the given chunks."""
        out: dict[str, set[str]] = {c: set() for c in chunk_ids}
        for row in self.read(q.CHUNK_ENTITIES, ids=chunk_ids) if chunk_ids else []:
            out[row["id"]].update(row["mesh_ids"])
        return out

    def neighbourhood(self, mesh_id: str, hops: int = 1, limit: int = 25) -> list[tuple[str, str, int]]:
        """Co-occurrence edges around an entity, as ``EmbeddedGraphStore.neighbourhood`` returns them
        (one Cypher read per hop)."""
        def neighbours_of(frontier: list[str]) -> Neighbours:
            by_source: Neighbours = {}
            for row in self.read(q.NEIGHBOURS, sources=frontier, limit=limit):
                by_source.setdefault(row["sid"], []).append((row["target"], int(row["shared"])))
            return by_source
        return expand(mesh_id, hops, limit, neighbours_of)

    def connecting_evidence(self, a: str, b: str, limit: int = 10) -> Connection:
        """Chunks mentioning both entities, and bridge entities sharing a chunk with each (by ID)."""
        chunks = [r["chunk_id"] for r in self.read(q.BOTH, a=a, b=b, limit=limit)]
        bridges = [r["mesh_id"] for r in self.read(q.BRIDGES, a=a, b=b, limit=limit)]
        return Connection(chunks, bridges)

    # --- Personalized PageRank ----------------------------------------------------------

    def ppr(self, seeds: dict[str, float], damping: float = 0.5, top_k: int = 50) -> list[PPRHit]:
        """Top-``top_k`` chunks by PPR from the weighted seed entities (see the module docstring)."""
        if not 0.0 <= damping < 1.0:
            raise ValueError(f"damping must be in [0, 1), got {damping}")
        weighted = {k: float(w) for k, w in seeds.items() if w > 0}
        if not weighted or top_k <= 0 or damping == 0.0:
            return []
        params = {"seeds": [{"id": k, "w": w} for k, w in weighted.items()], "damping": damping,
                  "top_k": top_k, "tolerance": 1e-7,
                  "iterations": min(200, max(20, math.ceil(math.log(1e-7) / math.log(damping))))}
        query = q.PPR_UNIFORM if len(set(weighted.values())) == 1 else q.PPR_WEIGHTED
        for attempt in range(2):
            graph, nodes = self.projection(force=attempt > 0)
            try:  # single-threaded below 200k nodes: measured faster (benchmarks/graph_store.py)
                rows = self.read(query, graph=graph, concurrency=1 if nodes < 200_000 else 4, **params)
                break
            except neo4j_errors.ClientError as exc:  # dropped by another process: re-project once
                if attempt or "does not exist" not in str(exc):
                    raise
        paths = self._entity_paths(rows, weighted, damping)
        return [PPRHit(r["chunk_id"], float(r["score"]), paths.get(r["chunk_id"], [])) for r in rows]

    def _signature(self) -> tuple[Any, ...]:
        return tuple(self.read(q.SIGNATURE)[0]["signature"])

    def graph_signature(self) -> Hashable:
        """Chunk, entity and mention counts and the latest document update: changes with the graph
        (the projection name's signature); a handful of count-store lookups and one index seek."""
        return self._signature()

    def refresh(self) -> None:
        """Nothing to forget: every read goes to the server, and the GDS projection is named by the
        graph signature, so a changed graph is projected anew by itself."""

    def incidence(self, page: int = q.INCIDENCE_PAGE) -> tuple[sp.csr_matrix, list[str], list[str]]:
        """Entity × chunk matrix (mention counts), sorted entity IDs and sorted chunk IDs of the
        chunks with mentions, read in pages of ``page`` chunks (one read transaction each)."""
        ent_index: dict[str, int] = {}
        chunk_ids: list[str] = []
        rows: list[int] = []
        counts: list[int] = []
        after = ""

        def work(tx: ManagedTransaction, after: str) -> list[tuple[str, list[str]]]:
            return [(r[0], r[1]) for r in tx.run(q.INCIDENCE_PAGE_QUERY, after=after, page=page)]

        with self._guard(), self._driver.session(database=self.cfg.database) as session:
            while True:
                batch = session.execute_read(work, after)
                for chunk_id, mesh_ids in batch:
                    if mesh_ids:
                        rows.extend(ent_index.setdefault(m, len(ent_index)) for m in mesh_ids)
                        counts.append(len(mesh_ids))
                        chunk_ids.append(chunk_id)
                if len(batch) < page:
                    break
                after = batch[-1][0]
        cols = np.repeat(np.arange(len(chunk_ids), dtype=np.int64), counts)
        entities = sorted(ent_index)
        rank = np.empty(len(entities), dtype=np.int64)
        rank[[ent_index[e] for e in entities]] = np.arange(len(entities))
        data = np.ones(len(cols), dtype=np.float64)
        matrix = sp.csr_matrix((data, (rank[np.asarray(rows, dtype=np.int64)], cols)),
                               shape=(len(entities), len(chunk_ids)))
        matrix.sum_duplicates()  # one entry per mention: duplicates add up to the mention count
        return matrix, entities, chunk_ids

    def projection(self, force: bool = False) -> tuple[str, int]:
        """Name and node count of a projection of the current graph; projects (drops stale ones) if needed."""
        with self._lock:
            signature = self._signature()
            current = self._projection
            nodes = int(signature[0]) + int(signature[1])
            if not force and current is not None and current[:2] == (signature, self._generation):
                return current[2], nodes
            digest = hashlib.sha1(repr(signature).encode()).hexdigest()[:16]
            name = f"{q.PROJECTION_PREFIX}{self.cfg.database}_{digest}"
            own_write = current is not None and current[0] == signature and current[1] != self._generation
            exists = self.read("RETURN gds.graph.exists($g) AS ok", g=name)[0]["ok"]
            if exists and (force or own_write):
                self.read("CALL gds.graph.drop($g, false) YIELD graphName RETURN graphName", g=name)
                exists = False
            if not exists:
                started = time.perf_counter()
                try:
                    self.read(q.PROJECT, graph=name)
                except neo4j_errors.ClientError as exc:
                    if "already exists" not in str(exc):
                        raise
                log.info("projected %s in %.1f ms", name, (time.perf_counter() - started) * 1000)
            self.read(q.DROP_STALE, prefix=f"{q.PROJECTION_PREFIX}{self.cfg.database}_", keep=name)
            self._projection = (signature, self._generation, name)
            return name, nodes

    def _entity_paths(self, hits: Rows, seeds: dict[str, float], damping: float) -> dict[str, list[str]]:
        """Per chunk, up to 3 entities by the PPR flow ``x(e)·w(e,c)/deg(e)`` into it (seeds only, if any).

        ``x(e)`` is estimated locally from the hits: the restart mass of the seeds plus what each
        hit chunk sends back, ``d·w(e,c)/deg(c)·score(c)`` (``PPRIndex`` uses the exact mass).
        """
        rows = self.read(q.PATHS, ids=[h["chunk_id"] for h in hits]) if hits else []
        score = {h["chunk_id"]: float(h["score"]) for h in hits}
        chunk_degree: dict[str, float] = {}
        for r in rows:
            chunk_degree[r["id"]] = chunk_degree.get(r["id"], 0.0) + r["w"]
        total = sum(seeds.values())
        mass = {e: (1.0 - damping) * w / total for e, w in seeds.items()}
        for r in rows:
            share = damping * r["w"] / chunk_degree[r["id"]] * score[r["id"]]
            mass[r["mesh_id"]] = mass.get(r["mesh_id"], 0.0) + share
        ranked: dict[str, list[tuple[bool, float, str]]] = {}
        for r in rows:
            flow = mass[r["mesh_id"]] * r["w"] / max(1, r["degree"])
            ranked.setdefault(r["id"], []).append((r["mesh_id"] not in seeds, -flow, r["mesh_id"]))
        out: dict[str, list[str]] = {}
        for chunk_id, items in ranked.items():
            items.sort()
            has_seed = not items[0][0]
            out[chunk_id] = [m for other, _, m in items if not (has_seed and other)][:q.MAX_PATH]
        return out

    # --- communities (medgraph.community) -------------------------------------------------

    def entity_chunk_pairs(self) -> list[tuple[str, str, int]]:
        return [(r["mesh_id"], r["chunk_id"], int(r["n"])) for r in self.read(q.ENTITY_CHUNK_PAIRS)]

    def leiden(self, params: LeidenParams, min_weight: int = 1) -> list[Assignment] | None:
        """Hierarchical Leiden on the server: ``gds.leiden`` (seeded, single-threaded) with
        intermediate communities on a projection of the co-occurrence graph, dropped afterwards.

        GDS lists intermediate communities finest first; they are returned coarsest first (level 0
        is the final partition), at most ``params.max_levels`` levels, as ``Assignment`` rows.
        """
        name = f"{q.COMMUNITY_PREFIX}{self.cfg.database}_{uuid.uuid4().hex[:12]}"
        try:
            nodes = self.read(q.COOC_PROJECT, graph=name, min_weight=min_weight)
            if not nodes or not nodes[0]["nodes"]:
                return []
            rows = self.read(q.LEIDEN, graph=name, seed=params.seed, gamma=params.resolution,
                              theta=max(params.randomness, 1e-6), max_levels=10)
        finally:
            self.read("CALL gds.graph.drop($g, false) YIELD graphName RETURN graphName", g=name)
        levels = {r["mesh_id"]: (list(reversed(r["levels"] or [])) or [r["community"]])[: params.max_levels]
                  for r in rows}
        return assignments_from_levels(levels)

    def replace_communities(self, communities: list[Community], meta: dict[str, Any]) -> None:
        rows = [{"community_id": c.community_id, "level": c.level, "parent_id": c.parent_id, "size": c.size,
                 "title": c.title, "summary": c.summary, "citations_json": c.citations_json(),
                 "top_entities_json": json.dumps(c.top_entities, ensure_ascii=False),
                 "summariser": c.summariser, "key": c.key} for c in communities]
        members = [{"community_id": c.community_id, "mesh_id": m} for c in communities for m in c.members]

        def work(tx: ManagedTransaction) -> None:
            tx.run(q.DROP_COMMUNITIES).consume()
            for start in range(0, max(len(rows), 1), 5000):
                tx.run(q.CREATE_COMMUNITIES, rows=rows[start:start + 5000]).consume()
            tx.run(q.LINK_PARENTS, rows=rows).consume()
            for start in range(0, len(members), 10000):
                tx.run(q.LINK_MEMBERS, rows=members[start:start + 10000]).consume()
            tx.run(q.SET_COMMUNITY_META, meta=json.dumps(meta)).consume()

        with self._guard(), self._driver.session(database=self.cfg.database) as session:
            try:
                session.run(q.COMMUNITY_SCHEMA).consume()
            except neo4j_errors.ClientError as exc:  # another process created it meanwhile
                if "already exists" not in str(exc).lower():
                    raise
            session.execute_write(work)

    def communities(self, level: int | None = None, members: bool = False,
                    ids: list[str] | None = None, limit: int | None = None, offset: int = 0) -> list[Community]:
        out = []
        page = {"offset": max(0, offset), "limit": _NO_LIMIT if limit is None else max(0, limit)}
        for r in self.read(q.COMMUNITIES, level=level, ids=ids, members=members, **page):
            c = r["c"]
            out.append(Community(
                community_id=c["community_id"], level=int(c["level"]), parent_id=c.get("parent_id"),
                members=sorted(r["members"] or []), title=c.get("title") or "", summary=c.get("summary") or "",
                citations=citations_from_json(c.get("citations_json")),
                top_entities=json.loads(c.get("top_entities_json") or "[]"),
                summariser=c.get("summariser") or "", key=c.get("key") or "", stored_size=int(c.get("size") or 0)))
        return out

    def community_levels(self) -> dict[int, int]:
        return {int(r["level"]): int(r["n"]) for r in self.read(q.COMMUNITY_LEVELS)}

    def entity_communities(self, mesh_ids: list[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {m: [] for m in mesh_ids}
        for r in self.read(q.ENTITY_COMMUNITIES, ids=mesh_ids) if mesh_ids else []:
            out[r["id"]].append(r["community_id"])
        return out

    def community_meta(self) -> dict[str, Any]:
        rows = self.read(q.COMMUNITY_META)
        return dict(json.loads(rows[0]["meta"])) if rows and rows[0]["meta"] else {}

    def close(self) -> None:
        self._driver.close()


def _delete_chunks(tx: ManagedTransaction, chunk_ids: list[str]) -> int:
    """Delete chunks with their mentions, then the entities left with no mention; returns that count."""
    if not chunk_ids:
        return 0
    candidates = sorted({e for r in tx.run(q.DELETE_CHUNKS, ids=chunk_ids) for e in r["ents"]})
    if not candidates:
        return 0
    return int(tx.run(q.DELETE_ORPHANS, ids=candidates).single(strict=True)["removed"])


def _chunk_props(c: Chunk) -> dict[str, Any]:
    return {"doc_id": c.doc_id, "doc_hash": c.doc_hash, "idx": c.index, "text": c.text,
            "section_path": list(c.section_path), "parent_id": c.parent_id, "parent_text": c.parent_text,
            "token_count": c.token_count, "language": c.language, "title": c.title, "page": c.page}


def _chunk(p: dict[str, Any], source_id: str | None) -> Chunk:
    return Chunk(
        chunk_id=p["chunk_id"], doc_id=p["doc_id"], doc_hash=p.get("doc_hash") or "", index=p["idx"],
        text=p["text"], section_path=list(p.get("section_path") or []), parent_id=p.get("parent_id") or "",
        parent_text=p.get("parent_text") or "", token_count=p.get("token_count") or 0,
        language=p.get("language") or "", title=p.get("title") or "", page=p.get("page"),
        source_id=source_id or "",
    )
