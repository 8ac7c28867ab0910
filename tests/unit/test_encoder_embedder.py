"""Model tier of the dense embedder (``medgraph.embed.encoder``) on a tiny XLM-R encoder built here.

The model has random weights (no download is possible or wanted): the tests check the plumbing a
real SapBERT-XLMR directory goes through: loading, pooling, masking, batching, order, the cache
name, errors, and the dense linking step that uses it. They need the ``ml-test`` extra (the
test install has it) and fail without it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from medgraph.config.models import EmbeddingConfig, LinkingConfig
from medgraph.embed import make_embedder
from medgraph.embed.base import EmbedderError
from medgraph.ontology.vocabulary import Vocabulary
from tests.helpers import save_tiny_xlmr, terms_vocabulary

TEXTS = ["myocardial infarction", "Herzinfarkt", "心肌梗死", "heart attack after surgery in older patients",
         "metformin", "Diabetes mellitus Typ 2", "糖尿病", "kidney failure"]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tiny-xlmr")
    save_tiny_xlmr(path, TEXTS, vocab_size=300, hidden=32, max_length=64, max_positions=80)
    return path


def _embedder(model_dir: Path, **kw: Any) -> Any:
    return make_embedder(EmbeddingConfig(dense="encoder", sparse="none", model_path=str(model_dir), **kw))


def test_vectors_are_unit_length_and_independent_of_batching(model_dir: Path) -> None:
    emb = _embedder(model_dir, batch_size=3)
    batch = emb.embed_dense(TEXTS)
    assert batch.shape == (len(TEXTS), 32) and batch.dtype == np.float32
    assert np.allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)
    alone = np.vstack([emb.embed_dense([t]) for t in TEXTS])  # no padding, no reordering
    assert np.allclose(batch, alone, atol=1e-5)  # padding is masked and rows come back in input order
    assert not np.allclose(batch[0], batch[1])  # different texts, different vectors
    assert emb.name.startswith(f"encoder-{model_dir.name}-cls-")


def test_mean_pooling_differs_from_cls(model_dir: Path) -> None:
    cls, mean = _embedder(model_dir).embed_dense(TEXTS[:2]), _embedder(model_dir, pooling="mean").embed_dense(TEXTS[:2])
    assert not np.allclose(cls, mean)
    one = _embedder(model_dir, pooling="mean", batch_size=1).embed_dense(TEXTS[:2])
    assert np.allclose(mean, one, atol=1e-5)  # the mean ignores padding positions


def test_the_cache_name_follows_the_model(model_dir: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / model_dir.name
    shutil.copytree(model_dir, copy)
    assert _embedder(copy).name == _embedder(model_dir).name  # same files, same name
    config = json.loads((copy / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps({**config, "layer_norm_eps": 1e-6}))
    assert _embedder(copy).name != _embedder(model_dir).name


def test_errors_are_clear(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="model_path"):
        EmbeddingConfig(dense="encoder")
    with pytest.raises(ValueError, match="dense_model_path"):
        LinkingConfig(dense_embedder="encoder")
    with pytest.raises(EmbedderError, match="config.json"):
        make_embedder(EmbeddingConfig(dense="encoder", sparse="none", model_path=str(tmp_path)))


def test_cuda_without_a_gpu_is_a_clear_error(model_dir: Path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")  # skip-ok: the error path exists only without CUDA
    with pytest.raises(EmbedderError, match="CUDA is not available"):
        _embedder(model_dir, device="cuda")


def test_dense_linking_runs_on_the_encoder(model_dir: Path, tmp_path: Path) -> None:
    from medgraph.link.linker import Linker

    vocab: Vocabulary = terms_vocabulary(tmp_path, [
        ("D009203", "en", "Myocardial Infarction"), ("D009203", "de", "Herzinfarkt"), ("D009203", "zh", "心肌梗死"),
        ("D003924", "en", "Diabetes Mellitus, Type 2"), ("D003924", "zh", "糖尿病"),
    ])
    cfg = LinkingConfig(dense=True, dense_embedder="encoder", dense_model_path=str(model_dir), dense_threshold=0.5)
    linker = Linker(vocab, cfg)
    assert linker.dense.embedder.name.startswith("encoder-")
    assert linker.dense.search(["Herzinfarkt", "糖尿病"]) == [("D009203", pytest.approx(1.0, abs=1e-5)),
                                                           ("D003924", pytest.approx(1.0, abs=1e-5))]
    hit = linker.link("heart attack after surgery in older patients", "en")  # no dictionary name: dense
    assert hit.method == "dense" and hit.mesh_id in {"D009203", "D003924"}
