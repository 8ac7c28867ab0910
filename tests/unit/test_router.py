"""The offline router's rules and the LLM router's parsing / fallback.

Analyses are built by hand here (the linked mentions a question would get), so each rule is
tested alone; the labelled EN/DE/ZH set is evaluated with the real NER + linking in
tests/integration/test_tiers.py (and by benchmarks/router.py).
"""

from __future__ import annotations

import json

import pytest

from medgraph.retrieve.types import QueryAnalysis
from medgraph.route import Intent, RuleRouter, entity_score, tier_for
from medgraph.route.evaluate import evaluate, load_labelled
from medgraph.route.llm import LLMRouter, parse_reply
from medgraph.route.rules import find_constraints
from medgraph.schemas import Mention


def _analysis(text: str, lang: str, *entities: tuple[str, str, str]) -> QueryAnalysis:
    mentions = []
    for surface, mesh_id, category in entities:
        start = text.index(surface)
        mentions.append(Mention(start, start + len(surface), surface, mesh_id, category, "exact", 1.0))
    return QueryAnalysis(text, lang, tuple(mentions))


METFORMIN = ("metformin", "D008687", "Drug")


def test_the_issue_examples():
    router = RuleRouter()
    small = router.route(_analysis("What are the side effects of metformin?", "en", METFORMIN))
    assert (small.entity_score, small.intent_score, small.tier) == (1, 1, "small")
    assert small.intent is Intent.PATIENT_FAQ and "side effects" in small.cues
    text = "71-year-old woman with renal impairment — precautions for metformin plus contrast agent?"
    large = router.route(_analysis(text, "en", METFORMIN, ("contrast agent", "D003287", "Drug")))
    assert (large.entity_score, large.intent_score, large.tier) == (3, 2, "large")
    assert set(large.constraints) == {"age", "sex", "renal"}
    assert large.to_dict()["total"] == 5 and json.dumps(large.to_dict())


def test_scores_and_thresholds():
    assert [entity_score(n, 0) for n in (0, 1, 2, 3, 4, 9)] == [1, 1, 2, 2, 3, 3]
    assert [tier_for(t) for t in (2, 3, 4, 5, 6)] == ["small", "small", "medium", "large", "large"]
    assert tier_for(4, small_max=4, medium_max=5) == "small"


@pytest.mark.parametrize("text,lang,kinds", [
    ("A 68-year-old man with liver cirrhosis", "en", {"age", "sex", "hepatic"}),
    ("Darf man in der Schwangerschaft Ibuprofen nehmen?", "de", {"pregnancy"}),  # "man" is not a man
    ("Eine 75-jährige Patientin mit Niereninsuffizienz", "de", {"age", "sex", "renal"}),
    ("一名72岁女性肾功能不全患者", "zh", {"age", "sex", "renal"}),
    ("孕妇哺乳期可以用吗", "zh", {"pregnancy"}),
    ("What is hypertension?", "en", set()),
])
def test_constraints_in_three_languages(text, lang, kinds):
    assert set(find_constraints(text, lang)) == kinds


def test_entity_inside_a_constraint_counts_once():
    text = "Should patients with renal insufficiency take metformin?"
    a = _analysis(text, "en", ("renal insufficiency", "D051437", "Disease"), METFORMIN)
    d = RuleRouter().route(a)
    assert d.entities == ("D008687",) and d.constraints == ("renal",) and d.entity_score == 2


def test_unlinked_inn_drug_names_and_binary_relations_count_as_entities():
    d = RuleRouter().route(_analysis("Can omeprazole reduce the effect of clopidogrel?", "en",
                                     ("omeprazole", "D009853", "Drug")))
    assert "inn:clopidogrel" in d.entities and d.intent is Intent.DRUG_INTERACTION and d.tier == "medium"
    rel = RuleRouter().route(_analysis("Welche Evidenz gibt es für einen Zusammenhang zwischen Rauchen und "
                                       "Lungenkrebs?", "de", ("Lungenkrebs", "D008175", "Disease")))
    assert rel.entity_score == 2 and rel.intent is Intent.LITERATURE_MULTIHOP and rel.tier == "large"
    assert rel.notes


