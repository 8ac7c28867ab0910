"""Loaders: files → ``Document`` records (or ``Failure`` records, never exceptions).

Inputs: paths to JSONL records, PubMedQA's ``ori_pqal.json``, plain text, Markdown and PDF
(text layer). Output: an iterator over ``Document | Failure``.

Big record files are read in *shards* (``Shard``: a path and a record range) so that a
corpus in one file still spreads over many Ray tasks. A record that cannot be read fails alone,
with its file and line (or key) as the source.

JSONL record fields: ``title``; ``text`` or ``sections`` (``[{title, text, level?, page?}]``);
optional ``doc_id``, ``source_id``, ``language`` (detected when missing), ``metadata``.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medgraph.ingest.text import detect_language
from medgraph.schemas import Document, Failure, Section, content_hash

RECORD_SUFFIXES = {".jsonl", ".json"}
TEXT_SUFFIXES = {".txt", ".md", ".markdown"}
PDF_SUFFIXES = {".pdf"}
SUPPORTED = RECORD_SUFFIXES | TEXT_SUFFIXES | PDF_SUFFIXES

_MD_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_NUMBERED_HEADING = re.compile(r"^((?:\d+\.)*\d+)\.?\s+([A-ZÄÖÜ][^.!?]{1,80})$")


@dataclass(frozen=True)
class Shard:
    path: str
    start: int = 0
    stop: int | None = None  # record range [start, stop) for record files


def expand_inputs(inputs: Iterable[str | Path]) -> tuple[list[Path], list[Failure]]:
    """Files under the given paths (directories recursively), sorted; unknown types are failures."""
    files: list[Path] = []
    failures: list[Failure] = []
    for raw in inputs:
        path = Path(raw)
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUPPORTED))
        elif path.is_file():
            if path.suffix.lower() in SUPPORTED:
                files.append(path)
            else:
                failures.append(Failure(str(path), "load", f"unsupported file type {path.suffix!r}"))
        else:
            failures.append(Failure(str(path), "load", "no such file or directory"))
    return sorted(set(files)), failures


def plan_shards(files: list[Path], records_per_shard: int = 64) -> list[Shard]:
    """One shard per text/PDF file; record files are cut into ranges of ``records_per_shard``."""
    shards: list[Shard] = []
    for path in files:
        if path.suffix.lower() not in RECORD_SUFFIXES:
            shards.append(Shard(str(path)))
            continue
        n = _count_records(path)
        for start in range(0, max(n, 1), records_per_shard):
            shards.append(Shard(str(path), start, start + records_per_shard))
    return shards


def load_shard(shard: Shard) -> Iterator[Document | Failure]:
    path = Path(shard.path)
    suffix = path.suffix.lower()
    try:
        if suffix in RECORD_SUFFIXES:
            yield from _load_records(path, shard.start, shard.stop)
        elif suffix in TEXT_SUFFIXES:
            yield _load_text(path)
        elif suffix in PDF_SUFFIXES:
            from medgraph.ingest.pdf import load_pdf

            yield load_pdf(path)
        else:
            yield Failure(str(path), "load", f"unsupported file type {suffix!r}")
    except Exception as exc:  # one bad file must never stop the job
        yield Failure(str(path), "load", f"{type(exc).__name__}: {exc}")


# --- record files ---------------------------------------------------------------------------


def _is_pubmedqa(path: Path) -> bool:
    with path.open("rb") as fh:
        head = fh.read(4096).lstrip()
    return path.suffix.lower() == ".json" and head.startswith(b"{") and b'"CONTEXTS"' in head


@functools.lru_cache(maxsize=2)
def _read_json(path: Path, mtime_ns: int) -> dict[str, Any]:
    """Whole-file JSON, cached so that the shards of one file handled by a worker parse it once."""
    data = json.loads(path.read_bytes())
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object keyed by record ID")
    return data


def _count_records(path: Path) -> int:
    if _is_pubmedqa(path):
        return len(_read_json(path, path.stat().st_mtime_ns))
    with path.open("rb") as fh:
        return sum(1 for line in fh if line.strip())


def _load_records(path: Path, start: int, stop: int | None) -> Iterator[Document | Failure]:
    if _is_pubmedqa(path):
        data = _read_json(path, path.stat().st_mtime_ns)
        for key in list(data)[start:stop]:
            yield _guard(f"{path}#{key}", lambda k=key: pubmedqa_document(k, data[k], path))
        return
    index = 0
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            if (stop is None or index < stop) and index >= start:
                yield _guard(f"{path}:{lineno}", lambda r=raw, n=lineno: record_document(_parse_line(r), path, n))
            index += 1


def _parse_line(raw: bytes) -> dict[str, Any]:
    record = json.loads(raw.decode("utf-8"))
    if not isinstance(record, dict):
        raise ValueError("a JSONL line must be a JSON object")
    return record


def _guard(source: str, make: Any) -> Document | Failure:
    try:
        doc: Document = make()
    except (ValueError, KeyError, TypeError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return Failure(source, "load", f"{type(exc).__name__}: {exc}")
    return doc if doc.sections else Failure(source, "load", "document has no text", doc.doc_id)


def record_document(record: dict[str, Any], path: Path, lineno: int = 0) -> Document:
    """A JSONL record → Document; see the module docstring for the fields."""
    if "sections" in record:
        sections = [
            Section(str(s.get("title", "")), str(s["text"]), int(s.get("level", 1)), s.get("page"))
            for s in record["sections"]
        ]
    elif "text" in record:
        sections = parse_plain_text(str(record["text"]))
    else:
        raise KeyError("record needs 'text' or 'sections'")
    sections = [s for s in sections if s.text.strip()]
    title = str(record.get("title") or "")
    source_id = str(record.get("source_id") or record.get("doc_id") or "")
    doc_id = str(record.get("doc_id") or source_id or content_hash(title, *(s.text for s in sections)))
    body = " ".join(s.text for s in sections[:3])
    return Document(
        doc_id=doc_id, title=title or doc_id, sections=sections, source_id=source_id,
        language=str(record.get("language") or detect_language(title + " " + body)),
        source_path=f"{path}:{lineno}" if lineno else str(path),
        metadata=dict(record.get("metadata") or {}),
    )


def pubmedqa_document(pmid: str, item: dict[str, Any], path: Path) -> Document:
    """One PubMedQA abstract: labelled contexts plus the conclusion (``LONG_ANSWER``)."""
    labels = item.get("LABELS") or [""] * len(item["CONTEXTS"])
    sections = [Section(str(lab).title() or "Abstract", str(ctx)) for lab, ctx in zip(labels, item["CONTEXTS"], strict=False)]
    if item.get("LONG_ANSWER"):
        sections.append(Section("Conclusions", str(item["LONG_ANSWER"])))
    return Document(
        doc_id=f"pmid-{pmid}", title=f"PubMed {pmid}", language="en", sections=sections,
        source_id=f"PMID:{pmid}", source_path=str(path),
        metadata={"year": item.get("YEAR"), "mesh": item.get("MESHES", [])},
    )


# --- text files -----------------------------------------------------------------------------


def _load_text(path: Path) -> Document | Failure:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return Failure(str(path), "load", f"not valid UTF-8 (byte {exc.start}): re-encode the file as UTF-8")
    sections = parse_plain_text(text)
    title = next((s.title for s in sections if s.title), path.stem)
    doc = Document(
        doc_id=file_doc_id(path), title=title, sections=sections,
        language=detect_language(text), source_id=path.name, source_path=str(path),
    )
    return doc if sections else Failure(str(path), "load", "document has no text", doc.doc_id)


def file_doc_id(path: Path) -> str:
    """A file's document ID is its name: a changed file replaces its earlier version."""
    return f"file:{path.name}"


def parse_plain_text(text: str) -> list[Section]:
    """Markdown headings (``#``..``######``) or numbered headings ("2.1 Methods") → sections."""
    sections: list[Section] = []
    title, level = "", 1
    lines: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        md = _MD_HEADING.match(stripped)
        num = None if md else _NUMBERED_HEADING.match(stripped)
        if md or num:
            sections.append(Section(title, "\n".join(lines).strip(), level))
            if md:
                title, level = md.group(2), len(md.group(1))
            elif num:
                title, level = stripped, num.group(1).count(".") + 1
            lines = []
        else:
            lines.append(line)
    sections.append(Section(title, "\n".join(lines).strip(), level))
    return [s for s in sections if s.text]
