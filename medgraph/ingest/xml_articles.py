"""Article XML → ``Document`` records, streamed: PubMed/MEDLINE baseline files and PMC JATS.

Input: a local path or object-store URI (``medgraph.ingest.storage``) of an XML file, optionally
gzipped. The format comes from the root element, read from the first bytes of the stream
(not from the suffix): ``PubmedArticleSet`` is PubMed/MEDLINE (one document per
``PubmedArticle``; ``DeleteCitation`` and book records are ignored); ``article`` (a PMC ``.nxml``
file) or ``pmc-articleset`` (several articles, as efetch gives them) is JATS. Output: an iterator
over ``Document | Failure``.

Streaming: ``xml.etree.ElementTree.iterparse`` (stdlib expat); each article is turned into a
document as soon as its end tag is read, then removed from the tree, so memory stays at one
article whatever the size of the file (benchmarks/pubmed_stream.py measures it).

PubMed: ``doc_id`` ``pmid-<PMID>`` (the PubMedQA loader's IDs), ``source_id`` ``PMID:<PMID>``,
title ``ArticleTitle``, one section per ``AbstractText`` (its ``Label`` as the title, else
"Abstract"), language from ``Language`` (a pack's ``record_codes``: eng/ger/chi, else detected from the text),
``metadata``: ``pmid``, ``year``, ``journal``, ``mesh`` (descriptor UIs of ``MeshHeadingList``),
``mesh_names``, ``doi``. An article without an abstract fails alone
(``<file>#PMID:<pmid>``: "article has no abstract").

JATS: ``doc_id`` ``pmc-<digits>`` from ``article-id pub-id-type="pmc"`` (or ``pmcid``),
``source_id`` ``PMCID:PMC<digits>``, title ``article-title``; sections: the abstract (its own
``sec``s one level down), the body's ``sec``s (their ``title``; nesting gives the level), and
each table (caption + cells, title "Table 1: <caption title>") and figure caption as its own
section; the reference list and sub-articles are left out. ``metadata``: ``pmcid``, ``pmid``,
``doi``, ``year``, ``journal``.

Failures (the file's articles read before the problem are kept; the rest is one failure):
truncated or malformed XML (expat's message with line and column), a file whose bytes are not
valid UTF-8 while its declaration says UTF-8 (or has no encoding, which means UTF-8), corrupt or
truncated gzip, an unreadable object, an unknown root element.
"""

from __future__ import annotations

import codecs
import gzip
import re
import xml.etree.ElementTree as ET
import zlib
from collections.abc import Iterator
from typing import IO, Any

from medgraph import lang
from medgraph.ingest.storage import Location, StorageError, normalise, open_binary
from medgraph.ingest.text import detect_language
from medgraph.schemas import Document, Failure, Section

