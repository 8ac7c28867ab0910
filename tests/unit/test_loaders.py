from __future__ import annotations

import json
import shutil

import pytest

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


def test_huatuo_instruction_records_and_json_arrays_keep_provenance(shared_data):
    folder = shared_data / "chinese_huatuo"
    files, _ = expand_inputs([folder])
    assert {f.name for f in files} == {"llama_data.jsonl", "liver_cancer_literature_qa.json",
                                       "cmcoqa_benchmark_questions.json"}  # PROVENANCE/LICENSE are not documents
    qa = [d for d in load_shard(plan_shards([folder / "llama_data.jsonl"], 5)[0]) if isinstance(d, Document)]
    assert len(qa) == 5 and all(d.language == "zh" for d in qa)
    first = json.loads((folder / "llama_data.jsonl").open(encoding="utf-8").readline())
    doc = qa[0]
    assert [s.title for s in doc.sections] == ["Question", "Answer"]
    assert doc.sections[0].text == first["instruction"] and doc.sections[1].text == first["output"]
    assert doc.source_id == "llama_data.jsonl:1" and doc.source_path.endswith("llama_data.jsonl:1")
    assert doc.metadata["dataset"] == "chinese_huatuo"
    assert "Huatuo-Llama-Med-Chinese" in doc.metadata["source"]
    assert "Apache-2.0" in doc.metadata["licence"] and "academic research only" in doc.metadata["licence"]
    # a JSON array of dialogue records: one document per item, the <user>/<bot> markers gone
    shards = plan_shards([folder / "liver_cancer_literature_qa.json"], 400)
    assert [(s.start, s.stop) for s in shards] == [(0, 400), (400, 800), (800, 1200)]
    dialogues = [d for d in load_shard(shards[0]) if isinstance(d, Document)]
    assert len(dialogues) == 400 and "<user>" not in dialogues[0].sections[0].text
    assert dialogues[0].source_id == "liver_cancer_literature_qa.json:1"
    assert dialogues[1].source_id == "748"  # the record's own id
    # questions without answers fail alone, with the fields a record needs
    failures = [f for s in plan_shards([folder / "cmcoqa_benchmark_questions.json"]) for f in load_shard(s)]
    assert len(failures) == 200 and all(isinstance(f, Failure) and "'question' + 'answer'" in f.reason
                                        for f in failures)


def test_grascco_letters_load_with_sections_and_provenance(shared_data):
    path = shared_data / "german_grascco" / "grascco_phi.jsonl"
    docs, failures = load_all([path])
    assert len(docs) == 63 and not failures
    assert all(d.language == "de" for d in docs)
    albers = next(d for d in docs if d.doc_id == "Albers")
    titles = [s.title for s in albers.sections]
    assert "Vorgeschichte Befund" in titles and "Verlauf" in titles  # letter headings become sections
    assert albers.source_id == "Albers" and albers.metadata["dataset"] == "german_grascco"
    assert albers.metadata["phi_spans"] > 0 and "NO license" in albers.metadata["licence"]
    assert not any(d.sections[0].text.startswith("\ufeff") for d in docs)


def test_clinical_headings_and_question_answer_records(tmp_path):
    sections = parse_plain_text("Diagnosen:\nArterielle Hypertonie\nTherapie und Verlauf\nRR gut eingestellt.\n"
                                "EKG: Sinusrhythmus, 72/min.")
    assert [(s.title, s.text.splitlines()[0]) for s in sections] == [
        ("Diagnosen", "Arterielle Hypertonie"), ("Therapie und Verlauf", "RR gut eingestellt.")]
    path = tmp_path / "qa.json"
    path.write_text(json.dumps([{"question": "Was ist Diabetes?", "answer": "Eine Stoffwechselerkrankung."}, 3]),
                    encoding="utf-8")
    docs, failures = load_all([path])
    assert docs[0].title == "Was ist Diabetes?" and docs[0].language == "de"
    assert docs[0].source_id == "qa.json:1" and "must be a JSON object" in failures[0].reason


def test_chunk_language_of_mixed_language_text():
    from medgraph.ingest.text import chunk_language, language_shares

    mixed = ("Der Patient erhielt Metformin. Metformin reduced mortality in patients with heart failure and "
             "diabetes in a large randomised trial. The effect persisted over five years of follow-up.")
    assert set(language_shares(mixed, "de")) == {"de", "en"}
    assert chunk_language(mixed, "de") == "en"  # most of the chunk is an English quotation
    assert chunk_language("Der Patient erhielt Metformin 500 mg. Die Blutzuckerwerte sind gut.", "de") == "de"
    assert chunk_language("患者服用Metformin 500 mg，血糖控制良好。", "zh") == "zh"  # a Latin drug name stays Chinese
    assert chunk_language("", "de") == "de"


def test_file_ids_are_unique_per_location_readable_and_stable(tmp_path, monkeypatch):
    from pathlib import Path

    from medgraph.ingest.storage import file_doc_id, file_doc_name

    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "report.txt").write_text(f"# Report {folder}\nFindings of ward {folder}.", encoding="utf-8")
    docs, failures = load_all([tmp_path])
    assert not failures and len({d.doc_id for d in docs}) == 2  # two report.txt are two documents
    assert all(d.doc_id.startswith("file:report.txt@") and file_doc_name(d.doc_id) == "report.txt" for d in docs)
    monkeypatch.chdir(tmp_path)
    again, _ = load_all(["a", "b/report.txt"])  # the same files named from elsewhere: the same IDs
    assert [d.doc_id for d in again] == [d.doc_id for d in docs]
    assert file_doc_id(Path("a/report.txt")) == file_doc_id(tmp_path / "a" / "report.txt")
    uri = "s3://corpus/guidelines/report.pdf"
    assert file_doc_id(uri) == file_doc_id(Path(uri)) != file_doc_id("s3://other/guidelines/report.pdf")
    assert file_doc_name(file_doc_id(uri)) == "report.pdf" and file_doc_name("file:old.pdf") == "old.pdf"
    assert file_doc_name("pmid-1") is None


