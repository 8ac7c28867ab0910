"""Sentence selection of the extractive composer: the kind of answer asked for, findings over aims,
the asker's language, the lead line, the dense sentence feature (real e5), the cross-lingual
reranker weights."""

from __future__ import annotations

import pytest

from medgraph.config.models import AnswerConfig
from medgraph.generate.engines import ExtractiveEngine, answer_deltas
from medgraph.generate.extractive import ExtractiveComposer, lead_line
from medgraph.generate.sentences import (
    clean_sentence,
    is_question,
    is_reference,
    question_types,
    score_sentences,
    sentence_role,
)
from medgraph.retrieve.rerank import FeatureReranker
from medgraph.retrieve.types import Candidate, QueryAnalysis
from medgraph.schemas import Chunk, Mention

METFORMIN = Mention(25, 34, "metformin", "D008687", "Chemicals and Drugs", "exact", 1.0)


def _cand(cid: str, text: str, relevance: float, section: str = "Results", language: str = "en",
          page: int | None = 3, doc: str | None = None) -> Candidate:
    chunk = Chunk(cid, doc or f"doc-{cid}", 0, text, [section], "p", text, 40, language, title=f"Title {cid}",
                  page=page, source_id=f"PMID:{cid}")
    return Candidate(cid, 1.0, chunk=chunk, relevance=relevance)


def test_question_types_in_three_languages():
    assert question_types("What are the side effects of metformin?") == {"adverse"}
    assert "adverse" in question_types("Welche Nebenwirkungen hat Metformin?")
    assert "adverse" in question_types("二甲双胍有哪些副作用？")
    assert question_types("How often should hands be cleaned?") == {"timing"}
    assert "procedure" in question_types("How should injection equipment be handled?")
    assert "timing" in question_types("Wie oft sollte man die Hände desinfizieren?")
    assert "dosage" in question_types("二甲双胍的剂量是多少？")
    assert "claim" in question_types("Does metformin reduce mortality?")
    assert "claim" in question_types("门诊中手卫生重要吗？")
    assert question_types("Metformin and lactic acidosis") == frozenset()


def test_sentence_role_prefers_findings_over_aims():
    aim = "To evaluate the effects of insulin plus continued sulfonylurea and metformin in type 2 diabetes."
    assert sentence_role(aim, ["Results"]) == -1  # the sentence says it is an aim, whatever its section
    assert sentence_role("Patients were followed for two years after surgery.", ["Methods"]) == -1
    assert sentence_role("Mortality was lower in the metformin group.", ["Conclusions"]) == 1
    assert sentence_role("These data suggest that metformin is safe in heart failure.", ["Abstract"]) == 1
    assert sentence_role("Metformin was given to patients.", ["Abstract"]) == 0


def test_list_markers_are_cut_and_list_lead_ins_are_not_quoted():
    assert clean_sentence("If hands move from a contaminated site during patient care. f.") == \
        "If hands move from a contaminated site during patient care."
    assert clean_sentence("Key situations where hand hygiene should be performed include: a.") is None
    assert clean_sentence("The dose was 2.5 mg daily.") == "The dose was 2.5 mg daily."  # no marker: unchanged
    assert clean_sentence("Use gloves (see section 4.)") == "Use gloves (see section 4.)"
    analysis = QueryAnalysis("When should hand hygiene be performed?", "en")
    passage = ("Key situations where hand hygiene should be performed include: a. Hand hygiene is performed before "
               "touching a patient, even if gloves will be worn. b. After contact with blood or body fluids.")
    answer = ExtractiveComposer(AnswerConfig()).generate(analysis.text, analysis, [_cand("cdc", passage, 0.8)])
    assert not answer.refused and "include:" not in answer.content
    assert all(s in passage and not s.endswith(" b.") for s, _ in answer.sentences)  # still verbatim quotes


def test_reference_lists_and_front_matter_are_never_quoted():
    assert is_reference("Effect of education on rates of infection in intensive care units in Argentina.", ["References"])
    assert is_reference("Anything at all here.", ["Annex", "7. Literatur"]) and is_reference("Thanks.", ["致谢"])
    assert is_reference("Am J Infect Control. 2014;42(1):12-6.", ["Results"])
    assert is_reference("Contact: allegranzib@who.int for the unit.", ["Contributors list"])
    assert is_reference("Guidance is available at: http://www.cdc.gov/hicpac/ for all.", ["Hand Hygiene"])
    assert not is_reference("Use soap and water when hands are visibly soiled.", ["Hand Hygiene"])
    assert not is_reference("Mortality fell.", ["Referenced results"])  # a word that starts like one is not one
    analysis = QueryAnalysis("Does education reduce catheter infections?", "en")
    bibliography = [_cand("ref", "Effect of education and performance feedback on rates of catheter-associated "
                                 "urinary tract infection in intensive care units.", 0.9, section="References")]
    assert ExtractiveComposer(AnswerConfig()).generate(analysis.text, analysis, bibliography).refused


