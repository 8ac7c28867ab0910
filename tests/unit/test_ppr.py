"""Personalized PageRank over the Entity—Chunk graph: exactness, approximation bound, paths."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp

from medgraph.graph.ppr import DEFAULT_TOL, PPRIndex, incidence_from_pairs, tolerance_for
from medgraph.retrieve.ppr import ProcessPPR
from tests.helpers import require_module

METHODS = {"two-step": 20_000_000, "bipartite": 0}  # method → max_pairs that selects it


def random_graph(
    n_ent: int, n_chunk: int, seed: int, integer: bool = True
) -> tuple[sp.csr_matrix, list[str], list[str]]:
    """Random bipartite incidence where every chunk mentions 1–4 entities (Zipf-like popularity)."""
    rng = np.random.default_rng(seed)
    popularity = 1.0 / np.arange(1, n_ent + 1)
    rows, cols, vals = [], [], []
    for c in range(n_chunk):
        k = int(rng.integers(1, 5))
        for e in rng.choice(n_ent, size=k, replace=False, p=popularity / popularity.sum()):
            rows.append(int(e))
            cols.append(c)
            vals.append(float(rng.integers(1, 4)) if integer else float(rng.uniform(0.5, 3.0)))
    b = sp.csr_matrix((vals, (rows, cols)), shape=(n_ent, n_chunk))
    return b, [f"D{i:04d}" for i in range(n_ent)], [f"c{j:05d}" for j in range(n_chunk)]


def dense_ppr(b: sp.csr_matrix, seeds: dict[int, float], damping: float) -> np.ndarray:
    """Chunk scores from solving (I − d·P)·x = (1−d)·s on the dense undirected bipartite graph."""
    n_ent, n_chunk = b.shape
    a = sp.bmat([[None, b], [b.T, None]]).toarray()
    deg = a.sum(axis=0)
    p = a / np.where(deg > 0, deg, 1.0)  # column-stochastic
    s = np.zeros(n_ent + n_chunk)
    for i, w in seeds.items():
        s[i] = w
    s /= s.sum()
    x = np.linalg.solve(np.eye(n_ent + n_chunk) - damping * p, (1.0 - damping) * s)
    return x[n_ent:]


@pytest.fixture(scope="module")
def small() -> tuple[sp.csr_matrix, list[str], list[str]]:
    return random_graph(40, 150, seed=3, integer=False)  # real weights: no exact score ties


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("damping", [0.3, 0.5, 0.85])
def test_query_matches_dense_solution(small, method: str, damping: float) -> None:
    b, ents, chunks = small
    index = PPRIndex(b, ents, chunks, max_pairs=METHODS[method])
    assert index.method == method
    seeds = {ents[2]: 0.9, ents[11]: 0.6}
    want = dense_ppr(b, {2: 0.9, 11: 0.6}, damping)
    hits = index.query(seeds, damping=damping, top_k=20, tol=1e-10)
    got = {h.chunk_id: h.score for h in hits}
    np.testing.assert_allclose(
        [got[c] for c in got], [want[chunks.index(c)] for c in got], rtol=1e-6, atol=1e-12
    )
    assert [h.chunk_id for h in hits] == [chunks[j] for j in np.argsort(-want)[:20]]


@pytest.mark.parametrize("damping", [0.5, 0.85])
def test_exact_matches_dense_solution(small, damping: float) -> None:
    b, ents, chunks = small
    index = PPRIndex(b, ents, chunks)
    np.testing.assert_allclose(
        index.exact({ents[5]: 1.0}, damping), dense_ppr(b, {5: 1.0}, damping), atol=1e-10
    )


@pytest.mark.parametrize("method", METHODS)
def test_scores_are_lower_bounds_within_the_documented_error(small, method: str) -> None:
    b, ents, chunks = small
    index = PPRIndex(b, ents, chunks, max_pairs=METHODS[method])
    tol, d = 1e-3, 0.5
    want = dense_ppr(b, {0: 1.0, 7: 0.5}, d)
    factor = d * (2 - d * d) / (1 - d * d) if method == "two-step" else 1.0
    for h in index.query({ents[0]: 1.0, ents[7]: 0.5}, damping=d, top_k=len(chunks), tol=tol):
        j = chunks.index(h.chunk_id)
        assert -1e-12 <= want[j] - h.score <= tol * index.chunk_degree[j] * factor + 1e-12


def test_methods_agree_on_the_top_ranking() -> None:
    b, ents, chunks = random_graph(200, 1500, seed=11, integer=False)
    two, bip = PPRIndex(b, ents, chunks), PPRIndex(b, ents, chunks, max_pairs=0)
    seeds = {ents[1]: 1.0, ents[50]: 0.7}
    ids = [[h.chunk_id for h in idx.query(seeds, top_k=10, tol=1e-9)] for idx in (two, bip)]
    assert ids[0] == ids[1]


def test_top10_overlaps_igraph_personalized_pagerank() -> None:
    ig = require_module("igraph", reason="python-igraph is not installed (dev extra)")
    b, ents, chunks = random_graph(300, 2000, seed=5)
    index = PPRIndex(b, ents, chunks)
    coo = b.tocoo()
    n_ent = b.shape[0]
    graph = ig.Graph(n=n_ent + len(chunks), edges=np.column_stack([coo.row, coo.col + n_ent]).tolist())
    rng = np.random.default_rng(0)
    overlaps = []
    for _ in range(8):
        picked = rng.choice(n_ent, size=int(rng.integers(1, 4)), replace=False)
        seeds = {ents[i]: float(rng.uniform(0.5, 1.0)) for i in picked}
        reset = [0.0] * graph.vcount()
        for i in picked:
            reset[int(i)] = seeds[ents[i]]
        pr = np.asarray(
            graph.personalized_pagerank(directed=False, damping=0.5, reset=reset, weights=coo.data.tolist())
        )
        want = {chunks[j] for j in np.argsort(-pr[n_ent:], kind="stable")[:10]}
        got = {h.chunk_id for h in index.query(seeds, damping=0.5, top_k=10)}
        overlaps.append(len(got & want) / 10)
    assert np.mean(overlaps) >= 0.9


def test_entity_path_names_the_seed_for_chunks_that_mention_it(small) -> None:
    b, ents, chunks = small
    index = PPRIndex(b, ents, chunks)
    seed = ents[3]
    mentions_seed = {chunks[j] for j in b[3].indices}
    hits = index.query({seed: 1.0}, top_k=len(chunks))
    assert mentions_seed <= {h.chunk_id for h in hits}
    for h in hits:
        assert 1 <= len(h.entity_path) <= 3
        assert (h.entity_path == [seed]) == (h.chunk_id in mentions_seed)


def test_entity_path_names_the_bridge_for_chunks_two_hops_away() -> None:
    # S — c0 — T — c1 — U — c2 ; c1 also mentions the dead-end entity Z.
    ents, chunks = ["S", "T", "U", "Z"], ["c0", "c1", "c2"]
    edges = [(0, 0), (1, 0), (1, 1), (2, 1), (2, 2), (3, 1)]
    b = sp.csr_matrix(([1.0] * len(edges), tuple(zip(*edges, strict=True))), shape=(4, 3))
    hits = {h.chunk_id: h for h in PPRIndex(b, ents, chunks).query({"S": 1.0}, tol=1e-9)}
    assert hits["c0"].entity_path == ["S"]
    assert hits["c1"].entity_path[0] == "T"
    assert hits["c2"].entity_path[0] == "U"
    assert hits["c0"].score > hits["c1"].score > hits["c2"].score


def test_unknown_missing_or_zero_weight_seeds_return_nothing(small) -> None:
    b, ents, chunks = small
    index = PPRIndex(b, ents, chunks)
    assert index.query({}) == []
    assert index.query({"D9999": 1.0}) == []
    assert index.query({ents[0]: 0.0}) == []
    mixed = index.query({"D9999": 5.0, ents[0]: 1.0}, tol=1e-9)
    assert [h.chunk_id for h in mixed] == [h.chunk_id for h in index.query({ents[0]: 1.0}, tol=1e-9)]


def test_isolated_seed_is_ignored() -> None:
    b = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 0.0]]))
    hits = PPRIndex(b, ["A", "lonely"], ["c0", "c1"]).query({"A": 1.0, "lonely": 1.0})
    assert [h.chunk_id for h in hits] == ["c0"]
    assert hits[0].score == pytest.approx(0.5 * 0.5 / (1 - 0.25))  # alternates A ↔ c0 only


def test_lower_damping_concentrates_on_the_seeds_own_chunks() -> None:
    # S shares 20 chunks with T; T's own chunk c* gathers the mass T collects from all of them.
    ents, chunks = ["S", "T"], [f"c{i}" for i in range(20)] + ["c*"]
    rows = [0] * 20 + [1] * 21
    cols = list(range(20)) + list(range(21))
    vals = [1.0] * 40 + [5.0]
    index = PPRIndex(sp.csr_matrix((vals, (rows, cols)), shape=(2, 21)), ents, chunks)
    rank = {d: [h.chunk_id for h in index.query({"S": 1.0}, damping=d, top_k=21)] for d in (0.2, 0.5, 0.85)}
    assert rank[0.2].index("c*") == 20 and rank[0.5].index("c*") == 20
    assert rank[0.85][0] == "c*"


def test_share_on_seed_chunks_falls_as_damping_rises(small) -> None:
    b, ents, chunks = small
    index = PPRIndex(b, ents, chunks)
    own = b[4].indices
    shares = []
    for d in (0.2, 0.5, 0.85):
        x = index.exact({ents[4]: 1.0}, d)
        shares.append(x[own].sum() / x.sum())
    assert shares[0] > shares[1] > shares[2]


def test_concurrent_queries_match_sequential_ones() -> None:
    b, ents, chunks = random_graph(300, 2000, seed=8)
    index = PPRIndex(b, ents, chunks)
    queries = [{ents[i]: 1.0, ents[(7 * i + 3) % 300]: 0.5} for i in range(40)]
    sequential = [index.query(q) for q in queries]
    with ThreadPoolExecutor(max_workers=4) as pool:
        concurrent = list(pool.map(index.query, queries))
    assert concurrent == sequential


def with_unrelated_chunks(
    graph: tuple[sp.csr_matrix, list[str], list[str]], n_chunk: int
) -> tuple[sp.csr_matrix, list[str], list[str]]:
    """``graph`` beside a disjoint component of ``n_chunk`` chunks over 30 other entities."""
    b, ents, chunks = graph
    other, other_ents, other_chunks = random_graph(30, n_chunk, seed=11)
    joined = sp.block_diag([b, other]).tocsr()
    return joined, ents + [f"X{e}" for e in other_ents], chunks + [f"x{c}" for c in other_chunks]


def test_queries_reaching_few_of_many_chunks_score_only_those(small) -> None:
    """A query that reaches few of a large graph's chunks sums their scores in the thread's kept
    vector and ranks only them; the hits are those of the reached component alone, and the vector
    is clean for the next query."""
    b, ents, chunks = small
    alone = PPRIndex(b, ents, chunks)
    big = PPRIndex(*with_unrelated_chunks(small, 20_000))
    queries = [{ents[2]: 0.9, ents[11]: 0.6}, {ents[5]: 1.0}, {ents[2]: 0.9, ents[11]: 0.6}]
    for seeds in queries:
        want = alone.query(seeds, top_k=30)
        got = big.query(seeds, top_k=30)
        assert [h.chunk_id for h in got] == [h.chunk_id for h in want]
        np.testing.assert_allclose([h.score for h in got], [h.score for h in want], rtol=1e-12)
        assert [h.entity_path for h in got] == [h.entity_path for h in want]
    scratch = big._scratch.scores
    assert scratch is not None and len(scratch) == len(big.chunk_ids)  # the sparse path ran
    assert not scratch.any()
    exact = dense_ppr(b, {2: 0.9, 11: 0.6}, 0.5)
    top = big.query(queries[0], top_k=10, tol=1e-10)
    assert [h.chunk_id for h in top] == [chunks[j] for j in np.argsort(-exact)[:10]]


def test_concurrent_sparse_queries_keep_their_own_scores(small) -> None:
    b, ents, chunks = small
    big = PPRIndex(*with_unrelated_chunks(small, 20_000))
    queries = [{ents[i % 40]: 1.0, ents[(7 * i + 3) % 40]: 0.5} for i in range(60)]
    sequential = [big.query(q) for q in queries]
    with ThreadPoolExecutor(max_workers=4) as pool:
        concurrent = list(pool.map(big.query, queries))
    assert concurrent == sequential


def test_the_default_tolerance_shrinks_with_the_graph() -> None:
    assert tolerance_for(5_000) == DEFAULT_TOL == tolerance_for(1_000_000)
    assert tolerance_for(10_000_000) == pytest.approx(1e-7)
    assert tolerance_for(0) == DEFAULT_TOL
    b, ents, chunks = random_graph(40, 150, seed=3)
    assert PPRIndex(b, ents, chunks).default_tol == DEFAULT_TOL
    heavy = PPRIndex(b * 1e5, ents, chunks)  # same graph, counts ×1e5: > 1M mentions
    assert heavy.default_tol == pytest.approx(1.0 / float(b.sum() * 1e5))
    seeds = {ents[2]: 1.0}
    assert heavy.query(seeds) == heavy.query(seeds, tol=heavy.default_tol)
    assert heavy.query(seeds, tol=1e-3) != heavy.query(seeds)


def test_from_store_and_validation(small) -> None:
    b, ents, chunks = small

    class Store:
        def incidence(self) -> tuple[sp.csr_matrix, list[str], list[str]]:
            return b, ents, chunks

    index = PPRIndex.from_store(Store())
    assert index.entity_ids == ents and index.chunk_ids == chunks
    assert len(index.query({ents[0]: 1.0}, top_k=5)) == 5
    with pytest.raises(ValueError):
        index.query({ents[0]: 1.0}, damping=1.0)
    with pytest.raises(ValueError):
        PPRIndex(b, ents[:-1], chunks)


# --- ProcessPPR: the served index follows the store -----------------------------------------


class PairsStore:
    """A store that hands out ``entity_chunk_pairs`` and a write version as its signature;
    ``gate`` (when set) blocks incidence reads until it is released."""

    def __init__(self, pairs: list[tuple[str, str, int]]) -> None:
        self.pairs = list(pairs)
        self.version = 0
        self.reads = 0
        self.gate: threading.Event | None = None
        self.reading = threading.Event()
        self.fail = False

    def add(self, *pairs: tuple[str, str, int]) -> None:
        self.pairs.extend(pairs)
        self.version += 1

    def graph_signature(self) -> int:
        return self.version

    def incidence(self) -> tuple[sp.csr_matrix, list[str], list[str]]:
        return incidence_from_pairs(self.entity_chunk_pairs())

    def refresh(self) -> None:
        """Nothing cached in this store."""

    def entity_chunk_pairs(self) -> list[tuple[str, str, int]]:
        self.reads += 1
        self.reading.set()
        if self.gate is not None:
            assert self.gate.wait(10)
        if self.fail:
            raise RuntimeError("store down")
        return list(self.pairs)


BASE = [("D1", "c1", 2), ("D1", "c2", 1), ("D2", "c2", 1), ("D2", "c3", 1), ("D3", "c4", 1)]


def chunk_ids(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [h.chunk_id for h in hits]


def test_incidence_from_pairs_sorts_ids_and_adds_repeats() -> None:
    m, ents, chunks = incidence_from_pairs([("D2", "c9", 1), ("D1", "c1", 2), ("D2", "c9", 3)])
    assert ents == ["D1", "D2"] and chunks == ["c1", "c9"]
    assert m.toarray().tolist() == [[2.0, 0.0], [0.0, 4.0]]


def test_process_ppr_matches_the_index_and_builds_once() -> None:
    store = PairsStore(BASE)
    engine = ProcessPPR(store, poll_s=3600)
    want = PPRIndex(*incidence_from_pairs(BASE)).query({"D1": 1.0})
    assert engine.query({"D1": 1.0}) == want
    engine.query({"D2": 1.0})
    assert store.reads == 1 and engine.stats()["generation"] == 1


def test_refresh_by_generation_picks_up_new_chunks() -> None:
    clock = [0.0]
    store = PairsStore(BASE)
    engine = ProcessPPR(store, poll_s=5.0, clock=lambda: clock[0])
    assert "c5" not in chunk_ids(engine.query({"D1": 1.0}))
    store.add(("D1", "c5", 1))
    clock[0] = 1.0  # before the poll interval: no check, the old index answers
    assert "c5" not in chunk_ids(engine.query({"D1": 1.0})) and store.reads == 1
    clock[0] = 6.0  # due: this query starts the check (answered from the old index) ...
    engine.query({"D1": 1.0})
    assert engine.wait(10)
    assert "c5" in chunk_ids(engine.query({"D1": 1.0}))  # ... and the next sees the new chunk
    assert store.reads == 2 and engine.stats()["generation"] == 2
    clock[0] = 12.0  # signature unchanged: checked, not rebuilt
    engine.query({"D1": 1.0})
    assert engine.wait(10) and store.reads == 2
    store.pairs.append(("D1", "c6", 1))  # a write that leaves the signature alone: seen on refresh()
    engine.refresh()
    assert "c6" in chunk_ids(engine.query({"D1": 1.0})) and engine.stats()["generation"] == 3


def test_a_query_during_a_rebuild_is_served_from_the_old_index() -> None:
    store = PairsStore(BASE)
    engine = ProcessPPR(store, poll_s=3600)
    old = engine.query({"D1": 1.0})
    store.add(("D1", "c5", 1))
    store.gate, store.reading = threading.Event(), threading.Event()
    engine.refresh(wait=False)
    assert store.reading.wait(10) and engine.rebuilding  # the rebuild is stuck in its incidence read
    with ThreadPoolExecutor(max_workers=1) as pool:
        during = pool.submit(engine.query, {"D1": 1.0}).result(timeout=5)  # not blocked by it
    assert during == old and engine.stats()["generation"] == 1
    assert not engine.wait(0.05)
    store.gate.set()
    assert engine.wait(10) and not engine.rebuilding
    assert "c5" in chunk_ids(engine.query({"D1": 1.0})) and engine.stats()["generation"] == 2


def test_a_rebuild_still_running_at_exit_is_waited_for() -> None:
    """The exit hook joins running rebuilds: none is cut off inside numpy while Python tears down."""
    from medgraph.retrieve import ppr

    store = PairsStore(BASE)
    engine = ProcessPPR(store, poll_s=3600)
    engine.query({"D1": 1.0})
    store.add(("D1", "c5", 1))
    store.gate, store.reading = threading.Event(), threading.Event()
    engine.refresh(wait=False)
    assert store.reading.wait(10) and engine._worker in ppr._REBUILDS  # registered while it runs
    threading.Timer(0.3, store.gate.set).start()
    ppr._join_rebuilds()  # what atexit runs
    assert not engine.rebuilding and engine.stats()["generation"] == 2


def test_a_failed_rebuild_keeps_the_old_index() -> None:
    store = PairsStore(BASE)
    engine = ProcessPPR(store, poll_s=3600)
    old = engine.query({"D1": 1.0})
    store.add(("D1", "c5", 1))
    store.fail = True
    engine.check(wait=True)
    assert engine.query({"D1": 1.0}) == old and engine.last_error is not None
    store.fail = False
    engine.check(wait=True)
    assert "c5" in chunk_ids(engine.query({"D1": 1.0})) and engine.last_error is None


def test_retriever_runs_ppr_in_process_or_on_the_store() -> None:
    from medgraph.config.models import RetrievalConfig
    from medgraph.retrieve.retriever import Retriever
    from medgraph.retrieve.types import QueryAnalysis

    class Store(PairsStore):
        def __init__(self) -> None:
            super().__init__(BASE)
            self.store_calls = 0

        def ppr(self, seeds: dict[str, float], damping: float, top_k: int) -> list:  # type: ignore[type-arg]
            self.store_calls += 1
            return []

    analysis = QueryAnalysis("q", "en", seed_bias=(("D1", 1.0),))
    store = Store()
    process = Retriever(RetrievalConfig(paths=("ppr",)), store, None, None)  # type: ignore[arg-type]
    assert process.ppr_index is not None
    assert [c.chunk_id for c in process.search_path("ppr", analysis, 5)] == ["c1", "c2", "c3"]
    store.add(("D1", "c5", 1))
    process.refresh()  # rebuilt at once, not on the next poll
    assert "c5" in [c.chunk_id for c in process.search_path("ppr", analysis, 5)]
    assert store.store_calls == 0
    on_store = Retriever(RetrievalConfig(paths=("ppr",), ppr_engine="store"), store, None, None)  # type: ignore[arg-type]
    assert on_store.ppr_index is None and on_store.search_path("ppr", analysis, 5) == []
    assert store.store_calls == 1


def test_seed_specificity_lets_a_rare_entity_outweigh_a_common_one() -> None:
    """``retrieval.ppr_specificity``: each seed's weight × (chunks that mention it)^-s. A question
    naming a common entity (in 8 chunks) and a rare one (in 1) ranks the rare one's chunk first
    only with specificity on."""
    from medgraph.config.models import RetrievalConfig
    from medgraph.retrieve.retriever import Retriever
    from medgraph.retrieve.types import QueryAnalysis

    pairs = [("COMMON", f"c{i}", 1) for i in range(8)] + [("RARE", "r0", 1), ("OTHER", "r0", 1), ("OTHER", "x", 1)]
    analysis = QueryAnalysis("q", "en", seed_bias=(("COMMON", 1.0), ("RARE", 1.0)))
    plain = Retriever(RetrievalConfig(paths=("ppr",)), PairsStore(pairs), None, None)  # type: ignore[arg-type]
    assert plain.ppr_index is not None
    assert plain.ppr_index.chunk_counts(["COMMON", "RARE", "NONE"]) == {"COMMON": 8, "RARE": 1, "NONE": 0}
    # without specificity each seed gets half the restart mass; with it the rare one gets 8/9
    specific = Retriever(RetrievalConfig(paths=("ppr",), ppr_specificity=1.0), PairsStore(pairs), None, None)  # type: ignore[arg-type]
    base = {c.chunk_id: c.score for c in plain.search_path("ppr", analysis, 20)}
    weighted = {c.chunk_id: c.score for c in specific.search_path("ppr", analysis, 20)}
    assert weighted["r0"] / weighted["c0"] > 2 * base["r0"] / base["c0"]
    assert max(weighted, key=weighted.get) == "r0"


def test_the_hop_path_follows_the_first_passages_entities_to_the_second_passage() -> None:
    """``hop``: the entities of the first hop's best passage that the question does not name (B,
    the bridge) seed PPR; the passage that mentions the bridge with something else comes first,
    the first passage itself is left out, and an entity in more than ``hop.max_chunks`` chunks
    (COMMON) seeds nothing."""
    from medgraph.config.models import HopConfig, RetrievalConfig
    from medgraph.retrieve.retriever import Retriever
    from medgraph.retrieve.types import Candidate, QueryAnalysis

    pairs = [("A", "first", 1), ("B", "first", 1), ("B", "second", 1), ("C", "second", 1), ("C", "third", 1),
             ("A", "other", 1)] + [("COMMON", f"n{i}", 1) for i in range(6)] + [("COMMON", "first", 1)]

    class Store(PairsStore):
        def chunk_entities(self, chunk_ids: list[str]) -> dict[str, set[str]]:
            out: dict[str, set[str]] = {c: set() for c in chunk_ids}
            for mesh_id, chunk_id, _ in self.pairs:
                if chunk_id in out:
                    out[chunk_id].add(mesh_id)
            return out

    cfg = RetrievalConfig(paths=("ppr", "hop"), hop=HopConfig(passages=1, max_chunks=5))
    retriever = Retriever(cfg, Store(pairs), None, None)  # type: ignore[arg-type]
    analysis = QueryAnalysis("q", "en", seed_bias=(("A", 1.0),))
    first = {"dense": [Candidate("first", 1.0, {"dense": 1.0}), Candidate("other", 0.5, {"dense": 0.5})]}
    hop = [c.chunk_id for c in retriever.search_path("hop", analysis, 5, done=first)]
    assert hop[0] == "second" and "first" not in hop
    # COMMON (7 chunks) seeds nothing: its chunks come only through the walk, after the bridge's
    assert max(hop.index(c) for c in ("second", "third")) < min(hop.index(c) for c in hop if c.startswith("n"))
    assert retriever.search_path("hop", analysis, 5, done={}) == []


def test_the_hop_path_and_seed_specificity_need_the_in_process_index() -> None:
    from medgraph.config.models import RetrievalConfig

    for bad in ({"paths": ("ppr", "hop")}, {"ppr_specificity": 1.0}):
        with pytest.raises(ValueError, match="ppr_engine: process"):
            RetrievalConfig(ppr_engine="store", **bad)
    assert RetrievalConfig(paths=("ppr", "hop")).ppr_engine == "process"
