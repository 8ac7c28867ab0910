"""Corpus inputs in an object store: a real S3 API (moto's server on a free local port), read
through pyarrow.fs with the endpoint and credentials taken from the standard AWS variables.

The objects are real data: GraSCCo letters (JSONL), PubMedQA abstracts written as a PubMed
baseline file (``.xml.gz``) and the CDC guide (PDF).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from moto.server import ThreadedMotoServer

from medgraph.ingest.loaders import Shard, expand_inputs, load_shard, plan_shards
from medgraph.ingest.storage import StorageError, file_doc_id, list_files, local_copy, open_binary
from medgraph.schemas import Document, Failure
from medgraph.testing.eutils import article_xml, load_pubmedqa
from medgraph.testing.net import free_port

BUCKET = "medgraph-corpus"
CDC = "cdc_guide_infection_prevention_outpatient_2016.pdf"


@pytest.fixture(scope="module")
def s3(shared_data: Path) -> Iterator[dict[str, object]]:
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    with pytest.MonkeyPatch.context() as env:
        for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3"):
            env.delenv(name, raising=False)
        env.setenv("AWS_ACCESS_KEY_ID", "testing")
        env.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        env.setenv("AWS_DEFAULT_REGION", "us-east-1")
        env.setenv("AWS_ENDPOINT_URL", endpoint)
        client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
        client.create_bucket(Bucket=BUCKET)
        letters = (shared_data / "german_grascco" / "grascco_phi.jsonl").read_text(encoding="utf-8").splitlines()[:5]
        client.put_object(Bucket=BUCKET, Key="records/grascco.jsonl", Body="\n".join(letters).encode("utf-8"))
        articles = load_pubmedqa(shared_data / "pubmedqa" / "ori_pqal.json", limit=20)
        xml = ('<?xml version="1.0" encoding="UTF-8"?>\n<PubmedArticleSet>'
               + "".join(article_xml(a) for a in articles) + "</PubmedArticleSet>\n")
        client.put_object(Bucket=BUCKET, Key="pubmed/pubmed25n0001.xml.gz", Body=gzip.compress(xml.encode()))
        client.put_object(Bucket=BUCKET, Key="pubmed/pubmed25n0002.xml.gz", Body=b"not gzip at all")
        client.put_object(Bucket=BUCKET, Key="pdfs/cdc.pdf", Body=(shared_data / "pdfs" / CDC).read_bytes())
        client.put_object(Bucket=BUCKET, Key="pdfs/PROVENANCE.md", Body=b"- Source: notes, not a document")
        client.put_object(Bucket=BUCKET, Key="pdfs/scan.tiff", Body=b"II*\x00")
        yield {"endpoint": endpoint, "client": client, "letters": letters, "articles": articles}
    server.stop()


def _load(inputs: list[str], per_shard: int = 64) -> tuple[list[Document], list[Failure], list[Shard]]:
    files, failures = expand_inputs(inputs)
    shards = plan_shards(files, per_shard)
    items = [item for shard in shards for item in load_shard(shard)]
    return ([i for i in items if isinstance(i, Document)], failures + [i for i in items if isinstance(i, Failure)],
            shards)


def test_a_prefix_lists_its_documents_recursively(s3: dict[str, object]) -> None:
    files, failures = expand_inputs([f"s3://{BUCKET}/"])
    assert files == [f"s3://{BUCKET}/pdfs/cdc.pdf", f"s3://{BUCKET}/pubmed/pubmed25n0001.xml.gz",
                     f"s3://{BUCKET}/pubmed/pubmed25n0002.xml.gz", f"s3://{BUCKET}/records/grascco.jsonl"]
    assert not failures  # the notes and the .tiff are not documents of a prefix
    assert list_files(f"s3://{BUCKET}/pdfs/scan.tiff") == [f"s3://{BUCKET}/pdfs/scan.tiff"]  # named: the caller's call


def test_jsonl_records_are_sharded_and_read_from_s3(s3: dict[str, object]) -> None:
    docs, failures, shards = _load([f"s3://{BUCKET}/records/"], per_shard=2)
    assert [(s.start, s.stop) for s in shards] == [(0, 2), (2, 4), (4, 6)]
    letters = [json.loads(line) for line in s3["letters"]]  # type: ignore[attr-defined]
    assert not failures and [d.doc_id for d in docs] == [r["doc_id"] for r in letters]
    assert docs[0].source_path == f"s3://{BUCKET}/records/grascco.jsonl:1" and docs[0].language == "de"


def test_pubmed_gz_from_a_glob_and_a_corrupt_object_fails_alone(s3: dict[str, object]) -> None:
    docs, failures, shards = _load([f"s3://{BUCKET}/pubmed/*.xml.gz"])
    articles = s3["articles"]
    assert len(shards) == 2 and [d.doc_id for d in docs] == [f"pmid-{a.pmid}" for a in articles]  # type: ignore[attr-defined]
    assert docs[0].source_id == f"PMID:{articles[0].pmid}"  # type: ignore[index]
    [failure] = failures
    assert failure.source == f"s3://{BUCKET}/pubmed/pubmed25n0002.xml.gz"
    assert failure.reason.startswith("corrupt gzip after 0 article(s): Not a gzipped file")
    with open_binary(f"s3://{BUCKET}/pubmed/pubmed25n0001.xml.gz") as fh:
        assert fh.read(5) == b"<?xml"  # decompressed as it is read


def test_a_remote_pdf_is_parsed_from_a_local_copy(s3: dict[str, object], shared_data: Path) -> None:
    uri = f"s3://{BUCKET}/pdfs/cdc.pdf"
    with local_copy(uri) as path:
        assert path.suffix == ".pdf" and path.read_bytes() == (shared_data / "pdfs" / CDC).read_bytes()
    assert not path.exists()  # the temporary copy is gone
    local = shared_data / "pdfs" / CDC
    with local_copy(local) as same:
        assert same == local  # a local file is its own copy
    [doc] = load_shard(Shard(uri))
    assert isinstance(doc, Document) and doc.metadata["pages"] == 44
    assert doc.doc_id == file_doc_id(uri) and doc.doc_id.startswith("file:cdc.pdf@")
    assert doc.source_path == uri and doc.source_id == "cdc.pdf"


def test_missing_and_unreachable_inputs_fail_alone(s3: dict[str, object], shared_data: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    files, failures = expand_inputs([f"s3://{BUCKET}/records/", f"s3://no-such-bucket-{free_port()}/x/",
                                     f"s3://{BUCKET}/nothing/here/", f"s3://{BUCKET}/pubmed/*.nxml"])
    assert files == [f"s3://{BUCKET}/records/grascco.jsonl"]  # the good input is still listed
    reasons = [f.reason for f in failures]
    assert "no such object or prefix" in reasons[0] and "no such object or prefix" in reasons[1]
    assert reasons[2].endswith("no object matches the pattern")
    [gone] = load_shard(Shard(f"s3://{BUCKET}/records/gone.jsonl"))
    assert isinstance(gone, Failure) and gone.stage == "load" and "gone.jsonl" in gone.reason

    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{free_port()}")  # nothing listens there
    files, failures = expand_inputs([f"s3://{BUCKET}/records/", str(shared_data / "german_grascco" / "grascco_phi.jsonl")])
    assert [f.name for f in files] == ["grascco_phi.jsonl"]  # type: ignore[union-attr]  # the local input goes on
    [unreachable] = failures
    assert unreachable.source == f"s3://{BUCKET}/records/" and unreachable.stage == "load"
    assert unreachable.reason.startswith("cannot ") and "connect" in unreachable.reason.lower()
    [failure] = load_shard(Shard(f"s3://{BUCKET}/records/grascco.jsonl"))
    assert isinstance(failure, Failure) and "connect" in failure.reason.lower()
    with pytest.raises(StorageError):
        list_files(f"s3://{BUCKET}/?endpoint_override=localhost")



def test_an_unreachable_gcs_service_fails_alone_within_the_retry_limit(shared_data: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setenv("STORAGE_EMULATOR_HOST", f"http://127.0.0.1:{free_port()}")  # nothing listens there
    monkeypatch.setenv("MEDGRAPH_STORAGE_RETRY_S", "1")
    started = time.monotonic()
    files, failures = expand_inputs(["gs://medgraph-corpus/pubmed/", str(shared_data / "pubmedqa" / "ori_pqal.json")])
    assert time.monotonic() - started < 30
    assert [f.name for f in files] == ["ori_pqal.json"]  # type: ignore[union-attr]
    [failure] = failures
    assert failure.source == "gs://medgraph-corpus/pubmed/" and failure.reason.startswith("cannot list: ")


def test_the_corpus_job_builds_from_a_bucket(s3: dict[str, object], tmp_path: Path) -> None:
    """The Ray job over ``s3://bucket/``, run as a user runs it (its own Ray, the endpoint and
    credentials in its environment): workers read the JSONL and PubMed shards and parse the PDF from
    a local copy (cited under its URI's ID); the corrupt .xml.gz fails alone."""
    import os
    import subprocess
    import sys

    from medgraph.config import load_config
    from medgraph.stores import make_graph_store

    repo = Path(__file__).resolve().parents[2]
    sets = ["embedding.dense=hashing", "ray.num_cpus=2",
            f"stores.graph.path={tmp_path}/graph.sqlite", f"stores.vector.path={tmp_path}/qdrant"]
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env.setdefault("MEDGRAPH_HOME", str(repo / ".medgraph"))
    proc = subprocess.run(
        [sys.executable, "-m", "jobs.build_corpus", "--config", "configs/local.yaml", "--json",
         "--input", f"s3://{BUCKET}/", *[a for s in sets for a in ("--set", s)]],
        cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout[proc.stdout.index("{"):])
    articles = s3["articles"]
    assert summary["status"] == "succeeded" and summary["files"] == 4
    assert summary["documents_written"] == 5 + len(articles) + 1  # type: ignore[arg-type]
    [failure] = summary["failures"]
    assert failure["source"] == f"s3://{BUCKET}/pubmed/pubmed25n0002.xml.gz" and "corrupt gzip" in failure["reason"]
    graph = make_graph_store(load_config(repo / "configs" / "local.yaml", sets).stores.graph)
    try:
        hashes = graph.document_hashes()
        assert file_doc_id(f"s3://{BUCKET}/pdfs/cdc.pdf") in hashes
        assert {f"pmid-{a.pmid}" for a in articles} <= set(hashes)  # type: ignore[attr-defined]
        assert summary["store"]["vectors"] == summary["store"]["chunks"] == graph.counts()["chunks"]
    finally:
        graph.close()
