"""Cross-lingual composition: German and Chinese terms glossed part by part into English names."""

from __future__ import annotations

import pytest

from medgraph.config.models import LinkingConfig
from medgraph.lang.de.morphology import german_forms
from medgraph.link.compose import Composer
from medgraph.link.linker import Linker
from medgraph.ontology.vocabulary import Vocabulary
from tests.helpers import terms_vocabulary

TERMS = [
    ("D013961", "en", "Thyroid Gland"), ("D013961", "en", "Thyroid"), ("D013961", "de", "Schilddrüse"),
    ("D013961", "zh", "甲状腺"), ("D013964", "en", "Thyroid Neoplasms"), ("D013964", "en", "Thyroid Cancer"),
    ("D007501", "en", "Iron"), ("D007501", "de", "Eisen"), ("D000740", "en", "Anemia"), ("D000740", "de", "Anämie"),
    ("D018798", "en", "Anemia, Iron-Deficiency"), ("D018798", "en", "Iron Deficiency Anemia"),
    ("D004717", "en", "Endometrium"), ("D016889", "en", "Endometrial Neoplasms"),
    ("D014807", "en", "Vitamin D"), ("D014808", "en", "Vitamin D Deficiency"),
    ("D007668", "en", "Kidney"), ("D007668", "zh", "肾"), ("D007680", "en", "Kidney Neoplasms"),
    ("D051437", "en", "Renal Insufficiency"), ("D051437", "en", "Renal Failure"), ("D051437", "zh", "肾衰竭"),
    ("D058186", "en", "Acute Kidney Injury"), ("D058186", "en", "Acute Renal Failure"),
    ("D007669", "en", "Kidney Calculi"), ("D007669", "zh", "肾结石"), ("D000752", "en", "Anemia, Pernicious"),
    ("D006470", "en", "Hemorrhage"),
]


@pytest.fixture(scope="module")
def vocab(tmp_path_factory: pytest.TempPathFactory) -> Vocabulary:
    return terms_vocabulary(tmp_path_factory.mktemp("compose"), TERMS)


@pytest.mark.parametrize(
    ("surface", "language", "mesh_id"),
    [
        ("Schilddrüsenkrebs", "de", "D013964"),  # compound: known part + neoplasm head
        ("Eisenmangelanämie", "de", "D018798"),  # three parts: Eisen · Mangel · Anämie
        ("Endometriumkarzinom", "de", "D016889"),  # loan part, and the adjective MeSH uses (endometrial)
        ("Vitamin-D-Mangel", "de", "D014808"),  # hyphenated pieces, the letter kept as it is
        ("甲状腺恶性肿瘤", "zh", "D013964"),  # Chinese name + neoplasm head
        ("肾(除外肾盂)恶性肿瘤", "zh", "D007680"),  # bracketed aside removed
        ("急性肾衰竭", "zh", "D058186"),  # the modifier kept: acute renal failure, not renal failure
    ],
)
def test_compose_links_through_the_english_name(vocab: Vocabulary, surface: str, language: str, mesh_id: str) -> None:
    hit = Linker(vocab, LinkingConfig(tfidf=False)).link(surface, language)
    assert (hit.mesh_id, hit.method) == (mesh_id, "compose")
    without = Linker(vocab, LinkingConfig(tfidf=False, compose=False)).link(surface, language)
    assert without.mesh_id != mesh_id  # the step is what links it


def test_a_composition_that_is_no_english_name_links_nothing(vocab: Vocabulary) -> None:
    linker = Linker(vocab, LinkingConfig(tfidf=False))
    assert linker.link("Schilddrüsenschmerz", "de").mesh_id is None  # "Schmerz" is no known part
    assert linker.link("甲状腺出血", "zh").mesh_id is None  # thyroid hemorrhage: not a name
    assert linker.link("Schilddrüsenkrebs", "en").mesh_id is None  # German rules only for German text


def test_chinese_conjunction_shares_the_head(vocab: Vocabulary) -> None:
    hit = Linker(vocab, LinkingConfig(tfidf=False)).link("肾和输尿管结石", "zh")
    assert (hit.mesh_id, hit.method) == ("D007669", "composite")


def test_segmentation_and_glosses(vocab: Vocabulary) -> None:
    composer = Composer(vocab)
    assert composer.segment("甲状腺恶性肿瘤") == ["甲状腺", "恶性肿瘤"]
    assert composer.segment("甲状腺X") is None  # every character must be covered
    assert "thyroid neoplasms" in composer.glosses("甲状腺恶性肿瘤", "zh")
    assert composer.adjectives("endometrium") == ["endometrial"]  # attested in an English name
    assert composer.adjectives("iron") == []


@pytest.mark.parametrize(("surface", "english"), [("Perniziöse", "pernicious"), ("Inkontinenz", "incontinence"),
                                                  ("Ekzem", "eczema"), ("essentielle", "essential"),
                                                  ("Fissur", "fissure"), ("pulmonale", "pulmonary")])
def test_more_german_loan_word_endings(surface: str, english: str) -> None:
    assert english in german_forms(surface)


def test_pernicious_anemia_through_loan_spellings(vocab: Vocabulary) -> None:
    assert Linker(vocab, LinkingConfig(tfidf=False)).link("Perniziöse Anämie", "de").mesh_id == "D000752"



def test_second_ner_stage_finds_what_the_gazetteer_cannot(vocab: Vocabulary) -> None:
    from medgraph.config.models import NerConfig
    from medgraph.link import EntityExtractor

    on = EntityExtractor(vocab, NerConfig(), LinkingConfig(tfidf=False))
    off = EntityExtractor(vocab, NerConfig(compose_candidates=False), LinkingConfig(tfidf=False))
    german = "Wie wird Schilddrüsenkrebs und Eisenmangelanämie behandelt?"
    got = [(m.surface, m.mesh_id, m.method) for m in on.extract(german, "de")]
    assert got == [("Schilddrüsenkrebs", "D013964", "compose"), ("Eisenmangelanämie", "D018798", "compose")]
    assert off.extract(german, "de") == []  # one word each: the gazetteer sees no name
    chinese = "甲状腺恶性肿瘤患者出现急性肾衰竭"
    got = [(m.surface, m.mesh_id) for m in on.extract(chinese, "zh")]
    assert got == [("甲状腺恶性肿瘤", "D013964"), ("急性肾衰竭", "D058186")]  # the pieces' mentions replaced
    assert [m.mesh_id for m in off.extract(chinese, "zh")] == ["D013961", "D051437"]  # gland, renal failure
    assert on.extract("Thyroid cancer", "en") == off.extract("Thyroid cancer", "en")  # English: unchanged


def test_rarely_mined_forms_do_not_count_for_a_composition(vocab: Vocabulary) -> None:
    from dataclasses import replace

    from medgraph.link.compose import MIN_MINED_COUNT
    from medgraph.ontology.vocabulary import RANK_MINED

    terms = [*vocab.terms, ("thyroid hemorrhage", "en", "D006470", RANK_MINED, MIN_MINED_COUNT - 1)]
    rare = Composer(replace(vocab, terms=terms, _exact=None, _norm=None, _surfaces=None))
    assert rare.lookup("thyroid hemorrhage") is None  # seen once in annotated text: not trusted
    assert rare.lookup("thyroid cancer") == "D013964"
    terms[-1] = ("thyroid hemorrhage", "en", "D006470", RANK_MINED, MIN_MINED_COUNT)
    assert Composer(replace(vocab, terms=terms, _exact=None, _norm=None, _surfaces=None)).lookup(
        "thyroid hemorrhage") == "D006470"
