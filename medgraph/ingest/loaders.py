"""Loaders: corpus inputs → ``Document`` records (or ``Failure`` records, never exceptions).

Inputs (``expand_inputs``): local files, directories (recursive), globs (``data/*.xml.gz``,
``data/**/*.nxml``) and object-store URIs (``s3://bucket/prefix/``, ``gs://...``; listed and read
through ``medgraph.ingest.storage``, pyarrow.fs; endpoint and credentials from the environment,
docs/inputs.md). Formats: JSONL records, JSON arrays of records, PubMedQA's ``ori_pqal.json``,
PubMed/MEDLINE XML and PMC JATS XML (``.xml``, ``.nxml``; ``medgraph.ingest.xml_articles``,
streamed), plain text, Markdown and PDF (text layer). Record and XML files may be gzipped
(``.gz``, decompressed as they are read). Output: an iterator over ``Document | Failure``. The
format is detected from the file (``.json`` starting with ``[``: an array of records; ``{`` with
``CONTEXTS``: PubMedQA; XML: its root element) and, for records, from their fields.

Listing happens where the job plans (metadata only, plus the record count of JSON/JSONL files);
reading happens in ``load_shard``. Big record files are read in *shards* (``Shard``: a path or
URI and a record range) so that a corpus in one file still spreads over many Ray tasks; an XML
file is one shard (a PubMed baseline file of ~30k articles is the natural unit). A record or an
article that cannot be read fails alone, with its file and line (or key, or PMID) as the source;
a file that breaks off (truncated XML or gzip) keeps the documents read before the break and
adds one failure with the parser's message and position; an input that cannot be listed
(missing path, empty glob, unknown bucket, unreachable endpoint) is one failure with the reason.

Document IDs: records keep their own ``doc_id``; PubMed articles are ``pmid-<PMID>``, PMC
articles ``pmc-<digits>``; a text or PDF file is ``file_doc_id``: ``file:<name>@<10 hex>``
(see there).

Record fields (JSONL lines or array items): ``title``; ``text`` or ``sections``
(``[{title, text, level?, page?}]``); optional ``doc_id``, ``source_id`` (default: file name and
line or item number), ``language`` (detected when missing), ``metadata``. Question-answer records
are read too: ``instruction`` (+ ``input``) and ``output`` (instruction-tuning data such as
Huatuo/BenTsao; ``<user>:`` / ``<bot>:`` dialogue turns become lines), or ``question`` and
``answer``. GraSCCo-style letters are plain ``{doc_id, text}`` records (their PHI annotations are
counted in ``metadata.phi_spans``; a leading BOM is dropped).

Provenance: when a local file's folder has a ``PROVENANCE.md`` (as the shared data sets do), its
``Source ...:`` and ``Licen[cs]e ...:`` lines are copied into every document's ``metadata``
(``source``, ``licence``, ``dataset`` = the folder name); a record's own ``metadata`` wins.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from medgraph import lang
from medgraph.ingest import storage
from medgraph.ingest.storage import Location
from medgraph.ingest.text import detect_language
from medgraph.schemas import Document, Failure, Section, content_hash

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
    path: str  # a local path or an object-store URI
    start: int = 0
    stop: int | None = None  # record range [start, stop) for record files


def _never(location: Location) -> bool:
    return False


@dataclass(frozen=True)
class InputFormat:
    """One input format: the files it takes and how they are read. A new format is a reader and
    one ``register_format`` call (the table is at the end of this module).

    - ``read(location, start, stop)``: the documents (and failures) of the file, or of its records
      ``[start, stop)`` when the format has ``count``; it may raise: ``load_shard`` turns an
      exception into the file's failure.
    - ``count(location)``: the number of records, for a format whose files are cut into shards of
      ``pipeline.records_per_shard`` records (None: one shard per file).
    - ``whole(location)``: whether reading builds the whole file in memory (the Parse stage then
      reads it in its memory-limited parser process).
    - ``gzip``: the files may also come as ``<name>.<suffix>.gz``.
    - ``paged``: a paged document (PDF) that the Parse stage parses with layout and OCR instead.
    """

    name: str
    suffixes: frozenset[str]
    read: Callable[[Location, int, int | None], Iterator[Document | Failure]]
    count: Callable[[Location], int] | None = None
    whole: Callable[[Location], bool] = _never
    gzip: bool = False
    paged: bool = False


FORMATS: dict[str, InputFormat] = {}


def register_format(fmt: InputFormat) -> InputFormat:
    taken = {s: f.name for f in FORMATS.values() if f.name != fmt.name for s in f.suffixes}
    clash = sorted(s for s in fmt.suffixes if s in taken)
    if clash:
        raise ValueError(f"format {fmt.name!r}: suffixes {clash} are read by {sorted({taken[s] for s in clash})}")
    FORMATS[fmt.name] = fmt
    return fmt


def file_suffix(location: Location) -> str:
    """The format suffix of a file name, ``.gz`` looked through for formats that may be gzipped
    ("a.xml.gz" → ".xml"; "a.pdf" → ".pdf"; "a.txt.gz" → ".gz", not supported)."""
    name = storage.basename(location).lower()
    base, dot, ext = name.rpartition(".")
    if not dot:
        return ""
    if ext == "gz" and "." in base:
        inner = "." + base.rpartition(".")[2]
        return inner if any(f.gzip and inner in f.suffixes for f in FORMATS.values()) else ".gz"
    return "." + ext


def format_of(location: Location) -> InputFormat | None:
    """The registered format that reads this file, or None."""
    suffix = file_suffix(location)
    return next((f for f in FORMATS.values() if suffix in f.suffixes), None)


def _wanted(path: str) -> bool:
    """A file a directory, prefix or glob contributes: a supported type, not a data set's notes."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return format_of(name) is not None and not _DATASET_NOTE.match(name)


