"""PubMed through NCBI E-utilities: esearch (PMIDs for a query) then efetch (PubMed XML).

Input: search terms (entity names). Output: ``LiteratureRecord`` per article: ``doc_id``
``pmid-<PMID>`` (the corpus loader's ID for PubMed abstracts, so an article already in the corpus
is recognised), the title, the abstract with its section labels ("BACKGROUND: ..."), the language
(ISO 639-1 where known), the publication year and the PubMed URL.

Behaviour:
- the query is built from the terms only, each quoted and field-tagged: ``"term"[tiab] OR ...``;
  quotes, brackets and other query syntax inside a term are replaced by spaces, so user text never
  becomes query syntax;
- one rate limiter per client, shared by all its requests and threads: 3 requests/s, 10 with an
  API key (NCBI's limits), or ``rate_per_s``;
- each request has its own timeout (the smaller of ``timeout_s`` and what is left of the search's
  time budget); 429, 5xx, timeouts and connection errors are retried ``retries`` times with
  exponential backoff (``Retry-After`` honoured), never past the search's budget;
- esearch is asked for JSON (``retmode=json``); an XML reply (``<eSearchResult>``) is read too;
- anything else (4xx, an error reply, unreadable XML, a DTD with entity declarations) raises
  ``SourceError``.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from medgraph import lang
from medgraph.literature.base import LiteratureRecord, SourceError, clean_terms

log = logging.getLogger(__name__)

EUTILS = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
_QUERY_SYNTAX = re.compile(r'["\[\]()*:#\\]+')
_YEAR = re.compile(r"\b(1[89]\d\d|2\d\d\d)\b")


class RateLimiter:
    """At most ``rate_per_s`` calls per second: each ``wait()`` takes the next free slot.

    ``clock`` and ``sleep`` are injectable (tests run it on a fake clock).
    """

    def __init__(self, rate_per_s: float, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if rate_per_s <= 0:
            raise ValueError(f"rate_per_s must be positive, got {rate_per_s}")
        self.interval = 1.0 / rate_per_s
        self.clock, self.sleep = clock, sleep
        self._next = float("-inf")
        self._lock = threading.Lock()

    def wait(self) -> None:
        with self._lock:
            now = self.clock()
            slot = max(now, self._next)
            self._next = slot + self.interval
        if slot > now:
            self.sleep(slot - now)


def build_query(terms: Sequence[str], field: str = "tiab") -> str:
    """``"term one"[tiab] OR "term two"[tiab]`` from entity names; no term can inject syntax."""
    quoted = []
    for term in clean_terms(terms):
        safe = " ".join(_QUERY_SYNTAX.sub(" ", term).split())
        if safe:
            quoted.append(f'"{safe}"[{field}]')
    if not quoted:
        raise ValueError("no search terms left after removing query syntax")
    return " OR ".join(dict.fromkeys(quoted))


class PubMedSource:
    """NCBI E-utilities client; see the module docstring."""

    name = "pubmed"

    def __init__(
        self,
        base_url: str = EUTILS,
        api_key: str | None = None,
        email: str | None = None,
        tool: str = "medgraph",
        rate_per_s: float | None = None,
        retries: int = 3,
        timeout_s: float = 10.0,
        client: httpx.Client | None = None,
        backoff_s: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if retries < 0 or timeout_s <= 0:
            raise ValueError("need retries >= 0 and timeout_s > 0")
        self.base_url = base_url.rstrip("/")
        self.api_key, self.email, self.tool = api_key, email, tool
        self.retries, self.timeout_s, self.backoff_s = retries, timeout_s, backoff_s
        self.clock, self.sleep = clock, sleep
        self.limiter = RateLimiter(rate_per_s or (10.0 if api_key else 3.0), clock, sleep)
        self._own_client = client is None
        self.client = client or httpx.Client(headers={"User-Agent": f"{tool} (httpx)"})

    # --- the source interface -----------------------------------------------------------------

    def search(self, terms: Sequence[str], max_results: int = 5, timeout_s: float = 10.0) -> list[LiteratureRecord]:
        if max_results < 1:
            raise ValueError(f"max_results must be >= 1, got {max_results}")
        deadline = self.clock() + timeout_s
        pmids = self.esearch(build_query(terms), max_results, deadline)
        return self.efetch(pmids, deadline) if pmids else []

    def esearch(self, query: str, max_results: int, deadline: float) -> list[str]:
        """PMIDs matching ``query`` (PubMed query syntax, already built safely), by relevance."""
        params = {"db": "pubmed", "term": query, "retmax": str(max_results), "retmode": "json", "sort": "relevance"}
        body, content_type = self._get("esearch.fcgi", params, deadline)
        pmids = parse_esearch(body, content_type)
        return pmids[:max_results]

    def efetch(self, pmids: Sequence[str], deadline: float) -> list[LiteratureRecord]:
        """The articles of ``pmids`` (in that order) from PubMed XML; articles without text are dropped."""
        params = {"db": "pubmed", "id": ",".join(pmids), "retmode": "xml", "rettype": "abstract"}
        body, _ = self._get("efetch.fcgi", params, deadline)
        records = {r.pmid: r for r in parse_pubmed_xml(body)}
        return [records[p] for p in pmids if p in records]

    def close(self) -> None:
        if self._own_client:
            self.client.close()

    # --- HTTP with rate limit, timeouts and retries ---------------------------------------------

    def _params(self, params: dict[str, str]) -> dict[str, str]:
        out = {**params, "tool": self.tool}
        if self.email:
            out["email"] = self.email
        if self.api_key:
            out["api_key"] = self.api_key
        return out

    def _get(self, endpoint: str, params: dict[str, str], deadline: float) -> tuple[bytes, str]:
        url = f"{self.base_url}/{endpoint}"
        last = "no attempt made"
        for attempt in range(self.retries + 1):
            left = deadline - self.clock()
            if left <= 0:
                break
            self.limiter.wait()
            left = deadline - self.clock()
            if left <= 0:
                break
            try:
                response = self.client.get(url, params=self._params(params), timeout=min(self.timeout_s, left))
            except httpx.TimeoutException as exc:
                last = f"timed out ({type(exc).__name__})"
                retry_after = None
            except httpx.TransportError as exc:
                last = f"{type(exc).__name__}: {exc}"
                retry_after = None
            else:
                if response.status_code == 200:
                    return response.content, response.headers.get("content-type", "")
                if response.status_code not in RETRY_STATUS:
                    raise SourceError(f"PubMed {endpoint} answered HTTP {response.status_code}: {response.text[:200]}")
                last = f"HTTP {response.status_code}"
                retry_after = _retry_after(response)
            if attempt < self.retries:
                pause = retry_after if retry_after is not None else self.backoff_s * 2 ** attempt
                if self.clock() + pause >= deadline:
                    break
                log.info("PubMed %s: %s; retrying in %.2f s", endpoint, last, pause)
                self.sleep(pause)
        raise SourceError(f"PubMed {endpoint} unavailable: {last} (retries={self.retries}, time budget spent or "
                          "attempts exhausted)")


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after", "")
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


# --- parsing ---------------------------------------------------------------------------------------


def _xml(body: bytes, what: str) -> ET.Element:
    """Parse a reply; a DTD declaring entities is refused (entity expansion is never needed here)."""
    if b"<!ENTITY" in body:
        raise SourceError(f"{what}: the reply declares XML entities; refused")
    try:
        return ET.fromstring(body)
    except ET.ParseError as exc:
        raise SourceError(f"{what}: unreadable XML ({exc})") from exc


def parse_esearch(body: bytes, content_type: str = "") -> list[str]:
    """PMIDs of an esearch reply, JSON (``esearchresult.idlist``) or XML (``IdList/Id``)."""
    if "xml" in content_type or body.lstrip().startswith(b"<"):
        root = _xml(body, "esearch")
        error = root.findtext("ERROR")
        if error:
            raise SourceError(f"esearch error: {error}")
        return [(e.text or "").strip() for e in root.iterfind("IdList/Id") if (e.text or "").strip()]
    try:
        data: Any = json.loads(body)
        result = data["esearchresult"]
    except (ValueError, KeyError, TypeError) as exc:
        raise SourceError(f"esearch: unreadable JSON reply ({type(exc).__name__}: {exc})") from exc
    if isinstance(result, dict) and result.get("ERROR"):
        raise SourceError(f"esearch error: {result['ERROR']}")
    ids = result.get("idlist") if isinstance(result, dict) else None
    if not isinstance(ids, list):
        raise SourceError("esearch: the reply has no idlist")
    return [str(i) for i in ids]


def _text(element: ET.Element | None) -> str:
    """All text inside an element (titles and abstracts carry inline markup such as <i>)."""
    return " ".join("".join(element.itertext()).split()) if element is not None else ""


def _year(article: ET.Element) -> int | None:
    date = article.find(".//Article/Journal/JournalIssue/PubDate")
    if date is None:
        return None
    found = _YEAR.search(date.findtext("Year") or date.findtext("MedlineDate") or "")
    return int(found.group(1)) if found else None


def _abstract(article: ET.Element) -> str:
    parts = []
    for node in article.iterfind(".//Article/Abstract/AbstractText"):
        text = _text(node)
        if text:
            label = (node.get("Label") or "").strip()
            parts.append(f"{label}: {text}" if label else text)
    return "\n\n".join(parts)


def parse_pubmed_xml(body: bytes) -> list[LiteratureRecord]:
    """``PubmedArticleSet`` → records (articles with neither title nor abstract are skipped)."""
    root = _xml(body, "efetch")
    if root.tag != "PubmedArticleSet":
        raise SourceError(f"efetch: expected a PubmedArticleSet, got <{root.tag}>")
    out = []
    for article in root.iterfind("PubmedArticle"):
        pmid = (article.findtext("MedlineCitation/PMID") or "").strip()
        title = _text(article.find("MedlineCitation/Article/ArticleTitle"))
        abstract = _abstract(article)
        if not pmid or not (title or abstract):
            continue
        # PubMed's language code (ISO 639-2/B: "ger") → the language pack's code ("de"); other
        # languages by the code's first two letters; no code: the pivot (PubMed's default, English)
        code = (article.findtext("MedlineCitation/Article/Language") or "").strip().lower()
        out.append(LiteratureRecord(
            doc_id=f"pmid-{pmid}", title=title or f"PubMed {pmid}", text=abstract or title,
            language=lang.by_record_code(code) or code[:2] or lang.PIVOT, source="pubmed",
            url=f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/", pmid=pmid,
            year=_year(article),
        ))
    return out
