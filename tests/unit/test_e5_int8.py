"""E5Int8Embedder (multilingual-e5-small, int8 products in ONNX Runtime): its vectors follow the
float32 path, its graph runs on the integer kernels, batching changes nothing, and the factory
builds it from ``embedding.dense: e5_int8``."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from medgraph.config.models import EmbeddingConfig
from medgraph.embed.e5 import E5_DIM, E5Embedder
from medgraph.embed.e5_int8 import E5Int8Embedder, quantise_columns
from medgraph.embed.factory import make_embedder

TEXTS = [
    "Metformin is the first-line pharmacological treatment for type 2 diabetes mellitus.",
    "Hand hygiene before patient contact reduces healthcare-associated infections.",
    "Der Patient wurde mit akutem Herzinfarkt auf die Intensivstation aufgenommen.",
    "Bei Niereninsuffizienz ist die Dosis von Metformin anzupassen.",
    "阿司匹林能否降低糖尿病患者心肌梗死的风险？",
    "二甲双胍是2型糖尿病的一线治疗药物。",
    "x",
]
QUERIES = ["Which drug is used first for type 2 diabetes?", "Händedesinfektion vor Patientenkontakt", "骨折怎么治疗"]


@pytest.fixture(scope="module")
def f32() -> E5Embedder:
    return E5Embedder(threads=1)


@pytest.fixture(scope="module")
def int8() -> E5Int8Embedder:
    return E5Int8Embedder(threads=1)


def test_quantise_columns_is_symmetric_per_column_within_half_a_step() -> None:
    rng = np.random.default_rng(0)
    weight = rng.normal(size=(64, 16)).astype(np.float32) * np.linspace(0.01, 3.0, 16, dtype=np.float32)
    weight[:, 3] = 0.0  # an all-zero column keeps a usable scale
    q, scale = quantise_columns(weight)
    assert q.dtype == np.int8 and scale.shape == (16,)
    assert np.abs(q).max(axis=0).tolist() == [127] * 3 + [0] + [127] * 12  # each column uses its range
    assert np.all(np.abs(q * scale - weight) <= scale / 2 + 1e-7)


def test_vectors_follow_the_float32_path(f32: E5Embedder, int8: E5Int8Embedder) -> None:
    long = " ".join(TEXTS[:4]) * 8  # > 510 tokens: two windows
    assert len(int8.token_ids(long)) > 512
    passages = int8.embed_dense([*TEXTS, long])
    assert passages.shape == (len(TEXTS) + 1, E5_DIM) and passages.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-5)
    cos = (passages * f32.embed_dense([*TEXTS, long])).sum(axis=1)
    assert cos.min() > 0.998, cos
    queries = (int8.embed_query_dense(QUERIES) * f32.embed_query_dense(QUERIES)).sum(axis=1)
    assert queries.min() > 0.998, queries
    assert int8.embed_dense([]).shape == (0, E5_DIM)


def test_relevant_passage_ranks_first_across_languages(int8: E5Int8Embedder) -> None:
    passages = int8.embed_dense([TEXTS[0], TEXTS[1], "骨折患者需要用石膏固定。"])
    assert (int8.embed_query_dense(QUERIES) @ passages.T).argmax(axis=1).tolist() == [0, 1, 2]


def test_batches_and_worker_threads_change_nothing(int8: E5Int8Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    single = np.vstack([int8.embed_dense([t]) for t in TEXTS])
    np.testing.assert_allclose(int8.embed_dense(TEXTS), single, atol=1e-6)
    monkeypatch.setattr(int8, "batch_size", 2)
    monkeypatch.setattr(int8, "_workers", 2)  # two threads share the session
    np.testing.assert_allclose(int8.embed_dense(TEXTS), single, atol=1e-6)


def test_every_weight_product_runs_on_the_integer_kernels(int8: E5Int8Embedder) -> None:
    ops = Counter(node.op_type for node in int8._graph().graph.node)
    layers = 12
    assert ops["DynamicQuantizeMatMul"] == 5 * layers  # q, k, v, attention output, feed-forward in
    assert ops["MatMulInteger"] == layers  # feed-forward out, one activation scale per token
    assert ops["MultiHeadAttention"] == layers
    assert ops["MatMul"] == 0  # no float32 weight product left
    assert int8._layers == []  # the float32 copies are not kept


def test_the_factory_builds_it_from_the_config() -> None:
    emb = make_embedder(EmbeddingConfig(dense="e5_int8", sparse="none", threads=2))
    assert isinstance(emb, E5Int8Embedder)
    assert (emb.dim, emb._workers, emb.dense_feature_map) == (E5_DIM, 2, E5Embedder.dense_feature_map)
    with pytest.raises(ValueError):
        EmbeddingConfig(dense="e5_int4")
