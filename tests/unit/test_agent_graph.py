"""The LangGraph agent in process, over a real tiny corpus, with every real piece it injects.

Corpus: four English documents (metformin, contrast media, hand hygiene, heart failure) indexed
with the hashing embedder; vocabulary: tests/fixtures/agent/terms.tsv. The agent runs with the
rule guard, the rule rewriter, SQLite sessions and long-term memory, the real retriever,
reranker and extractive engine, gap detection and live ingestion from a local literature folder.
Counting wrappers show which dependencies each question reached.
"""

from __future__ import annotations

import asyncio
import re
import shutil
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from medgraph.agent.graph import (
    MEMORY_PREFIX,
    NODES,
    Agent,
    AgentDeps,
    AgentRequest,
    AgentSettings,
    memory_candidate,
)
from tests.helpers import FIXTURES, index_tiny_corpus

CORPUS = [
    {"doc_id": "metformin", "title": "Metformin safety", "language": "en",
     "text": "Metformin is the first-line drug for type 2 diabetes. The most common side effects of metformin "
             "are diarrhea and nausea; lactic acidosis is a rare but serious adverse effect."},
    {"doc_id": "contrast", "title": "Contrast media", "language": "en",
     "text": "Side effects of contrast media include allergic reactions and kidney failure in patients with "
             "renal impairment. Metformin is paused before a contrast agent is given to patients with renal impairment."},
    {"doc_id": "hands", "title": "Hand hygiene", "language": "en",
     "text": "Hand hygiene with alcohol-based rubs prevents infections in outpatient clinics."},
    {"doc_id": "hf", "title": "Heart failure", "language": "en",
     "text": "Heart failure patients benefit from exercise training and salt restriction."},
]
VOCAB = [{"kind": "multilingual_terms", "path": str(FIXTURES / "agent" / "terms.tsv")}]


class Calls(Counter[str]):
    def wrap(self, name: str, fn: Any) -> Any:
        async def call(*args: Any) -> Any:
            self[name] += 1
            return fn(*args)

        return call


@pytest.fixture()
def world(tmp_path: Path) -> Iterator[dict[str, Any]]:
    from medgraph.agent.guard import RuleGuard
    from medgraph.agent.rewrite import RuleRewriter
    from medgraph.generate.engines import make_engine
    from medgraph.literature.gaps import find_gaps, search_terms
    from medgraph.literature.ingest import LiveIngestor
    from medgraph.literature.local import LocalDirectorySource
    from medgraph.memory.longterm import LongTermMemory
    from medgraph.memory.sessions import SessionStore
    from medgraph.retrieve.query import QueryAnalyzer
    from medgraph.retrieve.rerank import make_reranker
    from medgraph.retrieve.retriever import Retriever
    from medgraph.route import RuleRouter

    idx, cfg = index_tiny_corpus(tmp_path, CORPUS, VOCAB, ["retrieval.paths=[dense,sparse,ppr]"])
    literature = tmp_path / "literature"
    shutil.copytree(FIXTURES / "agent" / "literature", literature)
    retriever = Retriever(cfg.retrieval, idx.graph, idx.vectors, idx.embedder)
    analyzer = QueryAnalyzer(idx.extractor, 0, cfg.retrieval.languages)
    reranker, router = make_reranker(cfg.rerank), RuleRouter()
    engine = make_engine(cfg.tiers.engines["extractive"], cfg.answer)
    source = LocalDirectorySource(str(literature))
    ingestor = LiveIngestor(cfg, idx.graph, idx.vectors, idx.extractor, idx.embedder)
    calls = Calls()
    seen: list[list[str]] = []  # the numbered context of each generation

    def relational(analysis: Any) -> list[Any]:
        from medgraph.agent.relational import relational_evidence

        cands = relational_evidence(idx.graph, analysis.entity_ids)
        retriever.featurise(analysis, cands)
        return cands

    def ingest(records: list[Any]) -> Any:
        report = ingestor.ingest(records)
        retriever.refresh()
        return report

    async def generate(tier: str, question: str, analysis: Any, evidence: list[Any]) -> AsyncIterator[dict[str, Any]]:
        calls["generate"] += 1
        seen.append([c.chunk_id for c in evidence])
        for event in engine.stream(question, analysis, evidence):
            yield {"delta": event} if isinstance(event, str) else {"answer": event}

    app = tmp_path / "app.sqlite"
    deps = AgentDeps(
        guard=RuleGuard(), rewriter=RuleRewriter(),
        analyze=calls.wrap("analyze", analyzer.analyze), route=calls.wrap("route", lambda a, t: router.route(a)),
        retrieve=calls.wrap("retrieve", retriever.retrieve), rerank=calls.wrap("rerank", reranker.rerank),
        relational=calls.wrap("relational", relational), generate=generate,
        find_gaps=calls.wrap("find_gaps", lambda a, r: find_gaps(a, r, idx.graph, 0.3)),
        fetch=calls.wrap("fetch", lambda gap: source.search(search_terms(gap, idx.extractor.vocab.get), 3, 5.0)),
        ingest=calls.wrap("ingest", ingest),
        sessions=SessionStore(str(app)), memory=LongTermMemory(str(app)),
        settings=AgentSettings(top_k=cfg.retrieval.top_k, rrf_k=cfg.retrieval.rrf_k),
    )
    yield {"agent": Agent(deps), "deps": deps, "calls": calls, "idx": idx, "seen": seen}
    idx.close()


