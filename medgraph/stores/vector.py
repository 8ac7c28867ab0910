"""Vector store: chunks with dense and sparse vectors in Qdrant, searched by hybrid retrieval.

Inputs: ``Chunk`` records with their vectors from ``medgraph.embed`` (dense float32 rows,
``SparseVector`` term weights), and query vectors. Outputs: ``VectorHit`` (chunk_id, score,
payload) lists, best first.

Backends (one class, ``QdrantVectorStore``, over qdrant-client):
- local mode (``QdrantLocalConfig``, the embedded default): ``QdrantClient(path=...)``, exact
  search, one client per path, so one owner process holds the store and others call it;
  ``path: ":memory:"`` keeps it in memory.
- server mode (``QdrantServerConfig``): a Qdrant server URL; the API key comes from the env var
  named in the config. The server is probed at start-up with a short timeout, and every call maps
  connection failures to ``StoreUnavailable``.

Collection layout: named vectors ``dense`` (cosine) and ``sparse`` (``Modifier.IDF`` when the
sparse weights are term frequencies, see ``Embedder.sparse_idf``). Point id = uuid5 of the
chunk_id, so upserts are idempotent. Payload: chunk_id, doc_id, language, section_path, title,
text, parent_id, parent_text, page, token_count, index.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from numpy.typing import NDArray

from medgraph.embed.base import SparseVector
from medgraph.schemas import Chunk
from medgraph.stores.errors import StoreSchemaMismatch, StoreUnavailable
from medgraph.stores.local_index import LocalVectorIndex

if TYPE_CHECKING:
    from qdrant_client import QdrantClient

logger = logging.getLogger(__name__)

DENSE = "dense"
SPARSE = "sparse"
_POINT_NAMESPACE = uuid.UUID("6f0c5e38-3b1c-5d2a-9a51-4d6564677261")
LanguageFilter = str | Sequence[str] | None
Dense = NDArray[Any]  # one vector (dim,) or rows (n, dim)


def point_id(chunk_id: str) -> str:
    """Deterministic Qdrant point id of a chunk (uuid5 of its chunk_id)."""
    return str(uuid.uuid5(_POINT_NAMESPACE, chunk_id))


@dataclass(frozen=True)
class VectorHit:
    chunk_id: str
    score: float
    payload: dict[str, Any]


class VectorStore(Protocol):
    """What the indexer and the retriever need from a vector store."""

    def ensure_collection(self, dense_dim: int, sparse_idf: bool) -> None: ...
    def upsert(self, chunks: list[Chunk], dense: Dense | None, sparse: list[SparseVector] | None) -> None: ...
    def delete_documents(self, doc_ids: list[str], chunk_ids: list[str] | None = None) -> None: ...
    def delete_chunks(self, chunk_ids: list[str]) -> None: ...
    def count(self) -> int: ...
    def count_by_doc(self, doc_id: str) -> int: ...
    def language_counts(self, languages: Sequence[str]) -> dict[str, int]: ...
    def search_dense(self, vector: Dense, limit: int, language: LanguageFilter = None) -> list[VectorHit]: ...
    def search_sparse(
        self, vector: SparseVector, limit: int, language: LanguageFilter = None
    ) -> list[VectorHit]: ...
    def hybrid_search(
        self, dense: Dense | None, sparse: SparseVector | None, limit: int, language: LanguageFilter = None
    ) -> list[VectorHit]: ...
    def get_dense(self, chunk_ids: Sequence[str]) -> dict[str, NDArray[np.float32]]: ...
    def get_sparse(self, chunk_ids: Sequence[str]) -> dict[str, SparseVector]: ...
    def warm_up(self) -> None: ...
    def close(self) -> None: ...


def chunk_payload(chunk: Chunk) -> dict[str, Any]:
    return {
        "chunk_id": chunk.chunk_id,
        "doc_id": chunk.doc_id,
        "language": chunk.language,
        "section_path": list(chunk.section_path),
        "title": chunk.title,
        "text": chunk.text,
        "parent_id": chunk.parent_id,
        "parent_text": chunk.parent_text,
        "page": chunk.page,
        "token_count": chunk.token_count,
        "index": chunk.index,
    }


def _outage_types() -> tuple[type[BaseException], ...]:
    import httpx
    from qdrant_client.http.exceptions import ResponseHandlingException

    return (ResponseHandlingException, httpx.TransportError, ConnectionError, TimeoutError)


class QdrantVectorStore:
    """``VectorStore`` over a ``QdrantClient`` (local path, in-memory, or server)."""

    def __init__(self, client: QdrantClient, collection: str, where: str, batch_size: int = 256) -> None:
        self.client = client
        self.collection = collection
        self.where = where
        self.batch_size = batch_size
        self._is_local = not where.startswith(("http://", "https://"))
        # Local mode keeps the collection in Python objects: serialise calls from several threads.
        self._lock: contextlib.AbstractContextManager[Any] = (
            threading.RLock() if self._is_local else contextlib.nullcontext()
        )
        # Local mode searches an in-process index (``LocalVectorIndex``) that this store's writes
        # update in place; it is read whole from the collection only on the first read and after a
        # write that failed; ``search_index: False`` sends every search to Qdrant itself.
        self.search_index = self._is_local
        self._generation = 0
        self._index: LocalVectorIndex | None = None

    @contextlib.contextmanager
    def _guard(self, op: str) -> Iterator[None]:
        from qdrant_client.http.exceptions import UnexpectedResponse

        try:
            with self._lock:
                yield
        except _outage_types() as exc:
            raise StoreUnavailable(f"Qdrant at {self.where} unreachable during {op}: {exc}") from exc
        except UnexpectedResponse as exc:
            if exc.status_code in (502, 503, 504):
                raise StoreUnavailable(f"Qdrant at {self.where} unavailable during {op}: {exc}") from exc
            raise

    # --- collection -------------------------------------------------------------------------

    def ensure_collection(self, dense_dim: int, sparse_idf: bool) -> None:
        """Create the collection if missing; check an existing one has the same layout."""
        from qdrant_client import models

        with self._guard("ensure_collection"):
            if self.client.collection_exists(self.collection):
                self._check_layout(dense_dim, sparse_idf)
                tune_local_persistence(self.client)
                return
            modifier = models.Modifier.IDF if sparse_idf else None
            self._generation += 1
            self.client.create_collection(
                self.collection,
                vectors_config={DENSE: models.VectorParams(size=dense_dim, distance=models.Distance.COSINE)},
                sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=modifier)},
            )
            if not self._is_local:  # payload indexes do nothing in local (exact) mode
                for field in ("doc_id", "language"):
                    self.client.create_payload_index(
                        self.collection, field, field_schema=models.PayloadSchemaType.KEYWORD
                    )
        logger.info(
            "created collection %r at %s (dense %d, idf=%s)",
            self.collection,
            self.where,
            dense_dim,
            sparse_idf,
        )
        tune_local_persistence(self.client)

    def _check_layout(self, dense_dim: int, sparse_idf: bool) -> None:
        from qdrant_client import models

        params = self.client.get_collection(self.collection).config.params
        vectors = params.vectors if isinstance(params.vectors, dict) else {}
        have_dim = vectors[DENSE].size if DENSE in vectors else None
        sparse = (params.sparse_vectors or {}).get(SPARSE)
        have_idf = sparse is not None and sparse.modifier == models.Modifier.IDF
        if have_dim != dense_dim or sparse is None or have_idf != sparse_idf:
            raise StoreSchemaMismatch(
                f"collection {self.collection!r} at {self.where} has dense dim {have_dim}, sparse "
                f"idf={have_idf}; the embedder needs dim {dense_dim}, idf={sparse_idf}. Use another "
                "collection name or delete this one and re-index."
            )

    # --- writes -----------------------------------------------------------------------------

    def upsert(self, chunks: list[Chunk], dense: Dense | None, sparse: list[SparseVector] | None) -> None:
        """Insert or overwrite the chunks' points (idempotent: ids derive from chunk_id)."""
        if dense is not None and len(dense) != len(chunks):
            raise ValueError(f"{len(chunks)} chunks but {len(dense)} dense vectors")
        if sparse is not None and len(sparse) != len(chunks):
            raise ValueError(f"{len(chunks)} chunks but {len(sparse)} sparse vectors")
        for start in range(0, len(chunks), self.batch_size):
            stop = start + self.batch_size
            points = self._points(
                chunks[start:stop],
                None if dense is None else dense[start:stop],
                None if sparse is None else sparse[start:stop],
            )
            with self._guard("upsert"):
                self._generation += 1
                self.client.upsert(self.collection, points=points, wait=True)
                self._follow(functools.partial(_index_points, points))

    def _points(
        self, chunks: list[Chunk], dense: Dense | None, sparse: list[SparseVector] | None
    ) -> list[Any]:
        from qdrant_client import models

        points = []
        for i, chunk in enumerate(chunks):
            vector: dict[str, Any] = {}
            if dense is not None:
                vector[DENSE] = np.asarray(dense[i], dtype=np.float32).tolist()
            if sparse is not None and len(sparse[i]):
                vector[SPARSE] = _to_qdrant_sparse(sparse[i])
            points.append(
                models.PointStruct(id=point_id(chunk.chunk_id), vector=vector, payload=chunk_payload(chunk))
            )
        return points

    def delete_documents(self, doc_ids: list[str], chunk_ids: list[str] | None = None) -> None:
        """Remove every point whose payload doc_id is in ``doc_ids``.

        ``chunk_ids``: the chunks of those documents, when the caller knows them (the graph store's
        delete returns them). Local mode then deletes those points by ID: it would evaluate a
        doc_id filter point by point in Python against every listed ID (a 1% delete of a 120k-article
        store took 87 s; it grew with the store times the list). A server uses its doc_id payload
        index either way, so it keeps the filter (which also catches points of a chunk the graph
        never received).
        """
        from qdrant_client import models

        if self._is_local and chunk_ids is not None:
            self.delete_chunks(chunk_ids)
            return
        if doc_ids:
            flt = models.Filter(must=[_match("doc_id", list(doc_ids))])
            with self._guard("delete_documents"):
                self._generation += 1
                self.client.delete(
                    self.collection, points_selector=models.FilterSelector(filter=flt), wait=True
                )
                self._follow(lambda index: index.delete_docs(list(doc_ids)))

    def delete_chunks(self, chunk_ids: list[str]) -> None:
        """Remove the points of the given chunk ids."""
        from qdrant_client import models

        if chunk_ids:
            with self._guard("delete_chunks"):
                self._generation += 1
                self.client.delete(
                    self.collection,
                    points_selector=models.PointIdsList(points=[point_id(c) for c in chunk_ids]),
                    wait=True,
                )
                self._follow(lambda index: index.delete_chunks(list(chunk_ids)))

    # --- reads ------------------------------------------------------------------------------

    def count(self) -> int:
        with self._guard("count"):
            return int(self.client.count(self.collection, exact=True).count)

    def count_by_doc(self, doc_id: str) -> int:
        from qdrant_client import models

        flt = models.Filter(must=[_match("doc_id", doc_id)])
        with self._guard("count_by_doc"):
            return int(self.client.count(self.collection, count_filter=flt, exact=True).count)

    def language_counts(self, languages: Sequence[str]) -> dict[str, int]:
        """How many points each of ``languages`` has (the in-process index's count in local mode)."""
        if self.search_index:
            with self._guard("count"):
                if not self.client.collection_exists(self.collection):
                    return dict.fromkeys(languages, 0)
                return self._current_index().language_counts(languages)
        with self._guard("count"):
            return {language: int(self.client.count(self.collection, count_filter=_language_filter(language),
                                                    exact=True).count) for language in languages}

    def search_dense(self, vector: Dense, limit: int, language: LanguageFilter = None) -> list[VectorHit]:
        if self.search_index:
            with self._guard("search"):
                index = self._current_index()
                return self._hits(index, index.search_dense(vector, limit, language))
        query = np.asarray(vector, dtype=np.float32).reshape(-1).tolist()
        return self._query(query=query, using=DENSE, limit=limit, query_filter=_language_filter(language))

    def search_sparse(
        self, vector: SparseVector, limit: int, language: LanguageFilter = None
    ) -> list[VectorHit]:
        if not len(vector):
            return []
        if self.search_index:
            with self._guard("search"):
                index = self._current_index()
                return self._hits(index, index.search_sparse(vector, limit, language))
        return self._query(
            query=_to_qdrant_sparse(vector),
            using=SPARSE,
            limit=limit,
            query_filter=_language_filter(language),
        )

    def hybrid_search(
        self,
        dense: Dense | None,
        sparse: SparseVector | None,
        limit: int,
        language: LanguageFilter = None,
        prefetch_limit: int | None = None,
    ) -> list[VectorHit]:
        """Reciprocal-rank fusion of a dense and a sparse candidate list (Qdrant Query API).

        Either vector may be ``None`` (or the sparse one empty): the other is searched alone.
        ``prefetch_limit`` candidates per list (default ``4 * limit``); ``language`` filters both.
        """
        from qdrant_client import models

        flt = _language_filter(language)
        if sparse is None or not len(sparse):
            return [] if dense is None else self.search_dense(dense, limit, language)
        if dense is None:
            return self.search_sparse(sparse, limit, language)
        per_list = prefetch_limit or 4 * limit
        if self.search_index:
            return _rrf_hits([self.search_dense(dense, per_list, language),
                              self.search_sparse(sparse, per_list, language)], limit)
        prefetch = [
            models.Prefetch(
                query=np.asarray(dense, dtype=np.float32).reshape(-1).tolist(),
                using=DENSE,
                limit=per_list,
                filter=flt,
            ),
            models.Prefetch(query=_to_qdrant_sparse(sparse), using=SPARSE, limit=per_list, filter=flt),
        ]
        return self._query(
            prefetch=prefetch,
            query=models.FusionQuery(fusion=models.Fusion.RRF),
            limit=limit,
            query_filter=flt,
        )

    def get_dense(self, chunk_ids: Sequence[str]) -> dict[str, NDArray[np.float32]]:
        """The stored dense vectors of the given chunks (missing chunks are left out)."""
        if not chunk_ids:
            return {}
        if self.search_index:
            with self._guard("retrieve"):
                return self._current_index().dense_of(list(chunk_ids))
        out: dict[str, NDArray[np.float32]] = {}
        for cid, vec in self._stored_vectors(chunk_ids, DENSE).items():
            out[cid] = np.asarray(vec, dtype=np.float32)
        return out

    def get_sparse(self, chunk_ids: Sequence[str]) -> dict[str, SparseVector]:
        """The stored sparse vectors (weights as written, before any IDF) of the given chunks."""
        if not chunk_ids:
            return {}
        if self.search_index:
            with self._guard("retrieve"):
                return self._current_index().sparse_of(list(chunk_ids))
        return {
            cid: SparseVector.from_arrays(vec.indices, vec.values)
            for cid, vec in self._stored_vectors(chunk_ids, SPARSE).items()
        }

    def _stored_vectors(self, chunk_ids: Sequence[str], name: str) -> dict[str, Any]:
        with self._guard("retrieve"):
            points = self.client.retrieve(
                self.collection, ids=[point_id(c) for c in chunk_ids], with_payload=["chunk_id"], with_vectors=[name]
            )
        out = {}
        for p in points:
            vec = p.vector.get(name) if isinstance(p.vector, dict) else None
            if vec is not None:
                out[str((p.payload or {}).get("chunk_id"))] = vec
        return out

    def warm_up(self) -> None:
        """Load the in-process search index now rather than on the first search (local mode reads
        the whole collection for it: ~20 s at 80k points); nothing for a server, or before the
        collection exists."""
        if self.search_index:
            with self._guard("warm_up"):
                if self.client.collection_exists(self.collection):
                    self._current_index()

    def _follow(self, write: Callable[[LocalVectorIndex], None]) -> None:
        """Apply a write that just succeeded to the in-process index, when the index had seen every
        write before it (call under the lock, after bumping the generation). An index that missed
        one stays behind and is read again whole on the next search."""
        index = self._index
        if index is None or index.generation != self._generation - 1:
            return
        try:
            write(index)
        except Exception:  # noqa: BLE001 - the collection has the write; the index is read again
            logger.exception("search index of %r could not follow a write; it will be read again", self.collection)
            self._index = None
            return
        index.generation = self._generation

    def _current_index(self) -> LocalVectorIndex:
        """The in-process index, read whole from the collection when there is none yet or it missed
        a write (call under the lock)."""
        if self._index is None or self._index.generation != self._generation:
            from qdrant_client import models

            started = time.perf_counter()
            params = self.client.get_collection(self.collection).config.params
            sparse = (params.sparse_vectors or {}).get(SPARSE)
            idf = sparse is not None and sparse.modifier == models.Modifier.IDF
            self._index = LocalVectorIndex.from_collection(
                self.client, self.collection, DENSE, SPARSE, idf, self._generation
            )
            logger.info("search index of %r: %d points in %.2f s", self.collection, len(self._index),
                        time.perf_counter() - started)
        return self._index

    @staticmethod
    def _hits(index: LocalVectorIndex, ranked: list[tuple[int, float]]) -> list[VectorHit]:
        return [VectorHit(index.chunk_ids[row], score, dict(index.payloads[row])) for row, score in ranked]

    def _query(self, **kwargs: Any) -> list[VectorHit]:
        with self._guard("search"):
            response = self.client.query_points(self.collection, with_payload=True, **kwargs)
        return [
            VectorHit(str((p.payload or {}).get("chunk_id", "")), float(p.score), dict(p.payload or {}))
            for p in response.points
        ]

    def sibling(self, collection: str) -> QdrantVectorStore:
        """A store over another collection of the same client, sharing its lock (local mode allows
        one client per path). Close the store that opened the client, not its siblings."""
        other = QdrantVectorStore(self.client, collection, self.where, self.batch_size)
        other._lock = self._lock
        return other

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.close()

    def __enter__(self) -> QdrantVectorStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _index_points(points: list[Any], index: LocalVectorIndex) -> None:
    """Hand points just written to the collection to its in-process index."""
    index.upsert_rows([str(p.payload["chunk_id"]) for p in points], [p.payload for p in points],
                      [p.vector.get(DENSE) for p in points], [p.vector.get(SPARSE) for p in points])