def expand_inputs(inputs: Iterable[Location]) -> tuple[list[Location], list[Failure]]:
    """Files under the given inputs, sorted and deduplicated; local files as absolute ``Path``s,
    object-store files as URI strings. A named file of an unknown type, or an input that cannot
    be listed, is a failure with the reason (never an exception).

    In a directory, prefix or glob, a data set's own notes (``PROVENANCE.md``, ``README*``,
    ``LICENSE*``, ``NOTICE*``) and files of other types are skipped; named as an input, such a
    note is loaded.
    """
    files: set[Location] = set()
    failures: list[Failure] = []
    for raw in inputs:
        try:
            found = storage.list_files(raw, _wanted)
        except storage.StorageError as exc:
            failures.append(Failure(str(storage.normalise(raw)), "load", str(exc)))
            continue
        for item in found:
            if format_of(item) is not None:
                files.add(item)
            else:
                failures.append(Failure(str(item), "load", f"unsupported file type {file_suffix(item)!r}"))
    return sorted(files, key=str), failures


def plan_shards(files: Sequence[Location], records_per_shard: int = 64, sandbox: Any = None,
                timeout_s: float = 300.0) -> list[Shard]:
    """One shard per file; the files of a format that counts its records (JSON/JSONL) are cut into
    ranges of ``records_per_shard``.

    Only those files are read here (to count their records); a file read whole is
    counted in ``sandbox`` (``medgraph.ingest.isolation.Sandbox``: its memory and time limits)
    when one is given, so a file that would need more memory than the planner has fails alone.
    A file that cannot be counted becomes one shard, whose loading then reports the problem.
    """
    from medgraph.ingest.isolation import IsolationError, run_isolated

    shards: list[Shard] = []
    for raw in files:
        location = storage.normalise(raw)
        fmt = format_of(location)
        if fmt is None or fmt.count is None:
            shards.append(Shard(str(location)))
            continue
        try:
            if reads_whole(location):
                n = run_isolated(sandbox, "medgraph.ingest.loaders:count_records", location, timeout_s=timeout_s)
            else:
                n = fmt.count(location)
        except (OSError, ValueError, EOFError, IsolationError):  # unreadable: load_shard reports it
            shards.append(Shard(str(location)))
            continue
        for start in range(0, max(n, 1), records_per_shard):
            shards.append(Shard(str(location), start, start + records_per_shard))
    return shards


def reads_whole(location: Location) -> bool:
    """Whether loading the file builds all of it in memory at once, not streamed: a JSON array or
    object, or an XML file (a PMC ``<article>`` is one tree; a PubMed set is streamed, but which
    one a file is shows only once it is parsed). The corpus build loads these in its
    memory-limited parser process; a file that cannot even be opened counts as no."""
    fmt = format_of(location)
    try:
        return fmt is not None and fmt.whole(location)
    except (OSError, ValueError, EOFError):
        return False


