"""benchmarks/gpu (the GPU runs) on a CPU machine: the prerequisite check names what is missing
(GPU, vLLM, weight folders) per part and runs nothing it cannot, ``--help`` works, the JSON report
and exit status say skipped, and the throughput parts' code runs on CPU with tiny random models.
The figures themselves need a CUDA GPU and real weights (docs/benchmarks.md, "GPU runs").
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from benchmarks.gpu import prereqs
from benchmarks.gpu.prereqs import MODEL_DIRS, PARTS, check
from benchmarks.gpu.run import main
from tests.helpers import REPO, require_module, save_tiny_xlmr

RUN_SH = REPO / "benchmarks" / "gpu" / "run.sh"
NO_GPU = shutil.which("nvidia-smi") is None
NO_VLLM = importlib.util.find_spec("vllm") is None


def test_help():
    out = subprocess.run([str(RUN_SH), "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "MEDGRAPH_MODELS" in out.stdout and "--check" in out.stdout
    for name in (*PARTS, *MODEL_DIRS):
        assert name in out.stdout


def test_check_on_this_machine_reports_the_missing_gpu_and_vllm(tmp_path):
    (tmp_path / "bge-m3").mkdir()
    (tmp_path / "bge-m3" / "config.json").write_text("{}")
    (tmp_path / "reranker").mkdir()  # empty: counts as missing
    out = subprocess.run(
        [str(RUN_SH), "--check", "--models", str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    report = json.loads(out.stdout)  # one JSON object, alone on stdout
    pre, parts = report["prerequisites"], report["parts"]
    assert set(parts) == set(PARTS)
    if NO_GPU:  # this project's CI and dev machines: no NVIDIA GPU
        assert out.returncode == 2 and not report["measured_on_gpu"] and report["exit_status"] == 2
        assert report["environment"]["gpus"] == []
        for part in PARTS:
            assert parts[part]["status"] == "skipped"
            assert "nvidia-smi not found" in parts[part]["reason"]
            assert any("torch" in m for m in pre[part]["missing"])  # not installed, or no CUDA
    if NO_VLLM:
        assert "Python package vllm is not installed" in parts["vllm_tier"]["reason"]
        assert report["environment"]["vllm"] is None
    assert f"{tmp_path}/llm/ is missing" in parts["vllm_tier"]["reason"]
    assert f"{tmp_path}/reranker/ is missing or empty" in parts["rerank"]["reason"]
    assert "bge-m3/ is missing" not in parts["embed_bge_m3"]["reason"]
    assert "none of" in parts["ner"]["reason"] and "gliner/ is missing" in parts["ner"]["reason"]
    if importlib.util.find_spec("benchmarks.ner_cascade") is None:
        assert "benchmarks.ner_cascade is not in this checkout" in parts["ner"]["reason"]
    assert "nvidia-smi not found" in out.stderr or not NO_GPU  # the human summary goes to stderr


def test_missing_prerequisites_are_reported_per_part(monkeypatch, tmp_path):
    """Deterministic whatever the machine: no nvidia-smi, no vLLM, no model folder."""
    monkeypatch.setattr(prereqs.shutil, "which", lambda name: None)
    real = prereqs._has_module
    monkeypatch.setattr(prereqs, "_has_module", lambda name: name != "vllm" and real(name))
    result = check(None)
    for part in PARTS:
        missing = result["prerequisites"][part]["missing"]
        assert not result["prerequisites"][part]["ok"]
        assert "nvidia-smi not found (no NVIDIA driver on this machine)" in missing
        assert any(m.startswith("no model folder: set MEDGRAPH_MODELS") for m in missing)
    assert any("vllm is not installed" in m for m in result["prerequisites"]["vllm_tier"]["missing"])
    assert not any("vllm" in m for m in result["prerequisites"]["rerank"]["missing"])
    assert check(tmp_path / "nope")["prerequisites"]["rerank"]["missing"][-1].endswith("does not exist")


def test_nothing_runs_when_prerequisites_are_missing(monkeypatch, capsys, tmp_path):
    from benchmarks.gpu import run

    monkeypatch.setattr(prereqs.shutil, "which", lambda name: None)
    monkeypatch.setattr(run, "_run_part", lambda part, args: (_ for _ in ()).throw(AssertionError(part)))
    assert main(["--models", str(tmp_path), "--parts", "rerank", "embed_sapbert"]) == 2
    report = json.loads(capsys.readouterr().out)
    assert {p["status"] for p in report["parts"].values()} == {"skipped"}


def test_a_failing_part_is_reported_and_the_others_still_run(monkeypatch, capsys, tmp_path):
    from benchmarks.gpu import run

    monkeypatch.setattr(
        run,
        "check",
        lambda models, parts, gpu_parts: {
            "environment": {},
            "prerequisites": {p: {"ok": True, "missing": []} for p in parts},
        },
    )

    def fake_part(part, args):
        if part == "rerank":
            raise RuntimeError("CUDA out of memory")
        return {"texts_per_s": 1.0}

    monkeypatch.setattr(run, "_run_part", fake_part)
    assert main(["--models", str(tmp_path), "--parts", "rerank", "embed_sapbert"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert (
        report["parts"]["rerank"]["status"] == "failed"
        and "CUDA out of memory" in report["parts"]["rerank"]["error"]
    )
    assert report["parts"]["embed_sapbert"] == {
        "status": "ok",
        "seconds": report["parts"]["embed_sapbert"]["seconds"],
        "texts_per_s": 1.0,
    }
    assert report["measured_on_gpu"] is True


def test_throughput_parts_run_on_cpu_with_tiny_models(tmp_path: Path):
    require_module("torch")
    transformers = require_module("transformers")
    from benchmarks.gpu import parts

    texts = parts.abstracts(20) + parts.phrases(50)
    assert [c.chunk.title for c in parts.evidence(2)] == ["Demo abstract 1", "Demo abstract 2"]
    assert len(parts.phrases(50)) == 50 and all(1 <= len(p.split()) <= 4 for p in parts.phrases(50))
    save_tiny_xlmr(
        tmp_path / "sapbert-xlmr", texts, vocab_size=300, hidden=32, max_length=64, max_positions=80
    )
    sap = parts.embed_sapbert(tmp_path, n=64, batch_size=16, device="cpu")
    assert sap["texts"] == 64 and sap["texts_per_s"] > 0 and sap["cuda_peak_allocated_mib"] is None

    shutil.copytree(tmp_path / "sapbert-xlmr", tmp_path / "reranker")  # same tokenizer, a one-logit head
    config = transformers.AutoConfig.from_pretrained(str(tmp_path / "reranker"), num_labels=1)
    transformers.XLMRobertaForSequenceClassification(config).save_pretrained(str(tmp_path / "reranker"))
    rr = parts.rerank(tmp_path, n=24, batch_size=8, per_query=8, device="cpu")
    assert rr["pairs"] == 24 and rr["pairs_per_s"] > 0 and rr["query_s"]["n"] == 3


SHRINK = {"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 64}


@pytest.fixture(scope="module")
def random_models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every architecture of ``--random-weights``, shrunk (same code paths, tiny sizes)."""
    require_module("torch")
    require_module("transformers")
    require_module("gliner")
    from benchmarks.gpu.architectures import ARCHITECTURES, build

    root = tmp_path_factory.mktemp("random-weights")
    built = build(root, sorted(ARCHITECTURES), shrink=SHRINK)
    assert set(built) == set(ARCHITECTURES) and all(v.endswith("(shrunk)") for v in built.values())
    return root


