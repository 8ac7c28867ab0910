"""LocalDirectorySource: documents on disk found by entity names in any language, ranked by matches."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from medgraph.ingest.storage import file_doc_id
from medgraph.literature.base import SourceError
from medgraph.literature.local import LocalDirectorySource


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "mi.md").write_text(
        "# Metformin after myocardial infarction\n\nMetformin users had smaller infarcts after a heart attack.\n"
        "## Methods\n\nA cohort of patients with myocardial infarction.\n", encoding="utf-8")
    (tmp_path / "leader.txt").write_text("The team leader described a misleading result.\n", encoding="utf-8")
    records = [
        {"doc_id": "de-1", "title": "Herzinfarkt", "language": "de",
         "text": "Nach einem Herzinfarkt erhalten Patienten eine duale Plättchenhemmung."},
        {"doc_id": "zh-1", "title": "心肌梗死", "language": "zh", "text": "心肌梗死后患者接受双联抗血小板治疗。"},
        {"doc_id": "lead-1", "title": "Lead exposure", "language": "en",
         "text": "Blood lead levels in battery workers; lead poisoning and lead colic."},
    ]
    (tmp_path / "more.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                                         encoding="utf-8")
    (tmp_path / "ignored.csv").write_text("lead,lead,lead\n", encoding="utf-8")
    return tmp_path


def test_ranks_by_distinct_terms_then_occurrences(folder: Path) -> None:
    source = LocalDirectorySource(str(folder))
    hits = source.search(["myocardial infarction", "Metformin", "Heart Attack"])
    assert [r.doc_id for r in hits] == [file_doc_id(folder / "mi.md")]
    top = hits[0]
    assert top.title == "Metformin after myocardial infarction" and top.source == "local" and top.language == "en"
    assert "## Methods\nA cohort of patients" in top.text  # section headings survive for re-chunking


def test_terms_in_german_and_chinese_match(folder: Path) -> None:
    source = LocalDirectorySource(str(folder))
    assert [r.doc_id for r in source.search(["心肌梗死"])] == ["zh-1"]
    assert [r.doc_id for r in source.search(["herzinfarkt"])] == ["de-1"]
    both = source.search(["Myocardial Infarction", "Herzinfarkt", "心肌梗死"], max_results=5)
    assert {r.doc_id for r in both} == {file_doc_id(folder / "mi.md"), "de-1", "zh-1"}


def test_whole_words_only_and_unsupported_files_ignored(folder: Path) -> None:
    hits = LocalDirectorySource(str(folder)).search(["lead"])
    assert [r.doc_id for r in hits] == ["lead-1"]  # not "leader" / "misleading", not the .csv


def test_max_results_and_new_files_are_seen(folder: Path) -> None:
    source = LocalDirectorySource(str(folder))
    assert len(source.search(["infarction", "Herzinfarkt", "心肌梗死"], max_results=2)) == 2
    assert source.search(["lithium"]) == []
    new = folder / "lithium.txt"
    new.write_text("Lithium toxicity in a newborn.\n", encoding="utf-8")
    os.utime(new, None)
    assert [r.doc_id for r in source.search(["lithium"])] == [file_doc_id(new)]


def test_missing_directory_and_bad_terms(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="does not exist"):
        LocalDirectorySource(str(tmp_path / "nope")).search(["lead"])
    with pytest.raises(ValueError, match="no search terms"):
        LocalDirectorySource(str(tmp_path)).search(["  "])


def test_the_first_source_with_records_answers_and_a_failing_one_is_skipped() -> None:
    """``fetch_first``: the agent's fetch step, in the deployment and in process alike."""
    import asyncio
    import time

    from medgraph.literature import LiteratureRecord, fetch_first

    record = LiteratureRecord("pmid-1", "Metformin", "Metformin lowers glucose.", source="pubmed")

    class Source:
        def __init__(self, name, result=(), error=None, delay=0.0):
            self.name, self.result, self.error, self.delay, self.asked = name, list(result), error, delay, 0

        def search(self, terms, max_results, time_budget_s):
            self.asked += 1
            time.sleep(self.delay)
            if self.error:
                raise self.error
            return self.result

    down, slow = Source("down", error=SourceError("HTTP 503")), Source("slow", [record], delay=2.0)
    empty, good, later = Source("empty"), Source("good", [record]), Source("later", [record])
    assert asyncio.run(fetch_first([down, slow, empty, good, later], ["metformin"], 5, 0.5)) == [record]
    assert (down.asked, slow.asked, empty.asked, good.asked, later.asked) == (1, 1, 1, 1, 0)
    with pytest.raises(SourceError, match=r"down: HTTP 503; slow: timed out"):
        asyncio.run(fetch_first([down, slow], ["metformin"], 5, 0.5))
    assert asyncio.run(fetch_first([empty], ["metformin"], 5, 0.5)) == []
