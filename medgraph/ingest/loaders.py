"""Loaders: files → ``Document`` records (or ``Failure`` records, never exceptions).

Inputs: paths to JSONL records, JSON arrays of records, PubMedQA's ``ori_pqal.json``, plain text,
Markdown and PDF (text layer). Output: an iterator over ``Document | Failure``. The format is
detected from the file (``.json`` starting with ``[``: an array of records; ``{`` with
``CONTEXTS``: PubMedQA) and, for records, from their fields.

Big record files are read in *shards* (``Shard``: a path and a record range) so that a
corpus in one file still spreads over many Ray tasks. A record that cannot be read fails alone,
with its file and line (or key) as the source.

Record fields (JSONL lines or array items): ``title``; ``text`` or ``sections``
(``[{title, text, level?, page?}]``); optional ``doc_id``, ``source_id`` (default: file name and
line or item number), ``language`` (detected when missing), ``metadata``. Question-answer records
are read too: ``instruction`` (+ ``input``) and ``output`` (instruction-tuning data such as
Huatuo/BenTsao; ``<user>:`` / ``<bot>:`` dialogue turns become lines), or ``question`` and
``answer``. GraSCCo-style letters are plain ``{doc_id, text}`` records (their PHI annotations are
counted in ``metadata.phi_spans``; a leading BOM is dropped).

Provenance: when the file's folder has a ``PROVENANCE.md`` (as the shared data sets do), its
``Source ...:`` and ``Licen[cs]e ...:`` lines are copied into every document's ``metadata``
(``source``, ``licence``, ``dataset`` = the folder name); a record's own ``metadata`` wins.
"""

from __future__ import annotations

import functools
import itertools
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
# clinical letters: "Diagnosen:", "Therapie und Verlauf:" (a short capitalised line ending in a colon)
# or a known section name on a line of its own ("Anamnese", "Procedere", "HAUPT-UND NEBENDIAGNOSEN")
_COLON_HEADING = re.compile(r"^([A-ZÄÖÜ][^\d:.!?;,()]{1,50}):$")
_CLINICAL_SECTION = re.compile(
    r"anamnese|diagnose|procedere|verlauf|therapie|befund|epikrise|zusammenfassung|beurteilung|"
    r"medikation|histologie|vorgeschichte|untersuchungen|vorgehen|aufnahmegrund", re.IGNORECASE)
_DATASET_NOTE = re.compile(r"^(PROVENANCE|README|LICEN[CS]E|NOTICE)\b", re.IGNORECASE)
_DIALOGUE_TURN = re.compile(r"\s*<(user|bot)>\s*[:：]\s*")
_PROVENANCE_LINE = re.compile(r"^-\s*(Source|Licen[cs]e)[^:]*:\s*(.+)$", re.IGNORECASE)


@dataclass(frozen=True)
class Shard:
    path: str
    start: int = 0
    stop: int | None = None  # record range [start, stop) for record files


def expand_inputs(inputs: Iterable[str | Path]) -> tuple[list[Path], list[Failure]]:
    """Files under the given paths (directories recursively), sorted; unknown types are failures.

    In a directory, a data set's own notes (``PROVENANCE.md``, ``README*``, ``LICENSE*``,
    ``NOTICE*``) are not documents; named as an input, such a file is loaded.
    """
    files: list[Path] = []
    failures: list[Failure] = []
    for raw in inputs:
        path = Path(raw)
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*")
                                if p.is_file() and p.suffix.lower() in SUPPORTED and not _DATASET_NOTE.match(p.name)))
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


def _head(path: Path) -> bytes:
    with path.open("rb") as fh:
        return fh.read(4096).removeprefix(b"\xef\xbb\xbf").lstrip()


def _is_pubmedqa(path: Path) -> bool:
    if path.suffix.lower() != ".json":
        return False
    head = _head(path)
    return head.startswith(b"{") and b'"CONTEXTS"' in head


def _is_json_array(path: Path) -> bool:
    return path.suffix.lower() == ".json" and _head(path).startswith(b"[")


@functools.lru_cache(maxsize=2)
def _read_json(path: Path, mtime_ns: int) -> Any:
    """Whole-file JSON, cached so that the shards of one file handled by a worker parse it once."""
    data = json.loads(path.read_bytes().decode("utf-8-sig"))
    if _is_json_array(path):
        if not isinstance(data, list):
            raise ValueError("expected a JSON array of records")
    elif not isinstance(data, dict):
        raise ValueError("expected a JSON object keyed by record ID")
    return data


def _count_records(path: Path) -> int:
    if _is_pubmedqa(path) or _is_json_array(path):
        return len(_read_json(path, path.stat().st_mtime_ns))
    with path.open("rb") as fh:
        return sum(1 for line in fh if line.strip())


def _load_records(path: Path, start: int, stop: int | None) -> Iterator[Document | Failure]:
    if _is_pubmedqa(path):
        data = _read_json(path, path.stat().st_mtime_ns)
        for key in list(data)[start:stop]:
            yield _guard(f"{path}#{key}", lambda k=key: pubmedqa_document(k, data[k], path))
        return
    if _is_json_array(path):
        items = _read_json(path, path.stat().st_mtime_ns)
        for i in range(start, min(stop if stop is not None else len(items), len(items))):
            yield _guard(f"{path}#{i + 1}", lambda n=i + 1: record_document(_as_record(items[n - 1]), path, n))
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
    return _as_record(json.loads(raw.decode("utf-8-sig")))


