"""Gazetteer NER: folding with offsets, longest match, word boundaries, acronyms, stop words."""

from __future__ import annotations

from pathlib import Path

import pytest

from medgraph.config.models import NerConfig, VocabularyConfig, VocabularySource
from medgraph.extract.ner import GazetteerNER
from medgraph.ontology.build import build_vocabulary
from medgraph.text.keys import british_spelling, fold, fold_for_scan, match_key, norm_key

XML = Path(__file__).resolve().parents[1] / "fixtures" / "mesh" / "desc_fixture.xml"
LEUKEMIA = "D054198"  # Precursor Cell Lymphoblastic Leukemia-Lymphoma in the fixture


@pytest.fixture(scope="module")
def ner() -> GazetteerNER:
    vocab = build_vocabulary(
        VocabularyConfig(
            sources=[
                VocabularySource(kind="mesh_xml", path=str(XML)),
                VocabularySource(kind="mesh_tree", path="pkg:mesh_tree_numbers.tsv.gz"),
                VocabularySource(kind="multilingual_terms", path="pkg:seed_terms.tsv"),
            ]
        )
    )
    return GazetteerNER(vocab, NerConfig())


def _found(ner: GazetteerNER, text: str, lang: str = "en") -> list[tuple[str, str | None]]:
    mentions = ner.find(text, lang)
    for m in mentions:
        assert text[m.start : m.end] == m.surface
    return [(m.surface, m.mesh_id) for m in mentions]


def test_fold_helpers() -> None:
    assert fold("Größe ＡＢＣ") == "grosse abc"
    assert match_key("Infarction, Myocardial") == "infarction myocardial"
    assert norm_key("Infarctions, Myocardial") == norm_key("myocardial infarction")
    assert norm_key("tumours of the kidney") == norm_key("kidney tumors")


def test_fold_for_scan_maps_offsets_back() -> None:
    text = "Straße ＭＩ 心肌梗死"
    scan, starts, ends = fold_for_scan(text)
    assert starts is not None and ends is not None
    i = scan.index("strasse")
    assert (starts[i], ends[i + len("strasse") - 1]) == (0, 6)
    j = scan.index("mi")
    assert text[starts[j] : ends[j + 1]] == "ＭＩ"
    k = scan.index("心肌梗死")
    assert text[starts[k] : ends[k + 3]] == "心肌梗死"


def test_german_umlauts_and_eszett(ner: GazetteerNER) -> None:
    text = "Die Blutgefäße und die Schilddrüse. Übelkeit trat auf; BLUTGEFÄSSE!"
    found = _found(ner, text, "de")
    assert ("Blutgefäße", "D001808") in found
    assert ("Schilddrüse", "D013961") in found
    assert ("Übelkeit", "D009325") in found
    assert ("BLUTGEFÄSSE", "D001808") in found  # ß folds to ss


def test_full_width_and_chinese_without_spaces(ner: GazetteerNER) -> None:
    assert _found(ner, "ＨＥＡＲＴ　ＡＴＴＡＣＫ") == [("ＨＥＡＲＴ　ＡＴＴＡＣＫ", "D009203")]
    found = _found(ner, "患者有心肌梗死和2型糖尿病，服用二甲双胍。", "zh")
    assert found == [("心肌梗死", "D009203"), ("2型糖尿病", "D003924"), ("二甲双胍", "D008687")]


def test_mixed_script_boundaries(ner: GazetteerNER) -> None:
    assert _found(ner, "服用Metformin治疗", "zh") == [("Metformin", "D008687")]


def test_longest_leftmost_match(ner: GazetteerNER) -> None:
    found = _found(ner, "A heart attack damages the heart.")
    assert found == [("heart attack", "D009203"), ("heart", "D006321")]


def test_word_boundaries_and_acronyms(ner: GazetteerNER) -> None:
    assert _found(ner, "ALLergy to metformin") == [("metformin", "D008687")]
    assert _found(ner, "Children with ALL.") == [("ALL", "D054198")]
    assert _found(ner, "all patients") == []  # acronyms are case-sensitive


def test_stop_words_and_plural_variants(ner: GazetteerNER) -> None:
    assert _found(ner, "This may lead to fever.") == [("fever", "D005334")]
    mentions = ner.find("Two heart attacks occurred.")
    assert [(m.surface, m.method, m.mesh_id) for m in mentions] == [
        ("heart attacks", "normalised", "D009203")
    ]


def test_british_spellings_share_the_american_norm_key() -> None:
    pairs = [
        ("hemorrhage", "haemorrhage"), ("esophageal neoplasms", "oesophageal neoplasms"), ("anemia", "anaemia"),
        ("hypoglycemic agents", "hypoglycaemic agents"), ("hospitalization", "hospitalisation"),
        ("randomized controlled trial", "randomised controlled trial"), ("tumor suppressor genes", "tumour suppressor genes"),
        ("sulfonamides", "sulphonamides"), ("dietary fiber", "dietary fibre"), ("behavioral symptoms", "behavioural symptoms"),
        ("paresthesia", "paraesthesia"), ("diarrhea", "diarrhoea"), ("celiac disease", "coeliac disease"),
        ("fetal death", "foetal death"), ("pediatrics", "paediatrics"), ("gray matter", "grey matter"),
    ]
    for american, british in pairs:
        assert british_spelling(american) == british
        assert norm_key(american) == norm_key(british)
    for word in ("hemiplegia", "pedigree", "colorectal neoplasms", "septicaemia", "chemical"):
        assert british_spelling(word) == word  # hemi- (half), ped- (foot), colo-, already British
    assert norm_key("analysed") == norm_key("analyzed") != norm_key("analyses")  # -yses: the plural of -ysis


