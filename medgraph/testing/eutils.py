"""A local NCBI E-utilities server for tests and benchmarks: esearch and efetch over real PubMed records.

Records: BC5CDR abstracts (PubTator: the real PMID, title and abstract of each article) and,
optionally, PubMedQA's labelled abstracts (real PMIDs, section labels and years; the data set
keeps no titles, so ``ArticleTitle`` is its question, usually the title turned into one).

- ``esearch.fcgi``: ``term`` is read as ``"phrase"[field]`` clauses joined by OR (the form
  ``PubMedSource`` sends); an article matches a phrase anywhere in its title or abstract
  (case-insensitive) and ranks by the number of phrases it matches, then by PMID. ``retmode=json``
  answers NCBI's JSON (``esearchresult.idlist``), anything else its XML (``eSearchResult/IdList``).
- ``efetch.fcgi``: ``id`` (comma-separated PMIDs) → a ``PubmedArticleSet`` in the shape of NCBI's
  PubMed DTD (``MedlineCitation/PMID``, ``Article/Journal/JournalIssue/PubDate/Year``,
  ``ArticleTitle``, ``Abstract/AbstractText`` with ``Label``, ``Language``).

Switches: ``fail_next(*statuses)`` answers the next requests with those HTTP statuses (429 with
``Retry-After`` when ``retry_after`` is set); ``delay_s`` delays every answer; ``esearch_xml``
answers esearch in XML even when JSON was asked for. ``requests`` records (time, endpoint, params)
of every request.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse
from xml.sax.saxutils import escape, quoteattr

from medgraph import lang

_CLAUSE = re.compile(r'"([^"]+)"\[[a-z]+\]', re.IGNORECASE)
_DOCTYPE = ('<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2019//EN" '
            '"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_190101.dtd">')


@dataclass(frozen=True)
class Article:
    pmid: str
    title: str
    sections: tuple[tuple[str, str], ...]  # (label, text); label "" for an unlabelled abstract
    year: str = ""
    # PubMed's language code (ISO 639-2/B); by default the pivot language's ("eng")
    language: str = field(default_factory=lambda: lang.pivot().record_codes[0])

    @property
    def searchable(self) -> str:
        return (self.title + " " + " ".join(t for _, t in self.sections)).casefold()


def load_bc5cdr(path: Path, limit: int | None = None) -> list[Article]:
    """Articles of a PubTator file (``PMID|t|title``, ``PMID|a|abstract`` lines)."""
    titles: dict[str, str] = {}
    abstracts: dict[str, str] = {}
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            parts = line.rstrip("\n").split("|", 2)
            if len(parts) == 3 and parts[1] in ("t", "a"):
                (titles if parts[1] == "t" else abstracts)[parts[0]] = parts[2]
    pmids = list(titles)[:limit] if limit else list(titles)
    return [Article(p, titles[p], (("", abstracts.get(p, "")),)) for p in pmids]


def load_pubmedqa(path: Path, limit: int | None = None) -> list[Article]:
    data = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for pmid in list(data)[:limit] if limit else list(data):
        item = data[pmid]
        labels = item.get("LABELS") or [""] * len(item["CONTEXTS"])
        out.append(Article(pmid, item["QUESTION"], tuple(zip(labels, item["CONTEXTS"], strict=False)),
                           str(item.get("YEAR") or "")))
    return out


def shared_articles(data_dir: Path, pubmedqa: bool = True) -> list[Article]:
    """BC5CDR training + development abstracts, and PubMedQA's labelled ones."""
    bc5 = data_dir / "bc5cdr"
    articles = load_bc5cdr(bc5 / "CDR_TrainingSet.PubTator.txt") + load_bc5cdr(bc5 / "CDR_DevelopmentSet.PubTator.txt")
    if pubmedqa:
        articles += load_pubmedqa(data_dir / "pubmedqa" / "ori_pqal.json")
    return articles


