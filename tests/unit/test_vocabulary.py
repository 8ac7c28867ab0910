"""Vocabulary build: NLM XML fixture, TSV sources, shipped data, save/load, manifest."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from medgraph.config.models import VocabularyConfig, VocabularySource
from medgraph.ontology.build import build_summary, build_vocabulary, load_or_build
from medgraph.ontology.categories import category_from_trees
from medgraph.ontology.sources import PKG_DATA, read_pubtator, read_translation_pairs, resolve_paths
from medgraph.ontology.vocabulary import Vocabulary

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
XML = FIXTURES / "mesh" / "desc_fixture.xml"


def _xml_vocab(path: Path = XML) -> Vocabulary:
    return build_vocabulary(VocabularyConfig(sources=[VocabularySource(kind="mesh_xml", path=str(path))]))


def test_xml_fixture_names_trees_categories() -> None:
    vocab = _xml_vocab()
    assert set(vocab.entities) == {"D009203", "D008687", "D005334", "D054198", "D006321", "D007854"}
    mi = vocab.entities["D009203"]
    assert mi.name == "Myocardial Infarction"
    assert mi.tree_numbers == ["C14.280.647.500", "C14.907.585.500"]
    assert mi.category == "Disease"
    assert mi.names["en"][0] == "Myocardial Infarction"
    assert {"Heart Attack", "Cardiovascular Stroke"} <= set(mi.names["en"])
    assert "Infarction, Myocardial" not in mi.names["en"]  # MeSH's inverted form, read as the heading it inverts
    assert "D999999" not in vocab  # nested DescriptorReferredTo is not a record
    assert vocab.entities["D008687"].category == "Drug"
    assert vocab.entities["D005334"].category == "Symptom"
    assert vocab.entities["D006321"].category == "Anatomy"
    assert "Dimethylbiguanidine" in vocab.entities["D008687"].names["en"]


def test_xml_gz_is_streamed(tmp_path: Path) -> None:
    gz = tmp_path / "desc2025.xml.gz"
    with open(XML, "rb") as src, gzip.open(gz, "wb") as dst:
        shutil.copyfileobj(src, dst)
    assert set(_xml_vocab(gz).entities) == set(_xml_vocab().entities)


def test_categories() -> None:
    assert category_from_trees(["C23.888.592.612", "C10.597.617"]) == "Symptom"
    assert category_from_trees(["F03.600.300"]) == "Disease"
    assert category_from_trees(["G05.360.340.024.340"]) == "Gene"
    assert category_from_trees(["E01.370"]) == "Procedure"
    assert category_from_trees(["B01.050"]) == "LivingBeing"
    assert category_from_trees(["G09.330"]) == "Physiology"
    assert category_from_trees(["Z01.107"]) == "Other"
    assert category_from_trees([]) == "Other"


def test_save_load_roundtrip_and_manifest(tmp_path: Path) -> None:
    vocab = _xml_vocab()
    vocab.save(tmp_path / "v")
    loaded = Vocabulary.load(tmp_path / "v")
    assert loaded.entities["D009203"].names == vocab.entities["D009203"].names
    assert loaded.exact_index["heart attack"] == ("D009203",)
    assert loaded.manifest["ids_with_name_by_lang"] == {"en": 6}
    assert (tmp_path / "v" / "manifest.json").is_file()


def test_optional_missing_source_is_skipped_required_raises(tmp_path: Path) -> None:
    missing = VocabularySource(kind="mesh_names", path=str(tmp_path / "nope.tsv"), optional=True)
    cfg = VocabularyConfig(sources=[VocabularySource(kind="mesh_xml", path=str(XML)), missing])
    summary = build_summary(build_vocabulary(cfg))
    assert [s["status"] for s in summary["sources"]] == ["loaded", "skipped"]
    with pytest.raises(FileNotFoundError):
        build_vocabulary(VocabularyConfig(sources=[missing.model_copy(update={"optional": False})]))


def test_pkg_prefix_and_shipped_data_limits() -> None:
    assert resolve_paths("pkg:seed_terms.tsv") == [PKG_DATA / "seed_terms.tsv"]
    total = sum(p.stat().st_size for p in PKG_DATA.iterdir() if p.is_file())
    assert total < 3_000_000
    seed = (PKG_DATA / "seed_terms.tsv").read_text(encoding="utf-8")
    assert "hpo" not in seed.lower()  # HPO-derived labels must not be shipped
    assert "D009203\tzh\t心肌梗死" in seed and "D009203\tde\tHerzinfarkt" in seed


def test_pubtator_mining_refuses_dev_splits(tmp_path: Path) -> None:
    text = (FIXTURES / "pubtator" / "tiny.pubtator.txt").read_text(encoding="utf-8")
    train = tmp_path / "train.PubTator.txt"
    train.write_text(text, encoding="utf-8")
    rows = {(r.value, r.mesh_id): r.n for r in read_pubtator(train)}
    assert rows[("MI", "D009203")] == 2
    assert not any(r[1].startswith("OMIM") for r in rows)  # OMIM and -1 are not mined
    dev = tmp_path / "CDR_DevelopmentSet.PubTator.txt"
    dev.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match="held-out"):
        list(read_pubtator(dev))


def test_tsv_sources_from_shared_data(shared_data: Path, tmp_path: Path) -> None:
    d = shared_data
    cfg = VocabularyConfig(
        path=str(tmp_path / "v"),
        sources=[
            VocabularySource(kind="mesh_names", path=str(d / "mesh/mesh2015_descriptor_names.tsv")),
            VocabularySource(kind="mesh_tree", path=str(d / "mesh/mesh2015_tree_numbers.tsv")),
            VocabularySource(
                kind="mesh_entry_terms", path=str(d / "mesh_entry_terms/mesh2019_id_label_entry_terms.tsv")
            ),
            VocabularySource(kind="multilingual_terms", path=str(d / "mesh_multilingual/terms.part*.tsv")),
        ],
    )
    vocab = load_or_build(cfg)
    assert len(vocab) > 29_000
    mi = vocab.entities["D009203"]
    assert mi.category == "Disease" and "Heart Attack" in mi.names["en"]
    assert "心肌梗死" in mi.names["zh"] and "Herzinfarkt" in mi.names["de"]
    counts = vocab.manifest["ids_with_name_by_lang"]
    assert counts["en"] > 29_000 and counts["zh"] > 1_000 and counts["de"] > 500
    assert Vocabulary.load(cfg.path).manifest["fingerprint"] == vocab.manifest["fingerprint"]


def test_mesh_translation_xml_adds_names_in_the_files_language() -> None:
    cfg = VocabularyConfig(sources=[
        VocabularySource(kind="mesh_xml", path=str(XML)),
        VocabularySource(kind="mesh_translation_xml", path=str(FIXTURES / "mesh" / "desc_de_fixture.xml"), lang="zh"),
    ])
    vocab = build_vocabulary(cfg)
    # the root's LanguageCode="ger" wins over the source's lang; tree numbers stay English-only
    assert vocab.entities["D009203"].names["de"] == ["Myokardinfarkt", "Herzinfarkt", "Herzmuskelinfarkt"]
    assert vocab.entities["D005334"].names["de"] == ["Fieber", "Pyrexie"]
    assert vocab.entities["D009203"].name == "Myocardial Infarction"  # English preferred name kept
    assert vocab.manifest["ids_with_name_by_lang"] == {"de": 2, "en": 6}
    assert vocab.exact_index["herzmuskelinfarkt"] == ("D009203",)


def test_mesh_translation_tsv_with_header_and_prefixed_ids() -> None:
    cfg = VocabularyConfig(sources=[
        VocabularySource(kind="mesh_xml", path=str(XML)),
        VocabularySource(kind="mesh_translation_tsv", path=str(FIXTURES / "mesh" / "translations.tsv")),
    ])
    vocab = build_vocabulary(cfg)
    assert vocab.entities["D008687"].names["zh"] == ["二甲雙胍"]
    assert vocab.entities["D006321"].names["de"] == ["Herz"]
    assert vocab.manifest["ids_with_name_by_lang"] == {"de": 2, "en": 6, "zh": 2}
    # traditional characters share the key of the simplified spelling
    assert vocab.exact_index["二甲双胍"] == ("D008687",)


def test_translation_pairs_join_through_english_names(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text(
        "lang\tterm\ten_term\tsource\n"
        "zh\t发烧\tfever\tx\n"  # exact English name
        "de\tHerzanfall\tHeart Attacks\tx\n"  # entry term, plural: normalised key
        "zh\t铅\tlead\tx\n"
        "zh\t无名\tNo Such Heading\tx\n",  # unmatched
        encoding="utf-8",
    )
    cfg = VocabularyConfig(sources=[
        VocabularySource(kind="mesh_xml", path=str(XML)),
        VocabularySource(kind="translation_pairs", path=str(pairs)),
    ])
    vocab = build_vocabulary(cfg)
    assert vocab.entities["D005334"].names["zh"] == ["发烧"]
    assert vocab.entities["D009203"].names["de"] == ["Herzanfall"]
    assert vocab.manifest["ids_with_name_by_lang"] == {"de": 1, "en": 6, "zh": 2}
    join = vocab.manifest["translation_join"]
    assert join["zh"] == {"ids": 2, "pairs": 3, "terms": 2, "unmatched": 1}
    assert join["de"]["terms"] == 1
    assert build_summary(vocab)["translation_join"] == join


def test_babelon_table_is_read_as_translation_pairs(tmp_path: Path) -> None:
    table = tmp_path / "hp-de.babelon.tsv"
    table.write_text(
        "source_language\tsource_value\tsubject_id\tpredicate_id\ttranslation_language\ttranslation_value\t"
        "translation_status\nen\tFever\tHP:0001945\trdfs:label\tde\tFieber\tOFFICIAL\n",
        encoding="utf-8",
    )
    cfg = VocabularyConfig(sources=[
        VocabularySource(kind="mesh_xml", path=str(XML)),
        VocabularySource(kind="babelon", path=str(table)),
    ])
    assert build_vocabulary(cfg).entities["D005334"].names["de"] == ["Fieber"]


def test_cmekg_pairs_and_safe_loading(tmp_path: Path) -> None:
    import pickle

    from medgraph.ontology.cmekg import load_graph, name_pairs

    graph = {"发热": {"英文名称": ["fever"], "别称": ["发烧"]}, "某药片": {"分类": ["西药"]}}
    good = tmp_path / "kg.pkl"
    good.write_bytes(pickle.dumps(graph))
    assert sorted(name_pairs(load_graph(good))) == [("发烧", "fever", "cmekg_alias"), ("发热", "fever", "cmekg_name")]
    bad = tmp_path / "bad.pkl"
    bad.write_bytes(pickle.dumps({"x": Path("/")}))  # a class reference: refused, never constructed
    with pytest.raises(pickle.UnpicklingError):
        load_graph(bad)


def test_shipped_cmekg_pairs_are_a_default_source() -> None:
    from medgraph.ontology.build import default_sources

    kinds = {(s.kind, s.path) for s in default_sources("/nonexistent")}
    assert ("translation_pairs", "pkg:cmekg_zh_en.tsv.gz") in kinds
    rows = list(read_translation_pairs(PKG_DATA / "cmekg_zh_en.tsv.gz"))
    assert len(rows) > 15_000 and all(r.kind == "via_en" and r.lang == "zh" and r.en for r in rows[:100])
