"""Cross-lingual dense linking: terms the dictionary misses reach their descriptor through USE."""

from __future__ import annotations

from pathlib import Path

import pytest

from medgraph.config.models import EmbeddingConfig, LinkingConfig, VocabularyConfig
from medgraph.embed import make_embedder
from medgraph.link.dense import DenseNameIndex, index_names
from medgraph.link.linker import Linker
from medgraph.ontology.build import load_or_build
from medgraph.ontology.vocabulary import Vocabulary

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture(scope="module")
def vocab(tmp_path_factory: pytest.TempPathFactory) -> Vocabulary:
    sources = [{"kind": "mesh_xml", "path": str(FIXTURES / "mesh" / "desc_fixture.xml")},
               {"kind": "multilingual_terms", "path": "pkg:seed_terms.tsv"}]
    return load_or_build(VocabularyConfig(path=str(tmp_path_factory.mktemp("vocab")), sources=sources))


def test_index_names_cover_every_language_without_inverted_forms(vocab: Vocabulary) -> None:
    names, ids = index_names(vocab)
    mi = {n for n, i in zip(names, ids, strict=True) if i == "D009203"}
    assert {"Myocardial Infarction", "Herzinfarkt", "心肌梗死"} <= mi
    assert not any("," in n for n in mi)


def test_dense_fallback_links_what_the_dictionary_misses(vocab: Vocabulary) -> None:
    dictionary = Linker(vocab, LinkingConfig(dense=False))
    dense = Linker(vocab, LinkingConfig(dense=True, dense_threshold=0.8))
    term = "心脏病发作"  # "heart attack" in everyday Chinese: not a dictionary name
    assert dictionary.link(term, "zh").mesh_id is None
    hit = dense.link(term, "zh")
    assert hit.method == "dense" and hit.mesh_id == "D006331" and hit.score >= 0.8  # Heart Diseases
    assert dense.link("Fussball", "de").mesh_id is None  # nothing near enough: stays unlinked
    # a dictionary hit is never overridden by the dense step
    assert dense.link("Herzinfarkt", "de").method == "exact"


def test_name_vectors_are_cached_beside_the_vocabulary(vocab: Vocabulary, monkeypatch: pytest.MonkeyPatch) -> None:
    embedder = make_embedder(EmbeddingConfig(dense="use", sparse="none"))
    first = DenseNameIndex(vocab, embedder, vocab.directory)
    assert list(Path(vocab.directory).glob("dense_names-*.npz"))
    calls: list[int] = []
    original = embedder.embed_dense
    monkeypatch.setattr(embedder, "embed_dense", lambda texts: calls.append(len(texts)) or original(texts))
    second = DenseNameIndex(vocab, embedder, vocab.directory)
    assert calls == []  # loaded, not re-embedded
    assert (second.matrix == first.matrix).all() and second.ids == first.ids