def _rrf_hits(lists: list[list[VectorHit]], limit: int, k: int = 2) -> list[VectorHit]:
    """Qdrant's RRF (``1 / (rank + k - 1)``, rank from 1, k = 2) over hit lists, best first."""
    scores: dict[str, float] = {}
    first: dict[str, VectorHit] = {}
    for hits in lists:
        for rank, hit in enumerate(hits, 1):
            scores[hit.chunk_id] = scores.get(hit.chunk_id, 0.0) + 1.0 / (rank + k - 1)
            first.setdefault(hit.chunk_id, hit)
    ranked = sorted(scores, key=lambda cid: -scores[cid])[:limit]
    return [VectorHit(cid, scores[cid], first[cid].payload) for cid in ranked]


def _to_qdrant_sparse(vector: SparseVector) -> Any:
    from qdrant_client import models

    return models.SparseVector(indices=vector.indices.tolist(), values=vector.values.tolist())


def _match(key: str, value: str | list[str]) -> Any:
    from qdrant_client import models

    match: Any = models.MatchAny(any=value) if isinstance(value, list) else models.MatchValue(value=value)
    return models.FieldCondition(key=key, match=match)


def _language_filter(language: LanguageFilter) -> Any:
    from qdrant_client import models

    if language is None:
        return None
    value = language if isinstance(language, str) else list(language)
    return models.Filter(must=[_match("language", value)])


