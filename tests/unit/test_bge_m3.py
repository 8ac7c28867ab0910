"""Model tier of embedding: BGE-M3 through FlagEmbedding (``medgraph.embed.bge_m3``) on a tiny model.

The model directory is built here and has the layout of a BAAI/bge-m3 copy: a 2-layer XLM-R
(hidden size 32, random weights), a tokenizer trained locally on the test texts, and the BGE-M3
heads FlagEmbedding loads next to it (``sparse_linear.pt``: Linear(32, 1); ``colbert_linear.pt``:
Linear(32, 32)). Nothing is downloaded. The tests check what a real copy goes through: loading,
dense (CLS, unit length) and sparse (token-id indices, positive weights) outputs against a plain
transformers computation, queries vs passages, batching, truncation, one forward pass for both
outputs, the factory's combinations, errors, the corpus job's ``Embed`` stage and the vector store.

FlagEmbedding, torch and transformers are imported without ``importorskip``: the test install
(``make install-test``, the ``ml-test`` extra) has them, so a missing package fails these tests.
"""

from __future__ import annotations

import json
import os
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from medgraph.config.models import EmbeddingConfig, QdrantLocalConfig
from medgraph.embed import HybridEmbedder, SparseVector, make_embedder
from medgraph.embed.base import EmbedderError
from medgraph.schemas import Chunk
from tests.helpers import save_tiny_xlmr

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing may reach a hub, even by mistake
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

HIDDEN = 32
TEXTS = [
    "Aspirin lowers the risk of myocardial infarction in patients with coronary disease.",
    "Bei Patienten mit Herzinfarkt senkt Aspirin das Risiko eines erneuten Infarkts.",
    "阿司匹林可降低心肌梗死患者的风险。",
    "Patients with a fractured femur usually need surgery and physiotherapy.",
    "Metformin ist das Mittel der Wahl bei Diabetes mellitus Typ 2.",
    "二甲双胍是2型糖尿病的一线药物。",
    "kidney failure",
]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch

    path = tmp_path_factory.mktemp("tiny-bge-m3")
    save_tiny_xlmr(path, TEXTS, vocab_size=1000, hidden=HIDDEN, max_length=128, max_positions=140)
    # the BGE-M3 heads, as FlagEmbedding's EncoderOnlyEmbedderM3Runner.get_model loads them
    sparse_linear = torch.nn.Linear(HIDDEN, 1)
    with torch.no_grad():
        sparse_linear.bias.fill_(1.0)  # mostly positive token weights, as in a trained head
    torch.save(sparse_linear.state_dict(), path / "sparse_linear.pt")
    torch.save(torch.nn.Linear(HIDDEN, HIDDEN).state_dict(), path / "colbert_linear.pt")
    return path


@pytest.fixture(scope="module")
def embedder(model_dir: Path) -> Any:
    return _make(model_dir)


def _make(model_dir: Path | str | None, **kw: Any) -> Any:
    fields: dict[str, Any] = {"dense": "bge_m3", "sparse": "bge_m3", "model_path": str(model_dir), **kw}
    return make_embedder(EmbeddingConfig(**fields))


