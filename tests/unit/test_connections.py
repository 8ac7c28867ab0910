"""Pairwise co-occurrence lookups (``medgraph.graph.cooccurrence.Connections``) as the embedded store
serves them: equal to a brute-force reading of the mention rows, and following writes."""

from __future__ import annotations

import random
from itertools import combinations

import pytest

from medgraph.graph.cooccurrence import Connections
from medgraph.stores.embedded import EmbeddedGraphStore
from tests.unit.test_embedded_graph_store import write_doc


def reference(docs: dict[str, list[list[str]]]):
    """chunk → entities, entity → chunks, from the documents as written (chunk IDs as write_doc makes them)."""
    chunk_ents = {f"{d}-h1-{i}": set(es) for d, chunks in docs.items() for i, es in enumerate(chunks)}
    ent_chunks: dict[str, set[str]] = {}
    for c, es in chunk_ents.items():
        for e in es:
            ent_chunks.setdefault(e, set()).add(c)
    return chunk_ents, ent_chunks


def expected_both(ent_chunks, a, b, limit):
    return sorted(ent_chunks.get(a, set()) & ent_chunks.get(b, set()))[:limit]


def expected_bridges(chunk_ents, ent_chunks, a, b, limit):
    def near(x):
        return {e for c in ent_chunks.get(x, set()) for e in chunk_ents[c]}
    return sorted((near(a) & near(b)) - {a, b})[:limit]


def expected_neighbours(chunk_ents, ent_chunks, a, limit):
    counts: dict[str, int] = {}
    for c in ent_chunks.get(a, set()):
        for e in chunk_ents[c] - {a}:
            counts[e] = counts.get(e, 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]


def random_docs(rng: random.Random, n_docs: int, first: int = 0) -> dict[str, list[list[str]]]:
    # a skewed vocabulary: a few entities in most chunks (as "Humans" is), a long tail
    vocab = [f"D{i:03d}" for i in range(60)]
    weights = [1.0 / (i + 1) for i in range(len(vocab))]
    return {f"doc{d:03d}": [sorted(set(rng.choices(vocab, weights, k=rng.randint(1, 6))))
                            for _ in range(rng.randint(1, 4))]
            for d in range(first, first + n_docs)}


@pytest.fixture
def store(tmp_path):
    s = EmbeddedGraphStore(tmp_path / "g.sqlite")
    yield s
    s.close()


def check_all(store, docs):
    chunk_ents, ent_chunks = reference(docs)
    entities = sorted(ent_chunks) + ["D999"]  # one the graph does not hold
    for a, b in combinations(entities, 2):
        for x, y in ((a, b), (b, a)):
            for limit in (1, 3, 50):
                conn = store.connecting_evidence(x, y, limit)
                assert conn.chunk_ids == expected_both(ent_chunks, x, y, limit), (x, y, limit)
                assert conn.bridges == expected_bridges(chunk_ents, ent_chunks, x, y, limit), (x, y, limit)
    if hasattr(store, "connections"):  # the embedded store (check_all also reads the served lookups)
        assert store.connections().chunk_counts() == {e: len(c) for e, c in ent_chunks.items()}
    for a in entities:
        for limit in (1, 5, 100):
            edges = store.neighbourhood(a, hops=1, limit=limit)
            assert [(t, w) for _, t, w in edges] == expected_neighbours(chunk_ents, ent_chunks, a, limit)
            assert all(s == a for s, _, _ in edges)


def test_connections_equal_a_brute_force_reading_and_follow_writes(store):
    rng = random.Random(7)
    docs = random_docs(rng, 40)
    for doc, chunks in docs.items():
        write_doc(store, doc, chunks)
    check_all(store, docs)
    more = random_docs(rng, 10, first=40)  # a write after the lookups were built
    for doc, chunks in more.items():
        write_doc(store, doc, chunks)
    check_all(store, {**docs, **more})
    store.delete_documents(["doc000", "doc001"])
    gone = {k: v for k, v in {**docs, **more}.items() if k not in ("doc000", "doc001")}
    check_all(store, gone)


def test_two_hop_neighbourhood_expands_the_strongest_first(store):
    write_doc(store, "d1", [["A", "B"], ["A", "B"], ["A", "C"], ["B", "D"], ["C", "E"]])
    assert store.neighbourhood("A", hops=1, limit=5) == [("A", "B", 2), ("A", "C", 1)]
    assert store.neighbourhood("A", hops=2, limit=5) == [
        ("A", "B", 2), ("A", "C", 1), ("B", "A", 2), ("B", "D", 1), ("C", "A", 1), ("C", "E", 1)]


def test_connections_reject_a_mismatched_incidence():
    import scipy.sparse as sp

    with pytest.raises(ValueError, match="does not match"):
        Connections(sp.csr_matrix((2, 3)), ["a"], ["x", "y", "z"])


def test_incidence_counts_every_mention_of_an_entity_in_a_chunk(store):
    # write_doc gives each list item its own span: D1 is mentioned twice in the first chunk
    write_doc(store, "d1", [["D1", "D1", "D2"], ["D2"], ["D3", "D1"]])
    matrix, entities, chunks = store.incidence()
    assert entities == ["D1", "D2", "D3"] and chunks == ["d1-h1-0", "d1-h1-1", "d1-h1-2"]
    assert matrix.toarray().tolist() == [[2.0, 0.0, 1.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    assert matrix.dtype.name == "float32" and matrix.has_canonical_format
    store.delete_documents(["d1"])
    empty, entities, chunks = store.incidence()
    assert empty.shape == (0, 0) and entities == [] and chunks == []


def test_served_graph_answers_as_the_store_and_follows_a_refresh(store):
    from medgraph.retrieve.ppr import ProcessPPR
    from medgraph.retrieve.served_graph import ServedGraph

    rng = random.Random(11)
    docs = random_docs(rng, 30)
    for doc, chunks in docs.items():
        write_doc(store, doc, chunks)
    index = ProcessPPR(store, poll_s=3600)  # no background check during the test: refresh only
    served = ServedGraph(store, index)
    check_all(served, docs)
    first = index.state
    write_doc(store, "late", [["D000", "D059"]])  # a chunk joining a popular and a rare entity
    before = served.connecting_evidence("D000", "D059", 50).chunk_ids
    assert "late-h1-0" not in before and index.state is first  # the generation it was built from
    index.refresh(wait=True)
    assert "late-h1-0" in served.connecting_evidence("D000", "D059", 50).chunk_ids
    check_all(served, {**docs, "late": [["D000", "D059"]]})
    assert served.get_chunks(["late-h1-0"])[0].doc_id == "late"
    assert served.get_entity("D059") == store.get_entity("D059")