def article_xml(a: Article) -> str:
    abstract = "".join(
        f"<AbstractText Label={quoteattr(label)} NlmCategory={quoteattr(label)}>{escape(text)}</AbstractText>"
        if label else f"<AbstractText>{escape(text)}</AbstractText>"
        for label, text in a.sections
    )
    year = f"<Year>{a.year}</Year>" if a.year else "<MedlineDate>unknown</MedlineDate>"
    return (
        '<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM">'
        f'<PMID Version="1">{a.pmid}</PMID>'
        '<Article PubModel="Print"><Journal><JournalIssue CitedMedium="Print">'
        f"<PubDate>{year}</PubDate></JournalIssue></Journal>"
        f"<ArticleTitle>{escape(a.title)}</ArticleTitle>"
        f"<Abstract>{abstract}</Abstract><Language>{a.language}</Language>"
        "</Article></MedlineCitation>"
        f'<PubmedData><ArticleIdList><ArticleId IdType="pubmed">{a.pmid}</ArticleId></ArticleIdList></PubmedData>'
        "</PubmedArticle>"
    )


class EUtilsServer:
    """The server (see the module docstring); ``with EUtilsServer(articles) as s: s.base_url``."""

    def __init__(self, articles: list[Article]) -> None:
        self.articles = {a.pmid: a for a in articles}
        self.delay_s = 0.0
        self.esearch_xml = False
        self.retry_after: float | None = None
        self.requests: list[tuple[float, str, dict[str, str]]] = []
        self._failures: list[int] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/entrez/eutils"

    def fail_next(self, *statuses: int) -> None:
        with self._lock:
            self._failures.extend(statuses)

    def count(self, endpoint: str) -> int:
        return sum(1 for _, e, _ in self.requests if e == endpoint)

    def __enter__(self) -> EUtilsServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    # --- answers ------------------------------------------------------------------------------

    def search(self, term: str, retmax: int) -> list[str]:
        phrases = [p.casefold() for p in _CLAUSE.findall(term)]
        hits = []
        for a in self.articles.values():
            n = sum(1 for p in phrases if p in a.searchable)
            if n:
                hits.append((-n, int(a.pmid) if a.pmid.isdigit() else 0, a.pmid))
        return [pmid for *_, pmid in sorted(hits)[:retmax]]

    def answer(self, endpoint: str, params: dict[str, str]) -> tuple[int, str, bytes, dict[str, str]]:
        """(status, content type, body, extra headers) for one request."""
        with self._lock:
            self.requests.append((time.monotonic(), endpoint, params))
            status = self._failures.pop(0) if self._failures else 200
        if self.delay_s:
            time.sleep(self.delay_s)
        if status != 200:
            headers = {"Retry-After": str(self.retry_after)} if status == 429 and self.retry_after is not None else {}
            return status, "text/plain", f"error {status}".encode(), headers
        if endpoint == "esearch.fcgi":
            return self._esearch(params)
        if endpoint == "efetch.fcgi":
            ids = [i for i in params.get("id", "").split(",") if i in self.articles]
            body = "".join(article_xml(self.articles[i]) for i in ids)
            xml = f'<?xml version="1.0" ?>\n{_DOCTYPE}\n<PubmedArticleSet>{body}</PubmedArticleSet>'
            return 200, "text/xml; charset=UTF-8", xml.encode(), {}
        return 404, "text/plain", b"unknown endpoint", {}

    def _esearch(self, params: dict[str, str]) -> tuple[int, str, bytes, dict[str, str]]:
        if not params.get("term"):
            body = {"esearchresult": {"ERROR": "Empty term and query_key - nothing todo"}}
            return 200, "application/json", json.dumps(body).encode(), {}
        ids = self.search(params["term"], int(params.get("retmax", "20")))
        if params.get("retmode") == "json" and not self.esearch_xml:
            result = {"count": str(len(ids)), "retmax": str(len(ids)), "retstart": "0", "idlist": ids,
                      "querytranslation": params["term"]}
            return 200, "application/json; charset=UTF-8", json.dumps({"esearchresult": result}).encode(), {}
        id_list = "".join(f"<Id>{i}</Id>" for i in ids)
        xml = (f'<?xml version="1.0" encoding="UTF-8" ?>\n<eSearchResult><Count>{len(ids)}</Count>'
               f"<RetMax>{len(ids)}</RetMax><RetStart>0</RetStart><IdList>{id_list}</IdList>"
               f"<QueryTranslation>{escape(params['term'])}</QueryTranslation></eSearchResult>")
        return 200, "text/xml; charset=UTF-8", xml.encode(), {}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                url = urlparse(self.path)
                params = {k: v[-1] for k, v in parse_qs(url.query).items()}
                status, content_type, body, headers = server.answer(url.path.rsplit("/", 1)[-1], params)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(body)))
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout tests)
                    pass

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
                pass

        return Handler