def tune_local_persistence(client: QdrantClient) -> None:
    """Let Qdrant local mode commit without an fsync per point (WAL, synchronous=NORMAL).

    Local mode persists every upserted point in its own SQLite transaction; with the default
    rollback journal each one waits for an fsync (~50 points/s here), which made the store the
    bottleneck of the corpus build. WAL with synchronous=NORMAL keeps the file consistent after
    a crash (a power loss may drop the last commits, which a re-run of the idempotent build
    restores). Reaches into qdrant-client's local internals, so it degrades to a warning.
    """
    from qdrant_client.local.qdrant_local import QdrantLocal

    try:
        local = client._client  # noqa: SLF001 - the local-mode engine behind the client
    except AttributeError as exc:  # a client layout we do not know: keep the safe default
        logger.warning("could not tune Qdrant local persistence: %s", exc)
        return
    if not isinstance(local, QdrantLocal):
        return  # a server: it persists by itself
    for name, collection in local.collections.items():
        try:
            persisted = collection.storage  # None for an in-memory collection
            if persisted is None:
                continue
            conn = persisted.storage  # the collection's sqlite3 connection
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
        except Exception as exc:  # an internal layout we do not know: keep the safe default
            logger.warning("could not tune Qdrant local persistence of %r: %s", name, exc)
