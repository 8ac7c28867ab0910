"""The PubMed E-utilities client against a local E-utilities server over real PubMed records
(BC5CDR and PubMedQA abstracts): search, both esearch reply forms, retries, timeouts, the rate
limit, safe query building and malformed replies."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from medgraph.literature.base import SourceError
from medgraph.literature.pubmed import PubMedSource, RateLimiter, build_query, parse_esearch, parse_pubmed_xml
from medgraph.testing.eutils import EUtilsServer, shared_articles

LITHIUM_PMID = "6794356"  # BC5CDR: "Tricuspid valve regurgitation and lithium carbonate toxicity in a newborn infant."
LACE_PMID = "21645374"  # PubMedQA: labelled abstract (BACKGROUND, RESULTS), 2011


@pytest.fixture(scope="module")
def server(shared_data: Path) -> Iterator[EUtilsServer]:
    with EUtilsServer(shared_articles(shared_data)) as s:
        yield s


@pytest.fixture(autouse=True)
def _reset(server: EUtilsServer) -> Iterator[None]:
    server.requests.clear()
    yield
    server.delay_s, server.esearch_xml, server.retry_after = 0.0, False, None
    server._failures.clear()


def _source(server: EUtilsServer, **kwargs: object) -> PubMedSource:
    options: dict[str, object] = {"rate_per_s": 50.0, "backoff_s": 0.01, "timeout_s": 5.0, **kwargs}
    return PubMedSource(base_url=server.base_url, **options)  # type: ignore[arg-type]


def test_search_returns_real_records_with_pmid_title_and_abstract(server: EUtilsServer) -> None:
    source = _source(server, email="dev@example.org", api_key="k123")
    records = source.search(["lithium carbonate", "tricuspid regurgitation"], max_results=3)
    assert 1 <= len(records) <= 3
    top = records[0]
    assert top.pmid == LITHIUM_PMID and top.doc_id == f"pmid-{LITHIUM_PMID}"
    assert top.title == "Tricuspid valve regurgitation and lithium carbonate toxicity in a newborn infant."
    assert top.text.startswith("A newborn with massive tricuspid regurgitation, atrial flutter")
    assert top.language == "en" and top.source == "pubmed"
    assert top.url == f"https://pubmed.ncbi.nlm.nih.gov/{LITHIUM_PMID}/"
    _, endpoint, params = server.requests[0]
    assert endpoint == "esearch.fcgi" and params["retmode"] == "json" and params["db"] == "pubmed"
    assert params["term"] == '"lithium carbonate"[tiab] OR "tricuspid regurgitation"[tiab]'
    assert (params["tool"], params["email"], params["api_key"]) == ("medgraph", "dev@example.org", "k123")
    assert server.requests[1][1] == "efetch.fcgi" and server.requests[1][2]["id"].split(",")[0] == LITHIUM_PMID


def test_esearch_xml_reply_is_read_too(server: EUtilsServer) -> None:
    json_ids = [r.pmid for r in _source(server).search(["lithium carbonate"], max_results=4)]
    server.esearch_xml = True
    assert [r.pmid for r in _source(server).search(["lithium carbonate"], max_results=4)] == json_ids


def test_labelled_abstract_keeps_labels_and_year(server: EUtilsServer) -> None:
    records = _source(server).efetch([LACE_PMID], deadline=time.monotonic() + 5)
    assert len(records) == 1 and records[0].year == 2011
    assert records[0].text.startswith("BACKGROUND: Programmed cell death (PCD) is the regulated death")
    assert "\n\nRESULTS: " in records[0].text


def test_no_match_is_an_empty_list_without_efetch(server: EUtilsServer) -> None:
    assert _source(server).search(["zzqx nonexistent phrase"]) == []
    assert server.count("efetch.fcgi") == 0


def test_retries_429_and_500_then_succeeds(server: EUtilsServer) -> None:
    server.fail_next(429, 500)
    records = _source(server, retries=3).search(["lithium carbonate"], max_results=1)
    assert records[0].pmid == LITHIUM_PMID
    assert server.count("esearch.fcgi") == 3 and server.count("efetch.fcgi") == 1


def test_retry_after_is_honoured(server: EUtilsServer) -> None:
    server.fail_next(429)
    server.retry_after = 0.3
    slept: list[float] = []
    source = _source(server, sleep=lambda s: slept.append(s))
    assert source.search(["lithium carbonate"], max_results=1)[0].pmid == LITHIUM_PMID
    assert 0.3 in slept


def test_persistent_server_errors_raise_source_error_after_the_retries(server: EUtilsServer) -> None:
    server.fail_next(*[503] * 10)
    with pytest.raises(SourceError, match="HTTP 503"):
        _source(server, retries=2).search(["lithium carbonate"])
    assert server.count("esearch.fcgi") == 3


def test_client_errors_are_not_retried(server: EUtilsServer) -> None:
    server.fail_next(400)
    with pytest.raises(SourceError, match="HTTP 400"):
        _source(server, retries=3).search(["lithium carbonate"])
    assert server.count("esearch.fcgi") == 1


def test_slow_server_raises_source_error_within_the_time_budget(server: EUtilsServer) -> None:
    server.delay_s = 3.0
    source = _source(server, retries=5, timeout_s=0.4)
    started = time.monotonic()
    with pytest.raises(SourceError, match="timed out"):
        source.search(["lithium carbonate"], timeout_s=1.0)
    assert time.monotonic() - started < 2.0  # the 1 s budget, not 6 attempts x 3 s


def test_unreachable_server_raises_source_error() -> None:
    source = PubMedSource(base_url="http://127.0.0.1:9/entrez/eutils", retries=1, backoff_s=0.01, rate_per_s=50)
    with pytest.raises(SourceError):
        source.search(["lithium"], timeout_s=2.0)


def test_rate_limiter_spaces_calls_on_a_fake_clock() -> None:
    now = [100.0]
    limiter = RateLimiter(3.0, clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    for _ in range(7):
        limiter.wait()
    assert now[0] - 100.0 == pytest.approx(6 / 3.0)
    now[0] += 10.0  # idle time is not banked as a burst
    start = now[0]
    limiter.wait()
    limiter.wait()
    assert now[0] - start == pytest.approx(1 / 3.0)


def test_rate_limit_is_shared_by_the_requests_of_a_client(server: EUtilsServer) -> None:
    source = _source(server, rate_per_s=10.0)
    before = len(server.requests)  # the server is shared with other tests of the module
    for _ in range(3):  # 3 searches = 6 requests (esearch + efetch each)
        source.search(["lithium carbonate"], max_results=1)
    times = [t for t, _, _ in server.requests[before:]]
    assert len(times) == 6 and times[-1] - times[0] >= 5 / 10.0 - 0.02


def test_default_rate_is_ncbis() -> None:
    assert PubMedSource().limiter.interval == pytest.approx(1 / 3)
    assert PubMedSource(api_key="k").limiter.interval == pytest.approx(1 / 10)


def test_query_is_built_from_quoted_terms_only() -> None:
    assert build_query(["Heart Attack", " heart attack ", "Metformin"]) == '"Heart Attack"[tiab] OR "Metformin"[tiab]'
    hostile = build_query(['aspirin"[au] OR (cancer[mh]) #1', "*"])
    assert hostile == '"aspirin au OR cancer mh 1"[tiab]'
    with pytest.raises(ValueError):
        build_query(["", "  "])
    with pytest.raises(ValueError):
        build_query(['"[]"'])


def test_malformed_replies_raise_source_error() -> None:
    with pytest.raises(SourceError, match="esearch error"):
        parse_esearch(b'{"esearchresult": {"ERROR": "Invalid query"}}')
    with pytest.raises(SourceError):
        parse_esearch(b"not json")
    with pytest.raises(SourceError):
        parse_pubmed_xml(b"<PubmedArticleSet><PubmedArticle>")
    with pytest.raises(SourceError, match="entities"):
        parse_pubmed_xml(b'<!DOCTYPE x [<!ENTITY a "aaaa">]><PubmedArticleSet>&a;</PubmedArticleSet>')
    with pytest.raises(SourceError, match="PubmedArticleSet"):
        parse_pubmed_xml(b"<html><body>maintenance</body></html>")
    assert parse_esearch(b"<eSearchResult><IdList><Id>1</Id><Id>2</Id></IdList></eSearchResult>") == ["1", "2"]


def test_bad_arguments_fail_clearly(server: EUtilsServer) -> None:
    with pytest.raises(ValueError):
        _source(server).search(["lithium"], max_results=0)
    with pytest.raises(ValueError):
        RateLimiter(0)
