"""Model tier of the dense embedder (``medgraph.embed.encoder``) on a tiny XLM-R encoder built here.

The model has random weights (no download is possible or wanted): the tests check the plumbing a
real SapBERT-XLMR directory goes through: loading, pooling, masking, batching, order, the cache
name, errors, and the dense linking step that uses it. They skip without the ``ml`` extra.
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
from tests.helpers import terms_vocabulary

TEXTS = ["myocardial infarction", "Herzinfarkt", "心肌梗死", "heart attack after surgery in older patients",
         "metformin", "Diabetes mellitus Typ 2", "糖尿病", "kidney failure"]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch = pytest.importorskip("torch", reason="the encoder embedder needs the ml extra")
    pytest.importorskip("transformers", reason="the encoder embedder needs the ml extra")
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast, XLMRobertaConfig, XLMRobertaModel

    specials = ["<s>", "<pad>", "</s>", "<unk>"]
    tok = Tokenizer(models.WordPiece(unk_token="<unk>"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True, handle_chinese_chars=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(TEXTS * 3, trainers.WordPieceTrainer(vocab_size=300, special_tokens=specials))
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", tok.token_to_id("<s>")), ("</s>", tok.token_to_id("</s>"))]
    )
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
                                        pad_token="<pad>", cls_token="<s>", sep_token="</s>", model_max_length=64)
    torch.manual_seed(0)
    config = XLMRobertaConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                              num_attention_heads=2, intermediate_size=64, max_position_embeddings=80,
                              pad_token_id=tokenizer.pad_token_id, hidden_dropout_prob=0.0,
                              attention_probs_dropout_prob=0.0, initializer_range=0.5)  # distinct random vectors
    path = tmp_path_factory.mktemp("tiny-xlmr")
    tokenizer.save_pretrained(str(path))
    XLMRobertaModel(config).save_pretrained(str(path))
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
        pytest.skip("this machine has a GPU")
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
