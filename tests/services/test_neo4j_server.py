"""End-to-end checks of the local Neo4j 5.26 + OpenGDS 2.13 server (cluster/neo4j/).

Uses a server that is already running (``cluster/neo4j/neo4j-dev.sh start && ... wait``) at
``bolt://$NEO4J_DEV_HOST:$NEO4J_DEV_PORT`` (default 127.0.0.1:7687; password from
``NEO4J_DEV_PASSWORD`` if set). Skips with the reason when nothing answers, unless
``MEDGRAPH_REQUIRE_NEO4J=1``, in which case it fails.

Every test writes under labels unique to the test session and removes them afterwards, so the
tests do not touch other data in the database and can run against a shared dev server.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

from tests.helpers import unavailable

HOST = os.environ.get("NEO4J_DEV_HOST", "127.0.0.1")
PORT = int(os.environ.get("NEO4J_DEV_PORT", "7687"))
URI = f"bolt://{HOST}:{PORT}"


def _unavailable(reason: str) -> None:
    unavailable(reason, "MEDGRAPH_REQUIRE_NEO4J")


@pytest.fixture(scope="module")
def driver() -> Iterator[object]:
    try:
        from neo4j import GraphDatabase
    except ImportError:
        _unavailable("python neo4j driver not installed (pip install neo4j)")
    password = os.environ.get("NEO4J_DEV_PASSWORD")
    auth = ("neo4j", password) if password else None
    drv = GraphDatabase.driver(URI, auth=auth, connection_timeout=5)
    try:
        drv.verify_connectivity()
    except Exception as exc:  # noqa: BLE001 - any failure means "no server"
        drv.close()
        _unavailable(
            f"no Neo4j answering at {URI} ({type(exc).__name__}: {exc}); "
            "start it with cluster/neo4j/neo4j-dev.sh start && cluster/neo4j/neo4j-dev.sh wait"
        )
    yield drv
    drv.close()


@pytest.fixture(scope="module")
def labels(driver) -> Iterator[dict[str, str]]:
    """Session-unique label names (labels cannot be query parameters)."""
    tag = uuid.uuid4().hex[:10]
    names = {"entity": f"MgT{tag}Entity", "chunk": f"MgT{tag}Chunk", "person": f"MgT{tag}Person"}
    yield names
    with driver.session() as s:
        for label in names.values():
            s.run(f"MATCH (n:`{label}`) DETACH DELETE n").consume()


def _graph_name(kind: str) -> str:
    return f"mgtest_{kind}_{uuid.uuid4().hex[:8]}"


def _drop(session, name: str) -> None:
    rec = session.run("CALL gds.graph.drop($g, false) YIELD graphName RETURN graphName", g=name).single()
    assert rec is None or rec["graphName"] == name


def test_gds_version_and_edition(driver) -> None:
    with driver.session() as s:
        version = s.run("RETURN gds.version() AS v").single()["v"]
        info = {
            r["key"]: r["value"]
            for r in s.run(
                "CALL gds.debug.sysInfo() YIELD key, value "
                "WHERE key IN ['gdsEdition', 'neo4jVersion'] RETURN key, value"
            )
        }
    assert version.startswith("2.13."), version
    assert info["gdsEdition"] == "OpenGDS"
    assert info["neo4jVersion"].startswith("5.26."), info


# --------------------------------------------------------------------------------------------
# Personalised PageRank on a bipartite Entity-Chunk graph
#
#   seed -- c_a -- e1 -- c_c -- e3 -- c_e -- e5
#   seed -- c_b -- e2 -- c_d -- e4
#
# GDS `dampingFactor` is the probability of following an edge (networkx `alpha`); with
# probability 1 - dampingFactor the walk restarts at a source node. With restarts at `seed` the score must fall off with the distance from it: the seed ranks
# first, its neighbours (c_a, c_b) rank above every node three or more hops away.
# --------------------------------------------------------------------------------------------
MENTIONS = [
    ("seed", "c_a"),
    ("seed", "c_b"),
    ("e1", "c_a"),
    ("e2", "c_b"),
    ("e1", "c_c"),
    ("e2", "c_d"),
    ("e3", "c_c"),
    ("e4", "c_d"),
    ("e3", "c_e"),
    ("e5", "c_e"),
]
NEIGHBOURS = {"c_a", "c_b"}
PPR_REFERENCE = {
    "seed": 0.577366,
    "c_b": 0.154758,
    "c_a": 0.154705,
    "e2": 0.041666,
    "e1": 0.041454,
    "c_d": 0.011904,
    "c_c": 0.011111,
    "e3": 0.002992,
    "e4": 0.002976,
    "c_e": 0.000855,
    "e5": 0.000214,
}
FAR = {"c_c", "c_d", "e3", "e4", "c_e", "e5"}  # >= 3 hops from the seed


def _load_bipartite(session, labels: dict[str, str]) -> None:
    ent, chk = labels["entity"], labels["chunk"]
    session.run(
        f"""
        UNWIND $rows AS row
        MERGE (e:`{ent}` {{name: row.entity}})
        MERGE (c:`{chk}` {{id: row.chunk}})
        MERGE (e)-[:MENTIONED_IN]->(c)
        """,
        rows=[{"entity": e, "chunk": c} for e, c in MENTIONS],
    ).consume()


def _project_native(session, name: str, labels: dict[str, str]) -> tuple[int, int]:
    rec = session.run(
        "CALL gds.graph.project($g, $labels, {MENTIONED_IN: {orientation: 'UNDIRECTED'}}) "
        "YIELD graphName, nodeCount, relationshipCount RETURN nodeCount, relationshipCount",
        g=name,
        labels=[labels["entity"], labels["chunk"]],
    ).single()
    return rec["nodeCount"], rec["relationshipCount"]


def _project_cypher(session, name: str, labels: dict[str, str]) -> tuple[int, int]:
    ent, chk = labels["entity"], labels["chunk"]
    rec = session.run(
        f"""
        MATCH (e:`{ent}`)-[:MENTIONED_IN]->(c:`{chk}`)
        WITH gds.graph.project($g, e, c,
               {{sourceNodeLabels: labels(e), targetNodeLabels: labels(c),
                 relationshipType: 'MENTIONED_IN'}},
               {{undirectedRelationshipTypes: ['*']}}) AS p
        RETURN p.nodeCount AS nodeCount, p.relationshipCount AS relationshipCount
        """,
        g=name,
    ).single()
    return rec["nodeCount"], rec["relationshipCount"]


@pytest.mark.parametrize("projection", ["native", "cypher"])
def test_personalised_pagerank_ranks_by_distance_from_seed(driver, labels, projection) -> None:
    name = _graph_name(f"ppr_{projection}")
    ent = labels["entity"]
    with driver.session() as s:
        _load_bipartite(s, labels)
        project = _project_native if projection == "native" else _project_cypher
        node_count, rel_count = project(s, name, labels)
        try:
            # 6 entities + 5 chunks; 10 edges, stored once per direction when undirected
            assert (node_count, rel_count) == (11, 2 * len(MENTIONS))
            rows = s.run(
                f"""
                MATCH (e:`{ent}`) WHERE e.name IN $seedNames
                WITH collect(e) AS seeds
                CALL gds.pageRank.stream($g, {{sourceNodes: seeds, dampingFactor: 0.5,
                                              maxIterations: 50, tolerance: 1e-9}})
                YIELD nodeId, score
                WITH gds.util.asNode(nodeId) AS n, score
                RETURN coalesce(n.name, n.id) AS key, score ORDER BY score DESC, key
                """,
                g=name,
                seedNames=["seed"],
            ).data()
        finally:
            _drop(s, name)

    scores = {r["key"]: r["score"] for r in rows}
    assert len(scores) == 11
    assert rows[0]["key"] == "seed", rows
    assert min(scores[k] for k in NEIGHBOURS) > max(scores[k] for k in FAR), scores
    # farther along the same branch -> lower score
    assert scores["c_a"] > scores["c_c"] > scores["c_e"] > 0
    # Chunk-only ranking (what retrieval uses): the seed's chunks come first
    chunks = [r["key"] for r in rows if r["key"].startswith("c_")]
    assert set(chunks[:2]) == NEIGHBOURS, chunks
    # exact values: the same personalised PageRank computed independently (networkx.pagerank,
    # alpha=0.5, personalization={"seed": 1}); GDS scores on this graph sum to 1 as well
    assert scores == pytest.approx(PPR_REFERENCE, rel=1e-3, abs=1e-5)


# --------------------------------------------------------------------------------------------
# Leiden: two 5-cliques joined by a single bridge edge -> exactly two communities
# --------------------------------------------------------------------------------------------
CLIQUE_A = [f"a{i}" for i in range(5)]
CLIQUE_B = [f"b{i}" for i in range(5)]


def _clique_edges(members: list[str]) -> list[tuple[str, str]]:
    return [(u, v) for i, u in enumerate(members) for v in members[i + 1 :]]


EDGES = _clique_edges(CLIQUE_A) + _clique_edges(CLIQUE_B) + [("a0", "b0")]


def _load_cliques(session, label: str) -> None:
    session.run(
        f"""
        UNWIND $rows AS row
        MERGE (a:`{label}` {{name: row.src}})
        MERGE (b:`{label}` {{name: row.dst}})
        MERGE (a)-[r:CO_OCCURS]->(b)
        SET r.weight = row.weight
        """,
        rows=[{"src": u, "dst": v, "weight": 1.0} for u, v in EDGES],
    ).consume()


@pytest.mark.parametrize("projection", ["native", "cypher"])
def test_leiden_splits_two_cliques(driver, labels, projection) -> None:
    name = _graph_name(f"leiden_{projection}")
    person = labels["person"]
    with driver.session() as s:
        _load_cliques(s, person)
        if projection == "native":
            rec = s.run(
                "CALL gds.graph.project($g, $label, "
                "{CO_OCCURS: {orientation: 'UNDIRECTED', properties: 'weight'}}) "
                "YIELD nodeCount, relationshipCount RETURN nodeCount, relationshipCount",
                g=name,
                label=person,
            ).single()
        else:
            rec = s.run(
                f"""
                MATCH (a:`{person}`)-[r:CO_OCCURS]->(b:`{person}`)
                WITH gds.graph.project($g, a, b,
                       {{relationshipProperties: {{weight: toFloat(r.weight)}}}},
                       {{undirectedRelationshipTypes: ['*']}}) AS p
                RETURN p.nodeCount AS nodeCount, p.relationshipCount AS relationshipCount
                """,
                g=name,
            ).single()
        try:
            assert (rec["nodeCount"], rec["relationshipCount"]) == (10, 2 * len(EDGES))
            rows = s.run(
                """
                CALL gds.leiden.stream($g, {relationshipWeightProperty: 'weight',
                  includeIntermediateCommunities: true, maxLevels: 10, gamma: 1.0,
                  theta: 0.01, randomSeed: 42, concurrency: 1})
                YIELD nodeId, communityId, intermediateCommunityIds
                RETURN gds.util.asNode(nodeId).name AS name, communityId, intermediateCommunityIds
                """,
                g=name,
            ).data()
        finally:
            _drop(s, name)

    community = {r["name"]: r["communityId"] for r in rows}
    assert set(community) == set(CLIQUE_A + CLIQUE_B)
    assert len({community[n] for n in CLIQUE_A}) == 1, community
    assert len({community[n] for n in CLIQUE_B}) == 1, community
    assert community["a0"] != community["b0"], community
    assert len(set(community.values())) == 2, community
    assert all(isinstance(r["intermediateCommunityIds"], list) for r in rows)


def test_leiden_rejects_directed_graph(driver, labels) -> None:
    """Documented GDS behaviour: Leiden needs an undirected projection."""
    from neo4j.exceptions import ClientError

    name = _graph_name("leiden_directed")
    person = labels["person"]
    with driver.session() as s:
        _load_cliques(s, person)
        s.run("CALL gds.graph.project($g, $label, 'CO_OCCURS')", g=name, label=person).consume()
        try:
            with pytest.raises(ClientError, match="undirected"):
                s.run("CALL gds.leiden.stream($g) YIELD nodeId RETURN count(*)", g=name).consume()
        finally:
            _drop(s, name)
