"""Embedded graph store: SQLite (durable records, WAL) + scipy.sparse for graph algorithms.

Input: documents, chunks, mentions and entities from the corpus build. Output: the records, the
counts, and ``incidence()`` — the entity × chunk matrix (weights = mention counts) that
Personalized PageRank and co-occurrence run on. One process owns the file (the job driver or the
Serve store owner); SQLite's WAL lets readers in other processes see committed data.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from medgraph.gcpause import gc_paused
from medgraph.graph.communities import Community, citations_from_json
from medgraph.graph.cooccurrence import Connections
from medgraph.graph.ppr import PPRHit, PPRIndex
from medgraph.schemas import Chunk, Entity, Failure, Mention
from medgraph.stores.graph import Connection, DeleteResult, DocumentRecord

if TYPE_CHECKING:
    from medgraph.graph.communities import Assignment
    from medgraph.graph.leiden import LeidenParams

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY, title TEXT, language TEXT, source_id TEXT, source_path TEXT,
    content_hash TEXT, n_chunks INTEGER, status TEXT, updated_at REAL);
CREATE TABLE IF NOT EXISTS chunks (
    chunk_id TEXT PRIMARY KEY, doc_id TEXT NOT NULL, doc_hash TEXT, idx INTEGER, text TEXT,
    section_path TEXT, parent_id TEXT, parent_text TEXT, token_count INTEGER, language TEXT,
    title TEXT, page INTEGER);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id, doc_hash);
CREATE TABLE IF NOT EXISTS entities (
    mesh_id TEXT PRIMARY KEY, name TEXT, category TEXT, tree_numbers TEXT, names TEXT);
CREATE TABLE IF NOT EXISTS mentions (
    chunk_id TEXT NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL, mesh_id TEXT NOT NULL,
    surface TEXT, method TEXT, score REAL, PRIMARY KEY (chunk_id, start, end));
CREATE INDEX IF NOT EXISTS mentions_entity ON mentions(mesh_id);
CREATE TABLE IF NOT EXISTS failures (
    source TEXT NOT NULL, stage TEXT NOT NULL, reason TEXT, doc_id TEXT, run_id TEXT, at REAL,
    PRIMARY KEY (source, stage));
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, started REAL, finished REAL, status TEXT, info TEXT, summary TEXT);
"""


# communities of the co-occurrence graph (medgraph.community): one row per community, its members
# (the MEMBER_OF edges) and what the last build recorded (graph signature, parameters)
_COMMUNITY_SCHEMA = """
CREATE TABLE IF NOT EXISTS communities (
    community_id TEXT PRIMARY KEY, level INTEGER, parent_id TEXT, size INTEGER, title TEXT, summary TEXT,
    citations TEXT, top_entities TEXT, summariser TEXT, key TEXT);
CREATE TABLE IF NOT EXISTS community_members (
    community_id TEXT NOT NULL, mesh_id TEXT NOT NULL, PRIMARY KEY (community_id, mesh_id));
CREATE INDEX IF NOT EXISTS community_members_entity ON community_members(mesh_id);
CREATE TABLE IF NOT EXISTS community_meta (name TEXT PRIMARY KEY, value TEXT);
"""


