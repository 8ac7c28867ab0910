"""German morphology in linking and NER: Snowball stems, inflected German names, German spellings of
English Latin/Greek names, compounds, and the curated German clinical abbreviation table."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from medgraph.config.models import LinkingConfig
from medgraph.extract.ner import GazetteerNER
from medgraph.lang.de.abbreviations import GERMAN_ABBREVIATIONS, german_abbreviations
from medgraph.link.linker import Linker
from medgraph.ontology.sources import PKG_DATA
from medgraph.ontology.vocabulary import Vocabulary
from tests.helpers import require_module, terms_vocabulary

require_module("Stemmer")  # PyStemmer: the German Snowball stemmer (a core dependency)

from medgraph.lang.de.morphology import (  # noqa: E402
    GermanLexicon,
    de_snowball,
    german_inflections,
    german_spellings,
    noun_inflections,
)

TERMS = [
    ("D007674", "en", "Kidney Diseases"),
    ("D007674", "de", "Nierenerkrankung"),
    ("D007668", "en", "Kidney"),
    ("D007668", "de", "Niere"),
    ("D006321", "en", "Heart"),
    ("D006321", "de", "Herz"),
    ("D006333", "en", "Heart Failure"),
    ("D006333", "en", "Cardiac Insufficiency"),
    ("D007676", "en", "Kidney Failure, Chronic"),
    ("D007676", "de", "chronische Niereninsuffizienz"),
    ("D011014", "en", "Pneumonia"),
    ("D002277", "en", "Carcinoma"),
    ("D010024", "en", "Osteoporosis"),
    ("D007008", "en", "Hypokalemia"),
    ("D005665", "en", "Furosemide"),
    ("D013610", "en", "Tachycardia"),
    ("D003928", "en", "Diabetic Nephropathies"),
    ("D003928", "en", "Diabetic Nephropathy"),
    ("D020246", "en", "Venous Thrombosis"),
    ("D009369", "en", "Neoplasms"),
    ("D003327", "en", "Coronary Disease"),
    ("D058729", "en", "Peripheral Arterial Disease"),
    ("D003920", "en", "Diabetes Mellitus"),
    ("D009223", "en", "Myotonic Dystrophy"),
    ("D009223", "en", "DM"),
    ("D000008", "en", "Ambulances"),  # a false friend: German "Ambulanz" is an outpatient clinic
]


@pytest.fixture(scope="module")
def vocab(tmp_path_factory: pytest.TempPathFactory) -> Vocabulary:
    vocab: Vocabulary = terms_vocabulary(tmp_path_factory.mktemp("german"), TERMS)
    return vocab


def test_snowball_stems_join_inflected_forms() -> None:
    assert de_snowball("nierenerkrankungen") == de_snowball("nierenerkrankung")
    assert {de_snowball(w) for w in ("chronischer", "chronische", "chronischen", "chronisches")} == {
        "chronisch"
    }
    lexicon = GermanLexicon(["Nierenerkrankung", "Erkrankung", "Niere", "Herz"], stemmer="snowball")
    assert lexicon.key("Nierenerkrankungen") == lexicon.key("Nierenerkrankung")
    assert lexicon.key("Erkrankungen der Niere") == lexicon.key("Nierenerkrankung")  # compound split


def test_inflections_of_german_names() -> None:
    assert "nierenerkrankungen" in noun_inflections("nierenerkrankung")
    assert "karzinome" in noun_inflections("karzinom")
    assert "metastasen" in noun_inflections("metastase")
    assert "hepatitiden" in noun_inflections("hepatitis")
    forms = german_inflections("chronische Niereninsuffizienz")
    assert {"chronischen niereninsuffizienz", "chronischer niereninsuffizienz"} <= set(forms)


@pytest.mark.parametrize(
    ("english", "german"),
    [
        ("Pneumonia", "pneumonie"),
        ("Carcinoma", "karzinom"),
        ("Carcinoma", "karzinome"),
        ("Osteoporosis", "osteoporose"),
        ("Hypokalemia", "hypokalamie"),
        ("Furosemide", "furosemid"),
        ("Tachycardia", "tachykardie"),
        ("Dementia", "demenz"),
        ("Infection", "infektion"),
        ("Diabetic Nephropathy", "diabetische nephropathie"),
        ("Venous Thrombosis", "venosen thrombose"),
    ],
)
def test_german_spellings_of_english_names(english: str, german: str) -> None:
    assert german in german_spellings(english)


def test_linker_reaches_inflected_and_compound_german_words(vocab: Vocabulary) -> None:
    linker = Linker(vocab, LinkingConfig(tfidf=False))
    for surface, mesh_id in [
        ("Nierenerkrankungen", "D007674"),  # plural of a German name
        ("chronischer Niereninsuffizienz", "D007676"),  # inflected adjective
        (
            "Herzinsuffizienz",
            "D006333",
        ),  # compound: Herz + Insuffizienz glossed into heart insufficiency/failure
        ("Pneumonien", "D011014"),  # German plural of a German spelling of an English name
        ("Karzinome", "D002277"),
        ("Hypokaliämie", "D007008"),
    ]:
        assert linker.link(surface, "de").mesh_id == mesh_id, surface


def test_gazetteer_finds_german_forms_in_german_text_only(vocab: Vocabulary) -> None:
    ner = GazetteerNER(vocab)
    text = (
        "Bei chronischer Niereninsuffizienz und Nierenerkrankungen kam eine Pneumonie mit Tachykardie hinzu."
    )
    found = {m.surface: m.mesh_id for m in ner.find(text, "de")}
    assert found == {
        "chronischer Niereninsuffizienz": "D007676",
        "Nierenerkrankungen": "D007674",
        "Pneumonie": "D011014",
        "Tachykardie": "D013610",
    }
    assert ner.find(text, "en") == []  # German forms are German only
    off = GazetteerNER(vocab, german_keys=False)
    assert {m.surface for m in off.find(text, "de")} == set()
    assert ner.find("Vorstellung in der Ambulanz", "de") == []  # false friend left out


def test_abbreviation_table_is_case_sensitive_and_german_only(vocab: Vocabulary) -> None:
    linker = Linker(vocab, LinkingConfig(tfidf=False))
    assert linker.link("KHK", "de").mesh_id == "D003327"
    assert linker.link("pAVK", "de").mesh_id == "D058729"
    assert linker.link("khk", "de").mesh_id is None
    assert linker.link("KHK", "en").mesh_id is None
    assert (
        Linker(vocab, LinkingConfig(tfidf=False), german_morphology=False).link("KHK", "de").mesh_id is None
    )
    ner = GazetteerNER(vocab)
    text = "Bekannte KHK, pAVK und DM; ein Satz mit khk und dm."
    found = [(m.surface, m.mesh_id, m.method) for m in ner.find(text, "de")]
    assert found == [
        ("KHK", "D003327", "abbreviation"),
        ("pAVK", "D058729", "abbreviation"),
        ("DM", "D003920", "abbreviation"),
    ]
    assert ner.find("KHK and DM were diagnosed", "en") == []  # the table is for German text only


def test_abbreviation_table_ids_are_mesh_descriptors_with_that_heading() -> None:
    headings: dict[str, str] = {}
    with gzip.open(PKG_DATA / "mesh_entry_terms.tsv.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 2:
                headings[parts[0]] = parts[1]
    table = german_abbreviations()
    assert len(table) >= 50
    for short, row in table.items():
        assert headings.get(row.mesh_id) == row.heading, short
        assert row.german, short
    assert "Z.n." not in table and "V.a." not in table  # qualifiers, not concepts (see the table's header)


def test_manifest_records_german_forms_and_abbreviation_provenance(vocab: Vocabulary) -> None:
    m = vocab.manifest
    assert m["german_forms"]["forms"] == len(vocab.german_index) > 0
    abbr = m["german_abbreviations"]
    assert abbr["path"] == f"pkg:{GERMAN_ABBREVIATIONS.name}" and abbr["rows"] == len(german_abbreviations())
    assert "licence" in abbr and "source" in abbr
    assert 0 < abbr["resolved"] <= abbr["rows"]


def test_the_german_table_extends_a_copy_of_the_english_one(tmp_path: Path) -> None:
    """The German table is the English table plus the German keys; building it on the first German
    text changes nothing in the English table: an abbreviation spelling (``CRP``) for a key the
    English table already has goes on a copy of that key."""
    vocab = terms_vocabulary(tmp_path, [("D002097", "en", "C-Reactive Protein"), ("D002097", "en", "CRP"),
                                        ("D003327", "en", "Coronary Disease")])
    ner = GazetteerNER(vocab)
    english = "CRP and C-reactive protein in coronary disease"
    before = ner.find(english, "en")
    assert [m.surface for m in before] == ["CRP", "C-reactive protein", "coronary disease"]
    german = [(m.surface, m.mesh_id, m.method) for m in ner.find("Erhöhtes CRP bei KHK", "de")]
    assert german == [("CRP", "D002097", "abbreviation"), ("KHK", "D003327", "abbreviation")]
    assert ner.find(english, "en") == before
    assert not any(entry.de_case or entry.german for entry in ner._keys)
    assert {entry.key for entry in ner._keys} < {entry.key for entry in ner._table("de")[0]}
