"""The dialogue stages read each language pack's cues: follow-up rewriting, multi-hop planning, routing.

Every test runs once per built-in pack and once for the French test pack (``tests/lang_fr``,
registered for the test only): the rewriter, the planner and the rule router know no language of
their own, so French works as soon as its pack is registered.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from medgraph import lang
from medgraph.agent.plan import RulePlanner
from medgraph.agent.rewrite import Rewrite, RuleRewriter, Turn
from medgraph.retrieve.types import QueryAnalysis
from medgraph.route.rules import RuleRouter, find_constraints, wants_overview
from medgraph.route.types import CONSTRAINT_KINDS, Intent
from tests.lang_fr import registered

METFORMIN = "D008687"
CODES = ("en", "de", "zh", "fr")

# (earlier question naming metformin, its surface there, a follow-up with a pronoun, the standalone question)
PRONOUN = {
    "en": ("What is metformin used for?", "metformin", "How long does it take to work?",
           "How long does metformin take to work?"),
    "de": ("Wofür wird Metformin verwendet?", "Metformin", "Wie viel davon darf ich täglich nehmen?",
           "Wie viel von Metformin darf ich täglich nehmen?"),
    "zh": ("二甲双胍有什么作用？", "二甲双胍", "它的禁忌症是什么？", "二甲双胍的禁忌症是什么？"),
    "fr": ("À quoi sert la metformine ?", "metformine", "Puis-je le prendre pendant la grossesse ?",
           "Puis-je prendre metformine pendant la grossesse ?"),
}
# (earlier question, surface, an elliptical follow-up that adds a patient constraint, the standalone question)
ELLIPSIS = {
    "en": ("What are the side effects of metformin?", "metformin", "And in children?",
           "What are the side effects of metformin in children?"),
    "de": ("Was sind die Nebenwirkungen von Metformin?", "Metformin", "Und bei Kindern?",
           "Was sind die Nebenwirkungen von Metformin bei Kindern?"),
    "zh": ("二甲双胍的副作用是什么？", "二甲双胍", "那儿童呢？", "对于儿童，二甲双胍的副作用是什么？"),
    "fr": ("Quels sont les effets secondaires de la metformine ?", "metformine", "Et pendant la grossesse ?",
           "Quels sont les effets secondaires de la metformine pendant la grossesse ?"),
}
# a follow-up with a possessive ("its"), rewritten against the PRONOUN history
POSSESSIVE = {
    "en": ("What are its side effects?", "What are the side effects of metformin?"),
    "de": ("Was sind seine Wechselwirkungen?", "Was sind die Wechselwirkungen von Metformin?"),
    "zh": ("它的副作用是什么？", "二甲双胍的副作用是什么？"),
    "fr": ("Quels sont ses effets secondaires ?", "Quels sont les effets secondaires de metformine ?"),
}
# a question that names its own subject: never rewritten
STANDALONE = {
    "en": "What is hypertension?",
    "de": "Was ist Bluthochdruck?",
    "zh": "高血压是什么？",
    "fr": "Qu'est-ce que l'hypertension ?",
}
# (a bridge question: a description, then a question with the pack's back-reference, hop 1, hop 2)
BRIDGE = {
    "en": ("In pooled trials one oral anticoagulant cut stroke risk by 62%. How high was mortality after "
           "brain bleeding in patients taking this drug?",
           "In pooled trials one oral anticoagulant cut stroke risk by 62%.",
           "How high was mortality after brain bleeding in patients taking #1?"),
    "de": ("Ein Antikoagulans senkte das Schlaganfallrisiko um 62 %. Wie hoch war die Sterblichkeit nach "
           "Hirnblutung unter diesem Medikament?",
           "Ein Antikoagulans senkte das Schlaganfallrisiko um 62 %.",
           "Wie hoch war die Sterblichkeit nach Hirnblutung unter #1?"),
    "zh": ("一种口服抗凝药使卒中风险降低了62%。服用该药物的脑出血患者死亡率如何？",
           "一种口服抗凝药使卒中风险降低了62%。", "服用#1药物的脑出血患者死亡率如何？"),
    "fr": ("Dans des essais regroupés, un anticoagulant oral a réduit le risque d'AVC de 62 %. Quelle était la "
           "mortalité après une hémorragie cérébrale chez les patients prenant ce médicament ?",
           "Dans des essais regroupés, un anticoagulant oral a réduit le risque d'AVC de 62 %.",
           "Quelle était la mortalité après une hémorragie cérébrale chez les patients prenant #1 ?"),
}
# a question comparing guidelines: the cross-corpus intent
COMPARISON = {
    "en": "Do the European and American guidelines differ on statins?",
    "de": "Unterscheiden sich die deutschen und amerikanischen Leitlinien bei Statinen?",
    "zh": "中国和美国的指南在他汀治疗上有何不同？",
    "fr": "Les recommandations européennes et américaines diffèrent-elles sur les statines ?",
}
# (a question stating a pregnancy and an age, a word of the same constraint in the pack's language)
CONSTRAINT = {
    "en": ("Is ibuprofen safe for pregnant women over 40 years old?", "pregnancy"),
    "de": ("Darf eine schwangere 40-jährige Frau Ibuprofen nehmen?", "schwanger"),
    "zh": ("40岁孕妇可以吃布洛芬吗？", "孕妇"),
    "fr": ("Une femme enceinte de 40 ans peut-elle prendre de l'ibuprofène ?", "enceinte"),
}


@pytest.fixture(params=CODES)
def code(request: pytest.FixtureRequest) -> Iterator[str]:
    """Each built-in pack's code, and "fr" with the French test pack registered."""
    if request.param == "fr":
        with registered():
            yield request.param
    else:
        yield request.param