def test_british_spellings_in_text(ner: GazetteerNER) -> None:
    text = "Precursor cell lymphoblastic leukaemia-lymphoma was diagnosed."
    assert _found(ner, text) == [("Precursor cell lymphoblastic leukaemia-lymphoma", LEUKEMIA)]
    assert _found(GazetteerNER(ner.vocab, NerConfig(british_spellings=False)), text) == []


def test_traditional_chinese_text_finds_simplified_names(ner: GazetteerNER) -> None:
    assert fold("心肌梗塞與糖尿病") == "心肌梗塞与糖尿病"
    scan, starts, _ = fold_for_scan("患者有心肌梗死與高血壓")
    assert "高血压" in scan and starts is not None
    found = _found(ner, "患者有心肌梗死與高血壓。", "zh")  # 高血壓: traditional spelling of 高血压
    assert ("心肌梗死", "D009203") in found and ("高血壓", "D006973") in found


def _saved_vocabulary(tmp_path: Path):
    from medgraph.ontology.vocabulary import Vocabulary

    vocab = build_vocabulary(VocabularyConfig(sources=[
        VocabularySource(kind="mesh_xml", path=str(XML)),
        VocabularySource(kind="multilingual_terms", path="pkg:seed_terms.tsv")]))
    vocab.save(tmp_path / "vocab")
    return Vocabulary.load(tmp_path / "vocab")


TEXT = "Children with ALL (precursor cell lymphoblastic leukaemia-lymphoma) had heart attacks on metformin."


def test_the_shared_table_is_derived_once_and_read_back_by_later_gazetteers(tmp_path, monkeypatch) -> None:
    vocab = _saved_vocabulary(tmp_path)
    first = GazetteerNER(vocab, NerConfig())
    saved = list((tmp_path / "vocab").glob("gazetteer-*.pkl"))
    assert not first.loaded and len(saved) == 1
    found = _found(first, TEXT)
    assert found == [("ALL", LEUKEMIA), ("precursor cell lymphoblastic leukaemia-lymphoma", LEUKEMIA),
                     ("heart attacks", "D009203"), ("metformin", "D008687")]  # acronym, British, plural

    def derive(self):  # a gazetteer that reads the saved table never derives it
        raise AssertionError("derived although saved")

    monkeypatch.setattr(GazetteerNER, "_collect", derive)
    second = GazetteerNER(vocab, NerConfig())
    assert second.loaded and _found(second, TEXT) == found
    assert [(e.key, e.ids, e.variant, e.any_case) for e in second._keys] == \
        [(e.key, e.ids, e.variant, e.any_case) for e in first._keys]
    monkeypatch.undo()
    # other settings: another table beside it; a torn file: derived again, not trusted
    other = GazetteerNER(vocab, NerConfig(british_spellings=False))
    assert not other.loaded and len(list((tmp_path / "vocab").glob("gazetteer-*.pkl"))) == 2
    assert _found(other, TEXT) == [found[0], *found[2:]]
    saved[0].write_bytes(saved[0].read_bytes()[:1000])
    again = GazetteerNER(vocab, NerConfig())
    assert not again.loaded and _found(again, TEXT) == found
    assert GazetteerNER(vocab, NerConfig()).loaded


def test_a_vocabulary_built_in_memory_keeps_no_table(tmp_path) -> None:
    vocab = build_vocabulary(VocabularyConfig(sources=[VocabularySource(kind="mesh_xml", path=str(XML))]))
    assert not vocab.directory and not GazetteerNER(vocab, NerConfig()).loaded


def test_a_built_in_language_table_is_kept_too_and_a_foreign_pack_derives_its_own(tmp_path, monkeypatch) -> None:
    import dataclasses

    from medgraph import lang

    vocab = _saved_vocabulary(tmp_path)
    text = "Patient mit Herzinfarkt und KHK, danach Metformin."
    first = GazetteerNER(vocab, NerConfig())
    found = _found(first, text, "de")
    assert found == [("Herzinfarkt", "D009203"), ("KHK", "D003327"), ("Metformin", "D008687")]  # KHK: the pack's
    saved = list((tmp_path / "vocab").glob("gazetteer-de-*.pkl"))
    assert len(saved) == 1

    def derive(self, keys, pack):
        raise AssertionError("derived although saved")

    with monkeypatch.context() as patched:
        patched.setattr(GazetteerNER, "_add_forms", derive)
        patched.setattr(GazetteerNER, "_add_abbreviations", derive)
        assert _found(GazetteerNER(vocab, NerConfig()), text, "de") == found
    # equal rules in a pack that is not the shipped object: derived, nothing kept for it
    shipped = lang.get("de")
    foreign = dataclasses.replace(shipped)
    assert lang.is_builtin(shipped) and not lang.is_builtin(foreign)
    saved[0].unlink()
    lang.register(foreign, replace=True)
    try:
        assert _found(GazetteerNER(vocab, NerConfig()), text, "de") == found
    finally:
        lang.register(shipped, replace=True)
    assert not list((tmp_path / "vocab").glob("gazetteer-de-*.pkl"))