def count_records(location: Location) -> int:
    """The records of a file of a format that counts them (run in the parser process for files
    read whole)."""
    fmt = format_of(location)
    if fmt is None or fmt.count is None:
        raise ValueError(f"{storage.basename(location)}: not a record file")
    return fmt.count(location)


def load_shard_list(shard: Shard) -> list[Document | Failure]:
    """``load_shard`` as a list: what a call in a parser process (``isolation.Sandbox``) sends back."""
    return list(load_shard(shard))


def load_shard(shard: Shard) -> Iterator[Document | Failure]:
    """The documents (and failures) of one shard; local paths and URIs alike."""
    location = storage.normalise(shard.path)
    fmt = format_of(location)
    try:
        if fmt is None:
            yield Failure(str(location), "load", f"unsupported file type {file_suffix(location)!r}")
        else:
            yield from fmt.read(location, shard.start, shard.stop)
    except storage.StorageError as exc:
        yield Failure(str(location), "load", str(exc))
    except MemoryError:  # not this file's fault alone: the parser process's limit says so (isolation)
        raise
    except Exception as exc:  # one bad file must never stop the job
        yield Failure(str(location), "load", f"{type(exc).__name__}: {exc}")


def _load_pdf(location: Location) -> Document:
    """A PDF parsed in this process (the Ray-free path); a remote one through a local copy."""
    from medgraph.ingest.pdf import load_pdf

    if isinstance(location, Path):
        return load_pdf(location)
    with storage.local_copy(location) as local:
        return relocate_document(load_pdf(local), location)


def relocate_document(doc: Document, location: Location) -> Document:
    """A document parsed from a local copy (``storage.local_copy``), given back the ID, source
    name and path of where it came from (``file_doc_id`` of the URI, not of the temporary file)."""
    return replace(doc, doc_id=storage.file_doc_id(location), source_id=storage.basename(location),
                   source_path=str(storage.normalise(location)))


def _provenance(location: Location) -> dict[str, str]:
    return folder_provenance(location.parent) if isinstance(location, Path) else {}


# --- record files ---------------------------------------------------------------------------


def _head(location: Location) -> bytes:
    with storage.open_binary(location) as fh:
        return fh.read(4096).removeprefix(b"\xef\xbb\xbf").lstrip()


def _is_pubmedqa(location: Location) -> bool:
    if file_suffix(location) != ".json":
        return False
    head = _head(location)
    return head.startswith(b"{") and b'"CONTEXTS"' in head


def _is_json_array(location: Location) -> bool:
    return file_suffix(location) == ".json" and _head(location).startswith(b"[")


@functools.lru_cache(maxsize=2)
def _read_json(location: Location, stamp: tuple[int, int]) -> Any:
    """Whole-file JSON, cached so that the shards of one file handled by a worker parse it once."""
    data = json.loads(storage.read_bytes(location).decode("utf-8-sig"))
    if _is_json_array(location):
        if not isinstance(data, list):
            raise ValueError("expected a JSON array of records")
    elif not isinstance(data, dict):
        raise ValueError("expected a JSON object keyed by record ID")
    return data


MAX_RECORD_BYTES = 64 << 20  # one JSONL line; a longer one fails alone (it is never held whole)


def _lines(fh: Any) -> Iterator[bytes | None]:
    """The lines of a binary stream, each at most ``MAX_RECORD_BYTES``: a longer one is skipped in
    pieces and yields None (its record fails alone)."""
    while raw := fh.readline(MAX_RECORD_BYTES + 1):
        if len(raw) > MAX_RECORD_BYTES and not raw.endswith(b"\n"):
            while (rest := fh.readline(storage.COPY_CHUNK)) and not rest.endswith(b"\n"):
                pass
            yield None
        else:
            yield raw


def _count_records(location: Location) -> int:
    if _is_pubmedqa(location) or _is_json_array(location):
        return len(_read_json(location, storage.stamp(location)))
    with storage.open_binary(location) as fh:
        return sum(1 for line in _lines(fh) if line is None or line.strip())


