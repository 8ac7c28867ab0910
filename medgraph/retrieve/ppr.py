"""Personalized PageRank served in process next to a graph store (the algorithm and its error bound:
``medgraph.graph.ppr``).

Serving (``ProcessPPR``). Input: a graph store that hands out its incidence (``incidence()``; a
source holding only ``(entity, chunk, count)`` rows builds it with
``medgraph.graph.ppr.incidence_from_pairs``) and a cheap ``graph_signature()`` (any comparable value
that changes when the graph does: the embedded store's write version, Neo4j's node / relationship
counts plus latest document update). Output: the same ``PPRHit`` lists as ``PPRIndex.query``. The
first query (or ``ensure_built``) builds the index in the caller's thread; afterwards a query at
most every ``poll_s`` seconds starts a background check of the signature, and when it changed, a
rebuild from a fresh incidence read. The new index replaces the old one in a single reference swap,
so queries are never blocked by a rebuild: until the swap they are answered from the previous index.
``refresh()`` rebuilds whatever the signature (a write that leaves the signature unchanged is seen
then). The signature is read before the incidence, so a write during the read is picked up by the
next check. A failed rebuild keeps the previous index and is retried at the next check. Rebuilds are
whole (by generation), not incremental. Each generation also carries the co-occurrence lookups over
the same incidence (``Connections``, ``connections()``), which the relational channel and the gap
search read through ``medgraph.retrieve.served_graph``.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Protocol

from medgraph.graph.cooccurrence import Connections
from medgraph.graph.ppr import DEFAULT_MAX_PAIRS, Incidence, PPRHit, PPRIndex

logger = logging.getLogger(__name__)

# background rebuilds still running; joined at interpreter exit, so that none is cut off inside
# numpy / scipy while the interpreter tears down (a daemon thread there can crash the process)
_REBUILDS: set[threading.Thread] = set()
EXIT_JOIN_S = 30.0


@atexit.register
def _join_rebuilds() -> None:
    deadline = time.monotonic() + EXIT_JOIN_S
    for worker in list(_REBUILDS):
        worker.join(max(0.0, deadline - time.monotonic()))


# --- serving: an index that follows the store --------------------------------------------


class SignedIncidenceSource(Protocol):
    """A graph store seen by ``ProcessPPR``: a cheap change signature and the incidence (every
    ``GraphReader`` is one)."""

    def graph_signature(self) -> Hashable: ...

    def incidence(self) -> Incidence: ...


@dataclass(frozen=True, slots=True)
class IndexState:
    """The index being served, the signature it was built from, and its build statistics."""

    index: PPRIndex
    connections: Connections  # co-occurrence lookups over the same incidence (``served_graph``)
    signature: Hashable
    generation: int  # 1 for the first build, +1 per swap
    load_s: float  # incidence read
    build_s: float  # PPRIndex construction
    built_at: float  # time.time() of the swap


class ProcessPPR:
    """In-process PPR over a graph store's incidence, rebuilt in the background when the store's
    signature changes (module docstring, "Serving")."""

    def __init__(self, source: SignedIncidenceSource, poll_s: float = 5.0, max_pairs: int = DEFAULT_MAX_PAIRS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._source = source
        self.poll_s = poll_s
        self._max_pairs = max_pairs
        self._clock = clock
        self._state: IndexState | None = None
        self._lock = threading.Lock()  # _checked_at, _worker, _pending_force
        self._build_lock = threading.Lock()  # one build at a time
        self._checked_at = clock()
        self._worker: threading.Thread | None = None
        self._pending_force = False
        self.last_error: BaseException | None = None

    # --- queries ----------------------------------------------------------------------

    def query(self, seeds: dict[str, float], damping: float = 0.5, top_k: int = 50,
              tol: float | None = None) -> list[PPRHit]:
        """``PPRIndex.query`` on the current index; starts a background check when one is due."""
        state = self.ensure_built()
        self._maybe_check()
        return state.index.query(seeds, damping=damping, top_k=top_k, tol=tol)

    def chunk_counts(self, mesh_ids: list[str]) -> dict[str, int]:
        """``PPRIndex.chunk_counts`` on the current index."""
        return self.ensure_built().index.chunk_counts(mesh_ids)

    def connections(self) -> Connections:
        """The co-occurrence lookups of the current generation; starts a background check when due."""
        state = self.ensure_built()
        self._maybe_check()
        return state.connections

    @property
    def state(self) -> IndexState | None:
        """The index served now (``None`` before the first build)."""
        return self._state

    def stats(self) -> dict[str, Any]:
        """Generation, size and build times of the served index, and whether a rebuild runs."""
        state = self._state
        if state is None:
            return {"generation": 0, "rebuilding": self.rebuilding}
        index = state.index
        return {"generation": state.generation, "entities": len(index.entity_ids),
                "chunks": len(index.chunk_ids), "method": index.method, "load_s": round(state.load_s, 3),
                "build_s": round(state.build_s, 3), "built_at": state.built_at, "rebuilding": self.rebuilding,
                "last_error": repr(self.last_error) if self.last_error else None}

    @property
    def rebuilding(self) -> bool:
        worker = self._worker
        return worker is not None and worker.is_alive()

    # --- building ---------------------------------------------------------------------

    def ensure_built(self) -> IndexState:
        """The current index; builds it in this thread if there is none yet."""
        state = self._state
        if state is not None:
            return state
        with self._build_lock:
            if self._state is None:
                self._build(force=True)
        assert self._state is not None
        return self._state

    def refresh(self, wait: bool = True, timeout: float | None = None) -> None:
        """Rebuild from a fresh incidence read whatever the signature; queries meanwhile use the
        old index. ``wait``: return once the new index is served (or the rebuild failed)."""
        if self._state is None:
            self.ensure_built()
            return
        self._start(force=True)
        if wait:
            self.wait(timeout)

    def check(self, wait: bool = False, timeout: float | None = None) -> None:
        """Compare the store's signature with the index's now; rebuild in the background if it changed."""
        self._start(force=False)
        if wait:
            self.wait(timeout)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until no rebuild runs (a refresh requested meanwhile included); False on timeout."""
        deadline = None if timeout is None else self._clock() + timeout
        while True:
            with self._lock:
                worker = self._worker
            if worker is None or not worker.is_alive():
                return True
            left = None if deadline is None else deadline - self._clock()
            if left is not None and left <= 0:
                return False
            worker.join(left)

    def _maybe_check(self) -> None:
        now = self._clock()
        with self._lock:
            if now - self._checked_at < self.poll_s:
                return
            self._checked_at = now
        self._start(force=False)

    def _start(self, force: bool) -> None:
        with self._lock:
            if self._worker is not None and self._worker.is_alive():
                self._pending_force = self._pending_force or force  # run again once it is done
                return
            self._pending_force = False
            self._worker = threading.Thread(target=self._run, args=(force,), name="ppr-index-rebuild",
                                            daemon=True)
            _REBUILDS.add(self._worker)
            self._worker.start()

    def _run(self, force: bool) -> None:
        try:
            self._rebuild(force)
        finally:
            _REBUILDS.discard(threading.current_thread())

    def _rebuild(self, force: bool) -> None:
        while True:
            try:
                with self._build_lock:
                    self._build(force)
            except Exception as exc:  # noqa: BLE001 - the previous index stays; retried at the next check
                self.last_error = exc
                logger.exception("PPR index rebuild failed; serving the previous index")
            with self._lock:
                if not self._pending_force:
                    self._worker = None
                    return
                self._pending_force, force = False, True

    def _build(self, force: bool) -> None:
        """Read signature then incidence, build, swap (caller holds ``_build_lock``)."""
        signature = self._signature()
        current = self._state
        with self._lock:
            self._checked_at = self._clock()
        if not force and current is not None and current.signature == signature:
            return
        start = time.perf_counter()
        incidence = self._incidence()
        loaded = time.perf_counter()
        index = PPRIndex(*incidence, max_pairs=self._max_pairs)
        connections = Connections(*incidence)
        built = time.perf_counter()
        generation = 1 if current is None else current.generation + 1
        self._state = IndexState(index, connections, signature, generation, loaded - start, built - loaded,
                                 time.time())
        self.last_error = None
        logger.info("PPR index generation %d: %d entities, %d chunks (read %.2f s, build %.2f s)", generation,
                    len(index.entity_ids), len(index.chunk_ids), loaded - start, built - loaded)

    def _signature(self) -> Hashable:
        return self._source.graph_signature()

    def _incidence(self) -> Incidence:
        return self._source.incidence()