def _as_record(record: Any) -> dict[str, Any]:
    if not isinstance(record, dict):
        raise ValueError("a record must be a JSON object")
    return record


def _guard(source: str, make: Any) -> Document | Failure:
    try:
        doc: Document = make()
    except (ValueError, KeyError, TypeError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return Failure(source, "load", f"{type(exc).__name__}: {exc}")
    return doc if doc.sections else Failure(source, "load", "document has no text", doc.doc_id)


def record_document(record: dict[str, Any], path: Path, lineno: int = 0) -> Document:
    """A record (JSONL line or array item number ``lineno``) → Document; fields: module docstring."""
    title = str(record.get("title") or "")
    if "sections" in record:
        sections = [
            Section(str(s.get("title", "")), str(s["text"]), int(s.get("level", 1)), s.get("page"))
            for s in record["sections"]
        ]
    elif "text" in record:
        sections = parse_plain_text(str(record["text"]).lstrip("\ufeff"))
    elif (qa := _qa_fields(record)) is not None:
        question, answer = qa
        sections = [Section("Question", question), Section("Answer", answer)]
        title = title or _short(question)
    else:
        raise KeyError("record needs 'text' or 'sections' (or 'instruction' + 'output', 'question' + 'answer')")
    sections = [s for s in sections if s.text.strip()]
    item = f"{path.name}:{lineno}" if lineno else path.name
    source_id = str(record.get("source_id") or record.get("doc_id") or record.get("id") or item)
    doc_id = str(record.get("doc_id") or record.get("source_id") or content_hash(title, *(s.text for s in sections)))
    body = " ".join(s.text for s in sections[:3])
    metadata = {**folder_provenance(path.parent), **_annotation_counts(record), **dict(record.get("metadata") or {})}
    return Document(
        doc_id=doc_id, title=title or doc_id, sections=sections, source_id=source_id,
        language=str(record.get("language") or detect_language(title + " " + body)),
        source_path=f"{path}:{lineno}" if lineno else str(path),
        metadata=metadata,
    )


def _qa_fields(record: dict[str, Any]) -> tuple[str, str] | None:
    """(question, answer) of an instruction-tuning or QA record, else None."""
    if record.get("instruction") and record.get("output"):
        question = " ".join(str(record[k]).strip() for k in ("instruction", "input") if record.get(k))
        return _dialogue_lines(question), str(record["output"]).strip()
    if record.get("question") and record.get("answer"):
        return str(record["question"]).strip(), str(record["answer"]).strip()
    return None


def _dialogue_lines(text: str) -> str:
    """``<user>: a <bot>: b`` → one turn per line (the markers dropped)."""
    return "\n".join(t.strip() for t in _DIALOGUE_TURN.split(text) if t.strip() and t not in ("user", "bot"))


def _short(text: str, limit: int = 80) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _annotation_counts(record: dict[str, Any]) -> dict[str, Any]:
    phi = record.get("phi_entities")
    return {"phi_spans": len(phi)} if isinstance(phi, list) else {}


@functools.lru_cache(maxsize=64)
def folder_provenance(folder: Path) -> dict[str, str]:
    """``source`` / ``licence`` / ``dataset`` from the folder's ``PROVENANCE.md``; {} when it has none."""
    try:
        lines = (folder / "PROVENANCE.md").read_text(encoding="utf-8").splitlines()
    except OSError:
        return {}
    out = {"dataset": folder.name}
    for i, line in enumerate(lines):
        m = _PROVENANCE_LINE.match(line.strip())
        key = ("source" if m.group(1).lower() == "source" else "licence") if m else ""
        if m and key not in out:
            more = [x.strip() for x in itertools.takewhile(lambda x: x.startswith("  "), lines[i + 1:])]
            out[key] = _short(" ".join([m.group(2), *more]), 400)  # a wrapped line continues indented
    return out


def pubmedqa_document(pmid: str, item: dict[str, Any], path: Path, conclusion: bool = True) -> Document:
    """One PubMedQA abstract: labelled contexts plus the conclusion (``LONG_ANSWER``; left out
    with ``conclusion=False``, when it is the reference answer of the answer benchmark)."""
    labels = item.get("LABELS") or [""] * len(item["CONTEXTS"])
    sections = [Section(str(lab).title() or "Abstract", str(ctx)) for lab, ctx in zip(labels, item["CONTEXTS"], strict=False)]
    if conclusion and item.get("LONG_ANSWER"):
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
        elif _is_clinical_heading(stripped):
            sections.append(Section(title, "\n".join(lines).strip(), level))
            title, level, lines = stripped.rstrip(":").strip(), 1, []
        else:
            lines.append(line)
    sections.append(Section(title, "\n".join(lines).strip(), level))
    return [s for s in sections if s.text]


def _is_clinical_heading(line: str) -> bool:
    """A letter's section heading: "Diagnosen:", "Therapie und Verlauf", "HAUPT-UND NEBENDIAGNOSEN"."""
    if not line or len(line.split()) > 4 or any(ch.isdigit() for ch in line):
        return False
    if _COLON_HEADING.match(line):
        return True
    return line[0].isupper() and line[-1] not in ".!?,;" and bool(_CLINICAL_SECTION.search(line))