def test_the_random_weight_folders_use_xlmr_token_ids(random_models: Path):
    from transformers import AutoConfig, AutoTokenizer

    from medgraph.embed.e5 import E5Embedder

    e5 = E5Embedder(threads=1)
    text = "Metformin senkt den Blutzucker bei Typ-2-Diabetes; 二甲双胍 lowers HbA1c."
    for name in ("sapbert-xlmr", "bge-m3", "reranker", "ner-de"):
        tok = AutoTokenizer.from_pretrained(str(random_models / name))
        assert tok("passage: " + text)["input_ids"] == e5.token_ids(text)  # the real XLM-R ids
        assert AutoConfig.from_pretrained(str(random_models / name)).vocab_size == 250002
    assert AutoConfig.from_pretrained(str(random_models / "ner-en")).id2label[1] == "B-Disease"
    assert (random_models / "bge-m3" / "sparse_linear.pt").is_file()
    assert (random_models / "gliner" / "gliner_config.json").is_file()
    assert AutoConfig.from_pretrained(str(random_models / "gliner" / "backbone")).model_type == "deberta-v2"


def test_every_throughput_part_runs_on_the_random_weight_folders(random_models: Path):
    require_module("FlagEmbedding")
    from benchmarks.gpu import parts

    ner = parts.ner_models(random_models, n=12, batch_size=4, device="cpu", threshold=0.5)
    assert ner["languages"] == {"en": 4, "de": 4, "zh": 4}
    assert ner["token"]["texts"] == 8 and set(ner["token"]["models"]) == {"en", "de"}  # no ner-zh/
    assert ner["gliner"]["texts"] == 8 and ner["gliner"]["texts_per_s"] > 0
    assert ner["token"]["spans"] > 0 and ner["gliner"]["spans"] > 0  # random scores: spans galore
    none = parts.ner_models(random_models, n=6, batch_size=4, device="cpu", threshold=0.999999)
    assert none["gliner"]["spans"] == 0
    bge = parts.embed_bge_m3(random_models, n=8, batch_size=4, device="cpu")
    assert bge["dense_and_sparse"]["texts_per_s"] > 0 and bge["dense_only"]["texts_per_s"] > 0
    assert parts.rerank(random_models, n=8, batch_size=4, per_query=4, device="cpu")["query_s"]["n"] == 2


def test_run_with_random_weights_on_the_cpu_reports_what_it_measured(random_models: Path, capsys):
    code = main(["--random-weights", str(random_models), "--device", "cpu", "--parts", "embed_sapbert",
                 "vllm_tier", "--n", "16"])
    report = json.loads(capsys.readouterr().out)
    assert report["weights"].startswith("random") and report["device"] == "cpu"
    assert set(report["architectures"]) == {"sapbert-xlmr"}  # only what the parts read; vllm's llm/ is not built
    assert report["parts"]["embed_sapbert"]["status"] == "ok" and report["parts"]["embed_sapbert"]["texts"] == 16
    assert report["parts"]["vllm_tier"]["status"] == "skipped" and "llm/ is missing" in report["parts"]["vllm_tier"]["reason"]
    assert code == 2 and report["measured_on_gpu"] is False  # a CPU baseline is not a GPU figure


def test_cpu_parts_do_not_ask_for_a_gpu(monkeypatch, tmp_path):
    monkeypatch.setattr(prereqs.shutil, "which", lambda name: None)
    pre = check(tmp_path, ("rerank", "vllm_tier"), gpu_parts=("vllm_tier",))["prerequisites"]
    assert not any("nvidia-smi" in m for m in pre["rerank"]["missing"])
    assert "nvidia-smi not found (no NVIDIA driver on this machine)" in pre["vllm_tier"]["missing"]
