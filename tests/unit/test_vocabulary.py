"""Vocabulary build: NLM XML fixture, TSV sources, shipped data, save/load, manifest."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from medgraph.config.models import VocabularyConfig, VocabularySource
from medgraph.ontology.build import build_summary, build_vocabulary, load_or_build
from medgraph.ontology.categories import category_from_trees
from medgraph.ontology.sources import PKG_DATA, read_pubtator, resolve_paths
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
    assert {"Infarction, Myocardial", "Heart Attack", "Cardiovascular Stroke"} <= set(mi.names["en"])
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