def test_a_records_own_question_is_never_quoted_its_answer_is():
    assert is_question("妊娠期高血压和食管癌的治疗方案是否相同？") and is_question("What is hand hygiene? ")
    assert not is_question("Hand hygiene is the most important measure.") and not is_question("不同。")
    analysis = QueryAnalysis("妊娠期高血压的治疗方案是什么？", "zh")
    record = _cand("huatuo-16", "妊娠期高血压和食管癌的治疗方案是否相同？不同，妊娠期高血压的治疗方案包括药物治疗和生活方式改变，"
                                "而食管癌的治疗方案包括手术治疗、辅助治疗、化疗及放疗。", 0.8, section="", language="zh")
    answer = ExtractiveComposer(AnswerConfig()).generate(analysis.text, analysis, [record])
    assert not answer.refused and "药物治疗" in answer.content and "是否相同" not in answer.content


def test_side_effect_question_is_answered_by_the_adverse_finding_not_the_study_aim():
    analysis = QueryAnalysis("What are the side effects of metformin?", "en", (METFORMIN,))
    evidence = [
        _cand("aim", "To evaluate the effects of insulin 30/70 twice daily plus continued sulfonylurea and "
                     "metformin in patients with type 2 diabetes in primary care.", 0.7, section="Objective", doc="pmid-1"),
        _cand("adv", "Gastrointestinal adverse effects such as diarrhoea and nausea occurred in 20% of patients "
                     "taking metformin. Lactic acidosis was not observed with metformin.", 0.6, doc="pmid-1"),
    ]
    answer = ExtractiveComposer(AnswerConfig()).generate(analysis.text, analysis, evidence)
    assert not answer.refused
    assert "diarrhoea" in answer.content and "To evaluate" not in answer.content
    assert [c.chunk_id for c in answer.citations] == ["adv"]
    aim_only = ExtractiveComposer(AnswerConfig()).generate(analysis.text, analysis, evidence[:1])
    assert aim_only.citations and aim_only.citations[0].chunk_id == "aim"  # an aim, when a document says nothing else
    # the rule, not the weights, keeps the aim out (asked without an aspect, which would keep it out too)
    studied = QueryAnalysis("Which effects of metformin were studied in type 2 diabetes?", "en", (METFORMIN,))
    kept = ExtractiveComposer(AnswerConfig(findings_first=False)).generate(studied.text, studied, evidence)
    assert "To evaluate" in kept.content
    assert "To evaluate" not in ExtractiveComposer(AnswerConfig()).generate(studied.text, studied, evidence).content


def test_idf_weighting_makes_the_missing_question_term_count():
    """A sentence that repeats only the common question term scores below one with the rare term."""
    analysis = QueryAnalysis("metformin lactic acidosis", "en", (Mention(0, 9, "metformin", "D008687", "Drug", "exact", 1.0),))
    evidence = [_cand("a", "Metformin was continued in all patients of the cohort. Metformin doses were stable "
                           "during follow-up. Lactic acidosis did not occur in any metformin user.", 0.6)]
    scored = {s.sentence[:9]: s.features["lexical"] for s in score_sentences(analysis, evidence, AnswerConfig().sentence_weights)}
    assert scored["Lactic ac"] > 2 * scored["Metformin"]


def test_quotes_only_the_askers_language_or_english():
    en_question = QueryAnalysis("Is laparoscopic surgery safe in pregnancy?", "en")
    chinese = [_cand("zh", "腹腔镜手术在妊娠期是安全的，妊娠期腹腔镜手术的并发症很少。", 0.9, language="zh")]
    composer = ExtractiveComposer(AnswerConfig())
    assert composer.generate(en_question.text, en_question, chinese).refused  # a third language alone: refused
    english = _cand("en", "Laparoscopic surgery during pregnancy was safe, with few complications for mother and fetus.", 0.8)
    answer = composer.generate(en_question.text, en_question, [*chinese, english])
    assert not answer.refused and [c.chunk_id for c in answer.citations] == ["en"] and not answer.lead
    de_question = QueryAnalysis("Ist eine laparoskopische Operation in der Schwangerschaft sicher?", "de")
    german = _cand("de", "Die laparoskopische Operation in der Schwangerschaft war sicher und hatte wenige Komplikationen.",
                   0.8, language="de")
    answer = composer.generate(de_question.text, de_question, [*chinese, german])
    assert [c.chunk_id for c in answer.citations] == ["de"] and not answer.lead  # own language: no lead line