# MEDLINE ``Language`` codes (ISO 639-2) of the project's languages; others are detected
PUBMED_ROOTS = {"PubmedArticleSet"}
JATS_ROOTS = {"article", "pmc-articleset"}
_YEAR = re.compile(r"\b(1[89]\d\d|2\d\d\d)\b")
_DECLARED = re.compile(rb"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
# JATS elements whose text is not running text of the paragraph around them
_SKIP = frozenset({"table-wrap", "table-wrap-group", "fig", "fig-group", "disp-formula", "tex-math",
                   "supplementary-material", "ref-list", "sec", "title", "label", "sec-meta", "object-id"})
_BLOCK = frozenset({"p", "list-item", "title", "caption", "td", "th", "tr", "label", "def-item", "term",
                    "disp-quote", "boxed-text", "statement", "table-wrap-foot", "fn"})


class EncodingMismatch(ValueError):
    pass


class _CheckedStream:
    """Passes the bytes on to the parser, checking them against the declared encoding when it
    is UTF-8 (expat would only say "invalid token"); other encodings are expat's to decode."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.offset = 0
        self.decoder: Any = None
        self.declared = False

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        if self.offset == 0 and data:
            declared = _DECLARED.match(data)
            self.declared = declared is not None
            encoding = declared.group(1).decode("ascii").lower() if declared else "utf-8"
            if encoding in ("utf-8", "utf8") and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
                self.decoder = codecs.getincrementaldecoder("utf-8")()
        if self.decoder is not None:
            try:
                self.decoder.decode(data, final=not data)
            except UnicodeDecodeError as exc:
                how = "its XML declaration says UTF-8" if self.declared else "XML without a declared encoding is UTF-8"
                raise EncodingMismatch(f"not valid UTF-8 at byte {self.offset + exc.start} ({how}): "
                                       "re-encode the file or declare its real encoding") from exc
        self.offset += len(data)
        return data


def _local(tag: Any) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _text(element: ET.Element | None) -> str:
    """All text inside an element, inline markup (<i>, <sup>) kept as text, spaces normalised."""
    return " ".join("".join(element.itertext()).split()) if element is not None else ""


def _flat(element: ET.Element | None, skip: frozenset[str] = _SKIP) -> str:
    """Text of a JATS element without the ``skip`` children (tables, figures, nested sections)."""
    if element is None:
        return ""
    parts: list[str] = []

    def walk(e: ET.Element) -> None:
        if e.text:
            parts.append(e.text)
        for child in e:
            tag = _local(child.tag)
            if tag not in skip:
                block = tag in _BLOCK
                if block:
                    parts.append(" ")
                walk(child)
                if block:
                    parts.append(" ")
            if child.tail:
                parts.append(child.tail)

    walk(element)
    return " ".join("".join(parts).split())


def _language(code: str, sample: str) -> str:
    """A record's language code (ISO 639-2 ``ger``, 639-1 ``de``, a tag ``de-DE``) as a pack's code;
    the text's detected language when no pack answers to it."""
    code = code.strip().lower()
    mapped = lang.by_record_code(code) or (lang.by_record_code(code[:2]) if len(code) == 5 else None)
    return mapped or detect_language(sample)


# --- the stream -----------------------------------------------------------------------------


def xml_documents(location: Location, provenance: dict[str, str] | None = None) -> Iterator[Document | Failure]:
    """The documents of one XML file, streamed (see the module docstring)."""
    loc = normalise(location)
    source = str(loc)
    done = 0
    try:
        with open_binary(loc) as raw:
            events = ET.iterparse(_CheckedStream(raw), events=("start", "end"))
            _, root = next(events)
            tag = _local(root.tag)
            if tag in PUBMED_ROOTS:
                items = _pubmed(events, root, source, provenance or {})
            elif tag in JATS_ROOTS:
                items = _jats(events, root, source, provenance or {})
            else:
                yield Failure(source, "load", f"XML root <{tag}> is neither PubMed (<PubmedArticleSet>) nor "
                                              "PMC JATS (<article>, <pmc-articleset>)")
                return
            for item in items:
                done += isinstance(item, Document)
                yield item
    except ET.ParseError as exc:
        yield Failure(source, "load", f"unreadable XML after {done} article(s): {exc}")
    except EncodingMismatch as exc:
        yield Failure(source, "load", f"{exc} (after {done} article(s))")
    except gzip.BadGzipFile as exc:
        yield Failure(source, "load", f"corrupt gzip after {done} article(s): {exc}")
    except EOFError as exc:
        yield Failure(source, "load", f"truncated gzip after {done} article(s): {exc}")
    except zlib.error as exc:
        yield Failure(source, "load", f"corrupt gzip data after {done} article(s): {exc}")
    except StopIteration:
        yield Failure(source, "load", "empty file")
    except StorageError as exc:
        yield Failure(source, "load", str(exc))
    except OSError as exc:
        yield Failure(source, "load", f"{type(exc).__name__} after {done} article(s): {exc}")


def _top_level(events: Iterator[tuple[str, Any]], root: ET.Element) -> Iterator[ET.Element]:
    """Children of ``root`` as their end tags are read; each is dropped from the tree after use."""
    depth = 0
    for event, elem in events:
        if event == "start":
            depth += 1
            continue
        depth -= 1
        if depth == 0:
            yield elem
            root.clear()  # the article (and anything before it) leaves the tree


# --- PubMed ---------------------------------------------------------------------------------


def _pubmed(events: Iterator[tuple[str, Any]], root: ET.Element, source: str,
            provenance: dict[str, str]) -> Iterator[Document | Failure]:
    n = 0
    for elem in _top_level(events, root):
        if elem.tag != "PubmedArticle":  # DeleteCitation, PubmedBookArticle
            continue
        n += 1
        yield pubmed_article(elem, source, n, provenance)


def _pubmed_year(article: ET.Element) -> int | None:
    date = article.find("Journal/JournalIssue/PubDate")
    text = (date.findtext("Year") or date.findtext("MedlineDate") or "") if date is not None else ""
    found = _YEAR.search(text or article.findtext("ArticleDate/Year") or "")
    return int(found.group(1)) if found else None


def pubmed_article(elem: ET.Element, source: str, n: int = 0,
                   provenance: dict[str, str] | None = None) -> Document | Failure:
    """One ``PubmedArticle`` element → Document (or the failure of this article alone)."""
    citation = elem.find("MedlineCitation")
    pmid = (citation.findtext("PMID") or "").strip() if citation is not None else ""
    article = citation.find("Article") if citation is not None else None
    if citation is None or not pmid or article is None:
        return Failure(f"{source}#{n}", "load", "PubmedArticle without MedlineCitation/PMID and Article")
    where = f"{source}#PMID:{pmid}"
    sections = []
    for node in article.iterfind("Abstract/AbstractText"):
        text = _text(node)
        if text:
            sections.append(Section((node.get("Label") or "").strip() or "Abstract", text))
    if not sections:
        return Failure(where, "load", "article has no abstract", f"pmid-{pmid}")
    title = _text(article.find("ArticleTitle")) or _text(article.find("VernacularTitle")) or f"PubMed {pmid}"
    headings = citation.findall("MeshHeadingList/MeshHeading/DescriptorName")
    journal = (article.findtext("Journal/Title") or article.findtext("Journal/ISOAbbreviation")
               or citation.findtext("MedlineJournalInfo/MedlineTA") or "").strip()
    doi = next((_text(e) for e in elem.iterfind("PubmedData/ArticleIdList/ArticleId") if e.get("IdType") == "doi"),
               next((_text(e) for e in article.iterfind("ELocationID") if e.get("EIdType") == "doi"), ""))
    metadata: dict[str, Any] = {
        **(provenance or {}), "pmid": pmid, "year": _pubmed_year(article), "journal": journal,
        "mesh": [h.get("UI", "") for h in headings if h.get("UI")], "mesh_names": [_text(h) for h in headings],
    }
    if doi:
        metadata["doi"] = doi
    sample = title + " " + " ".join(s.text for s in sections[:3])
    return Document(
        doc_id=f"pmid-{pmid}", title=title, sections=sections, source_id=f"PMID:{pmid}",
        language=_language(article.findtext("Language") or "", sample), source_path=where, metadata=metadata,
    )


# --- PMC JATS -------------------------------------------------------------------------------


def _jats(events: Iterator[tuple[str, Any]], root: ET.Element, source: str,
          provenance: dict[str, str]) -> Iterator[Document | Failure]:
    if _local(root.tag) == "article":  # one article per file: read it whole
        for _ in events:
            pass
        yield jats_article(root, source, 1, provenance)
        return
    n = 0
    for elem in _top_level(events, root):
        if _local(elem.tag) == "article":
            n += 1
            yield jats_article(elem, source, n, provenance)


def _child(elem: ET.Element | None, *names: str) -> ET.Element | None:
    for name in names:
        if elem is None:
            return None
        elem = next((c for c in elem if _local(c.tag) == name), None)
    return elem


def _children(elem: ET.Element | None, name: str) -> list[ET.Element]:
    return [c for c in elem if _local(c.tag) == name] if elem is not None else []


def _sec(sec: ET.Element, level: int, out: list[Section], default: str = "") -> None:
    """A section: its own paragraphs (tables, figures and sub-sections aside), then its sub-sections."""
    title = _flat(_child(sec, "title"), frozenset()) or default
    label = _flat(_child(sec, "label"), frozenset())
    if label and title and not title.startswith(label):
        title = f"{label} {title}"
    paragraphs = [t for c in sec if _local(c.tag) not in _SKIP and (t := _flat(c))]
    subs = _children(sec, "sec")
    if paragraphs or subs:
        out.append(Section(title, "\n\n".join(paragraphs), level))
    for sub in subs:
        _sec(sub, level + 1, out)


def _rows(table: ET.Element) -> str:
    return "\n".join(" | ".join(_flat(cell, frozenset()) for cell in tr if _local(cell.tag) in ("td", "th"))
                     for tr in table.iter() if _local(tr.tag) == "tr")


def _float(elem: ET.Element, kind: str) -> Section | None:
    """A table or figure as a section: "Table 1: <caption title>", caption text (+ the table's cells)."""
    label = _flat(_child(elem, "label"), frozenset())
    caption = _child(elem, "caption")
    caption_title = _flat(_child(caption, "title"), frozenset())
    caption_text = _flat(caption, frozenset({"title"}))
    name = caption_title or caption_text.split(". ")[0][:120]
    title = f"{label or kind}: {name}" if name else (label or kind)
    parts = [p for p in (caption_title, caption_text) if p]
    if kind == "Table":
        parts += [r for t in elem.iter() if _local(t.tag) == "table" and (r := _rows(t))]
        parts += [f for f in (_flat(_child(elem, "table-wrap-foot"), frozenset()),) if f]
    text = "\n".join(parts)
    return Section(title, text) if text else None


def _year(meta: ET.Element | None) -> int | None:
    for date in _children(meta, "pub-date"):
        found = _YEAR.search(_flat(_child(date, "year"), frozenset()))
        if found:
            return int(found.group(1))
    return None


def jats_article(art: ET.Element, source: str, n: int = 0,
                 provenance: dict[str, str] | None = None) -> Document | Failure:
    """One JATS ``article`` element → Document (or the failure of this article alone)."""
    meta = _child(art, "front", "article-meta")
    ids = {(e.get("pub-id-type") or ""): _flat(e, frozenset()) for e in _children(meta, "article-id")}
    pmc = re.sub(r"^PMC", "", ids.get("pmc") or ids.get("pmcid") or "", flags=re.IGNORECASE)
    if not pmc.isdigit():
        return Failure(f"{source}#{n}", "load", 'article has no PMC ID (article-id pub-id-type="pmc")')
    where = f"{source}#PMCID:PMC{pmc}"
    doc_id = f"pmc-{pmc}"
    title = _flat(_child(meta, "title-group", "article-title"), frozenset()) or f"PMC{pmc}"
    sections: list[Section] = []
    for abstract in _children(meta, "abstract"):
        if abstract.get("abstract-type") in ("graphical", "teaser", "toc"):
            continue
        _sec(abstract, 1, sections, default="Abstract")
    body = _child(art, "body")
    if body is not None:
        lead = [t for c in body if _local(c.tag) not in _SKIP and (t := _flat(c))]
        if lead:
            sections.append(Section("", "\n\n".join(lead), 1))
        for sec in _children(body, "sec"):
            _sec(sec, 1, sections)
    floats = [c for c in (body, _child(art, "back"), _child(art, "floats-group")) if c is not None]
    for container in floats:
        for elem in container.iter():
            tag = _local(elem.tag)
            if tag in ("table-wrap", "fig") and (s := _float(elem, "Table" if tag == "table-wrap" else "Figure")):
                sections.append(s)
    if not any(s.text for s in sections):
        return Failure(where, "load", "article has no text (no abstract, body or captions)", doc_id)
    journal = _flat(_child(art, "front", "journal-meta", "journal-title-group", "journal-title"), frozenset()) or \
        _flat(_child(art, "front", "journal-meta", "journal-title"), frozenset())
    metadata: dict[str, Any] = {**(provenance or {}), "pmcid": f"PMC{pmc}", "year": _year(meta), "journal": journal}
    metadata.update({k: ids[k] for k in ("pmid", "doi") if ids.get(k)})
    sample = title + " " + " ".join(s.text for s in sections[:4])
    return Document(
        doc_id=doc_id, title=title, sections=sections, source_id=f"PMCID:PMC{pmc}",
        language=_language(art.get(_XML_LANG) or "", sample), source_path=where, metadata=metadata,
    )
