"""Communities on Neo4j (``gds.leiden`` with intermediate communities) against the embedded store
(graspologic-native) on the same corpus: comparable partitions by adjusted Rand index, and the
``(:Community)`` / ``MEMBER_OF`` / ``PART_OF`` records.

Uses the local dev server (``make neo4j-start``; see tests/contract/test_graph_store_contract.py);
skips with the reason when nothing answers, unless ``MEDGRAPH_REQUIRE_NEO4J=1``. Each test removes
every MedGraph node (and community node) before and after it runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from medgraph.community.build import detect, plan, summary_inputs
from medgraph.community.summarise import ExtractiveSummariser
from medgraph.config.models import CommunitiesConfig, EmbeddedGraphStoreConfig, Neo4jGraphStoreConfig
from medgraph.graph.leiden import adjusted_rand_index, partition
from medgraph.stores.errors import StoreUnavailable
from medgraph.stores.factory import make_graph_store
from medgraph.stores.graph import DocumentRecord
from tests.community_fixtures import assert_listed_a_page_at_a_time, planted_chunks
from tests.helpers import require_disposable_neo4j, unavailable

HOST = os.environ.get("NEO4J_DEV_HOST", "127.0.0.1")
PORT = os.environ.get("NEO4J_DEV_PORT", "7687")
NEO4J = Neo4jGraphStoreConfig(kind="neo4j", uri=f"bolt://{HOST}:{PORT}", password_env="NEO4J_DEV_PASSWORD")
_WIPE = ("MATCH (n) WHERE n:Entity OR n:Chunk OR n:Document OR n:Run OR n:Failure OR n:Community "
         "OR n:CommunityBuild DETACH DELETE n")
CFG = CommunitiesConfig(max_cluster_size=10)  # 12-member groups are split once more


def _wipe(store: Any) -> None:
    with store._driver.session(database=NEO4J.database) as session:
        session.run(_WIPE).consume()


def _fill(store: Any) -> dict[str, str]:
    chunks, mentions, entities, truth = planted_chunks()
    docs = sorted({c.doc_id for c in chunks})
    store.upsert_documents([DocumentRecord(d, d, "en", "h", sum(c.doc_id == d for c in chunks)) for d in docs])
    store.upsert_chunks(chunks, mentions, entities)
    store.complete_documents(docs)
    return truth


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[tuple[Any, Any, dict[str, str]]]:
    try:
        neo = make_graph_store(NEO4J)
    except (StoreUnavailable, ImportError) as exc:
        reason = f"no Neo4j answering at {NEO4J.uri} ({exc}); start it with make neo4j-start"
        unavailable(reason, "MEDGRAPH_REQUIRE_NEO4J")
    require_disposable_neo4j(NEO4J.uri)
    _wipe(neo)
    embedded = make_graph_store(EmbeddedGraphStoreConfig(path=str(tmp_path / "graph.sqlite")))
    truth = _fill(embedded)
    assert _fill(neo) == truth
    yield embedded, neo, truth
    _wipe(neo)
    neo.close()
    embedded.close()


def test_both_stores_give_comparable_partitions(stores: tuple[Any, Any, dict[str, str]]) -> None:
    embedded, neo, truth = stores
    assert sorted(neo.entity_chunk_pairs()) == sorted(embedded.entity_chunk_pairs())
    local, gds = detect(embedded, CFG), detect(neo, CFG)
    assert (local.backend, gds.backend) == ("graspologic", "gds")
    assert local.graph.signature() == gds.graph.signature()
    ari = adjusted_rand_index(partition(local.communities, 0), partition(gds.communities, 0))
    assert ari > 0.9, f"adjusted Rand index {ari:.3f} between graspologic and GDS level-0 partitions"
    assert adjusted_rand_index(partition(gds.communities, 0), truth) > 0.9
    assert gds.modularity == pytest.approx(local.modularity, abs=0.05)
    # seeded, single-threaded: the same partition again
    again = detect(neo, CFG)
    assert [(c.community_id, c.members) for c in again.communities] == [
        (c.community_id, c.members) for c in gds.communities]
    for c in gds.communities:  # levels nest: a child's members lie inside its parent's
        if c.parent_id is not None:
            parent = next(p for p in gds.communities if p.community_id == c.parent_id)
            assert set(c.members) <= set(parent.members) and parent.level == c.level - 1


def test_neo4j_stores_community_nodes_with_member_of_edges(stores: tuple[Any, Any, dict[str, str]]) -> None:
    _, neo, _ = stores
    detection = detect(neo, CFG)
    work = plan(neo, detection, CFG)
    items = summary_inputs(neo, work.todo, detection.graph, work.evidence, CFG.summary_entities)
    done = [ExtractiveSummariser().summarise(i) for i in items]
    neo.replace_communities(done, {"graph": detection.graph.signature()})
    listed = neo.communities()
    assert sorted(c.community_id for c in listed) == sorted(c.community_id for c in done)
    assert all(c.summary and c.citations and c.size > 0 for c in listed)
    one = neo.communities(ids=[done[0].community_id], members=True)[0]
    assert one.members == done[0].members and one.citations == done[0].citations
    member = done[0].members[0]
    assert done[0].community_id in neo.entity_communities([member])[member]
    assert neo.community_meta() == {"graph": detection.graph.signature()}
    with neo._driver.session(database=NEO4J.database) as session:
        edges = session.run("MATCH (:Entity)-[r:MEMBER_OF]->(:Community) RETURN count(r) AS n").single()["n"]
        parts = session.run("MATCH (:Community)-[r:PART_OF]->(:Community) RETURN count(r) AS n").single()["n"]
    assert edges == sum(c.size for c in done)
    assert parts == sum(1 for c in done if c.parent_id is not None)
    # an unchanged graph: every summary is reused
    assert not plan(neo, detect(neo, CFG), CFG).todo
    assert_listed_a_page_at_a_time(neo)
    neo.replace_communities(done[:1], {})
    assert [c.community_id for c in neo.communities()] == [done[0].community_id]