def test_lead_line_in_the_askers_language_names_the_entities_found():
    analysis = QueryAnalysis(
        "Welche Nebenwirkungen hat Metformin?", "de", (Mention(26, 35, "Metformin", "D008687", "Drug", "exact", 1.0),),
        translations=(("en", "Welche Nebenwirkungen hat Metformin?"),),
        entity_names=(("D008687", "en", "Metformin"), ("D008687", "de", "Metformin")),
    )
    evidence = [_cand("a", "Metformin caused gastrointestinal adverse effects such as diarrhoea in one in five patients.", 0.8)]
    engine = ExtractiveEngine(AnswerConfig())
    answer = engine.generate(analysis.text, analysis, evidence)
    assert answer.lead == "Belege aus englischsprachigen Quellen zu Metformin:"
    assert answer.content.startswith(answer.lead + " Metformin caused")
    assert "".join(answer_deltas(answer)) == answer.content  # the stream carries the lead line too
    assert [s for s, _ in answer.sentences] == [evidence[0].chunk.text]  # the lead is not a quoted sentence
    assert lead_line("zh", ["en"], ["二甲双胍"]) == "以下是英文文献中关于二甲双胍的证据："
    assert lead_line("en", ["de"], []) == "Evidence from German sources:"


@pytest.fixture(scope="module")
def e5():
    from medgraph.embed.e5 import E5Embedder

    return E5Embedder(threads=1)


def test_dense_sentence_feature_finds_the_cross_lingual_answer(e5):
    """A German question, an English passage: no term is shared, the e5 similarity picks the sentence."""
    analysis = QueryAnalysis("Wann sollte man Wasser und Seife nehmen, wenn die Haut sichtbar verschmutzt ist?", "de")
    passage = ("The clinic's waiting area was renovated with vinyl floors in the last year. "
               "Use soap and water when hands are visibly soiled, for example with blood or body fluids. "
               "Sterile instruments are stored in closed cabinets next to the treatment rooms.")
    evidence = [_cand("cdc", passage, 0.7, section="Hand Hygiene", page=9)]
    without = ExtractiveComposer(AnswerConfig(sentence_dense="off"))
    assert without.generate(analysis.text, analysis, evidence).refused  # nothing matches lexically
    calls: list[int] = []
    composer = ExtractiveComposer(AnswerConfig(sentence_dense="cross_lingual", max_sentences=1), e5)
    real = composer._dense
    composer._dense = lambda q, sentences, analysis=None: calls.append(len(sentences)) or real(q, sentences, analysis)  # type: ignore[method-assign]
    answer = composer.generate(analysis.text, analysis, evidence)
    assert not answer.refused and calls == [3]
    assert answer.sentences[0][0].startswith("Use soap and water")
    assert answer.lead.startswith("Belege aus englischsprachigen Quellen")
    capped = ExtractiveComposer(AnswerConfig(sentence_dense="cross_lingual", dense_max_sentences=2), e5)
    scored = score_sentences(analysis, evidence, capped.cfg.sentence_weights, capped._dense, "cross_lingual", 5, 2)
    assert len(scored) == 2  # only the capped sentences got a dense score, the third is no candidate
    english = QueryAnalysis("When should hands be washed with soap and water?", "en")
    calls.clear()
    composer.generate(english.text, english, evidence)
    assert calls == []  # same-language passages are not embedded in cross_lingual mode


def test_reranker_uses_the_cross_lingual_weights_for_other_language_passages():
    reranker = FeatureReranker(cross_lingual_weights={"dense": 30.0, "lexical": 2.0})
    same = {"dense": 0.25, "lexical": 0.0, "entity": 0.0, "ppr": 0.0, "rrf": 1.0, "cross_lingual": 0.0}
    cross = {**same, "cross_lingual": 1.0}
    assert reranker.relevance(same) < 0.05 < 0.5 < reranker.relevance(cross)
    with pytest.raises(ValueError, match="unknown reranker weights"):
        FeatureReranker(cross_lingual_weights={"nope": 1.0})


def test_unknown_sentence_features_are_refused():
    with pytest.raises(ValueError, match="unknown sentence features"):
        AnswerConfig(sentence_weights={"length": 1.0})
    assert AnswerConfig(sentence_weights={"dense": 2.0}).sentence_weights["lexical"] == 1.0  # merged with defaults
