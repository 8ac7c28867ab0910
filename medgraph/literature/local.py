"""Documents on disk that are not ingested yet, searched by the names of the missing entities.

Input: a directory of ``.txt`` / ``.md`` files and ``.jsonl`` records (read by the corpus loaders,
``medgraph.ingest.loaders``: the same document IDs, titles and languages as a corpus build would
give them), and search terms in any language. Output: ``LiteratureRecord`` per matching document,
ranked by how many distinct terms it contains (then by total occurrences, then by ID).

Matching is case-insensitive on word boundaries for alphabetic scripts and plain substring for
CJK terms (Chinese has no spaces). The directory is re-read when a file in it changes. PDFs are
not searched here: parsing them is a corpus-build job (their text would need the isolated parser).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Sequence
from pathlib import Path

from medgraph.ingest.loaders import RECORD_SUFFIXES, TEXT_SUFFIXES, load_shard, plan_shards
from medgraph.literature.base import LiteratureRecord, SourceError, clean_terms
from medgraph.schemas import Document

log = logging.getLogger(__name__)

SUFFIXES = (RECORD_SUFFIXES | TEXT_SUFFIXES) - {".json"}  # .json is PubMedQA's whole-file format: a corpus
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")


def _pattern(term: str) -> re.Pattern[str]:
    escaped = re.escape(term.casefold())
    return re.compile(escaped if _CJK.search(term) else rf"(?<!\w){escaped}(?!\w)")


def document_record(doc: Document, source: str = "local") -> LiteratureRecord:
    """A loaded document as a literature record (sections joined, Markdown headings kept)."""
    parts = [f"## {s.title}\n{s.text}" if s.title and s.title != doc.title else s.text for s in doc.sections]
    year = doc.metadata.get("year")
    return LiteratureRecord(
        doc_id=doc.doc_id, title=doc.title, text="\n\n".join(parts), language=doc.language, source=source,
        url=doc.source_path, year=int(year) if isinstance(year, int | str) and str(year).isdigit() else None,
    )


class LocalDirectorySource:
    """A directory of documents not yet in the stores; see the module docstring."""

    name = "local"

    def __init__(self, path: str) -> None:
        self.path = Path(path)
        self._cache: tuple[tuple[tuple[str, int, int], ...], list[LiteratureRecord]] | None = None
        self._lock = threading.Lock()

    def search(self, terms: Sequence[str], max_results: int = 5, timeout_s: float = 10.0) -> list[LiteratureRecord]:
        if max_results < 1:
            raise ValueError(f"max_results must be >= 1, got {max_results}")
        patterns = [_pattern(t) for t in clean_terms(terms)]
        scored = []
        for record in self.records():
            haystack = f"{record.title}\n{record.text}".casefold()
            counts = [len(p.findall(haystack)) for p in patterns]
            distinct = sum(1 for c in counts if c)
            if distinct:
                scored.append((-distinct, -sum(counts), record.doc_id, record))
        scored.sort(key=lambda s: s[:3])
        return [s[3] for s in scored[:max_results]]

    def records(self) -> list[LiteratureRecord]:
        """Every readable document of the directory (cached until a file changes)."""
        if not self.path.is_dir():
            raise SourceError(f"local literature directory {self.path} does not exist")
        files = sorted(p for p in self.path.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)
        key = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files)
        with self._lock:
            if self._cache is None or self._cache[0] != key:
                self._cache = (key, self._load(files))
            return self._cache[1]

    def _load(self, files: list[Path]) -> list[LiteratureRecord]:
        out: list[LiteratureRecord] = []
        for shard in plan_shards(files, records_per_shard=1 << 30):
            for item in load_shard(shard):
                if isinstance(item, Document):
                    out.append(document_record(item))
                else:
                    log.warning("local literature: %s skipped (%s)", item.source, item.reason)
        return out