def _load_records(location: Location, start: int, stop: int | None) -> Iterator[Document | Failure]:
    if _is_pubmedqa(location):
        data = _read_json(location, storage.stamp(location))
        for key in list(data)[start:stop]:
            yield _guard(f"{location}#{key}", lambda k=key: pubmedqa_document(k, data[k], location))
        return
    if _is_json_array(location):
        items = _read_json(location, storage.stamp(location))
        for i in range(start, min(stop if stop is not None else len(items), len(items))):
            yield _guard(f"{location}#{i + 1}",
                         lambda n=i + 1: record_document(_as_record(items[n - 1]), location, n))
        return
    index = 0
    with storage.open_binary(location) as fh:
        for lineno, raw in enumerate(_lines(fh), 1):
            if raw is not None and not raw.strip():
                continue
            if stop is not None and index >= stop:
                break
            if index >= start:
                if raw is None:
                    yield Failure(f"{location}:{lineno}", "load", f"a record over {MAX_RECORD_BYTES >> 20} MB")
                else:
                    yield _guard(f"{location}:{lineno}",
                                 lambda r=raw, n=lineno: record_document(_parse_line(r), location, n))
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


def record_document(record: dict[str, Any], path: Location, lineno: int = 0) -> Document:
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
    name = storage.basename(path)
    item = f"{name}:{lineno}" if lineno else name
    source_id = str(record.get("source_id") or record.get("doc_id") or record.get("id") or item)
    doc_id = str(record.get("doc_id") or record.get("source_id") or content_hash(title, *(s.text for s in sections)))
    body = " ".join(s.text for s in sections[:3])
    metadata = {**_provenance(storage.normalise(path)), **_annotation_counts(record),
                **dict(record.get("metadata") or {})}
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


def pubmedqa_document(pmid: str, item: dict[str, Any], path: Location, conclusion: bool = True) -> Document:
    """One PubMedQA abstract: labelled contexts plus the conclusion (``LONG_ANSWER``; left out
    with ``conclusion=False``, when it is the reference answer of the answer benchmark)."""
    labels = item.get("LABELS") or [""] * len(item["CONTEXTS"])
    sections = [Section(str(lab).title() or "Abstract", str(ctx)) for lab, ctx in zip(labels, item["CONTEXTS"], strict=False)]
    if conclusion and item.get("LONG_ANSWER"):
        sections.append(Section("Conclusions", str(item["LONG_ANSWER"])))
    return Document(
        # PubMedQA's abstracts are English, the pivot language
        doc_id=f"pmid-{pmid}", title=f"PubMed {pmid}", language=lang.PIVOT, sections=sections,
        source_id=f"PMID:{pmid}", source_path=str(path),
        metadata={"year": item.get("YEAR"), "mesh": item.get("MESHES", [])},
    )


# --- text files -----------------------------------------------------------------------------


def _load_text(location: Location) -> Document | Failure:
    raw = storage.read_bytes(location)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return Failure(str(location), "load", f"not valid UTF-8 (byte {exc.start}): re-encode the file as UTF-8")
    sections = parse_plain_text(text)
    name = storage.basename(location)
    title = next((s.title for s in sections if s.title), name.rsplit(".", 1)[0])
    doc = Document(
        doc_id=storage.file_doc_id(location), title=title, sections=sections,
        language=detect_language(text), source_id=name, source_path=str(location),
    )
    return doc if sections else Failure(str(location), "load", "document has no text", doc.doc_id)


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


# --- the formats ----------------------------------------------------------------------------


def _xml(location: Location, start: int, stop: int | None) -> Iterator[Document | Failure]:
    from medgraph.ingest.xml_articles import xml_documents

    yield from xml_documents(location, _provenance(location))


def _records_whole(location: Location) -> bool:
    return _is_pubmedqa(location) or _is_json_array(location)


register_format(InputFormat("records", frozenset({".jsonl", ".json"}), _load_records, count=_count_records,
                            whole=_records_whole, gzip=True))
register_format(InputFormat("xml", frozenset({".xml", ".nxml"}), _xml, whole=lambda location: True, gzip=True))
register_format(InputFormat("text", frozenset({".txt", ".md", ".markdown"}),
                            lambda location, start, stop: iter([_load_text(location)])))
register_format(InputFormat("pdf", frozenset({".pdf"}), lambda location, start, stop: iter([_load_pdf(location)]),
                            paged=True))

RECORD_SUFFIXES = FORMATS["records"].suffixes
TEXT_SUFFIXES = FORMATS["text"].suffixes
