"""German and Chinese documents through the corpus job on a real local Ray cluster.

A few real records of the shared Huatuo/BenTsao Chinese QA data (JSONL and a JSON array) and of
the GraSCCo German clinical letters, each in its original format next to its ``PROVENANCE.md``,
are built with ``build_corpus``. Checked: every record is loaded with its provenance, chunks carry
their language, German and Chinese text has MeSH-linked mentions, and a German and a Chinese
question retrieve their documents in the top 5.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from jobs.build_corpus import build_corpus
from medgraph.config import load_config
from medgraph.ingest.loaders import expand_inputs, load_shard, plan_shards
from medgraph.ingest.text import chunk_language
from medgraph.schemas import Document

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
ZH_LINES = (53, 99, 2895)  # llama_data.jsonl lines: myocardial infarction, diabetes, stroke
DE_LETTERS = ("Albers", "Baastrup", "Colon_Fake_A")


def _lines(path: Path, numbers: tuple[int, ...]) -> list[str]:
    with path.open(encoding="utf-8") as fh:
        return [line for n, line in enumerate(fh, 1) if n in numbers]


@pytest.fixture(scope="module")
def sample(tmp_path_factory, shared_data) -> Path:
    """Real records in their shipped formats: 3 + 2 Chinese QA records, 3 German letters."""
    root = tmp_path_factory.mktemp("multilingual")
    zh, de = root / "chinese_huatuo", root / "german_grascco"
    zh.mkdir()
    de.mkdir()
    src_zh, src_de = shared_data / "chinese_huatuo", shared_data / "german_grascco"
    shutil.copy(src_zh / "PROVENANCE.md", zh / "PROVENANCE.md")
    shutil.copy(src_de / "PROVENANCE.md", de / "PROVENANCE.md")
    (zh / "llama_data.jsonl").write_text("".join(_lines(src_zh / "llama_data.jsonl", ZH_LINES)), encoding="utf-8")
    dialogues = json.loads((src_zh / "liver_cancer_literature_qa.json").read_text(encoding="utf-8"))[:2]
    (zh / "liver_cancer_literature_qa.json").write_text(json.dumps(dialogues, ensure_ascii=False), encoding="utf-8")
    letters = [line for line in (src_de / "grascco_phi.jsonl").read_text(encoding="utf-8").splitlines()
               if json.loads(line)["doc_id"] in DE_LETTERS]
    (de / "grascco_phi.jsonl").write_text("\n".join(letters) + "\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def built(tmp_path_factory, sample):
    os.environ.setdefault("MEDGRAPH_HOME", str(REPO / ".medgraph"))
    home = tmp_path_factory.mktemp("store")
    cfg = load_config(REPO / "configs" / "local.yaml", [
        f"stores.graph.path={home}/graph.sqlite", f"stores.vector.path={home}/qdrant",
        f"app.path={home}/app.sqlite",  # its own quota counts, not the checkout's
        "embedding.dense=hashing", "ray.num_cpus=2"])
    summary = build_corpus(cfg, [str(sample)])
    return cfg, summary


def _rows(cfg, sql: str) -> list[tuple]:
    with sqlite3.connect(cfg.stores.graph.path) as conn:
        return conn.execute(sql).fetchall()


def test_loaders_read_every_record_with_provenance(sample):
    files, failures = expand_inputs([sample])
    assert not failures and {f.name for f in files} == {
        "llama_data.jsonl", "liver_cancer_literature_qa.json", "grascco_phi.jsonl"}
    docs = [d for s in plan_shards(files) for d in load_shard(s)]
    assert all(isinstance(d, Document) for d in docs) and len(docs) == 3 + 2 + 3
    by_lang = {lang: [d for d in docs if d.language == lang] for lang in ("de", "zh")}
    assert len(by_lang["zh"]) == 5 and {d.doc_id for d in by_lang["de"]} == set(DE_LETTERS)
    for doc in docs:
        meta = doc.metadata
        assert meta["dataset"] in {"chinese_huatuo", "german_grascco"}
        assert meta["source"].startswith("https://github.com/") and meta["licence"]
    assert {d.source_id for d in by_lang["zh"]} >= {"llama_data.jsonl:1", "llama_data.jsonl:2"}


def test_job_writes_chunks_in_their_language_with_mesh_mentions(built, sample):
    cfg, summary = built
    assert summary["status"] == "succeeded" and not summary["failures"]
    assert summary["documents_written"] == 8
    docs = dict(_rows(cfg, "SELECT doc_id, language FROM documents"))
    assert sorted(docs.values()) == ["de"] * 3 + ["zh"] * 5
    sources = dict(_rows(cfg, "SELECT doc_id, source_id FROM documents"))
    assert {sources[d] for d in DE_LETTERS} == set(DE_LETTERS)
    chunks = _rows(cfg, "SELECT chunk_id, doc_id, language, text FROM chunks")
    assert chunks and all(lang == docs[doc] for _, doc, lang, _ in chunks)
    # chunk by chunk, the text itself is in its document's language (no mixed chunk is mostly another)
    assert all(chunk_language(text, lang) == lang for _, _, lang, text in chunks)
    linked = _rows(cfg, "SELECT c.language, m.surface, m.mesh_id FROM mentions m JOIN chunks c USING (chunk_id)")
    by_lang = {lang: {(s, m) for lg, s, m in linked if lg == lang} for lang in ("de", "zh")}
    assert len({m for _, m in by_lang["de"]}) >= 5 and len({m for _, m in by_lang["zh"]}) >= 5
    assert all(m.startswith(("D", "C")) for lang in by_lang for _, m in by_lang[lang])
    zh_surfaces = {s for s, _ in by_lang["zh"]}
    assert any(any("\u4e00" <= ch <= "\u9fff" for ch in s) for s in zh_surfaces)  # Chinese names linked


@pytest.mark.parametrize(("question", "language", "expected"), [
    ("糖尿病患者出现呼吸道感染应该如何治疗？", "zh", "llama_data.jsonl:2"),
    ("Welche Therapie erhielt die Patientin nach der Handamputation und der Verbrennung?", "de", "Albers"),
])
def test_german_and_chinese_questions_retrieve_their_documents(built, question, language, expected):
    from medgraph.embed import make_embedder
    from medgraph.link import EntityExtractor
    from medgraph.ontology.build import load_or_build
    from medgraph.retrieve.query import QueryAnalyzer
    from medgraph.retrieve.retriever import Retriever
    from medgraph.stores import make_graph_store, make_vector_store

    cfg, _ = built
    vocab = load_or_build(cfg.vocabulary)
    analyzer = QueryAnalyzer(EntityExtractor(vocab, cfg.ner, cfg.linking), 0, cfg.retrieval.languages)
    graph, vectors = make_graph_store(cfg.stores.graph), make_vector_store(cfg.stores.vector)
    try:
        analysis = analyzer.analyze(question)
        assert analysis.language == language  # detected from the question
        result = Retriever(cfg.retrieval, graph, vectors, make_embedder(cfg.embedding)).retrieve(analysis)
        top = [c.chunk.source_id for c in result.candidates[:5] if c.chunk is not None]
    finally:
        graph.close()
        vectors.close()
    assert expected in top


@pytest.fixture(scope="module")
def app_url(built):
    """The Serve app over the multilingual store (extractive answers, offline)."""
    import socket

    from ray import serve

    from serve.demo import start

    cfg, _ = built
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    url = start(cfg.model_copy(update={"serve": cfg.serve.model_copy(update={"port": port})}))
    yield url
    serve.shutdown()


@pytest.mark.parametrize(("message", "language", "expected"), [
    ("糖尿病患者出现呼吸道感染应该如何治疗？", None, "zh"),  # detected
    ("Welche Therapie erhielt die Patientin nach der Handamputation?", "de", "de"),  # given
    ("Welche Therapie erhielt die Patientin nach der Handamputation?", None, "de"),  # detected
])
def test_chat_answers_in_the_questions_language(app_url, message, language, expected):
    import httpx

    from medgraph.generate import disclaimer

    payload = {"message": message, **({"language": language} if language else {})}
    r = httpx.post(f"{app_url}/chat", json=payload, timeout=120)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["language"] == expected
    assert body["disclaimer"] == disclaimer(expected) != disclaimer("en")


def test_graph_entity_names_in_the_requested_language(app_url, built):
    import httpx

    from medgraph.ontology.build import load_or_build

    cfg, _ = built
    vocab = load_or_build(cfg.vocabulary)
    plain = httpx.get(f"{app_url}/graph/entity", params={"name": "糖尿病", "lang": "zh"}, timeout=60)
    assert plain.status_code == 200, plain.text
    body = plain.json()
    entity = vocab.get(body["mesh_id"])
    assert entity is not None and entity.names.get("zh")
    assert body["name"] == entity.names["zh"][0] and set(body["names"]) == {"zh"}
    de = httpx.get(f"{app_url}/graph/entity", params={"name": "Zuckerkrankheit", "lang": "de"}, timeout=60).json()
    assert de["mesh_id"] == body["mesh_id"] and set(de["names"]) == {"de"}
    assert de["name"] == entity.names["de"][0]  # "Diabetes mellitus": the first German name
    for n in body["neighbours"]:  # neighbours are named in Chinese where a Chinese name exists
        zh_names = vocab.get(n["mesh_id"]).names.get("zh")
        assert n["name"] == (zh_names[0] if zh_names else vocab.get(n["mesh_id"]).name)
