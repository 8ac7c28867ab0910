"""The corpus job's embedding actor pool gets the resources of ``pipeline.embed`` (no GPU needed).

``build_dataset`` is run against a stand-in for the Ray dataset that records the options each
``map_batches`` stage is given, so the test checks the options built, not a run on a GPU. The
BGE-M3 example commented in configs/cluster.yaml is uncommented here and must validate and reach
the pool as written.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from medgraph.config import load_config

REPO = Path(__file__).resolve().parents[2]
CLUSTER = REPO / "configs" / "cluster.yaml"


class RecordingDataset:
    """Records ``map_batches(fn, **options)`` calls and returns itself."""

    def __init__(self) -> None:
        self.stages: dict[str, dict[str, Any]] = {}

    def map_batches(self, fn: Any, **options: Any) -> RecordingDataset:
        self.stages[fn.__name__] = options
        return self


def _stages(cfg: Any, monkeypatch: pytest.MonkeyPatch) -> dict[str, dict[str, Any]]:
    import jobs.build_corpus as build_corpus

    ds = RecordingDataset()
    monkeypatch.setattr(build_corpus, "parsed_dataset", lambda *a, **k: ds)
    assert build_corpus.build_dataset(cfg, [], {}) is ds
    return ds.stages


def _bge_m3_example() -> list[str]:
    """Overrides that switch configs/cluster.yaml to its commented BGE-M3 lines."""
    text = CLUSTER.read_text(encoding="utf-8")
    pool = re.search(r"^  # embed:\s*(\{.*?\})\s*# BGE-M3", text, re.M)
    assert pool, "configs/cluster.yaml lost its commented BGE-M3 embed pool"
    block = re.search(r"^embedding:\n((?:  .*\n)+)", text, re.M)
    assert block
    settings = [m.group(1) for m in re.finditer(r"^  # (\w+: [^#\n]*?)[ \t]*(?:#.*)?$", block.group(1), re.M)]
    assert "dense: bge_m3" in settings and "sparse: bge_m3" in settings
    overrides = [f"pipeline.embed={pool.group(1)}"]
    for line in settings:
        key, _, value = line.partition(": ")
        overrides.append(f"embedding.{key}={value}")
    return overrides


def test_embed_pool_gets_the_configured_gpus(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = load_config(None, ["embedding.dense=hashing", "pipeline.embed.num_gpus=1", "pipeline.embed.num_cpus=2",
                             "pipeline.embed.min_actors=1", "pipeline.embed.max_actors=3",
                             "pipeline.embed.batch_size=256"])
    options = _stages(cfg, monkeypatch)["Embed"]
    assert options["num_gpus"] == 1 and options["num_cpus"] == 2 and options["batch_size"] == 256
    assert (options["compute"].min_size, options["compute"].max_size) == (1, 3)
    assert options["fn_constructor_kwargs"] == {"cfg": cfg.embedding, "trace": None}  # tracing off: no build trace


def test_cpu_pools_ask_for_no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    stages = _stages(load_config(None, ["embedding.dense=hashing"]), monkeypatch)
    assert set(stages) == {"Extract", "Embed"}
    assert all("num_gpus" not in options for options in stages.values())


def test_the_commented_bge_m3_example_of_cluster_yaml(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = load_config(CLUSTER, _bge_m3_example())
    emb = cfg.embedding
    assert (emb.dense, emb.sparse, emb.device) == ("bge_m3", "bge_m3", "cuda") and emb.model_path
    assert cfg.pipeline.embed.num_gpus == 1
    options = _stages(cfg, monkeypatch)["Embed"]
    assert options["num_gpus"] == 1 and options["fn_constructor_kwargs"]["cfg"].dense == "bge_m3"
    # the file itself still loads as the CPU default
    default = yaml.safe_load(CLUSTER.read_text(encoding="utf-8"))
    assert default["embedding"]["dense"] == "e5_int8" and "num_gpus" not in default["pipeline"]["embed"]
