"""The corpus-build job with ``ner.kind: cascade`` on a real local Ray cluster.

A tiny token-classification model (every word tagged ``B-Disease``, its classifier bias forced)
runs inside the Ray ``Extract`` actors over three PubMedQA abstracts; the words the gazetteer
leaves alone and the linker links exactly come back as ``token+...`` mentions, one word each, and
the job's counts are those of the input. Needs the ``ml-test`` extra (fails without it under CI).
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from medgraph.config import load_config
from medgraph.config.models import NerConfig
from medgraph.schemas import ALL_CATEGORIES
from tests.helpers import require_module
from tests.tiny_ner import save_tiny_token_model

for _name in ("torch", "transformers"):
    require_module(_name)

from jobs.build_corpus import build_corpus  # noqa: E402

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]


def test_the_build_runs_the_cascade_in_its_extract_stage(tmp_path: Path) -> None:
    data = json.loads((REPO / "data" / "demo" / "pubmedqa_demo.json").read_text())
    corpus = tmp_path / "abstracts.jsonl"
    with corpus.open("w") as fh:
        for pmid in sorted(data)[:3]:
            fh.write(
                json.dumps(
                    {
                        "doc_id": f"pmid-{pmid}",
                        "title": f"PubMed {pmid}",
                        "text": " ".join(data[pmid]["CONTEXTS"]),
                    }
                )
                + "\n"
            )
    model = save_tiny_token_model(tmp_path / "token-en", force="B-Disease")
    os.environ.setdefault("MEDGRAPH_HOME", str(REPO / ".medgraph"))
    cfg = load_config(
        REPO / "configs" / "local.yaml",
        [
            f"stores.graph.path={tmp_path}/graph.sqlite",
            f"stores.vector.path={tmp_path}/qdrant",
            "embedding.dense=hashing",
            "ray.num_cpus=2",
            "linking.tfidf=false",
        ],
    )
    # any category agrees, so every word the linker links (and no mention covers) is kept
    ner = NerConfig(
        kind="cascade",
        token_model_paths={"en": str(model)},
        token_labels={"disease": ALL_CATEGORIES},
        batch_size=8,
    )
    summary = build_corpus(cfg.model_copy(update={"ner": ner}), [str(corpus)])
    assert summary["status"] == "succeeded" and summary["documents_written"] == 3 and not summary["failures"]
    with sqlite3.connect(tmp_path / "graph.sqlite") as db:
        rows = db.execute("SELECT surface, method FROM mentions").fetchall()
    model_rows = [(surface, method) for surface, method in rows if method.startswith("token+")]
    assert model_rows, rows[:20]  # the cascade ran in the Ray actors and its spans were written
    assert all(" " not in surface for surface, _ in model_rows)  # one span per word: every word began one
    assert any(not method.startswith("token+") for _, method in rows)  # the gazetteer's mentions stay
