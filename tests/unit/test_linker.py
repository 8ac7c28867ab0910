"""Linker cascade: multilingual exact, normalised, abbreviations, composites, TF-IDF threshold."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from medgraph.config.models import LinkingConfig, VocabularyConfig, VocabularySource
from medgraph.link import EntityExtractor, Linker
from medgraph.ontology.build import build_vocabulary
from medgraph.ontology.vocabulary import Vocabulary
from medgraph.text.abbreviations import abbreviation_map, find_abbreviations
from tests.helpers import terms_vocabulary

REPO = Path(__file__).resolve().parents[2]
XML = REPO / "tests" / "fixtures" / "mesh" / "desc_fixture.xml"
MI = "D009203"
MULTILINGUAL = ["心肌梗死", "Herzinfarkt", "heart attack", "Myocardial Infarction"]


@pytest.fixture(scope="module")
def small_vocab() -> Vocabulary:
    return build_vocabulary(
        VocabularyConfig(
            sources=[
                VocabularySource(kind="mesh_xml", path=str(XML)),
                VocabularySource(kind="multilingual_terms", path="pkg:seed_terms.tsv"),
            ]
        )
    )


@pytest.mark.parametrize("surface", MULTILINGUAL)
def test_multilingual_with_xml_and_seed(small_vocab: Vocabulary, surface: str) -> None:
    assert Linker(small_vocab).link(surface).mesh_id == MI


def test_shipped_seed_alone_links_de_zh() -> None:
    vocab = build_vocabulary(
        VocabularyConfig(sources=[VocabularySource(kind="multilingual_terms", path="pkg:seed_terms.tsv")])
    )
    linker = Linker(vocab)
    assert [linker.link(s).mesh_id for s in ("心肌梗死", "Herzinfarkt", "Myokardinfarkt")] == [MI] * 3
    assert linker.link("Bluthochdruck", "de").mesh_id == linker.link("高血压", "zh").mesh_id == "D006973"
    assert linker.link("二甲双胍", "zh").mesh_id == "D008687"


def test_exact_and_normalised_methods(small_vocab: Vocabulary) -> None:
    linker = Linker(small_vocab)
    exact = linker.link("MYOCARDIAL INFARCTION")
    assert (exact.mesh_id, exact.method, exact.score) == (MI, "exact", 1.0)
    norm = linker.link("infarctions of the myocardial")
    assert (norm.mesh_id, norm.method) == (MI, "normalised")
    assert norm.category == "Disease"


def test_abbreviation_resolution(small_vocab: Vocabulary) -> None:
    context = "Patients with acute myocardial infarction (AMI) were followed. AMI recurred in 3."
    assert find_abbreviations(context)[0].long == "acute myocardial infarction"
    assert abbreviation_map("heart attack (HA) and fever") == {"HA": "heart attack"}
    res = Linker(small_vocab).link("AMI", "en", context)
    assert (res.mesh_id, res.method) == (MI, "abbreviation")
    assert Linker(small_vocab, LinkingConfig(abbreviations=False)).link("AMI", "en", context).mesh_id is None


def test_extractor_labels_short_forms(small_vocab: Vocabulary) -> None:
    text = "Patients with myocardial infarction (MI) got metformin. MI recurred."
    mentions = EntityExtractor(small_vocab).extract(text, "en")
    got = [(text[m.start : m.end], m.mesh_id, m.method) for m in mentions]
    assert got == [
        ("myocardial infarction", MI, "exact"),
        ("MI", MI, "abbreviation"),
        ("metformin", "D008687", "exact"),
        ("MI", MI, "abbreviation"),
    ]


def test_tfidf_fallback_threshold(small_vocab: Vocabulary) -> None:
    linker = Linker(small_vocab, LinkingConfig(tfidf_threshold=0.5))
    typo = linker.link("myocardial infraction")
    assert (typo.mesh_id, typo.method) == (MI, "tfidf") and 0.5 <= typo.score < 1.0
    assert linker.link("qwxz blorft").mesh_id is None
    strict = Linker(small_vocab, LinkingConfig(tfidf_threshold=0.99))
    assert strict.link("myocardial infraction").mesh_id is None
    off = Linker(small_vocab, LinkingConfig(tfidf=False))
    assert off.link("myocardial infraction").method == "none"


def test_fuzzy_index_is_built_once_for_callers_that_arrive_together(
    small_vocab: Vocabulary, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Serve analyzer warms the index in a thread while requests may already ask for it."""
    import medgraph.link.linker as linker_module

    builds = []
    real = linker_module.CharNgramIndex.for_vocabulary

    def slow_index(*args: object) -> object:
        builds.append(args)
        time.sleep(0.3)
        return real(*args)

    monkeypatch.setattr(linker_module.CharNgramIndex, "for_vocabulary", slow_index)
    linker = Linker(small_vocab)
    with ThreadPoolExecutor(4) as pool:
        indexes = list(pool.map(lambda _: linker.tfidf, range(4)))
    assert len(builds) == 1 and all(index is indexes[0] for index in indexes)


