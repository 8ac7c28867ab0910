"""Communities: co-occurrence from the bipartite graph, seeded hierarchical Leiden, extractive and
DSPy summaries, the embedded store's Community records and the incremental plan."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from medgraph.community.build import detect, evidence_chunk_ids, plan, summary_inputs
from medgraph.community.summarise import (
    CentralEntity,
    Evidence,
    ExtractiveSummariser,
    LLMSummariser,
    SummaryInput,
    markers_resolve,
)
from medgraph.config.models import CommunitiesConfig
from medgraph.graph.communities import Community, community_id
from medgraph.graph.cooccurrence import build_cooccurrence, modularity
from medgraph.graph.leiden import (
    LeidenParams,
    adjusted_rand_index,
    leiden_local,
    partition,
    to_communities,
)
from medgraph.schemas import Chunk, Mention
from medgraph.stores.embedded import EmbeddedGraphStore
from medgraph.stores.graph import DocumentRecord
from tests.community_fixtures import assert_listed_a_page_at_a_time, planted_chunks, planted_partition
from tests.helpers import require_module


def test_cooccurrence_counts_shared_chunks_not_mentions() -> None:
    pairs = [("A", "c1", 2), ("B", "c1", 1), ("A", "c2", 1), ("B", "c2", 3), ("C", "c2", 1), ("C", "c3", 1)]
    graph = build_cooccurrence(pairs)
    assert graph.edges == [("A", "B", 2), ("A", "C", 1), ("B", "C", 1)]
    assert build_cooccurrence(pairs, min_weight=2).edges == [("A", "B", 2)]
    assert graph.chunks_of(["C"]) == {"c2": {"C": 1}, "c3": {"C": 1}}
    assert graph.chunks_of(["A", "B"])["c2"] == {"A": 1, "B": 3}
    with pytest.raises(ValueError, match="min_weight"):
        build_cooccurrence(pairs, min_weight=0)


def test_modularity_of_two_disjoint_triangles_is_one_half() -> None:
    edges = [("a", "b", 1), ("b", "c", 1), ("a", "c", 1), ("d", "e", 1), ("e", "f", 1), ("d", "f", 1)]
    split = {n: ("x" if n in "abc" else "y") for n in "abcdef"}
    assert modularity(edges, split) == pytest.approx(0.5)
    assert modularity(edges, dict.fromkeys("abcdef", "x")) == pytest.approx(0.0)


def test_leiden_recovers_a_planted_partition_and_is_repeatable() -> None:
    edges, truth = planted_partition()
    params = LeidenParams(max_cluster_size=1000)
    first = to_communities(leiden_local(edges, params), params)
    assert adjusted_rand_index(partition(first, 0), truth) > 0.95
    assert len([c for c in first if c.level == 0]) == 4
    again = to_communities(leiden_local(edges, params), params)
    assert [(c.community_id, c.members) for c in again] == [(c.community_id, c.members) for c in first]


def test_large_communities_are_split_at_the_next_level_with_parent_links() -> None:
    edges, _ = planted_partition(groups=3, size=30, p_in=0.3)
    params = LeidenParams(max_cluster_size=12, max_levels=3)
    communities = to_communities(leiden_local(edges, params), params)
    by_id = {c.community_id: c for c in communities}
    children = [c for c in communities if c.level == 1]
    assert children, "30-member communities above max_cluster_size 12 are split"
    for child in children:
        parent = by_id[child.parent_id]
        assert parent.level == 0 and set(child.members) < set(parent.members) and parent.size > 12
        assert child.community_id == community_id(1, child.members)
    # the children of one parent partition it
    for parent in (c for c in communities if c.level == 0):
        kids = [c for c in children if c.parent_id == parent.community_id]
        if kids:
            assert sorted(m for k in kids for m in k.members) == parent.members


def test_adjusted_rand_index_ignores_label_names_and_penalises_disagreement() -> None:
    a = {"1": "x", "2": "x", "3": "y", "4": "y"}
    assert adjusted_rand_index(a, {"1": "p", "2": "p", "3": "q", "4": "q"}) == pytest.approx(1.0)
    assert adjusted_rand_index(a, {"1": "p", "2": "q", "3": "p", "4": "q"}) < 0
    with pytest.raises(ValueError):
        LeidenParams(resolution=0)


def _evidence(chunk_id: str, doc: str, text: str, names: dict[str, str]) -> Evidence:
    chunk = Chunk(chunk_id, doc, 0, text, ["Results"], "", text, 20, "en", title=f"Doc {doc}", page=3)
    low = text.lower()
    mentions = tuple(Mention(low.index(s), low.index(s) + len(s), s, m, "Drug", "exact", 1.0, chunk_id)
                     for m, s in names.items() if s in low)
    return Evidence(chunk, mentions)


NAMES = {"D1": "metformin", "D2": "insulin", "D3": "glucose"}


def _item() -> SummaryInput:
    community = Community("L0-x", 0, ["D1", "D2", "D3"])
    entities = [CentralEntity("D1", "Metformin", "Drug", 5), CentralEntity("D2", "Insulin", "Drug", 4),
                CentralEntity("D3", "Glucose", "Drug", 2)]
    evidence = [
        _evidence("c1", "d1", "Unrelated opening. Metformin and insulin lowered glucose. Another line on insulin.",
                  NAMES),
        _evidence("c2", "d1", "Insulin needs rose. Glucose was measured.", NAMES),
        _evidence("c3", "d1", "Metformin alone was given.", NAMES),
        _evidence("c4", "d2", "Nothing relevant here at all.", NAMES),
    ]
    return SummaryInput(community, entities, evidence)


def test_extractive_summary_names_central_entities_and_cites_resolvable_sentences() -> None:
    out = ExtractiveSummariser(entities=2, sentences=4).summarise(_item())
    assert out.title == "Metformin and Insulin" and out.summariser == "extractive"
    assert "most central: Metformin (Drug), Insulin (Drug)." in out.summary
    assert [e["mesh_id"] for e in out.top_entities] == ["D1", "D2"]
    # the sentence naming three members comes first; at most two per document, none without a member
    assert out.citations[0].sentence == "Metformin and insulin lowered glucose." and out.citations[0].chunk_id == "c1"
    assert len(out.citations) == 2 and {c.doc_id for c in out.citations} == {"d1"}
    assert markers_resolve(out.summary, out.citations)
    texts = {e.chunk.chunk_id: e.chunk.text for e in _item().evidence}
    for c in out.citations:
        assert f"{c.sentence} [{c.number}]" in out.summary and c.sentence in texts[c.chunk_id]
        assert c.page == 3 and c.section_path == ("Results",)


def test_llm_summariser_uses_the_dspy_program_and_falls_back_on_bad_markers() -> None:
    from dspy.utils import DummyLM

    good = DummyLM([{"title": "Glucose-lowering drugs",
                     "summary": "Metformin and insulin lower glucose [1]. Insulin needs vary [2]."}])
    out = LLMSummariser(good, "llm:test").summarise(_item())
    assert out.summariser == "llm:test" and out.title == "Glucose-lowering drugs"
    assert out.summary.startswith("Metformin and insulin lower glucose [1].")
    assert markers_resolve(out.summary, out.citations)
    bad = DummyLM([{"title": "Made up", "summary": "Metformin cures everything [7]."}])
    fallback = LLMSummariser(bad, "llm:test").summarise(_item())
    assert fallback.summariser == "extractive" and "[7]" not in fallback.summary
    assert markers_resolve(fallback.summary, fallback.citations)


def _store_with_planted_corpus(tmp_path: Path) -> tuple[EmbeddedGraphStore, dict[str, str]]:
    store = EmbeddedGraphStore(tmp_path / "graph.sqlite")
    chunks, mentions, entities, truth = planted_chunks()
    docs = sorted({c.doc_id for c in chunks})
    store.upsert_documents([DocumentRecord(d, d, "en", "h", sum(c.doc_id == d for c in chunks)) for d in docs])
    store.upsert_chunks(chunks, mentions, entities)
    store.complete_documents(docs)
    return store, truth


def test_embedded_store_keeps_communities_members_and_meta(tmp_path: Path) -> None:
    store, truth = _store_with_planted_corpus(tmp_path)
    cfg = CommunitiesConfig(max_cluster_size=1000)
    detection = detect(store, cfg)
    assert detection.backend == "graspologic" and detection.modularity > 0.4
    assert adjusted_rand_index(partition(detection.communities, 0), truth) > 0.95
    work = plan(store, detection, cfg)
    assert len(work.todo) == len(detection.communities) and not work.reused
    items = summary_inputs(store, work.todo, detection.graph, work.evidence, cfg.summary_entities)
    done = [ExtractiveSummariser().summarise(i) for i in items]
    store.replace_communities(done, {"graph": detection.graph.signature(), "n": len(done)})
    listed = store.communities(level=0)
    assert [c.size for c in listed] == sorted((c.size for c in listed), reverse=True)
    assert all(c.summary and c.members == [] and c.size > 0 for c in listed)
    full = store.communities(ids=[listed[0].community_id], members=True)[0]
    assert full.members == sorted(m for m, g in truth.items() if g == truth[full.members[0]])
    member = full.members[0]
    assert store.entity_communities([member, "D-none"]) == {member: [full.community_id], "D-none": []}
    assert store.community_meta() == {"graph": detection.graph.signature(), "n": len(done)}
    chunks = {c.chunk_id: c for c in store.get_chunks([c.chunk_id for x in listed for c in x.citations])}
    for c in (c for x in listed for c in x.citations):  # every citation resolves to a stored chunk sentence
        assert c.sentence.removesuffix(" …") in " ".join(chunks[c.chunk_id].text.split())
    assert_listed_a_page_at_a_time(store)
    store.replace_communities(done[:1], {})
    assert [c.community_id for c in store.communities()] == [done[0].community_id]
    store.close()


def test_plan_reuses_unchanged_communities_and_resummarises_changed_ones(tmp_path: Path) -> None:
    store, _ = _store_with_planted_corpus(tmp_path)
    cfg = CommunitiesConfig(max_cluster_size=1000)
    detection = detect(store, cfg)
    work = plan(store, detection, cfg)
    items = summary_inputs(store, work.todo, detection.graph, work.evidence, cfg.summary_entities)
    store.replace_communities([ExtractiveSummariser().summarise(i) for i in items], {})
    # unchanged graph: everything reused with its summary; --full: everything again
    again = plan(store, detect(store, cfg), cfg)
    assert not again.todo and len(again.reused) == len(work.todo) and all(c.summary for c in again.reused)
    assert len(plan(store, detect(store, cfg), cfg, full=True).todo) == len(work.todo)
    # a new chunk inside one group changes that community's evidence only
    group0 = sorted(detection.communities, key=lambda c: c.members)[0]
    text = "New finding on " + " and ".join(group0.members[:5]) + "."
    new = Chunk("pc-new", "pdoc-new", 0, text, [], "", text, 10, "en", doc_hash="h2")
    mentions = [Mention(text.index(m), text.index(m) + len(m), m, m, "Disease", "exact", 1.0, "pc-new")
                for m in group0.members[:5]]
    store.upsert_documents([DocumentRecord("pdoc-new", "new", "en", "h2", 1)])
    store.upsert_chunks([new], mentions, [])
    store.complete_documents(["pdoc-new"])
    changed = plan(store, detect(store, cfg), cfg)
    assert [c.community_id for c in changed.todo] == [group0.community_id]
    assert len(changed.reused) == len(work.todo) - 1 and not changed.removed
    assert "pc-new" in evidence_chunk_ids(changed.todo[0], detect(store, cfg).graph, 12)
    # a changed setting changes every key: all summaries are redone
    assert len(plan(store, detect(store, cfg), cfg.model_copy(update={"summary_sentences": 2})).todo) == len(
        work.todo)
    store.close()


def test_marker_check_needs_existing_numbers() -> None:
    item = ExtractiveSummariser().summarise(_item())
    assert markers_resolve("a [1] b [2]", item.citations)
    assert not markers_resolve("no markers", item.citations)
    assert not markers_resolve("a [3]", item.citations)
    assert re.search(r"\[1\]", item.summary)


def test_model_tier_summariser_runs_the_dspy_program_on_a_configured_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """``summariser: llm`` on an ``openai`` engine, served by the local fake provider."""
    import json

    require_module("litellm", "MEDGRAPH_REQUIRE_LLM", "litellm not installed (extra 'llm')")
    from medgraph.community.build import make_summariser
    from medgraph.config import load_config
    from medgraph.testing.openai_server import FakeOpenAIServer
    from tests.helpers import REPO

    def reply(messages: list[dict[str, str]]) -> str:
        assert "[1] Metformin and insulin lowered glucose." in messages[-1]["content"]
        return ("[[ ## title ## ]]\nGlucose control\n\n[[ ## summary ## ]]\n"
                "Metformin and insulin lower glucose [1].\n\n[[ ## completed ## ]]")

    monkeypatch.setenv("MEDGRAPH_TEST_OPENAI_KEY", "sk-test")
    with FakeOpenAIServer(reply, api_key="sk-test") as server:
        engine = {"kind": "openai", "model": "openai/tiny-med", "api_base": server.base_url,
                  "api_key_env": "MEDGRAPH_TEST_OPENAI_KEY"}
        cfg = load_config(REPO / "configs" / "local.yaml", [
            f"tiers.engines.fake={json.dumps(engine)}", "communities.summariser=llm", "communities.engine=fake"])
        out = make_summariser(cfg).summarise(_item())
    assert out.summariser == "llm:fake" and out.title == "Glucose control"
    assert out.summary == "Metformin and insulin lower glucose [1]." and markers_resolve(out.summary, out.citations)
    with pytest.raises(ValueError, match="communities.engine"):
        load_config(REPO / "configs" / "local.yaml", ["communities.summariser=llm"])


def test_overview_cues_in_three_languages() -> None:
    from medgraph.retrieve.types import QueryAnalysis
    from medgraph.route.rules import wants_overview

    for text, lang in [("What are the main themes in the literature on asthma?", "en"),
                       ("Gib mir einen Überblick über Herzinsuffizienz", "de"), ("糖尿病的研究现状", "zh"),
                       ("Do European and American guidelines differ on statins?", "en")]:
        assert wants_overview(QueryAnalysis(text, lang)), text
    for text, lang in [("Is aspirin safe in pregnancy?", "en"), ("Wie hoch ist die Dosis von Metformin?", "de")]:
        assert not wants_overview(QueryAnalysis(text, lang)), text
