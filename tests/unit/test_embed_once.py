"""A question is embedded once per request: the retriever keeps its query vectors (the relational
channel's featurisation reuses them) and ``RetrievalResult.analysis`` carries the dense one to the
answer step (the extractive composer's sentence feature), so neither embeds it again."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from medgraph.config import load_config
from medgraph.generate.extractive import ExtractiveComposer
from medgraph.retrieve.retriever import QUERY_VECTORS_KEPT, Retriever
from medgraph.retrieve.types import QueryAnalysis
from tests.helpers import REPO, index_tiny_corpus

FIXTURES = REPO / "tests" / "fixtures"
CORPUS = [
    {"doc_id": "heart", "title": "Metformin and myocardial infarction", "language": "en",
     "sections": [{"title": "Results", "text": "Metformin lowered myocardial infarction in diabetes. "
                                               "Patients on metformin had fewer heart attacks after one year."}]},
    {"doc_id": "fever", "title": "Fever after vaccination", "language": "en",
     "sections": [{"title": "Results", "text": "Fever after vaccination resolved within two days in most children."}]},
]
SOURCES = [{"kind": "mesh_xml", "path": str(FIXTURES / "mesh" / "desc_fixture.xml")}]
QUESTION = "Does metformin lower myocardial infarction?"


class Counted:
    """Records every text the wrapped embedder is asked to embed as a query (dense)."""

    def __init__(self, embedder: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self.texts: list[str] = []
        original = embedder.embed_query_dense

        def embed_query_dense(texts: list[str]) -> Any:
            self.texts.extend(texts)
            return original(texts)

        monkeypatch.setattr(embedder, "embed_query_dense", embed_query_dense)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Any:
    tmp = tmp_path_factory.mktemp("once")
    idx, cfg = index_tiny_corpus(tmp, CORPUS, SOURCES)
    yield idx, cfg
    idx.close()


def test_the_retriever_embeds_a_question_once_and_returns_its_vector(index: Any, monkeypatch: pytest.MonkeyPatch):
    idx, cfg = index
    retriever = Retriever(cfg.retrieval, idx.graph, idx.vectors, idx.embedder)
    counted = Counted(idx.embedder, monkeypatch)
    analysis = QueryAnalysis(QUESTION, "en")
    result = retriever.retrieve(analysis)
    assert counted.texts == [QUESTION]
    carried = np.asarray(result.analysis.query_dense, dtype=np.float32)
    assert carried.shape == (idx.embedder.dim,)
    np.testing.assert_array_equal(carried, retriever.query_vectors(analysis).dense)
    assert result.analysis == analysis  # the vector is not part of the analysis' identity
    retriever.featurise(analysis, result.candidates)  # the relational channel's step
    retriever.retrieve(result.analysis)  # a vector carried in is used as it is
    assert counted.texts == [QUESTION]
    with pytest.raises(ValueError):  # kept and shared: read-only
        retriever.query_vectors(analysis).dense[0] = 1.0
    for n in range(QUERY_VECTORS_KEPT):  # only the latest questions are kept
        retriever.query_vectors(QueryAnalysis(f"question {n}", "en"))
    retriever.retrieve(analysis)
    assert counted.texts.count(QUESTION) == 2


def test_the_composer_scores_sentences_with_the_carried_vector(index: Any, monkeypatch: pytest.MonkeyPatch):
    idx, cfg = index
    retriever = Retriever(cfg.retrieval, idx.graph, idx.vectors, idx.embedder)
    result = retriever.retrieve(QueryAnalysis(QUESTION, "en"))
    sentences = ["Metformin lowered myocardial infarction in diabetes.", "Fever resolved within two days."]
    composer = ExtractiveComposer(cfg.answer, idx.embedder)
    counted = Counted(idx.embedder, monkeypatch)
    carried = composer._dense(QUESTION, sentences, result.analysis)
    assert counted.texts == []
    assert composer._dense(QUESTION, sentences, QueryAnalysis(QUESTION, "en")) == pytest.approx(carried, abs=1e-6)
    assert composer._dense("another question", sentences, result.analysis) is not None  # not its vector
    assert counted.texts == [QUESTION, "another question"]


def test_one_request_through_the_agent_embeds_its_question_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Before: three times (retrieval, the relational channel's featurisation, the composer)."""
    from medgraph.agent.graph import AgentRequest
    from serve.inprocess import build_agent

    (tmp_path / "index").mkdir()
    index, base = index_tiny_corpus(tmp_path / "index", CORPUS, SOURCES)
    path, vocab = index.path, base.vocabulary
    index.close()
    cfg = load_config(REPO / "configs" / "local.yaml", [
        "embedding.dense=hashing", f"vocabulary.path={vocab.path}", f"vocabulary.sources={json.dumps(SOURCES)}",
        f"stores.graph.path={path}/graph.sqlite", f"stores.vector.path={path}/qdrant",
        "stores.vector.collection=chunks", f"app.path={tmp_path}/app.sqlite", "gaps.enabled=false",
        "answer.sentence_dense=all",  # the composer scores English sentences with the question too
    ])
    built = build_agent(cfg)
    try:
        embedder = built.retriever.retriever.embedder
        assert built.engine.composer.embedder is embedder
        counted = Counted(embedder, monkeypatch)
        state = asyncio.run(built.agent.run(AgentRequest(QUESTION)))
        assert not state["answer"].refused and state["answer"].citations
        assert len(state["analysis"].entity_ids) >= 2 and state["relational"]  # the relational channel ran
        assert counted.texts == [QUESTION]
    finally:
        built.close()