def test_the_test_cases_cover_every_built_in_pack() -> None:
    for table in (PRONOUN, ELLIPSIS, POSSESSIVE, STANDALONE, BRIDGE, COMPARISON, CONSTRAINT):
        assert set(lang.codes()) <= set(table)


def test_a_pronoun_takes_the_earlier_entity(code: str) -> None:
    earlier, surface, follow_up, expected = PRONOUN[code]
    history = [Turn("user", earlier, ((METFORMIN, surface),))]
    result = RuleRewriter().rewrite(follow_up, history, code)
    assert result == Rewrite(expected, True, "rules", (METFORMIN,))


def test_a_possessive_names_the_earlier_entity(code: str) -> None:
    earlier, surface, _, _ = PRONOUN[code]
    follow_up, expected = POSSESSIVE[code]
    result = RuleRewriter().rewrite(follow_up, [Turn("user", earlier, ((METFORMIN, surface),))], code)
    assert result.question == expected and result.changed


def test_an_elliptical_follow_up_constrains_the_previous_question(code: str) -> None:
    earlier, surface, follow_up, expected = ELLIPSIS[code]
    history = [Turn("user", earlier, ((METFORMIN, surface),)), Turn("assistant", "…")]
    assert RuleRewriter().rewrite(follow_up, history, code).question == expected


def test_a_standalone_question_is_not_rewritten(code: str) -> None:
    earlier, surface, _, _ = PRONOUN[code]
    question = STANDALONE[code]
    result = RuleRewriter().rewrite(question, [Turn("user", earlier, ((METFORMIN, surface),))], code)
    assert result == Rewrite(question, False, "none")


def test_a_back_reference_splits_a_bridge_question_into_two_hops(code: str) -> None:
    question, hop1, hop2 = BRIDGE[code]
    plan = RulePlanner().plan(question, code)
    assert plan.kind == "bridge" and [h.text for h in plan.hops] == [hop1, hop2]
    assert plan.hops[1].refs == (1,)


def test_a_guideline_comparison_routes_to_the_cross_corpus_intent(code: str) -> None:
    analysis = QueryAnalysis(COMPARISON[code], code)
    decision = RuleRouter().route(analysis)
    assert decision.intent == Intent.CROSS_CORPUS and decision.intent_score == 3
    assert wants_overview(analysis)


def test_patient_constraints_are_found_in_the_language_of_the_question(code: str) -> None:
    question, _ = CONSTRAINT[code]
    assert {"pregnancy", "age"} <= set(find_constraints(question, code))


def test_a_language_cue_applies_only_to_its_own_language_unless_its_script_is_its_own(code: str) -> None:
    _, word = CONSTRAINT[code]
    pack = lang.get(code)
    for other in lang.codes():
        found = "pregnancy" in find_constraints(f"{word}?", other)
        assert found == (other == code or pack.route.script_specific), (code, other)


def test_every_built_in_pack_has_cues_for_every_constraint_and_intent() -> None:
    for pack in lang.packs():
        assert set(pack.route.constraints) == set(CONSTRAINT_KINDS), pack.code
        assert set(pack.route.intents) == {i.value for i in Intent}, pack.code
        assert pack.rewrite.kind_phrases and pack.rewrite.pronouns and pack.plan.reference is not None


def test_an_unknown_language_uses_the_pack_of_the_question_script() -> None:
    earlier, surface, follow_up, expected = PRONOUN["zh"]
    history = [Turn("user", earlier, ((METFORMIN, surface),))]
    assert RuleRewriter().rewrite(follow_up, history, "xx").question == expected
    earlier, surface, follow_up, expected = PRONOUN[lang.PIVOT]
    history = [Turn("user", earlier, ((METFORMIN, surface),))]
    assert RuleRewriter().rewrite(follow_up, history, "xx").question == expected


def test_a_pack_without_dialogue_cues_rewrites_and_splits_nothing() -> None:
    from dataclasses import replace

    from medgraph.lang.sections.dialogue import PlanCues, RewriteCues, RouteCues
    from tests.lang_fr import french_pack

    bare = replace(french_pack(), rewrite=RewriteCues(), plan=PlanCues(), route=RouteCues())
    with registered(bare):
        earlier, surface, follow_up, _ = PRONOUN["fr"]
        history = [Turn("user", earlier, ((METFORMIN, surface),))]
        assert not RuleRewriter().rewrite(follow_up, history, "fr").changed
        assert not RuleRewriter().rewrite(ELLIPSIS["fr"][2], history, "fr").changed
        assert RulePlanner().plan(BRIDGE["fr"][0], "fr").kind == "single"
        assert RuleRouter().route(QueryAnalysis(COMPARISON["fr"], "fr")).intent == Intent.PATIENT_FAQ
        # the script-specific (Chinese) cues still apply to a question in any language
        assert "pregnancy" in find_constraints("孕妇?", "fr")


def test_the_model_prompts_name_the_registered_languages() -> None:
    from medgraph.route.dspy_router import classify_signature
    from medgraph.route.llm import system_prompt

    assert system_prompt().endswith("The question may be English, German or Chinese.")
    with registered():
        assert system_prompt().endswith("The question may be English, German, Chinese or French.")
        assert "(English, German, Chinese or French)" in classify_signature().instructions