class EmbeddedGraphStore:
    """SQLite-backed ``GraphStore``; see the module docstring."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._db.executescript(_COMMUNITY_SCHEMA)
        self._lock = threading.RLock()
        self._incidence: tuple[int, Any] | None = None
        self._version = 0

    # --- writes -------------------------------------------------------------------------

    def upsert_documents(self, docs: list[DocumentRecord]) -> None:
        rows = [
            (d.doc_id, d.title, d.language, d.source_id, d.source_path, d.content_hash, d.n_chunks, time.time())
            for d in docs
        ]
        with self._lock, self._db:
            self._db.executemany(
                "INSERT INTO documents VALUES (?,?,?,?,?,?,?,'partial',?) ON CONFLICT(doc_id) DO UPDATE SET "
                "title=excluded.title, language=excluded.language, source_id=excluded.source_id, "
                "source_path=excluded.source_path, n_chunks=excluded.n_chunks, updated_at=excluded.updated_at, "
                "status=CASE WHEN documents.content_hash=excluded.content_hash THEN documents.status ELSE 'partial' END, "
                "content_hash=excluded.content_hash",
                rows,
            )

    def upsert_chunks(self, chunks: list[Chunk], mentions: list[Mention], entities: list[Entity]) -> None:
        chunk_rows = [
            (c.chunk_id, c.doc_id, c.doc_hash, c.index, c.text, json.dumps(c.section_path, ensure_ascii=False),
             c.parent_id, c.parent_text, c.token_count, c.language, c.title, c.page)
            for c in chunks
        ]
        entity_rows = [
            (e.mesh_id, e.name, e.category, json.dumps(e.tree_numbers), json.dumps(e.names, ensure_ascii=False))
            for e in entities
        ]
        mention_rows = [
            (m.chunk_id, m.start, m.end, m.mesh_id, m.surface, m.method, m.score) for m in mentions if m.mesh_id
        ]
        with self._lock, self._db:
            self._db.executemany("INSERT OR REPLACE INTO chunks VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", chunk_rows)
            self._db.executemany("INSERT OR REPLACE INTO entities VALUES (?,?,?,?,?)", entity_rows)
            self._db.executemany("INSERT OR REPLACE INTO mentions VALUES (?,?,?,?,?,?,?)", mention_rows)
            self._version += 1

    def complete_documents(self, doc_ids: list[str]) -> tuple[list[str], list[str]]:
        done: list[str] = []
        stale: list[str] = []
        with self._lock, self._db:
            for doc_id in dict.fromkeys(doc_ids):
                row = self._db.execute(
                    "SELECT content_hash, n_chunks, status FROM documents WHERE doc_id=?", (doc_id,)
                ).fetchone()
                if row is None:
                    continue
                if row[2] == "complete":  # e.g. a batch written again after a retry
                    done.append(doc_id)
                    continue
                (written,) = self._db.execute(
                    "SELECT count(*) FROM chunks WHERE doc_id=? AND doc_hash=?", (doc_id, row[0])
                ).fetchone()
                if written < row[1]:
                    continue
                old = [r[0] for r in self._db.execute(
                    "SELECT chunk_id FROM chunks WHERE doc_id=? AND doc_hash<>?", (doc_id, row[0]))]
                self._delete_chunks(old)
                self._db.execute("UPDATE documents SET status='complete' WHERE doc_id=?", (doc_id,))
                done.append(doc_id)
                stale.extend(old)
        return done, stale

    def delete_documents(self, doc_ids: list[str]) -> DeleteResult:
        result = DeleteResult()
        with self._lock, self._db:
            for doc_id in doc_ids:
                ids = [r[0] for r in self._db.execute("SELECT chunk_id FROM chunks WHERE doc_id=?", (doc_id,))]
                result.chunk_ids.extend(ids)
                result.documents += self._db.execute("DELETE FROM documents WHERE doc_id=?", (doc_id,)).rowcount
            result.entities_removed = self._delete_chunks(result.chunk_ids)  # once for the whole batch
        return result

    def _delete_chunks(self, chunk_ids: list[str]) -> int:
        """Delete chunks and their mentions, then the entities they mentioned that no mention is left
        of; returns that count. Only those entities are checked (each through the mention index),
        so a delete costs what it removes, not the size of the store."""
        if not chunk_ids:
            return 0
        params = [(c,) for c in dict.fromkeys(chunk_ids)]
        touched = {mesh_id for (c,) in params
                   for (mesh_id,) in self._db.execute("SELECT DISTINCT mesh_id FROM mentions WHERE chunk_id=?", (c,))}
        self._db.executemany("DELETE FROM mentions WHERE chunk_id=?", params)
        self._db.executemany("DELETE FROM chunks WHERE chunk_id=?", params)
        self._version += 1
        return self._db.executemany(  # rowcount: the rows all the statements deleted
            "DELETE FROM entities WHERE mesh_id=?1 AND NOT EXISTS (SELECT 1 FROM mentions WHERE mesh_id=?1)",
            [(m,) for m in touched],
        ).rowcount

    # --- runs and failures --------------------------------------------------------------

    def record_failures(self, run_id: str, failures: list[Failure]) -> None:
        rows = [(f.source, f.stage, f.reason, f.doc_id, run_id, time.time()) for f in failures]
        with self._lock, self._db:
            self._db.executemany("INSERT OR REPLACE INTO failures VALUES (?,?,?,?,?,?)", rows)

    def failures(self, run_id: str | None = None, limit: int | None = None) -> list[Failure]:
        sql, args = "SELECT source, stage, reason, doc_id FROM failures", tuple[Any, ...]()
        if run_id is not None:
            sql, args = sql + " WHERE run_id=?", (run_id,)
        sql += " ORDER BY source"
        if limit is not None:
            sql, args = sql + " LIMIT ?", (*args, max(0, limit))
        with self._lock:
            return [Failure(*r) for r in self._db.execute(sql, args)]

    def failure_count(self, run_id: str | None = None) -> int:
        sql, args = "SELECT COUNT(*) FROM failures", tuple[Any, ...]()
        if run_id is not None:
            sql, args = sql + " WHERE run_id=?", (run_id,)
        with self._lock:
            return int(self._db.execute(sql, args).fetchone()[0])

    def start_run(self, run_id: str, info: dict[str, Any]) -> None:
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO runs VALUES (?,?,NULL,'running',?,NULL)", (run_id, time.time(), json.dumps(info))
            )

    def report_progress(self, run_id: str, progress: dict[str, Any]) -> None:
        with self._lock, self._db:
            self._db.execute("UPDATE runs SET summary=? WHERE run_id=? AND status='running'",
                             (json.dumps(progress), run_id))

    def finish_run(self, run_id: str, status: str, summary: dict[str, Any]) -> None:
        with self._lock, self._db:
            self._db.execute(
                "UPDATE runs SET finished=?, status=?, summary=? WHERE run_id=?",
                (time.time(), status, json.dumps(summary), run_id),
            )

    def last_run(self) -> dict[str, Any] | None:
        runs = self.runs(1)
        return runs[0] if runs else None

    def runs(self, limit: int = 20) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT run_id, started, finished, status, info, summary FROM runs "
                "ORDER BY started DESC, run_id DESC LIMIT ?", (max(0, limit),)
            ).fetchall()
        return [{
            "run_id": r[0], "started": r[1], "finished": r[2], "status": r[3],
            "info": json.loads(r[4] or "{}"), "summary": json.loads(r[5] or "{}"),
        } for r in rows]

    # --- reads --------------------------------------------------------------------------

    def document_hashes(self, complete_only: bool = True) -> dict[str, str]:
        sql = "SELECT doc_id, content_hash FROM documents" + (" WHERE status='complete'" if complete_only else "")
        with self._lock:
            return dict(self._db.execute(sql).fetchall())

    def counts(self) -> dict[str, int]:
        with self._lock:
            q = self._db.execute
            return {
                "documents": q("SELECT count(*) FROM documents WHERE status='complete'").fetchone()[0],
                "documents_partial": q("SELECT count(*) FROM documents WHERE status<>'complete'").fetchone()[0],
                "chunks": q("SELECT count(*) FROM chunks").fetchone()[0],
                "mentions": q("SELECT count(*) FROM mentions").fetchone()[0],
                "entities": q("SELECT count(*) FROM entities").fetchone()[0],
            }

    def get_chunks(self, chunk_ids: list[str]) -> list[Chunk]:
        with self._lock:
            rows = {
                r[0]: r for r in self._db.execute(
                    "SELECT chunks.*, documents.source_id FROM chunks LEFT JOIN documents USING (doc_id) "
                    f"WHERE chunk_id IN ({','.join('?' * len(chunk_ids))})", chunk_ids)
            } if chunk_ids else {}
        return [_chunk(rows[c]) for c in chunk_ids if c in rows]

    def get_entity(self, mesh_id: str) -> Entity | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM entities WHERE mesh_id=?", (mesh_id,)).fetchone()
        if row is None:
            return None
        return Entity(row[0], row[1], row[2], json.loads(row[3] or "[]"), json.loads(row[4] or "{}"))

    def chunk_mentions(self, chunk_id: str) -> list[Mention]:
        with self._lock:
            rows = self._db.execute(
                "SELECT start, end, surface, mentions.mesh_id, entities.category, method, score, chunk_id "
                "FROM mentions LEFT JOIN entities USING (mesh_id) WHERE chunk_id=? ORDER BY start", (chunk_id,)
            ).fetchall()
        return [Mention(*r) for r in rows]

    def chunk_entities(self, chunk_ids: list[str]) -> dict[str, set[str]]:
        """The MeSH IDs mentioned in each of the given chunks."""
        out: dict[str, set[str]] = {c: set() for c in chunk_ids}
        if not chunk_ids:
            return out
        with self._lock:
            rows = self._db.execute(
                f"SELECT chunk_id, mesh_id FROM mentions WHERE chunk_id IN ({','.join('?' * len(chunk_ids))})",
                chunk_ids,
            ).fetchall()
        for chunk_id, mesh_id in rows:
            out[chunk_id].add(mesh_id)
        return out

    def neighbourhood(self, mesh_id: str, hops: int = 1, limit: int = 25) -> list[tuple[str, str, int]]:
        """Co-occurrence edges around an entity: ``(source, target, shared-chunk count)``.

        Hop 1 links the entity to the ``limit`` entities it shares most chunks with; hop 2 adds,
        for each of those, its strongest co-occurring entities. Derived from MENTIONED_IN only.
        """
        return self.connections().neighbourhood(mesh_id, hops, limit)

    def connecting_evidence(self, a: str, b: str, limit: int = 10) -> Connection:
        """Chunks mentioning both entities, and bridge entities sharing a chunk with each (by ID)."""
        connections = self.connections()
        return Connection(connections.both(a, b, limit), connections.bridges(a, b, limit))

    def refresh(self) -> None:
        """Forget the cached incidence matrix, its lookups and the PPR index (another process may have written)."""
        with self._lock:
            self._incidence = None
            self._ppr_cache = None
            self._connections = None
            self._version += 1

    def graph_signature(self) -> int:
        """The write version: changes with every write through this store and with ``refresh()``."""
        with self._lock:
            return self._version

    def incidence(self) -> tuple[sp.csr_matrix, list[str], list[str]]:
        """Entity × chunk matrix (mention counts), entity IDs and chunk IDs; cached until a write."""
        with self._lock:
            if self._incidence is None or self._incidence[0] != self._version:
                self._incidence = (self._version, self._build_incidence())
            return self._incidence[1]

    def connections(self) -> Connections:
        """Pairwise co-occurrence lookups over ``incidence()`` (``Connections``); cached with it."""
        incidence = self.incidence()
        with self._lock:
            cached = self._connections
            if cached is None or cached[0] is not incidence:
                cached = self._connections = (incidence, Connections(*incidence))
        return cached[1]

    _connections: tuple[object, Connections] | None = None  # (incidence it was built from, lookups)

    def _build_incidence(self) -> tuple[sp.csr_matrix, list[str], list[str]]:
        # one row per mention, counted by the sparse matrix (duplicates summed): SQLite's GROUP BY
        # sorts the whole table in a temporary B-tree (2.7 of 3.9 s at 1.1M mentions, 50k documents);
        # the cyclic GC is paused while the million row tuples exist (it rescanned them, ~0.8 s)
        with gc_paused():
            rows = self._db.execute("SELECT mesh_id, chunk_id FROM mentions").fetchall()
            if not rows:
                return sp.csr_matrix((0, 0), dtype=np.float32), [], []
            mesh_ids, chunk_ids = zip(*rows, strict=True)
            del rows
            entities, chunks = sorted(set(mesh_ids)), sorted(set(chunk_ids))
            e_index = {e: i for i, e in enumerate(entities)}
            c_index = {c: i for i, c in enumerate(chunks)}
            ri = np.fromiter(map(e_index.__getitem__, mesh_ids), dtype=np.int64, count=len(mesh_ids))
            ci = np.fromiter(map(c_index.__getitem__, chunk_ids), dtype=np.int64, count=len(chunk_ids))
        matrix = sp.csr_matrix((np.ones(len(ri), dtype=np.float32), (ri, ci)), shape=(len(entities), len(chunks)))
        matrix.sum_duplicates()
        return matrix, entities, chunks

    _ppr_cache: tuple[object, PPRIndex] | None = None  # (incidence it was built from, index)

    def ppr(self, seeds: dict[str, float], damping: float = 0.5, top_k: int = 50) -> list[PPRHit]:
        """Top-``top_k`` chunks by PPR (``PPRIndex`` over ``incidence()``, rebuilt after a write)."""
        incidence = self.incidence()
        with self._lock:
            cached = self._ppr_cache
            if cached is None or cached[0] is not incidence:
                cached = self._ppr_cache = (incidence, PPRIndex(*incidence))
        return cached[1].query(seeds, damping=damping, top_k=top_k)

    # --- communities (medgraph.community) -------------------------------------------------

    def entity_chunk_pairs(self) -> list[tuple[str, str, int]]:
        with self._lock:
            return [(r[0], r[1], int(r[2])) for r in self._db.execute(
                "SELECT mesh_id, chunk_id, count(*) FROM mentions GROUP BY mesh_id, chunk_id ORDER BY 1, 2")]

    def leiden(self, params: LeidenParams, min_weight: int = 1) -> list[Assignment] | None:
        """None: SQLite has no graph engine; the caller runs Leiden in process on the co-occurrence edges."""
        return None

    def replace_communities(self, communities: list[Community], meta: dict[str, Any]) -> None:
        rows = [(c.community_id, c.level, c.parent_id, c.size, c.title, c.summary, c.citations_json(),
                 json.dumps(c.top_entities, ensure_ascii=False), c.summariser, c.key) for c in communities]
        members = [(c.community_id, m) for c in communities for m in c.members]
        with self._lock, self._db:
            self._db.execute("DELETE FROM communities")
            self._db.execute("DELETE FROM community_members")
            self._db.execute("DELETE FROM community_meta")
            self._db.executemany("INSERT INTO communities VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
            self._db.executemany("INSERT INTO community_members VALUES (?,?)", members)
            self._db.executemany("INSERT INTO community_meta VALUES (?,?)",
                                 [(k, json.dumps(v)) for k, v in meta.items()])

    def communities(self, level: int | None = None, members: bool = False,
                    ids: list[str] | None = None, limit: int | None = None, offset: int = 0) -> list[Community]:
        sql, args = "SELECT * FROM communities", list[Any]()
        where = []
        if level is not None:
            where, args = ["level=?"], [level]
        if ids is not None:
            where.append(f"community_id IN ({','.join('?' * len(ids))})")
            args += ids
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY level, size DESC, community_id"
        if limit is not None or offset:
            sql, args = sql + " LIMIT ? OFFSET ?", [*args, -1 if limit is None else max(0, limit), max(0, offset)]
        with self._lock:
            rows = self._db.execute(sql, args).fetchall()
            found: dict[str, list[str]] = {}
            if members and rows:
                for cid, mesh_id in self._db.execute(
                    "SELECT community_id, mesh_id FROM community_members WHERE community_id IN "
                    f"({','.join('?' * len(rows))}) ORDER BY mesh_id", [r[0] for r in rows]):
                    found.setdefault(cid, []).append(mesh_id)
        return [_community(r, found.get(r[0])) for r in rows]

    def community_levels(self) -> dict[int, int]:
        with self._lock:
            return {int(level): int(n) for level, n in
                    self._db.execute("SELECT level, COUNT(*) FROM communities GROUP BY level ORDER BY level")}

    def entity_communities(self, mesh_ids: list[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {m: [] for m in mesh_ids}
        if not mesh_ids:
            return out
        with self._lock:
            rows = self._db.execute(
                "SELECT mesh_id, community_id FROM community_members JOIN communities USING (community_id) "
                f"WHERE mesh_id IN ({','.join('?' * len(mesh_ids))}) ORDER BY level, community_id", mesh_ids)
            for mesh_id, cid in rows:
                out[mesh_id].append(cid)
        return out

    def community_meta(self) -> dict[str, Any]:
        with self._lock:
            return {k: json.loads(v) for k, v in self._db.execute("SELECT name, value FROM community_meta")}

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _community(row: tuple[Any, ...], members: list[str] | None) -> Community:
    """A ``communities`` row (``members`` None: not loaded; ``size`` is then the stored one)."""
    return Community(
        community_id=row[0], level=row[1], parent_id=row[2], members=members if members is not None else [],
        title=row[4] or "", summary=row[5] or "", citations=citations_from_json(row[6]),
        top_entities=json.loads(row[7] or "[]"), summariser=row[8] or "", key=row[9] or "",
        stored_size=row[3],
    )

def _chunk(row: tuple[Any, ...]) -> Chunk:
    return Chunk(
        chunk_id=row[0], doc_id=row[1], doc_hash=row[2], index=row[3], text=row[4],
        section_path=json.loads(row[5]), parent_id=row[6], parent_text=row[7], token_count=row[8],
        language=row[9], title=row[10], page=row[11], source_id=row[12] or "",
    )