def ask(world: dict[str, Any], question: str, **kw: Any) -> dict[str, Any]:
    return asyncio.run(world["agent"].run(AgentRequest(question, **kw)))  # type: ignore[no-any-return]


def cited_docs(state: dict[str, Any]) -> list[str]:
    return [c.doc_id for c in state["answer"].citations]


def check_citations(state: dict[str, Any]) -> None:
    answer = state["answer"]
    markers = {int(n) for n in re.findall(r"\[(\d+)\]", answer.content)}
    assert markers and markers == {c.number for c in answer.citations}


def test_every_node_runs_and_is_timed(world: dict[str, Any]) -> None:
    state = ask(world, "What are the side effects of metformin?", session_id="s0")
    assert not state["answer"].refused and "metformin" in cited_docs(state)
    check_citations(state)
    expected = set(NODES) - {"refuse", "complete_gaps", "rehop"}  # rehop: multi-hop questions only
    assert expected <= set(state["timings"]) and all(v >= 0 for v in state["timings"].values())
    assert state["answer"].disclaimer


def test_blocked_input_never_reaches_retrieval(world: dict[str, Any]) -> None:
    state = ask(world, "How can I poison my neighbour with metformin without being caught?", session_id="s1")
    assert state["blocked"] and state["answer"].refused and not state["answer"].citations
    calls = world["calls"]
    assert calls["analyze"] == calls["retrieve"] == calls["generate"] == 0
    assert "refuse" in state["timings"] and "semantic" not in state["timings"]
    stored = world["deps"].sessions.recent("s1")
    assert [m.role for m in stored] == ["user", "assistant"]  # the refused turn is still recorded


def test_follow_up_question_is_resolved_from_session_memory(world: dict[str, Any]) -> None:
    first = ask(world, "Is metformin used for type 2 diabetes?", session_id="s2")
    assert "metformin" in cited_docs(first)
    follow = ask(world, "What are its side effects?", session_id="s2")
    assert follow["rewrite"].changed and "metformin" in follow["question"].lower()
    assert "D008687" in follow["analysis"].entity_ids
    assert cited_docs(follow)[0] == "metformin"
    # a new session has no history: the same follow-up stays as asked
    alone = ask(world, "What are its side effects?", session_id="s3")
    assert not alone["rewrite"].changed and "D008687" not in alone["analysis"].entity_ids


def test_relational_channel_finds_chunks_that_connect_the_entities(world: dict[str, Any]) -> None:
    state = ask(world, "Should metformin be stopped before a contrast agent in renal impairment?")
    rel = state["relational"]
    assert rel and rel[0].chunk is not None and rel[0].chunk.doc_id == "contrast"
    assert set(rel[0].entity_path) >= {"D008687", "D003287"}
    assert "relational" in state["paths_used"] and "contrast" in cited_docs(state)


def test_gap_completion_ingests_a_local_document_and_cites_it(world: dict[str, Any]) -> None:
    idx = world["idx"]
    before = idx.graph.counts()["documents"]
    state = ask(world, "Is Zika virus infection in pregnancy linked to microcephaly?")
    rounds = state["gap_log"]
    assert state["tool_calls"] == 1 and rounds and rounds[0]["ingested"]
    assert idx.graph.counts()["documents"] == before + 1  # the one matching document, not the malaria note
    new_doc = rounds[0]["ingested"][0]
    assert not state["answer"].refused and new_doc in cited_docs(state)
    check_citations(state)
    again = ask(world, "Is Zika virus infection in pregnancy linked to microcephaly?")
    assert again["tool_calls"] == 0 and new_doc in cited_docs(again)  # now in the corpus: no gap