def test_link_many_is_deterministic(small_vocab: Vocabulary) -> None:
    surfaces = ["heart attack", "Pyrexia", "nonsense words", "Metformin"]
    first = [r.mesh_id for r in Linker(small_vocab).link_many(surfaces)]
    assert first == [r.mesh_id for r in Linker(small_vocab).link_many(surfaces)]
    assert first == [MI, "D005334", None, "D008687"]


def test_composite_mention(full_vocab: Vocabulary) -> None:
    res = Linker(full_vocab).link("colon and rectal cancers")
    assert res.mesh_id in {"D003110", "D012004", "D015179"}


@pytest.mark.parametrize("surface", MULTILINGUAL)
def test_multilingual_with_shared_data(full_vocab: Vocabulary, surface: str) -> None:
    assert Linker(full_vocab).link(surface).mesh_id == MI


def test_shared_data_variants(full_vocab: Vocabulary) -> None:
    linker = Linker(full_vocab)
    assert linker.link("pancreatic tumours").mesh_id == "D010190"
    assert linker.link("sporadic Wilms tumours").mesh_id == "D009396"


LANG_TERMS = [
    ("D009393", "en", "Nephritis"), ("D009393", "de", "Entzündung der Niere"), ("D007668", "de", "Niere"),
    ("D007668", "en", "Kidney"), ("D007008", "en", "Hypokalemia"), ("D002277", "en", "Carcinoma"),
    ("D012598", "en", "Sclerosis"), ("D009205", "en", "Myocarditis"), ("D009205", "zh", "心肌炎"),
    ("D003866", "en", "Depressive Disorder"), ("D003866", "zh", "抑郁"), ("D010024", "en", "Osteoporosis"),
    ("D010024", "zh", "骨质疏松症"), ("D005706", "en", "Gallbladder Neoplasms"), ("D005706", "zh", "胆囊肿瘤"),
]


@pytest.fixture(scope="module")
def lang_vocab(tmp_path_factory: pytest.TempPathFactory) -> Vocabulary:
    return terms_vocabulary(tmp_path_factory.mktemp("lang"), LANG_TERMS)


def test_traditional_chinese_links_to_the_simplified_name(lang_vocab: Vocabulary) -> None:
    hit = Linker(lang_vocab).link("骨質疏鬆症", "zh")
    assert (hit.mesh_id, hit.method) == ("D010024", "exact")


@pytest.mark.parametrize("surface", ["Nierenentzündung", "Nierenentzündungen", "Nierenentzuendung"])
def test_german_compound_and_inflection(lang_vocab: Vocabulary, surface: str) -> None:
    linker = Linker(lang_vocab, LinkingConfig(tfidf=False))
    hit = linker.link(surface, "de")
    assert (hit.mesh_id, hit.method) == ("D009393", "language")
    assert linker.link(surface, "en").method != "language"  # German rules only for German text


@pytest.mark.parametrize(("surface", "mesh_id"), [("Hypokaliämie", "D007008"), ("Karzinome", "D002277"),
                                                  ("Sklerose", "D012598"), ("Myokarditis", "D009205")])
def test_german_loan_word_spellings(lang_vocab: Vocabulary, surface: str, mesh_id: str) -> None:
    linker = Linker(lang_vocab, LinkingConfig(tfidf=False))
    assert linker.link(surface, "de").mesh_id == mesh_id
    assert linker.link(surface, "en").mesh_id is None


@pytest.mark.parametrize(("surface", "mesh_id"), [("急性心肌炎", "D009205"), ("抑郁症", "D003866"),
                                                  ("慢性抑郁症", "D003866"), ("骨質疏鬆", "D010024"),
                                                  ("胆囊癌", "D005706")])
def test_chinese_modifiers_and_disease_heads(lang_vocab: Vocabulary, surface: str, mesh_id: str) -> None:
    hit = Linker(lang_vocab, LinkingConfig(tfidf=False)).link(surface)  # CJK: no language needed
    assert (hit.mesh_id, hit.method) == (mesh_id, "language")


def test_german_lexicon_splits_compounds_with_linking_elements() -> None:
    from medgraph.lang.de.morphology import GermanLexicon, german_forms

    lexicon = GermanLexicon(["Entzündung der Niere", "Bruch", "Knochen", "Schmerz"])
    assert lexicon.key("Nierenentzündungen") == lexicon.key("Entzündung der Niere") == "entzundung nier"
    assert lexicon.key("Knochenbrüche") == lexicon.key("Bruch der Knochen")
    assert lexicon.key("Sonnenlicht") == "sonnenlicht"  # unknown parts: not split
    assert "hypokalemia" in german_forms("Hypokaliämie")


def test_german_fuzzy_step_also_searches_loan_word_spellings(lang_vocab: Vocabulary) -> None:
    linker = Linker(lang_vocab)
    hit = linker.link("Karzinomatöse", "de")  # no exact variant; TF-IDF near "carcinoma" only when respelled
    assert (hit.mesh_id, hit.method) == ("D002277", "tfidf") and hit.score > 0.9
    assert linker.link("Karzinomatöse", "en").method != "tfidf"
