"""Multi-hop questions: the rule planner's sub-queries, and the agent's hops over a real tiny corpus.

The corpus joins two passages through one unnamed drug: a trial says which anticoagulant cut
stroke risk in atrial fibrillation (warfarin); a registry reports mortality after brain bleeding in
patients taking it; a second registry says the same of aspirin (the distractor). A rarer drug
named beside warfarin in the trial passage (digoxin) makes the first sub-answer wrong in one test,
so that verification has to catch it and run the hop again with the next one.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from medgraph.agent.graph import Agent, AgentDeps, AgentRequest, AgentSettings
from medgraph.agent.hops import Hop, merge, verify
from medgraph.agent.plan import RulePlanner, SubQuery
from medgraph.retrieve.types import Candidate
from tests.helpers import index_tiny_corpus

# --- the planner ---------------------------------------------------------------------------------

PLANNER = RulePlanner()


@pytest.mark.parametrize(("question", "language", "hop1", "hop2"), [
    ("In pooled trials one oral anticoagulant cut stroke risk by 62%. How high was mortality after "
     "brain bleeding in patients taking this drug?", "en",
     "In pooled trials one oral anticoagulant cut stroke risk by 62%.",
     "How high was mortality after brain bleeding in patients taking #1?"),
    ("A review named one vitamin that the gut microbe needs to grow. Which enzyme depends on that vitamin?", "en",
     "A review named one vitamin that the gut microbe needs to grow.", "Which enzyme depends on #1?"),
    ("Ein Antikoagulans senkte das Schlaganfallrisiko um 62 %. Wie hoch war die Sterblichkeit nach "
     "Hirnblutung unter diesem Medikament?", "de",
     "Ein Antikoagulans senkte das Schlaganfallrisiko um 62 %.",
     "Wie hoch war die Sterblichkeit nach Hirnblutung unter #1?"),
    ("一种口服抗凝药使卒中风险降低了62%。服用该药物的脑出血患者死亡率如何？", "zh",
     "一种口服抗凝药使卒中风险降低了62%。", "服用#1药物的脑出血患者死亡率如何？"),
    ("In the country where adult ART was widened at low cost, which causes dominated maternal deaths "
     "in the district audited there?", "en",
     "In the country where adult ART was widened at low cost",
     "which causes dominated maternal deaths in the district audited in #1?"),
])
def test_a_bridge_question_is_planned_as_two_hops_with_a_back_reference(question: str, language: str,
                                                                         hop1: str, hop2: str) -> None:
    plan = PLANNER.plan(question, language)
    assert plan.kind == "bridge" and [h.text for h in plan.hops] == [hop1, hop2]
    assert plan.hops[0].refs == () and plan.hops[1].refs == (1,)


@pytest.mark.parametrize(("question", "language"), [
    ("What are the side effects of metformin?", "en"),
    ("Is this rash dangerous?", "en"),  # a reference with nothing before it to resolve it
    ("Welche Nebenwirkungen hat Metformin?", "de"),
    ("糖尿病患者应该如何治疗，因此需要注意什么？", "zh"),  # 应该 / 因此 are no references
    ("Hand hygiene prevents infections. How is it done?", "en"),  # 'it': too loose to plan on
])
def test_a_single_hop_question_stays_one_hop(question: str, language: str) -> None:
    plan = PLANNER.plan(question, language)
    assert plan.kind == "single" and not plan.multi_hop and plan.hops[0].text == question


@pytest.mark.parametrize(("question", "language", "kind"), [
    ("One oral anticoagulant cut stroke risk by 62%. How high was mortality after brain bleeding in "
     "patients taking this drug?", "en", "Drug"),
    ("Ein Antikoagulans senkte das Schlaganfallrisiko um 62 %. Wie hoch war die Sterblichkeit nach "
     "Hirnblutung unter diesem Medikament?", "de", "Drug"),
    ("一种口服抗凝药使卒中风险降低了62%。服用该药物的脑出血患者死亡率如何？", "zh", "Drug"),
    ("A cohort found one infection spreading in day care centres. How is this disease treated in adults?", "en",
     "Disease"),
    ("A review named one vitamin that the gut microbe needs to grow. Which enzyme depends on that vitamin?", "en",
     None),  # a vitamin: no kind phrase of the pack names it
])
def test_the_reference_says_what_kind_of_entity_the_sub_answer_is(question: str, language: str,
                                                                  kind: str | None) -> None:
    plan = PLANNER.plan(question, language)
    assert plan.kind == "bridge" and plan.answer_kind(1) == kind and plan.answer_kind(2) is None
    assert ("answer_kinds" in plan.to_dict()) == (kind is not None)


def test_a_bridge_of_the_kind_the_question_names_comes_first() -> None:
    from medgraph.config import load_config
    from medgraph.retrieve.retriever import Retriever
    from medgraph.schemas import Entity
    from tests.helpers import REPO

    class Graph:  # a disease named by both passages, a drug by the second only
        def chunk_entities(self, chunk_ids: list[str]) -> dict[str, set[str]]:
            return {"c1": {"D1"}, "c2": {"D1", "D2"}}

        def get_entity(self, mesh_id: str) -> Entity:
            return Entity(mesh_id, mesh_id, {"D1": "Disease", "D2": "Drug"}[mesh_id])

    cfg = load_config(REPO / "configs" / "local.yaml", []).retrieval.model_copy(
        update={"ppr_engine": "store", "paths": ("dense",)})
    retriever = Retriever(cfg, Graph(), None, None)  # type: ignore[arg-type]
    ids = ["c1", "c2"]
    assert [m for m, _ in retriever.bridge_entities(ids, set())] == ["D1", "D2"]  # by rank alone
    assert [m for m, _ in retriever.bridge_entities(ids, set(), "Drug")] == ["D2", "D1"]
    assert [m for m, _ in retriever.bridge_entities(ids, set(), "Anatomy")] == ["D1", "D2"]  # none of it: as ranked
    assert [m for m, _ in retriever.bridge_entities(ids, {"D1"}, "Disease")] == ["D2"]


def test_a_comparison_is_planned_as_one_hop_per_side() -> None:
    plan = PLANNER.plan("Two cohorts measured blood pressure at home. What did the first find in the elderly, "
                        "and what did the second find in children?", "en")
    assert plan.kind == "comparison" and len(plan.hops) == 2
    assert all(h.refs == () and h.text.startswith("Two cohorts measured blood pressure at home.") for h in plan.hops)
    assert "elderly" in plan.hops[0].text and "children" in plan.hops[1].text


@pytest.mark.parametrize(("question", "language", "sides"), [
    ("Which vitamin both corrected a sideroblastic anaemia in a girl and stopped seizures in an infant?", "en",
     ("Which vitamin corrected a sideroblastic anaemia in a girl", "Which vitamin stopped seizures in an infant?")),
    ("Welche Hirnregion ist sowohl ein Knoten des Furchtgedächtnisses als auch ein Ort veränderter NPY-Färbung?",
     "de", ("Welche Hirnregion ist ein Knoten des Furchtgedächtnisses", "Welche Hirnregion ist ein Ort veränderter NPY-Färbung?")),
    ("哪种维生素既能部分纠正女童的铁粒幼细胞性贫血，又能终止婴儿的惊厥？", "zh",
     ("哪种维生素能部分纠正女童的铁粒幼细胞性贫血", "哪种维生素能终止婴儿的惊厥？")),
])
def test_one_thing_meeting_two_descriptions_is_planned_as_one_hop_per_description(
        question: str, language: str, sides: tuple[str, str]) -> None:
    plan = PLANNER.plan(question, language)
    assert plan.kind == "comparison" and tuple(h.text for h in plan.hops) == sides


@pytest.mark.parametrize(("question", "language", "hops"), [
    # 应该 / 因此 are no references: two questions, neither refers to the other
    ("糖尿病患者应该如何治疗？因此需要注意什么？", "zh", ("糖尿病患者应该如何治疗？", "因此需要注意什么？")),
    ("Two cohorts followed coeliac patients. What happened to body weight? How healthy were their bones?", "en",
     ("Two cohorts followed coeliac patients. What happened to body weight?",
      "Two cohorts followed coeliac patients. How healthy were their bones?")),
])
def test_several_questions_in_one_text_are_one_hop_each(question: str, language: str, hops: tuple[str, ...]) -> None:
    plan = PLANNER.plan(question, language)
    assert plan.kind == "comparison" and tuple(h.text for h in plan.hops) == hops
    assert all(h.refs == () for h in plan.hops)


def test_a_short_second_question_or_a_lone_both_keeps_one_hop() -> None:
    assert PLANNER.plan("Is it safe? Why?", "en").kind == "single"  # a question under 8 characters
    assert PLANNER.plan("Do both drugs lower blood pressure?", "en").kind == "single"  # no "and": one description


def test_a_back_reference_is_resolved_from_the_earlier_hops_answer() -> None:
    sub = SubQuery("Which enzyme depends on #1 in #2?")
    assert sub.refs == (1, 2) and sub.resolve({1: "thiamine"}) == "Which enzyme depends on thiamine in #2?"


def test_merge_and_verify_need_a_grounded_usable_passage_per_hop() -> None:
    whole = [Candidate("a", relevance=0.9), Candidate("x", relevance=0.8)]
    first = Hop(1, "p", candidates=[Candidate("a", relevance=0.9)], grounded=["a"])
    second = Hop(2, "q #1", candidates=[Candidate("b", relevance=0.7), Candidate("c", relevance=0.1)],
                 grounded=["c"])
    merged = merge(whole, [first, second], k=10)
    assert [c.chunk_id for c in merged][:2] == ["a", "b"]  # in two lists beats one; a hop's best gets in
    assert verify([first, second], merged, top_k=4, min_relevance=0.3) == [second]  # c is below the floor
    assert first.supported is True and second.supported is False
    second.grounded = ["b"]
    assert verify([first, second], merged, top_k=4, min_relevance=0.3) == []


# --- the agent's hops --------------------------------------------------------------------------------

CORPUS = [
    {"doc_id": "trial", "title": "Anticoagulation trials", "language": "en",
     "text": "In pooled atrial fibrillation trials, adjusted-dose warfarin cut stroke risk by 62 percent compared "
             "with placebo; some patients also took digoxin."},
    {"doc_id": "registry", "title": "Bleeding registry", "language": "en",
     "text": "Among patients admitted with intracerebral hemorrhage while taking warfarin, in-hospital mortality "
             "was 32 percent."},
    {"doc_id": "aspirin", "title": "Aspirin registry", "language": "en",
     "text": "Among patients admitted with intracerebral hemorrhage while taking aspirin, in-hospital mortality "
             "was 20 percent."},
    {"doc_id": "digoxin", "title": "Digoxin levels", "language": "en",
     "text": "Digoxin serum levels were measured in elderly outpatients with heart failure."},
    {"doc_id": "hands", "title": "Hand hygiene", "language": "en",
     "text": "Hand hygiene with alcohol-based rubs prevents infections in outpatient clinics."},
]
TERMS = [
    ("D014859", "en", "Warfarin"), ("D014859", "de", "Warfarin"), ("D014859", "zh", "华法林"),
    ("D004077", "en", "Digoxin"),
    ("D001241", "en", "Aspirin"),
    ("D001281", "en", "Atrial Fibrillation"), ("D001281", "de", "Vorhofflimmern"), ("D001281", "zh", "心房颤动"),
    ("D020521", "en", "Stroke"), ("D020521", "de", "Schlaganfall"), ("D020521", "zh", "卒中"),
    ("D002543", "en", "Cerebral Hemorrhage"), ("D002543", "en", "intracerebral hemorrhage"),
    ("D002543", "de", "Hirnblutung"), ("D002543", "zh", "脑出血"),
    ("D009026", "en", "Mortality"), ("D009026", "de", "Sterblichkeit"), ("D009026", "zh", "死亡率"),
    ("D006333", "en", "Heart Failure"),
    ("D063373", "en", "Hand Hygiene"),
]
QUESTION = ("In pooled atrial fibrillation trials, one anticoagulant cut stroke risk by 62 percent. Among patients "
            "admitted with intracerebral hemorrhage while taking this drug, how high was in-hospital mortality?")


@pytest.fixture(scope="module")
def hop_world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    world = make_world(tmp_path_factory.mktemp("hops"))
    yield world
    world["idx"].close()


def make_world(tmp: Path, literature: Path | None = None, extra: list[dict[str, str]] | None = None) -> dict[str, Any]:
    """The corpus (and ``extra`` documents) indexed in ``tmp`` and an agent factory over it; with
    ``literature``, gap completion (no gaps of its own: only the hops' gaps) fetches from that
    folder and ingests."""
    from medgraph.agent.guard import RuleGuard
    from medgraph.agent.hops import entity_name
    from medgraph.agent.rewrite import RuleRewriter
    from medgraph.generate.engines import make_engine
    from medgraph.retrieve.query import QueryAnalyzer
    from medgraph.retrieve.rerank import make_reranker
    from medgraph.retrieve.retriever import Retriever
    from medgraph.route import RuleRouter

    terms = tmp / "terms.tsv"
    terms.write_text("mesh_id\tlang\tterm\tsource\n" + "".join(
        f"{m}\t{lang}\t{t}\t{'x_name' if lang == 'en' else 'x'}\n" for m, lang, t in TERMS), encoding="utf-8")
    idx, cfg = index_tiny_corpus(tmp, [*CORPUS, *(extra or [])], [{"kind": "multilingual_terms", "path": str(terms)}],
                                 ["retrieval.paths=[dense,sparse,ppr]"])
    retriever = Retriever(cfg.retrieval, idx.graph, idx.vectors, idx.embedder)
    analyzer = QueryAnalyzer(idx.extractor, 0, cfg.retrieval.languages)
    reranker, router = make_reranker(cfg.rerank), RuleRouter()
    engine = make_engine(cfg.tiers.engines["extractive"], cfg.answer)
    counts: dict[str, Any] = {"retrieve": 0, "generated": []}

    def sync(fn: Any) -> Any:
        async def call(*args: Any) -> Any:
            return fn(*args)
        return call

    def retrieve(analysis: Any) -> Any:
        counts["retrieve"] += 1
        return retriever.retrieve(analysis)

    async def generate(tier: str, question: str, analysis: Any, evidence: list[Any]) -> AsyncIterator[dict[str, Any]]:
        counts["generated"].append(question)
        for event in engine.stream(question, analysis, evidence):
            yield {"delta": event} if isinstance(event, str) else {"answer": event}

    gap_deps: dict[str, Any] = {}
    if literature is not None:
        from medgraph.literature.gaps import search_terms
        from medgraph.literature.ingest import LiveIngestor
        from medgraph.literature.local import LocalDirectorySource

        source, ingestor = LocalDirectorySource(str(literature)), LiveIngestor(cfg, idx.graph, idx.vectors,
                                                                            idx.extractor, idx.embedder)

        def ingest(records: list[Any]) -> Any:
            report = ingestor.ingest(records)
            retriever.refresh()
            return report

        gap_deps = {"find_gaps": sync(lambda a, r: []), "ingest": sync(ingest),
                    "fetch": sync(lambda gap: source.search(search_terms(gap, idx.extractor.vocab.get), 3, 5.0))}

    def agent(**settings: Any) -> Agent:
        return Agent(AgentDeps(
            guard=RuleGuard(), rewriter=RuleRewriter(), analyze=sync(analyzer.analyze),
            route=sync(lambda a, t: router.route(a)), retrieve=sync(retrieve), rerank=sync(reranker.rerank),
            relational=sync(lambda a: []), generate=generate, planner=RulePlanner(),
            bridges=sync(retriever.bridge_entities), mentions=sync(idx.graph.chunk_entities),
            entity_name=sync(lambda m, lang: entity_name(idx.graph.get_entity(m), lang)), **gap_deps,
            settings=AgentSettings(top_k=cfg.retrieval.top_k, rrf_k=cfg.retrieval.rrf_k, **settings)))

    return {"agent": agent, "counts": counts, "doc_of": lambda cid: idx.chunk_doc.get(cid, cid), "idx": idx}


def run(world: dict[str, Any], question: str, **settings: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    async def go() -> tuple[dict[str, Any], list[dict[str, Any]]]:
        events, final = [], None
        async for event in world["agent"](**settings).events(AgentRequest(question, language="en")):
            if "hop" in event:
                events.append(event["hop"])
            final = event.get("final", final)
        assert final is not None
        return final, events

    return asyncio.run(go())


def test_a_comparison_with_a_side_left_unanswered_is_answered_in_one_pass(hop_world: dict[str, Any]) -> None:
    answered = "Which rubs prevent infections in outpatient clinics?"
    unanswered = "How often should a pacemaker battery be replaced?"
    hop_world["counts"]["generated"].clear()
    state, _ = run(hop_world, f"{unanswered} {answered}")
    assert state["plan"].kind == "comparison" and [h.text for h in state["hops"]] == [unanswered, answered]
    # the first side has no passage to answer it from, so the whole question is answered at once
    # rather than passing the other side's answer off as the answer to both
    assert hop_world["counts"]["generated"] == [unanswered, f"{unanswered} {answered}"]


def test_the_sub_answer_connected_to_the_asking_hops_entities_comes_first(hop_world: dict[str, Any]) -> None:
    state, _ = run(hop_world, QUESTION, hop_passages=1)
    first, second = state["hops"]
    # digoxin is the rarer entity of the trial passage, but no other passage names it beside hop 2's
    # intracerebral hemorrhage or mortality; warfarin shares the registry passage with both
    assert first.toward and {"D002543", "D009026"} <= set(first.toward)
    assert first.answer == "Warfarin" and first.alternatives[0] == "D004077" and state["rehops"] == 0
    assert second.supported and [hop_world["doc_of"](c.chunk_id) for c in second.candidates][0] == "registry"


def test_the_bridge_entity_of_the_first_hop_leads_the_second(hop_world: dict[str, Any]) -> None:
    state, streamed = run(hop_world, QUESTION, hop_passages=1, bridge_connect=False, hop_retries=1)
    assert state["plan"].kind == "bridge"
    first, second = state["hops"]
    # by rank and rarity alone, digoxin (one chunk) outranks warfarin (two): verification finds no
    # passage of hop 2 that names it, and the hop runs again with warfarin
    assert first.answer == "Warfarin" and state["rehops"] == 1
    assert "Warfarin" in second.text and "#1" not in second.text
    assert [hop_world["doc_of"](c.chunk_id) for c in second.candidates][0] == "registry"
    assert first.supported and second.supported
    # each hop's analysis as retrieved carries its query vector to the hop's answer
    assert all(len(h.analysis.query_dense) == hop_world["idx"].embedder.dim > 0 for h in state["hops"])
    assert [h["hop"] for h in streamed] == [1, 2, 2]  # both hops, then hop 2 once more
    assert streamed[1]["answer"] is None and "Digoxin" in streamed[1]["resolved"]
    cited = {c.doc_id for c in state["answer"].citations}
    assert {"trial", "registry"} <= cited and "aspirin" not in cited
    assert "hops" in state["paths_used"]


def test_without_a_retry_the_wrong_bridge_is_reported_unsupported(hop_world: dict[str, Any]) -> None:
    state, _ = run(hop_world, QUESTION, hop_passages=1, bridge_connect=False)
    first, second = state["hops"]
    assert first.answer == "Digoxin" and second.supported is False and state["rehops"] == 0


def test_a_hop_still_unsupported_sends_gap_completion_to_its_sub_answer(tmp_path: Path) -> None:
    literature = tmp_path / "literature"
    literature.mkdir()
    (literature / "digoxin_bleeding.txt").write_text(
        "Digoxin and intracerebral hemorrhage\n\nAmong patients admitted with intracerebral hemorrhage while "
        "taking digoxin, in-hospital mortality was 25 percent.\n", encoding="utf-8")
    (tmp_path / "index").mkdir()
    world = make_world(tmp_path / "index", literature)
    try:
        state, _ = run(world, QUESTION, hop_passages=1, bridge_connect=False)
    finally:
        world["idx"].close()
    first, second = state["hops"]
    # the wrong sub-answer (digoxin) has no passage of hop 2 and no retry is left: its gap fetches
    # literature on it, the record is ingested and every channel and hop runs again; digoxin is now
    # the commoner entity of the trial passage, warfarin the sub-answer, and hop 2 is supported
    rounds = state["gap_log"]
    assert [r["gap"]["mesh_ids"] for r in rounds] == [["D004077"]] and rounds[0]["ingested"], rounds
    assert state["tool_calls"] == 1 and first.answer == "Warfarin" and second.supported


def test_an_aspect_asked_of_the_sub_answer_is_looked_for_in_the_last_hops_passages(tmp_path: Path) -> None:
    """"What adverse effects ... this drug?": the whole question never names the drug, so no merged
    passage states adverse effects of its subject; the last hop, about the sub-answer, has one."""
    effects = {"doc_id": "effects", "title": "Warfarin safety", "language": "en",
               "text": "Major bleeding was the most frequent adverse effect of warfarin in elderly patients."}
    world = make_world(tmp_path, extra=[effects])
    question = ("In pooled atrial fibrillation trials, one anticoagulant cut stroke risk by 62 percent. "
                "Which adverse effects of this drug were most frequent in elderly patients?")
    try:
        # the sub-answer as the tests above choose it without the graph's connections (digoxin, like
        # warfarin, shares a passage with hop 2's elderly patients): rank and rarity, one retry
        state, _ = run(world, question, hop_passages=1, bridge_connect=False, hop_retries=1)
    finally:
        world["idx"].close()
    assert state["hops"][0].answer == "Warfarin"
    answer = state["answer"]
    assert not answer.refused and "effects" in {c.doc_id for c in answer.citations}, answer.content


def test_a_single_hop_question_retrieves_once(hop_world: dict[str, Any]) -> None:
    before = hop_world["counts"]["retrieve"]
    state, streamed = run(hop_world, "How high was in-hospital mortality with intracerebral hemorrhage on aspirin?")
    assert state["plan"].kind == "single" and state["hops"] == [] and streamed == []
    assert hop_world["counts"]["retrieve"] - before == 1


def test_decompose_off_runs_a_bridge_question_in_one_pass(hop_world: dict[str, Any]) -> None:
    before = hop_world["counts"]["retrieve"]
    state, _ = run(hop_world, QUESTION, decompose=False)
    assert state.get("plan") is None and state["hops"] == [] and hop_world["counts"]["retrieve"] - before == 1


# --- the model tier of the planner -----------------------------------------------------------------


def test_the_dspy_planner_uses_a_well_formed_plan_and_falls_back_on_anything_else() -> None:
    from medgraph.agent.plan import DSPyPlanner
    from tests.helpers import require_module

    dspy = require_module("dspy", "MEDGRAPH_REQUIRE_LLM")
    question = "Which drug cut stroke risk most, and what bleeding did patients on it have?"
    good = dspy.utils.DummyLM([{"kind": "bridge", "sub_queries": '["Which drug cut stroke risk most?", '
                                                                 '"What bleeding did patients on #1 have?"]'}])
    plan = DSPyPlanner(good).plan(question, "en")
    assert plan.kind == "bridge" and [h.refs for h in plan.hops] == [(), (1,)]
    assert "Which drug cut stroke risk most, and" in good.history[-1]["messages"][-1]["content"]
    for bad in ({"kind": "bridge", "sub_queries": '["What bleeding did patients on #2 have?", "x"]'},  # forward ref
                {"kind": "chain", "sub_queries": '["a", "b"]'},  # unknown kind
                {"kind": "single", "sub_queries": '["a", "b"]'},  # single with two
                {"answer": "no such field"}):
        assert DSPyPlanner(dspy.utils.DummyLM([bad])).plan(question, "en") == RulePlanner().plan(question, "en")


def test_the_config_refuses_a_dspy_planner_without_its_engine() -> None:
    from medgraph.config import load_config
    from tests.helpers import REPO

    with pytest.raises(ValueError, match="planner_engine"):
        load_config(REPO / "configs" / "local.yaml", ["agent.decompose=dspy"])


def test_an_abbreviation_does_not_end_the_first_hop() -> None:
    assert PLANNER.plan("Cold knife conization vs. LEEP. Are they the same procedure?", "en").kind == "single"


def test_off_written_unquoted_in_yaml_turns_decomposition_off() -> None:
    from medgraph.config import load_config
    from tests.helpers import REPO

    cfg = load_config(REPO / "configs" / "local.yaml", ["agent.decompose=off", "answer.sentence_dense=off"])
    assert cfg.agent.decompose == "off" and cfg.answer.sentence_dense == "off"


def test_hop_answers_are_joined_with_citations_numbered_anew() -> None:
    from medgraph.agent.hops import combine_answers
    from medgraph.generate.base import Answer, Citation

    def cite(n: int, chunk: str) -> Citation:
        return Citation(n, chunk, chunk.split("#")[0], "T", "S", [], None, "s")

    first = Answer("Belege aus englischsprachigen Quellen: A. [1]", [cite(1, "trial#0")], language="de",
                   model_used="extractive", disclaimer="d", sentences=[("A.", 1)],
                   lead="Belege aus englischsprachigen Quellen:")
    second = Answer("Belege aus englischsprachigen Quellen: B. [1] A. [2]", [cite(1, "registry#0"), cite(2, "trial#0")],
                    language="de", sentences=[("B.", 1), ("A.", 2)], lead="Belege aus englischsprachigen Quellen:")
    both = combine_answers([first, second])
    assert both.content == "Belege aus englischsprachigen Quellen: A. [1] B. [2] A. [1]"
    assert [(c.number, c.chunk_id) for c in both.citations] == [(1, "trial#0"), (2, "registry#0")]
    assert both.sentences == [("A.", 1), ("B.", 2), ("A.", 1)] and not both.refused and both.disclaimer == "d"