def _reference(model_dir: Path, texts: list[str], max_length: int = 256) -> tuple[np.ndarray, list[dict[int, float]]]:
    """BGE-M3's outputs computed with plain transformers + torch: CLS dense; relu(sparse_linear) max per id."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    model = AutoModel.from_pretrained(str(model_dir), local_files_only=True).eval()
    head = torch.nn.Linear(HIDDEN, 1)
    head.load_state_dict(torch.load(model_dir / "sparse_linear.pt", weights_only=True))
    skip = {tokenizer.convert_tokens_to_ids(t) for t in ("<s>", "</s>", "<pad>", "<unk>")}
    dense, sparse = [], []
    with torch.no_grad():
        for text in texts:
            enc = tokenizer([text], truncation=True, max_length=max_length, return_tensors="pt")
            hidden = model(**enc).last_hidden_state[0]
            cls = hidden[0].numpy()
            dense.append(cls / np.linalg.norm(cls))
            weights = torch.relu(head(hidden)).squeeze(-1).numpy()
            lex: dict[int, float] = {}
            for tid, w in zip(enc["input_ids"][0].tolist(), weights.tolist(), strict=True):
                if tid not in skip and w > 0:
                    lex[tid] = max(lex.get(tid, 0.0), w)
            sparse.append(lex)
    return np.vstack(dense), sparse


def _token_ids(model_dir: Path, text: str) -> set[int]:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    return set(tokenizer(text)["input_ids"]) - set(tokenizer.all_special_ids)


def _same_sparse(a: SparseVector, b: SparseVector | dict[int, float], atol: float = 1e-5) -> bool:
    b = b if isinstance(b, dict) else b.as_dict()
    a_dict = a.as_dict()
    return a_dict.keys() == b.keys() and all(abs(a_dict[k] - b[k]) <= atol for k in a_dict)


# --- the package ------------------------------------------------------------------------------


def test_flagembedding_is_installed_and_imports() -> None:
    # the ml-test extra installs it; a transformers release FlagEmbedding cannot import with fails here
    from FlagEmbedding import BGEM3FlagModel

    assert callable(BGEM3FlagModel)


def test_the_backend_module_imports_without_the_model_packages() -> None:
    import subprocess

    script = ("import sys\n"
              "for name in ('FlagEmbedding', 'torch', 'transformers'):\n"
              "    sys.modules[name] = None\n"
              "import medgraph.embed, medgraph.embed.factory, medgraph.embed.bge_m3\n"
              "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


# --- outputs ----------------------------------------------------------------------------------


def test_one_model_serves_dense_and_sparse(embedder: Any, model_dir: Path) -> None:
    from medgraph.embed.bge_m3 import BgeM3Embedder

    assert isinstance(embedder, BgeM3Embedder)
    assert embedder.has_dense and embedder.has_sparse and not embedder.sparse_idf
    assert embedder.dim == HIDDEN
    assert embedder.name.startswith(f"bge_m3-dense+sparse-{model_dir.name}-")


def test_dense_vectors_are_unit_length_cls_vectors(embedder: Any, model_dir: Path) -> None:
    out = embedder.embed_dense(TEXTS)
    assert out.shape == (len(TEXTS), HIDDEN) and out.dtype == np.float32
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(out[0], out[1])
    ref_dense, _ = _reference(model_dir, TEXTS)
    np.testing.assert_allclose(out, ref_dense, atol=1e-5)  # BGE-M3's dense side: normalised CLS


def test_sparse_vectors_are_token_weights_of_the_text(embedder: Any, model_dir: Path) -> None:
    out = embedder.embed_sparse(TEXTS)
    _, ref_sparse = _reference(model_dir, TEXTS)
    assert len(out) == len(TEXTS)
    for text, vec, ref in zip(TEXTS, out, ref_sparse, strict=True):
        assert isinstance(vec, SparseVector) and len(vec) > 0
        assert vec.indices.dtype == np.uint32 and vec.values.dtype == np.float32
        assert np.all(np.diff(vec.indices.astype(np.int64)) > 0)  # sorted, unique
        assert np.all(vec.values > 0)
        assert set(vec.indices.tolist()) <= _token_ids(model_dir, text)  # indices are the text's token ids
        assert _same_sparse(vec, ref)


def test_languages_get_their_own_tokens(embedder: Any) -> None:
    en, de, zh = embedder.embed_sparse(TEXTS[:3])
    assert en.dot(de) > 0  # both mention aspirin
    assert zh.dot(en) == 0 and zh.dot(de) == 0  # no shared token
    kidney = embedder.embed_sparse(["kidney failure"])[0]
    assert kidney.dot(en) == 0


def test_queries_and_passages_are_embedded_alike(embedder: Any) -> None:
    # BGE-M3 uses no instruction or prefix on either side
    np.testing.assert_allclose(embedder.embed_query_dense(TEXTS), embedder.embed_dense(TEXTS), atol=1e-6)
    for q, p in zip(embedder.embed_query_sparse(TEXTS), embedder.embed_sparse(TEXTS), strict=True):
        assert _same_sparse(q, p, atol=1e-6)
    query = embedder.embed_query_sparse(["fractured femur"])[0]
    scores = [query.dot(p) for p in embedder.embed_sparse(TEXTS)]
    assert int(np.argmax(scores)) == 3 and sorted(scores)[-2] == 0


def test_batching_equals_one_text_at_a_time(model_dir: Path) -> None:
    batched = _make(model_dir, batch_size=3)
    single = _make(model_dir, batch_size=1)
    dense = batched.embed_dense(TEXTS)
    alone = np.vstack([single.embed_dense([t]) for t in TEXTS])
    np.testing.assert_allclose(dense, alone, atol=1e-5)  # padding is masked, order is kept
    for b, s in zip(batched.embed_sparse(TEXTS), [single.embed_sparse([t])[0] for t in TEXTS], strict=True):
        assert _same_sparse(b, s)


def test_texts_are_cut_at_max_length(model_dir: Path) -> None:
    from transformers import AutoTokenizer

    long = " ".join(TEXTS[0].split() * 3) + " kidney failure"
    cut = _make(model_dir, max_length=8)
    vec = cut.embed_sparse([long])[0]
    first = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)(long)["input_ids"][1:7]
    assert 0 < len(vec) <= 6 and set(vec.indices.tolist()) <= set(first)
    ref_dense, ref_sparse = _reference(model_dir, [long], max_length=8)
    np.testing.assert_allclose(cut.embed_dense([long]), ref_dense, atol=1e-5)
    assert _same_sparse(vec, ref_sparse[0])


def test_empty_input_and_empty_text(embedder: Any) -> None:
    assert embedder.embed_dense([]).shape == (0, HIDDEN)
    assert embedder.embed_sparse([]) == []
    dense = embedder.embed_dense([""])
    assert dense.shape == (1, HIDDEN) and np.isclose(np.linalg.norm(dense), 1.0)
    assert len(embedder.embed_sparse([""])[0]) == 0  # only special tokens


def test_dense_then_sparse_runs_the_model_once(model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    emb = _make(model_dir)
    calls: list[tuple[str, int]] = []
    for name in ("encode_corpus", "encode_queries"):
        real = getattr(emb._model, name)

        def counted(texts: list[str], *a: Any, _real: Any = real, _name: str = name, **kw: Any) -> Any:
            calls.append((_name, len(texts)))
            return _real(texts, *a, **kw)

        monkeypatch.setattr(emb._model, name, counted)
    dense = emb.embed_dense(TEXTS)
    sparse = emb.embed_sparse(TEXTS)
    assert calls == [("encode_corpus", len(TEXTS))]
    emb.embed_query_sparse(["femur"]), emb.embed_query_dense(["femur"])
    assert calls[1:] == [("encode_queries", 1)]
    emb.embed_sparse(TEXTS)  # the kept output was used once; asked again, the model runs again
    assert len(calls) == 3
    ref_dense, ref_sparse = _reference(model_dir, TEXTS)
    np.testing.assert_allclose(dense, ref_dense, atol=1e-5)
    assert all(_same_sparse(s, r) for s, r in zip(sparse, ref_sparse, strict=True))


# --- factory combinations -----------------------------------------------------------------------


def test_bge_m3_mixes_with_other_backends(model_dir: Path) -> None:
    from medgraph.embed.bge_m3 import BgeM3Embedder

    dense_side = _make(model_dir, sparse="lexical")
    assert isinstance(dense_side, HybridEmbedder) and isinstance(dense_side.dense, BgeM3Embedder)
    assert not dense_side.dense.has_sparse and dense_side.sparse_idf  # lexical weights expect IDF
    assert dense_side.dim == HIDDEN and dense_side.embed_dense(TEXTS[:2]).shape == (2, HIDDEN)
    assert dense_side.dense.name.startswith("bge_m3-dense-")

    sparse_side = _make(model_dir, dense="hashing")
    assert isinstance(sparse_side, HybridEmbedder) and isinstance(sparse_side.sparse, BgeM3Embedder)
    assert not sparse_side.sparse.has_dense and sparse_side.sparse.dim == 0 and not sparse_side.sparse_idf
    assert sparse_side.dim == 256 and len(sparse_side.embed_query_sparse(TEXTS[:2])) == 2
    with pytest.raises(EmbedderError):
        sparse_side.sparse.embed_dense(["x"])

    dense_only = _make(model_dir, sparse="none")
    assert isinstance(dense_only, BgeM3Embedder) and dense_only.has_dense and not dense_only.has_sparse
    np.testing.assert_allclose(dense_only.embed_dense(TEXTS), _make(model_dir).embed_dense(TEXTS), atol=1e-6)


# --- errors -------------------------------------------------------------------------------------


def test_config_needs_a_model_path() -> None:
    for field in ("dense", "sparse"):
        with pytest.raises(ValueError, match="model_path"):
            EmbeddingConfig(**{field: "bge_m3"})


def test_missing_or_incomplete_model_directory(model_dir: Path, tmp_path: Path) -> None:
    import shutil

    from medgraph.embed.bge_m3 import BgeM3Embedder

    with pytest.raises(EmbedderError, match="does not exist or is not a directory"):
        _make(tmp_path / "nope")
    (tmp_path / "file").write_text("x")
    with pytest.raises(EmbedderError, match="not a directory"):
        _make(tmp_path / "file")
    with pytest.raises(EmbedderError, match="needs embedding.model_path"):
        BgeM3Embedder(None)
    with pytest.raises(EmbedderError, match="no config.json"):
        _make(tmp_path)
    headless = tmp_path / "headless"
    shutil.copytree(model_dir, headless)
    (headless / "sparse_linear.pt").unlink()
    with pytest.raises(EmbedderError, match="sparse_linear.pt"):
        _make(headless)
    assert _make(headless, sparse="none").has_dense  # the dense side needs no head


# skip-ok: the error path exists only without CUDA
@pytest.mark.skipif(
    __import__("torch").cuda.is_available(), reason="checks the error raised where CUDA is missing"
)
def test_cuda_without_a_gpu_is_an_error(model_dir: Path) -> None:
    with pytest.raises(EmbedderError, match="CUDA is not available"):
        _make(model_dir, device="cuda")


def test_missing_flagembedding_names_the_extra(model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "FlagEmbedding", None)  # import FlagEmbedding -> ModuleNotFoundError
    with pytest.raises(EmbedderError, match=r"needs the FlagEmbedding package: pip install 'medgraph\[ml\]'"):
        _make(model_dir)
    monkeypatch.setitem(sys.modules, "FlagEmbedding", types.ModuleType("FlagEmbedding"))  # import breaks inside
    with pytest.raises(EmbedderError, match=r"installed but cannot be imported with transformers"):
        _make(model_dir)


def test_missing_torch_names_the_extra(model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(EmbedderError, match=r"needs torch and transformers: pip install 'medgraph\[ml\]'"):
        _make(model_dir)


# --- the corpus job's Embed stage and the vector store -------------------------------------------


def test_corpus_embed_stage(model_dir: Path) -> None:
    from jobs.stages import Embed, chunk_row, failure_row, skipped_row
    from medgraph.schemas import Document, Failure

    stage = Embed(EmbeddingConfig(dense="bge_m3", sparse="bge_m3", model_path=str(model_dir)))
    docs = [Document(f"d{i}", "", lang, []) for i, lang in enumerate(["en", "de", "zh"])]
    chunks = [Chunk(f"d{i}-c0", d.doc_id, 0, TEXTS[i], ["Main"], f"d{i}-p", TEXTS[i], 9, d.language)
              for i, d in enumerate(docs)]
    rows = [chunk_row(chunks[0], docs[0]), failure_row(Failure("bad.pdf", "parse", "corrupt", "x")),
            chunk_row(chunks[1], docs[1]), skipped_row(Document("y", "", "en", [])), chunk_row(chunks[2], docs[2])]
    out = stage({k: np.array([r[k] for r in rows], dtype=object) for k in rows[0]})
    assert out["dense"].shape == (5, HIDDEN)
    assert np.allclose(np.linalg.norm(out["dense"][[0, 2, 4]], axis=1), 1.0, atol=1e-5)
    assert not out["dense"][[1, 3]].any() and out["sparse_json"][1] == out["sparse_json"][3] == "{}"
    ref_dense, ref_sparse = _reference(model_dir, TEXTS[:3])
    np.testing.assert_allclose(out["dense"][[0, 2, 4]], ref_dense, atol=1e-5)
    for row, ref in zip([0, 2, 4], ref_sparse, strict=True):
        stored = json.loads(out["sparse_json"][row])
        assert _same_sparse(SparseVector.from_arrays(stored["indices"], stored["values"]), ref)


def test_index_and_search_through_the_embedded_vector_store(embedder: Any, tmp_path: Path) -> None:
    from medgraph.stores import make_vector_store

    langs = ["en", "de", "zh", "en", "de", "zh", "en"]
    chunks = [Chunk(f"d{i}-c0", f"d{i}", 0, text, ["Main"], f"d{i}-p", text, len(text.split()), lang, title=f"T{i}")
              for i, (text, lang) in enumerate(zip(TEXTS, langs, strict=True))]
    texts = [c.text for c in chunks]
    with make_vector_store(QdrantLocalConfig(path=str(tmp_path / "q"), upsert_batch_size=4)) as store:
        store.ensure_collection(embedder.dim, embedder.sparse_idf)  # learned weights: no IDF modifier
        store.upsert(chunks, embedder.embed_dense(texts), embedder.embed_sparse(texts))
        assert store.count() == len(chunks)
        for i, text in enumerate(texts):  # a chunk's own text finds it first, densely
            assert store.search_dense(embedder.embed_query_dense([text])[0], limit=1)[0].chunk_id == f"d{i}-c0"
        femur = embedder.embed_query_sparse(["fractured femur surgery"])[0]
        hits = store.search_sparse(femur, limit=3)
        assert [h.chunk_id for h in hits] == ["d3-c0"]  # only that chunk shares a token with the question
        assert hits[0].score == pytest.approx(femur.dot(embedder.embed_sparse([TEXTS[3]])[0]), rel=1e-3)
        zh = embedder.embed_query_sparse(["心肌梗死"])[0]
        assert store.search_sparse(zh, limit=1)[0].chunk_id == "d2-c0"
        question = "Aspirin Herzinfarkt"
        hybrid = store.hybrid_search(embedder.embed_query_dense([question])[0],
                                     embedder.embed_query_sparse([question])[0], limit=3)
        assert {"d0-c0", "d1-c0"} <= {h.chunk_id for h in hybrid}
        assert store.get_sparse(["d3-c0"])["d3-c0"].as_dict().keys() == embedder.embed_sparse([TEXTS[3]])[0].as_dict().keys()