def test_framing_and_other_category_entities_are_not_counted():
    a = _analysis("二甲双胍的副作用是什么？", "zh", ("二甲双胍", "D008687", "Drug"), ("副作用", "D064420", "Disease"))
    d = RuleRouter().route(a)
    assert d.entities == ("D008687",) and d.tier == "small"


@pytest.mark.parametrize("text,lang,intent", [
    ("Does warfarin interact with aspirin?", "en", Intent.DRUG_INTERACTION),
    ("How do the WHO and CDC guidelines on hand hygiene differ?", "en", Intent.CROSS_CORPUS),
    ("Welche Studien beschreiben den Mechanismus?", "de", Intent.LITERATURE_MULTIHOP),
    ("Wie wird Asthma bei Kindern behandelt?", "de", Intent.CLINICAL_DECISION),
    ("中国和美国的高血压指南有什么不同？", "zh", Intent.CROSS_CORPUS),
    ("流感一般持续多久？", "zh", Intent.PATIENT_FAQ),
    ("Tell me about it", "en", Intent.PATIENT_FAQ),  # no cue: the shallowest intent
])
def test_intent_cues(text, lang, intent):
    assert RuleRouter().route(QueryAnalysis(text, lang)).intent is intent


def test_labelled_sets_are_well_formed(repo_root):
    rows = []
    for name in ("labelled_questions.jsonl", "heldout_questions.jsonl"):
        rows += load_labelled(repo_root / "tests" / "fixtures" / "router" / name)
    assert len(rows) >= 90 and {r["lang"] for r in rows} == {"en", "de", "zh"}
    assert all(sum(r["lang"] == lang for r in rows) >= 30 for lang in ("en", "de", "zh"))
    depth = {"PATIENT_FAQ": 1, "CLINICAL_DECISION": 2, "DRUG_INTERACTION": 2, "LITERATURE_MULTIHOP": 3,
             "CROSS_CORPUS": 3}
    for r in rows:  # the gold tier follows from the gold E and I
        assert r["i"] == depth[r["intent"]] and r["tier"] == tier_for(r["e"] + r["i"])
    assert {r["tier"] for r in rows} == {"small", "medium", "large"}


def test_evaluate_reports_accuracy_confusion_and_latency():
    rows = [{"id": "a", "question": "What is hypertension?", "lang": "en", "tier": "small", "intent": "PATIENT_FAQ"},
            {"id": "b", "question": "Does warfarin interact with aspirin?", "lang": "en", "tier": "large",
             "intent": "DRUG_INTERACTION"}]
    res = evaluate(RuleRouter(), lambda q, lang: QueryAnalysis(q, lang), rows, repeats=2)
    assert res["tier_accuracy"] == 0.5 and res["intent_accuracy"] == 1.0
    assert res["confusion"] == {"large->small": 1, "small->small": 1} and res["misrouted"][0]["id"] == "b"
    assert res["latency_ms"]["p50"] > 0


def test_llm_router_parses_scores_and_falls_back():
    a = _analysis("What are the side effects of metformin?", "en", METFORMIN)
    reply = ('Sure: {"intent": "drug_interaction", "entities": ["metformin", "contrast agent", "Metformin"], '
             '"constraints": ["renal", "age", "mood"]}')
    router = LLMRouter(lambda messages, params: reply)
    d = router.route(a)
    assert d.method == "llm" and d.intent is Intent.DRUG_INTERACTION
    assert d.entities == ("metformin", "contrast agent") and d.constraints == ("renal", "age")
    assert (d.entity_score, d.tier) == (3, "large")
    assert parse_reply('{"intent": "PATIENT_FAQ"}') == (Intent.PATIENT_FAQ, [], [])
    for bad in ("no json here", '{"intent": "GOSSIP"}', "{not json}"):
        fb = LLMRouter(lambda m, p, bad=bad: bad).route(a)
        assert fb.method == "llm-fallback" and fb.tier == "small" and fb.notes[0].startswith("llm:")

    def broken(messages, params):
        raise ConnectionError("endpoint down")

    down = LLMRouter(broken).route(a)
    assert down.method == "llm-fallback" and "endpoint down" in down.notes[0]
    messages = LLMRouter.messages(a)
    assert messages[0]["role"] == "system" and "CROSS_CORPUS" in messages[0]["content"]