def test_gzipped_records_are_counted_sharded_and_read(tmp_path):
    import gzip

    path = tmp_path / "c.jsonl.gz"
    path.write_bytes(gzip.compress("\n".join(json.dumps({"doc_id": str(i), "text": f"Aspirin dose {i}."})
                                             for i in range(5)).encode("utf-8")))
    (tmp_path / "notes.txt.gz").write_bytes(gzip.compress(b"not a supported type"))
    files, failures = expand_inputs([tmp_path])
    assert [f.name for f in files] == ["c.jsonl.gz"] and not failures  # only records and XML may be gzipped
    shards = plan_shards(files, records_per_shard=2)
    assert [(s.start, s.stop) for s in shards] == [(0, 2), (2, 4), (4, 6)]
    assert [d.doc_id for s in shards for d in load_shard(s)] == ["0", "1", "2", "3", "4"]


def test_compression_bombs_and_oversized_inputs_fail_alone(tmp_path, monkeypatch):
    """A gzip bomb, a JSON file too large to read whole and a JSONL line too long to hold fail alone
    with their reason; the good records beside them load (limits scaled down for the test)."""
    import gzip

    from medgraph.ingest import loaders, storage

    monkeypatch.setattr(storage, "BOMB_FLOOR", 1 << 20)  # 1 MB instead of 1 GB
    monkeypatch.setattr(storage, "MAX_WHOLE_FILE_BYTES", 64 << 10)
    monkeypatch.setattr(loaders, "MAX_RECORD_BYTES", 32 << 10)
    good = json.dumps({"doc_id": "ok", "title": "T", "text": "Metformin lowers glucose in type 2 diabetes."})
    with gzip.open(tmp_path / "bomb.jsonl.gz", "wb") as fh:  # 50 MB of zeros: ~50 KB compressed
        fh.write((good + "\n").encode() + b"0" * (50 << 20))
    (tmp_path / "big.json").write_text(json.dumps([json.loads(good)] * 2000))  # ~170 KB, read whole
    (tmp_path / "lines.jsonl").write_text("\n".join([good, json.dumps({"title": "X", "text": "y" * (40 << 10)}),
                                                     good.replace('"ok"', '"ok2"')]))
    docs, failures = load_all([tmp_path])
    reasons = {f.source.rsplit("/", 1)[-1]: f.reason for f in failures}
    assert any("bomb" in r for s, r in reasons.items() if s.startswith("bomb.jsonl.gz")), reasons
    assert "too large to read whole" in reasons["big.json"], reasons
    assert reasons["lines.jsonl:2"].startswith("a record over"), reasons
    assert sorted(d.doc_id for d in docs) == ["ok", "ok", "ok2"]  # the bomb's first record, lines 1 and 3
    assert storage.read_bytes(tmp_path / "lines.jsonl", limit=1 << 20).startswith(good.encode())


def test_a_new_input_format_is_one_registration(tmp_path, monkeypatch):
    """A reader and one ``register_format`` call: the file is then listed from a directory, cut
    into shards by its record count, read by the Parse stage, and gzipped copies are read too."""
    import csv
    import gzip
    import io

    from jobs.stages import Parse
    from medgraph.config.models import ParseConfig
    from medgraph.ingest import loaders, storage

    def rows(location):
        with storage.open_binary(location) as fh:
            return list(csv.DictReader(io.TextIOWrapper(fh, encoding="utf-8"), delimiter="\t"))

    def read(location, start, stop):
        for i, row in enumerate(rows(location)[start:stop], start + 1):
            yield loaders.record_document({"doc_id": row["id"], "title": row["title"], "text": row["abstract"]},
                                          location, i)

    monkeypatch.setattr(loaders, "FORMATS", dict(loaders.FORMATS))  # the registry as it was, after the test
    loaders.register_format(loaders.InputFormat("tsv", frozenset({".tsv"}), read,
                                                count=lambda location: len(rows(location)), gzip=True))
    def table(prefix):
        return "id\ttitle\tabstract\n" + "".join(
            f"{prefix}{i}\tTrial {i}\tMetformin lowered glucose in trial {i}.\n" for i in range(5))

    (tmp_path / "trials.tsv").write_text(table("t"))
    with gzip.open(tmp_path / "more.tsv.gz", "wt") as fh:
        fh.write(table("u"))
    (tmp_path / "notes.csv").write_text("not read")  # no format reads .csv: skipped in a directory
    files, failures = expand_inputs([tmp_path])
    assert [f.name for f in files] == ["more.tsv.gz", "trials.tsv"] and failures == []
    shards = plan_shards(files, records_per_shard=2)
    assert [(s.start, s.stop) for s in shards if s.path.endswith("trials.tsv")] == [(0, 2), (2, 4), (4, 6)]
    stage = Parse(ParseConfig())
    try:
        out = [row for s in shards for row in stage({"path": s.path, "start": s.start, "stop": s.stop})]
    finally:
        if stage.sandbox is not None:
            stage.sandbox.close()
    ids = sorted(json.loads(r["payload"])["doc_id"] for r in out if r["kind"] == "document")
    assert ids == sorted([f"t{i}" for i in range(5)] + [f"u{i}" for i in range(5)])
    with pytest.raises(ValueError, match="read by"):
        loaders.register_format(loaders.InputFormat("tsv2", frozenset({".tsv"}), read))