def test_gap_completion_is_bounded(world: dict[str, Any]) -> None:
    deps = world["deps"]
    deps.settings = AgentSettings(max_tool_calls=0)
    agent = Agent(deps)
    state = asyncio.run(agent.run(AgentRequest("Is Zika virus infection in pregnancy linked to microcephaly?")))
    assert state["tool_calls"] == 0 and world["calls"]["fetch"] == 0 and state["answer"].refused


def test_long_term_memory_is_per_user_and_biases_seeds(world: dict[str, Any]) -> None:
    for _ in range(2):
        ask(world, "What are the side effects of metformin?", user_id="alice")
    memory = world["deps"].memory
    assert memory.top_interests("alice")[0][0] == "D008687"
    assert memory.top_interests("bob") == []
    state_a = ask(world, "Does metformin cause lactic acidosis?", user_id="alice")
    assert state_a["memories"] and "metformin" in state_a["memories"][0].text.lower()
    assert any(cid.startswith(MEMORY_PREFIX) for cid in world["seen"][-1])  # in the numbered context
    state_b = ask(world, "Does metformin cause lactic acidosis?", user_id="bob")
    assert state_b["memories"] == []  # bob never sees alice's conversations
    assert not any(cid.startswith(MEMORY_PREFIX) for cid in world["seen"][-1])
    # alice's interest is a PPR seed bias on a question that does not name it
    hygiene = ask(world, "How should hands be cleaned in clinics?", user_id="alice")
    assert ("D008687" in dict(hygiene["analysis"].seed_bias)) and "D008687" not in hygiene["analysis"].entity_ids
    anon = ask(world, "What are the side effects of metformin?")
    assert anon["memories"] == [] and anon["analysis"].seed_bias == ()


def test_memory_passage_is_labelled_with_its_age(world: dict[str, Any]) -> None:
    from medgraph.memory.longterm import Memory

    cand = memory_candidate(Memory("m1", "Q: metformin? A: diarrhea [1].", ("D008687",), 1.0, 0.0, "3 months ago"), 0.3)
    assert cand.chunk_id == MEMORY_PREFIX + "m1" and cand.chunk is not None and cand.relevance == 0.3
    assert cand.chunk.text == "(3 months ago) Q: metformin? A: diarrhea."  # the old answer's markers go
    assert cand.chunk.section_path[-1] == "3 months ago"


def test_events_stream_progress_deltas_and_the_final_state(world: dict[str, Any]) -> None:
    async def collect() -> list[dict[str, Any]]:
        return [e async for e in world["agent"].events(AgentRequest("What are the side effects of metformin?"))]

    events = asyncio.run(collect())
    nodes = [e["node"] for e in events if "node" in e]
    assert nodes[0] == "guard_input" and nodes[-1] == "persist" and "generate" in nodes
    deltas = "".join(e["delta"] for e in events if "delta" in e)
    final = events[-1]["final"]
    assert deltas == final["answer"].content and final["timings"]


@pytest.mark.parametrize(("question", "language", "reply"), [
    ("How much does hand hygiene cost?", "en", "The indexed sources mention Hand Hygiene but say nothing about cost."),
    ("Was kostet die Händehygiene?", "de", "Die indexierten Quellen nennen Händehygiene, sagen aber nichts über Kosten."),
    ("手卫生的费用是多少？", "zh", "已索引的文献提到了手卫生，但没有关于费用的内容。"),
])
def test_an_aspect_the_corpus_lacks_is_said_so_in_every_language(world: dict[str, Any], question: str,
                                                                 language: str, reply: str) -> None:
    """The corpus names hand hygiene, never its cost: every asker gets the same decision, in their
    language, and no sentence that merely names hand hygiene is passed off as the answer."""
    state = ask(world, question)
    answer = state["answer"]
    assert state["analysis"].language == language
    assert answer.refused and answer.model_used == "aspect" and not answer.citations
    assert answer.content == reply
    assert world["calls"]["generate"] == 0  # decided before any tier runs


def test_an_aspect_question_quotes_the_sentence_that_states_the_aspect(world: dict[str, Any]) -> None:
    state = ask(world, "What are the side effects of metformin?")
    answer = state["answer"]
    assert not answer.refused and "diarrhea and nausea" in answer.content
    assert "first-line drug" not in answer.content  # names metformin, says nothing of its side effects
    check_citations(state)
