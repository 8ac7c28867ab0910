from __future__ import annotations

import json
import shutil

from medgraph.ingest.loaders import expand_inputs, load_shard, parse_plain_text, plan_shards
from medgraph.schemas import Document, Failure


def load_all(paths):
    files, failures = expand_inputs(paths)
    items = [it for shard in plan_shards(files, records_per_shard=2) for it in load_shard(shard)]
    return [i for i in items if isinstance(i, Document)], failures + [i for i in items if isinstance(i, Failure)]


def test_jsonl_records_sections_text_and_bad_lines(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join([
        json.dumps({"doc_id": "a", "title": "A", "sections": [{"title": "Intro", "text": "Aspirin and stroke."}]}),
        "{not json",
        json.dumps({"title": "B", "text": "# Dosing\nMetformin 500 mg.\n## Renal\nReduce the dose.", "language": "en"}),
        json.dumps(["a list"]),
        json.dumps({"title": "C"}),
        "",
        json.dumps({"doc_id": "d", "title": "D", "text": "Der Patient erhielt Metformin und die Werte sind gut."}),
    ]), encoding="utf-8")
    docs, failures = load_all([path])
    assert [d.doc_id for d in docs][0] == "a" and len(docs) == 3
    b = docs[1]
    assert [(s.title, s.level) for s in b.sections] == [("Dosing", 1), ("Renal", 2)]
    assert docs[2].language == "de"
    assert sorted(f.source.rsplit(":", 1)[1] for f in failures) == ["2", "4", "5"]
    assert any("'text' or 'sections'" in f.reason for f in failures)


def test_sharding_covers_every_record_once(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(json.dumps({"doc_id": str(i), "title": "t", "text": f"text {i}"}) for i in range(7)))
    shards = plan_shards([path], records_per_shard=3)
    assert len(shards) == 3
    ids = [d.doc_id for s in shards for d in load_shard(s)]
    assert ids == [str(i) for i in range(7)]


def test_pubmedqa_contexts_load(shared_data, tmp_path):
    docs, failures = load_all([shared_data / "pubmedqa" / "ori_pqal.json"])
    assert len(docs) == 1000 and not failures
    doc = next(d for d in docs if d.doc_id == "pmid-21645374")
    assert doc.source_id == "PMID:21645374" and doc.language == "en"
    assert doc.sections[0].text.startswith("Programmed cell death (PCD)")
    assert doc.sections[-1].title == "Conclusions"


def test_non_utf8_text_and_unknown_inputs_fail_alone(tmp_path):
    (tmp_path / "good.md").write_text("# Title\nInsulin therapy for diabetes.", encoding="utf-8")
    (tmp_path / "bad.txt").write_bytes("Fieber und Schüttelfrost".encode("latin-1"))
    (tmp_path / "empty.txt").write_text("   \n", encoding="utf-8")
    (tmp_path / "x.docx").write_bytes(b"PK")
    docs, failures = load_all([tmp_path, tmp_path / "missing.txt", tmp_path / "x.docx"])
    assert [d.title for d in docs] == ["Title"]
    reasons = {f.source.rsplit("/", 1)[-1]: f.reason for f in failures}
    assert "UTF-8" in reasons["bad.txt"]
    assert reasons["empty.txt"] == "document has no text"
    assert reasons["missing.txt"] == "no such file or directory"
    assert "unsupported" in reasons["x.docx"]


def test_corrupt_and_empty_pdfs_fail_alone(tmp_path, shared_data):
    shutil.copy(shared_data / "pdfs" / "cdc_guide_infection_prevention_outpatient_2016.pdf", tmp_path / "cdc.pdf")
    (tmp_path / "corrupt.pdf").write_bytes(b"%PDF-1.4\n this is not really a pdf")
    (tmp_path / "empty.pdf").write_bytes(b"")
    docs, failures = load_all([tmp_path])
    assert len(docs) == 1 and docs[0].metadata["pages"] == 44
    assert {f.source.rsplit("/", 1)[-1] for f in failures} == {"corrupt.pdf", "empty.pdf"}
    assert all("PDF" in f.reason for f in failures)


def test_numbered_headings_in_plain_text():
    sections = parse_plain_text("1. Introduction\nText one.\n2.1 Dose Adjustment\nText two.")
    assert [(s.title, s.level) for s in sections] == [("1. Introduction", 1), ("2.1 Dose Adjustment", 2)]
