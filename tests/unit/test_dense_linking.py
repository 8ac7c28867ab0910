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
    assert calls == [1]  # names loaded, not re-embedded (only the one-string unknown-text probe)
    assert (second.matrix == first.matrix).all() and second.ids == first.ids


def test_text_the_embedder_cannot_read_matches_nothing(tmp_path: Path) -> None:
    import numpy as np

    from tests.helpers import terms_vocabulary

    rows = [("D004827", "en", "Epilepsy"), ("D004827", "zh", "癫痫"), ("D006331", "en", "Heart Diseases")]
    small = terms_vocabulary(tmp_path, rows)
    embedder = make_embedder(EmbeddingConfig(dense="use", sparse="none"))
    a, b = np.asarray(embedder.embed_dense(["癫痫", "膈疝"]))
    assert float(a @ b / np.linalg.norm(a) / np.linalg.norm(b)) > 0.999  # USE: both are its "unknown" vector
    index = DenseNameIndex(small, embedder)
    assert index.unreadable_names == 1  # 癫痫 is left out of the index
    assert index.search(["膈疝"]) == [(None, 0.0)] and index.candidates(["膈疝"]) == [[]]
    assert index.search(["epilepsy"])[0][0] == "D004827"  # readable text still matches
    linker = Linker(small, LinkingConfig(dense=True, dense_threshold=0.6, tfidf=False), dense=index)
    assert linker.link("膈疝", "zh").mesh_id is None  # was Epilepsy at cosine 1.0


def test_rescore_prefers_character_overlap_and_disease_descriptors(vocab: Vocabulary) -> None:
    from medgraph.link.dense import Candidate, char_similarity, is_disease_like, rescore

    assert char_similarity("Myokardinfarkt", "Myocardial Infarction") > char_similarity("Myokardinfarkt", "Fever")
    assert char_similarity("心肌梗塞", "心肌梗死") > 0.3 and char_similarity("心肌梗塞", "发热") == 0.0
    assert is_disease_like("Gelenkentzündung der Hüfte") is False and is_disease_like("Polyarthritis")
    assert is_disease_like("过敏性鼻炎") and not is_disease_like("Metformin")
    cands = [Candidate("D008687", "Metformin", 0.72), Candidate("D009203", "Myocardial Infarction", 0.70)]
    assert rescore("Myokardinfarkt", cands, vocab, 0.0, 0.0) == ("D008687", 0.72)  # cosine alone
    assert rescore("Myokardinfarkt", cands, vocab, 0.5, 0.0)[0] == "D009203"  # shared characters
    assert rescore("Herzmuskelnekrose", cands, vocab, 0.0, 0.05)[0] == "D009203"  # disease prior


def test_dev_set_holds_out_names_and_scores_the_dense_step(vocab: Vocabulary) -> None:
    from medgraph.link import devset

    dev_vocab, queries = devset.held_out(vocab, 0.2, seed=1)
    held = {m for _, _, m in queries}
    assert held and {lang for lang, _, _ in queries} <= {"de", "zh"}
    assert all(not dev_vocab.entities[m].names.get("de") and not dev_vocab.entities[m].names.get("zh") for m in held)
    assert not any(t[2] in held and t[1] in ("de", "zh") for t in dev_vocab.terms)
    assert len(vocab.entities[next(iter(held))].names.get("de", []) + vocab.entities[next(iter(held))].names.get(
        "zh", [])) > 0  # the original vocabulary is untouched
    linker = Linker(dev_vocab, LinkingConfig(dense=True))
    run = devset.prepare(linker, queries, 5)
    strict = devset.accuracy(run, dev_vocab, LinkingConfig(dense=True, dense_threshold=1.0))
    loose = devset.accuracy(run, dev_vocab, LinkingConfig(dense=True, dense_threshold=0.3))
    assert all(loose[lang] >= strict[lang] for lang in strict)
    rows = devset.grid(run, dev_vocab, [0.3, 1.0], [0.0], [0.0])
    assert rows[0]["mean"] >= rows[1]["mean"] and len(rows) == 2
    with pytest.raises(ValueError):
        devset.held_out(vocab, 1.5)
