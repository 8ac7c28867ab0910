"""German names from a Ding-format German–English dictionary (``ding`` vocabulary source).

The small dictionary below is written for these tests in Ding's line format; the last test reads
the real file that Debian's ``trans-de-en`` installs (``make system-deps``).
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from medgraph.config.models import LinkingConfig, VocabularyConfig, VocabularySource
from medgraph.extract.ner import GazetteerNER
from medgraph.lang.de.morphology import noun_bases
from medgraph.link.linker import Linker
from medgraph.ontology.build import DING_PATH, build_summary, build_vocabulary
from medgraph.ontology.ding import read_ding, read_ding_general
from medgraph.ontology.vocabulary import Vocabulary
from medgraph.text.keys import match_key
from tests.helpers import FIXTURES, unavailable

XML = FIXTURES / "mesh" / "desc_fixture.xml"
MI, HEART, FEVER = "D009203", "D006321", "D005334"
SURGERY_SPECIALTY, SURGICAL_PROCEDURES, STRETCHERS = "D013502", "D013514", "D058254"

DICTIONARY = """\
# Version :: test 2026-12-01
# License :: GPL Version 2 or later; GNU General Public License
Herzinfarkt {m}; Myokardinfarkt {m} [med.] | Herzinfarkte {pl} :: heart attack; myocardial infarction | heart attacks
Hitzschlag {m}; Herzinfarkt {m} [med.] :: fever
Herz {n} [anat.] | Herzen {pl} :: heart | hearts
Chirurgie {f} [med.] :: surgery
Operation {f}; Eingriff {m} [med.] :: operation; surgery
Trage {f} [med.] | Tragen {pl} :: stretcher | stretchers
Kultur {f} | Esskultur {f} :: culture | food culture
Aufklärung {f} | Impfaufklärung {f} [med.] :: enlightenment | fever
Fieberanfall {m} [ugs.]; Fieberschub {m} [med.] :: fever
fiebern {vi} [med.] :: to have a fever
Herzanfall {m}; HI {m} [med.] :: myocardial infarction
Mal {n} [anat.] :: heart
Tragbahre {f} | Tragbahren {pl} :: stretcher | stretchers
Tragbahre {f}; Krankenbahre {f} :: heart
Bahre {f} [techn.] :: stretcher
Bahre {f} :: heart
Pritsche {f} :: stretcher in
Herzstück {n} [übtr.] :: heart
Tragbahre {f} [ugs.] | Bahrtuch {n} :: heart | pall
Liege {f} | Liegen {pl} | Notliege {f} [übtr.] :: stretcher | stretchers | heart
Herzkammer {f} :: heart
Herzlichen Glückwunsch! :: Heart!
"""

ENTRY_TERMS = (
    f"{SURGERY_SPECIALTY}\tGeneral Surgery\tSurgery\n"
    f"{SURGICAL_PROCEDURES}\tSurgical Procedures, Operative\tOperative Procedures|Operations\n"
    f"{STRETCHERS}\tStretchers\tStretcher\n"
)
TREES = (
    "mesh_id\tmesh_tree_number\n"
    f"{SURGERY_SPECIALTY}\tH02.403.810.300\n{SURGICAL_PROCEDURES}\tE04\n{STRETCHERS}\tE07.325.220.500\n"
)


def _pairs(text: str) -> set[tuple[str, str]]:
    return {(p.german, p.english) for p in read_ding(io.StringIO(text))}


def test_reader_keeps_labelled_nouns_and_drops_the_rest() -> None:
    pairs = _pairs(DICTIONARY)
    germans = {g for g, _ in pairs}
    assert ("Herzinfarkte", "heart attacks") in pairs  # senses pair up by position
    assert ("Myokardinfarkt", "myocardial infarction") in pairs
    assert "Kultur" not in germans  # no medical label: culture in the arts
    assert "Aufklärung" not in germans and "Impfaufklärung" in germans  # only the labelled sub-sense
    assert "Fieberanfall" not in germans and "Fieberschub" in germans  # colloquial alternative dropped
    assert not {"fiebern", "HI", "Mal"} & germans  # a verb, an acronym, a three-letter word


def test_headword_reading_outranks_a_secondary_one() -> None:
    ranks = {(p.german, p.english): p.rank for p in read_ding(io.StringIO(DICTIONARY))}
    assert ranks[("Herzinfarkt", "heart attack")] < ranks[("Herzinfarkt", "myocardial infarction")]
    assert ranks[("Herzinfarkt", "myocardial infarction")] < ranks[("Herzinfarkt", "fever")]


def test_general_entries_are_read_apart_earliest_entry_first() -> None:
    pairs = list(read_ding_general(io.StringIO(DICTIONARY)))
    germans = {p.german for p in pairs}
    assert {"Tragbahre", "Tragbahren", "Kultur"} <= germans  # unlabelled entries
    assert not {"Herzinfarkt", "Operation", "Trage"} & germans  # medical entries: read_ding's
    assert not {"Bahre", "Herzstück", "Bahrtuch"} & germans  # technology (first entry), figurative, colloquial
    assert {"Liege", "Liegen"} <= germans and "Notliege" not in germans  # only the figurative sub-sense goes
    assert ("Tragbahre", "heart") not in {(p.german, p.english) for p in pairs}  # its first entry only
    assert ("Krankenbahre", "heart") in {(p.german, p.english) for p in pairs}  # the first entry of this one
    ranks = {(p.german, p.english): p.rank for p in pairs}
    assert ranks[("Tragbahre", "stretcher")] < ranks[("Tragbahren", "stretchers")]  # a headword first


def test_an_article_is_not_part_of_the_word() -> None:
    medical = _pairs("Pille {f} [med.] | die Pillen {pl} :: pill | pills\n")
    general = {(p.german, p.english) for p in read_ding_general(io.StringIO("das Äußere {n} | die Wirbellosen {pl} :: exterior | invertebrates\n"))}
    assert ("Pillen", "pills") in medical and ("Wirbellosen", "invertebrates") in general
    assert ("Äußere", "exterior") in general
    assert not {g for g, _ in medical | general if g.split()[0] in {"der", "die", "das"}}


@pytest.fixture(scope="module")
def vocab(tmp_path_factory: pytest.TempPathFactory) -> Vocabulary:
    tmp = tmp_path_factory.mktemp("ding")
    (tmp / "de-en").write_text(DICTIONARY, encoding="utf-8")
    (tmp / "entry_terms.tsv").write_text(ENTRY_TERMS, encoding="utf-8")
    (tmp / "trees.tsv").write_text(TREES, encoding="utf-8")
    (tmp / "pairs.tsv").write_text("lang\tterm\ten_term\tsource\nde\tHerzanfall\tHeart\tx\nde\tHerzkammer\tHeart\tx\n", encoding="utf-8")
    s = VocabularySource
    return build_vocabulary(
        VocabularyConfig(
            sources=[
                s(kind="mesh_xml", path=str(XML)),
                s(kind="mesh_entry_terms", path=str(tmp / "entry_terms.tsv")),
                s(kind="mesh_tree", path=str(tmp / "trees.tsv")),
                s(kind="translation_pairs", path=str(tmp / "pairs.tsv")),
                s(kind="ding", path=str(tmp / "de-en")),
            ]
        )
    )


def test_words_join_to_the_descriptor_their_translation_names(vocab: Vocabulary) -> None:
    names = {mesh_id: set(vocab.entities[mesh_id].names.get("de", [])) for mesh_id in vocab.entities}
    assert {"Herzinfarkt", "Myokardinfarkt", "Herzinfarkte"} <= names[MI]  # best-ranked reading wins
    assert "Herzinfarkt" not in names[FEVER] and "Hitzschlag" in names[FEVER]
    assert {"Herz", "Herzen"} <= names[HEART]
    assert {"Operation", "Eingriff"} <= names[SURGICAL_PROCEDURES]  # "surgery" names a discipline
    assert not names.get(SURGERY_SPECIALTY)  # a discipline (H02) is never a dictionary word's meaning
    assert names[HEART] >= {"Herzanfall"} and "Herzanfall" not in names[MI]  # the earlier source wins
    join = vocab.manifest["dictionary_join"]["de"]
    assert join["conflicts"] == 1 and join["outside_medicine"] >= 1
    assert join["ids"] == 5 and build_summary(vocab)["dictionary_join"] == vocab.manifest["dictionary_join"]
    ding = next(src for src in vocab.manifest["sources"] if src["kind"] == "ding")
    assert ding["provenance"]["version"] == "test 2026-12-01"
    assert ding["provenance"]["license"].startswith("GPL")


def test_dictionary_words_act_in_german_text_only(vocab: Vocabulary) -> None:
    assert match_key("Eingriff") not in vocab.exact_index
    assert match_key("Herzen") not in vocab.norm_index
    assert vocab.german_index[match_key("Herzen")] == (HEART,)
    ner = GazetteerNER(vocab)
    german = ner.find("Die Operation am Herzen verlief ohne Fieber.", "de")
    assert [(m.surface, m.mesh_id) for m in german][:2] == [("Operation", SURGICAL_PROCEDURES), ("Herzen", HEART)]
    assert [m.surface for m in ner.find("Die Herzen, der Eingriff.", "de")] == ["Herzen", "Eingriff"]
    assert ner.find("Die Herzen, der Eingriff.", "en") == []  # the same words in English text
    linker = Linker(vocab)
    assert linker.link("Herzinfarkte", "de").mesh_id == MI
    assert linker.link("Eingriff", "en").mesh_id != SURGICAL_PROCEDURES


def test_general_words_link_given_german_spans_only(vocab: Vocabulary, tmp_path: Path) -> None:
    words = {"tragbahre", "tragbahren", "liege", "liegen"}
    assert vocab.general_words == dict.fromkeys(words, (STRETCHERS,)) | {"krankenbahre": (HEART,)}
    general = vocab.manifest["general_join"]
    assert general["terms"] == 5 and general["named"] == 1  # Herzkammer: a name already
    assert "pritsche" not in vocab.general_words  # exact English matches only: "stretcher in" is none
    assert "herzlichen gluckwunsch" not in vocab.general_words  # an utterance, not a name
    assert "tragbahre" not in vocab.exact_index and "tragbahre" not in vocab.german_index
    assert not any(t[0] == "Tragbahre" for t in vocab.terms)  # in no name table
    assert GazetteerNER(vocab).find("Die Tragbahre steht bereit.", "de") == []  # found by no scan
    linker = Linker(vocab)
    hit = linker.link("Tragbahren", "de")
    assert (hit.mesh_id, hit.method) == (STRETCHERS, "general")
    assert linker.link("Tragbahren", "de", fuzzy=False).method != "general"  # a fuzzy-phase step
    assert linker.link("Tragbahren", "en").method != "general"
    off = Linker(vocab, LinkingConfig(general_words=False))
    assert off.link("Tragbahren", "de").method != "general"
    assert Vocabulary.load(vocab.save(tmp_path)).general_words == vocab.general_words


def test_noun_bases_undo_the_dative_plural_and_the_genitive() -> None:
    assert noun_bases("kindern") == ["kinder"] and noun_bases("mausen") == ["mause"]
    assert noun_bases("arztes") == ["arzt"] and noun_bases("wassers") == ["wasser"]
    assert noun_bases("organe") == [] and noun_bases("herz") == [] and noun_bases("die herzen") == []


def test_a_lower_case_word_in_german_text_is_no_noun(vocab: Vocabulary) -> None:
    ner = GazetteerNER(vocab)
    assert [m.mesh_id for m in ner.find("Die Tragen stehen bereit.", "de")] == [STRETCHERS]
    assert ner.find("Wir tragen Masken.", "de") == []


def test_the_debian_dictionary_gives_german_names(full_vocab: Vocabulary) -> None:
    path = Path(os.environ.get("MEDGRAPH_DING_DICT") or DING_PATH)
    if not path.is_file():
        unavailable(f"Ding dictionary not found at {path} (make system-deps installs trans-de-en)",
                    "MEDGRAPH_REQUIRE_SHARED")
    vocab = full_vocab
    join = vocab.manifest["dictionary_join"]["de"]
    assert join["terms"] > 5000 and join["ids"] > 2000
    ner = GazetteerNER(vocab)
    text = "Die Patientin kam mit Lungenentzündung und Schmerzen in der Milz."
    found = {m.surface: vocab.entities[m.mesh_id].name for m in ner.find(text, "de")}
    assert found.get("Lungenentzündung") == "Pneumonia" and found.get("Milz") == "Spleen"
    assert vocab.manifest["general_join"]["terms"] > 3000
    linker = Linker(vocab)
    for word, name in (("Harnstoff", "Urea"), ("Ratten", "Rats"), ("Mäusen", "Mice")):  # Mäusen: dative plural
        hit = linker.link(word, "de")
        assert (vocab.entities[hit.mesh_id].name, hit.method) == (name, "general")


def test_inverted_mesh_terms_read_as_written_and_joins_keep_word_order(tmp_path: Path) -> None:
    """MeSH's inverted entry term "Body, Fat" (of Fat Body, an insect organ) is the phrase "fat body",
    not "body fat": English text saying "body fat" does not link to it, and neither does Ding's
    "Körperfett; Fett [anat.] :: body fat; fat", whose German words join to Fats by "fat" (a
    normalised join keeps word order); the heading keeps the form MeSH writes."""
    from medgraph.ontology.build import uninvert
    from medgraph.text.keys import norm_key

    assert uninvert("Body, Fat") == "Fat Body" and uninvert("Leukemia, Myeloid, Acute") == "Acute Myeloid Leukemia"
    assert uninvert("Fat Body") == "Fat Body" and uninvert("Vitamin B 12, Deficiency") == "Vitamin B 12, Deficiency"
    assert uninvert("1,2-Dipalmitoylphosphatidylcholine") == "1,2-Dipalmitoylphosphatidylcholine"
    assert norm_key("body fats") == norm_key("fat body") and norm_key("body fats", ordered=True) != norm_key("fat body", ordered=True)
    fat_body, fats, carcinoma = "D005216", "D005223", "D002294"
    (tmp_path / "entry_terms.tsv").write_text(
        f"{fat_body}\tFat Body\tBodies, Fat|Body, Fat|Fat Bodies\n{fats}\tFats\t\n"
        f"{carcinoma}\tCarcinoma, Squamous Cell\tCarcinomas, Squamous Cell\n", encoding="utf-8")
    (tmp_path / "trees.tsv").write_text(
        f"mesh_id\tmesh_tree_number\n{fat_body}\tA13.869.106.500\n{fats}\tD10.212\n{carcinoma}\tC04.557.470.200.400.888\n",
        encoding="utf-8")
    (tmp_path / "de-en").write_text("Körperfett {n}; Fett {n} [anat.] :: body fat; fat\n", encoding="utf-8")
    s = VocabularySource
    vocab = build_vocabulary(VocabularyConfig(sources=[
        s(kind="mesh_entry_terms", path=str(tmp_path / "entry_terms.tsv")),
        s(kind="mesh_tree", path=str(tmp_path / "trees.tsv")),
        s(kind="ding", path=str(tmp_path / "de-en"))]))
    assert "Body, Fat" not in vocab.entities[fat_body].names["en"] and "Fat Body" in vocab.entities[fat_body].names["en"]
    assert {"Körperfett", "Fett"} <= set(vocab.entities[fats].names.get("de", []))
    assert not vocab.entities[fat_body].names.get("de")
    assert vocab.entities[carcinoma].name == "Carcinoma, Squamous Cell"  # the heading as MeSH writes it
    assert "Squamous Cell Carcinoma" in vocab.entities[carcinoma].names["en"]
    found = GazetteerNER(vocab).find("Body fat was measured, and a squamous cell carcinoma removed.", "en")
    assert [(m.surface.lower(), m.mesh_id) for m in found] == [("squamous cell carcinoma", carcinoma)]
