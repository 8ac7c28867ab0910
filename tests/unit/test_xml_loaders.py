"""PubMed/MEDLINE and PMC JATS XML inputs, streamed, from real records.

The articles are PubMedQA's labelled abstracts (real PMIDs, section labels, years and MeSH
headings, the headings' descriptor UIs looked up in the shared MeSH table) and BC5CDR abstracts,
written in the shape of NCBI's PubMed baseline files and of PMC's JATS ``.nxml`` files.
"""

from __future__ import annotations

import csv
import gzip
import json
import tracemalloc
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import pytest

from medgraph.ingest.loaders import expand_inputs, load_shard, plan_shards
from medgraph.schemas import Document, Failure
from medgraph.testing.eutils import load_bc5cdr

HEAD = ('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, '
        '1st January 2025//EN" "https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">\n<PubmedArticleSet>\n')
TAIL = "</PubmedArticleSet>\n"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture(scope="module")
def pubmedqa(shared_data):
    return json.loads((shared_data / "pubmedqa" / "ori_pqal.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def mesh_ids(shared_data):
    with (shared_data / "mesh" / "mesh2015_descriptor_names.tsv").open(encoding="utf-8") as fh:
        return {row["mesh_name"]: row["mesh_id"] for row in csv.DictReader(fh, delimiter="\t")}


def pubmed_xml(pmid: str, item: dict, mesh_ids: dict[str, str], *, title: str | None = None,
               language: str = "eng", abstract: bool = True) -> str:
    """One ``PubmedArticle`` of a baseline file (``title`` may carry inline markup)."""
    labels = item.get("LABELS") or [""] * len(item["CONTEXTS"])
    texts = "".join(f"<AbstractText Label={quoteattr(lab)} NlmCategory={quoteattr(lab)}>{escape(ctx)}</AbstractText>"
                    for lab, ctx in zip(labels, item["CONTEXTS"], strict=False))
    headings = "".join(
        f'<MeshHeading><DescriptorName UI="{mesh_ids[name]}" MajorTopicYN="N">{escape(name)}</DescriptorName>'
        "</MeshHeading>" for name in item.get("MESHES", []) if name in mesh_ids)
    return (
        f'<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM"><PMID Version="1">{pmid}</PMID>'
        '<Article PubModel="Print"><Journal><JournalIssue CitedMedium="Internet">'
        f"<PubDate><Year>{item['YEAR']}</Year></PubDate></JournalIssue></Journal>"
        f"<ArticleTitle>{title if title is not None else escape(item['QUESTION'])}</ArticleTitle>"
        + (f"<Abstract>{texts}</Abstract>" if abstract else "")
        + f"<Language>{language}</Language></Article>"
        f"<MeshHeadingList>{headings}</MeshHeadingList></MedlineCitation>"
        f'<PubmedData><ArticleIdList><ArticleId IdType="pubmed">{pmid}</ArticleId></ArticleIdList></PubmedData>'
        "</PubmedArticle>\n"
    )


def baseline(path: Path, articles: list[str], deleted: tuple[str, ...] = ()) -> Path:
    body = HEAD + "".join(articles)
    if deleted:
        body += "<DeleteCitation>" + "".join(f'<PMID Version="1">{p}</PMID>' for p in deleted) + "</DeleteCitation>\n"
    data = (body + TAIL).encode("utf-8")
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return path


def load(paths):
    files, failures = expand_inputs(paths)
    items = [it for s in plan_shards(files) for it in load_shard(s)]
    return [i for i in items if isinstance(i, Document)], failures + [i for i in items if isinstance(i, Failure)]


def test_pubmed_baseline_gz_one_document_per_article(tmp_path, pubmedqa, mesh_ids, shared_data):
    pmids = list(pubmedqa)[:3]
    first = pubmedqa[pmids[0]]
    # the real title of PMID 21645374 asks about a plant named in italics: inline markup keeps its text
    marked = escape(first["QUESTION"]).replace("lace plant", "<i>lace</i> plant<sup>1</sup>")
    bc5 = load_bc5cdr(shared_data / "bc5cdr" / "CDR_DevelopmentSet.PubTator.txt", limit=1)[0]
    no_abstract = (f'<PubmedArticle><MedlineCitation><PMID Version="1">{bc5.pmid}</PMID><Article>'
                   f"<ArticleTitle>{escape(bc5.title)}</ArticleTitle><Language>eng</Language></Article>"
                   "</MedlineCitation></PubmedArticle>\n")
    path = baseline(tmp_path / "pubmed25n0001.xml.gz", [
        pubmed_xml(pmids[0], first, mesh_ids, title=marked),
        no_abstract,
        pubmed_xml(pmids[1], pubmedqa[pmids[1]], mesh_ids, language="ger"),
        pubmed_xml(pmids[2], pubmedqa[pmids[2]], mesh_ids, language="fre"),
    ], deleted=("12345",))
    docs, failures = load([path])
    assert [d.doc_id for d in docs] == [f"pmid-{p}" for p in pmids]
    doc = docs[0]
    assert doc.source_id == f"PMID:{pmids[0]}" and doc.title == first["QUESTION"].replace("lace plant", "lace plant1")
    assert [s.title for s in doc.sections] == first["LABELS"] and doc.sections[0].text == first["CONTEXTS"][0]
    assert doc.metadata["year"] == int(first["YEAR"]) and doc.metadata["pmid"] == pmids[0]
    assert doc.metadata["mesh_names"] == first["MESHES"]
    assert doc.metadata["mesh"] == [mesh_ids[n] for n in first["MESHES"]] and doc.metadata["mesh"][1] == "D017209"
    assert doc.language == "en" and docs[1].language == "de"  # Language "ger"; "fre" is not ours: detected
    assert docs[2].language == "en"
    assert doc.source_path == f"{path}#PMID:{pmids[0]}"
    [failure] = failures  # the DeleteCitation is not a document, nor a failure
    assert failure == Failure(f"{path}#PMID:{bc5.pmid}", "load", "article has no abstract", f"pmid-{bc5.pmid}")


def test_a_pubmed_file_is_one_shard_and_is_not_read_when_planned(tmp_path, pubmedqa, mesh_ids):
    path = baseline(tmp_path / "a.xml", [pubmed_xml(p, pubmedqa[p], mesh_ids) for p in list(pubmedqa)[:5]])
    files, _ = expand_inputs([path])
    assert plan_shards(files, records_per_shard=2) == [plan_shards(files)[0]] and plan_shards(files)[0].stop is None
    path.write_bytes(b"gone")  # planning read nothing: only the load sees the change
    assert [type(i) for i in load_shard(plan_shards(files)[0])] == [Failure]


def test_streaming_memory_does_not_hold_the_file(tmp_path, pubmedqa, mesh_ids):
    records = [pubmed_xml(str(40_000_000 + i), pubmedqa[p], mesh_ids)
               for i, p in enumerate(list(pubmedqa) * 3)]  # 3,000 articles, ~6 MB of XML
    path = baseline(tmp_path / "big.xml", records)
    size = path.stat().st_size
    tracemalloc.start()
    try:
        n = sum(1 for item in load_shard(plan_shards([path])[0]) if isinstance(item, Document))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert n == 3000
    assert peak < size / 4, f"peak {peak} bytes while streaming a {size}-byte file"


def test_truncated_xml_keeps_the_articles_before_the_break(tmp_path, pubmedqa, mesh_ids):
    pmids = list(pubmedqa)[:3]
    full = HEAD + "".join(pubmed_xml(p, pubmedqa[p], mesh_ids) for p in pmids) + TAIL
    cut = full[: full.index(f"<PMID Version=\"1\">{pmids[2]}") + 40]
    (tmp_path / "cut.xml").write_text(cut, encoding="utf-8")
    docs, failures = load([tmp_path / "cut.xml"])
    assert [d.doc_id for d in docs] == [f"pmid-{p}" for p in pmids[:2]]
    [failure] = failures
    assert failure.source == str(tmp_path / "cut.xml") and failure.stage == "load"
    assert failure.reason.startswith("unreadable XML after 2 article(s): ")
    assert "line" in failure.reason and "column" in failure.reason


def test_corrupt_and_truncated_gzip_fail_alone(tmp_path, pubmedqa, mesh_ids):
    pmids = list(pubmedqa)[:400]
    good = baseline(tmp_path / "good.xml.gz", [pubmed_xml(p, pubmedqa[p], mesh_ids) for p in pmids[:2]])
    (tmp_path / "noise.xml.gz").write_bytes(b"this was never gzipped" * 10)
    data = gzip.compress((HEAD + "".join(pubmed_xml(p, pubmedqa[p], mesh_ids) for p in pmids) + TAIL).encode())
    (tmp_path / "short.xml.gz").write_bytes(data[: len(data) // 2])
    docs, failures = load([tmp_path])
    reasons = {Path(f.source).name: f.reason for f in failures}
    assert set(reasons) == {"noise.xml.gz", "short.xml.gz"}
    assert reasons["noise.xml.gz"].startswith("corrupt gzip after 0 article(s): Not a gzipped file")
    assert reasons["short.xml.gz"].startswith("truncated gzip after ")
    kept = int(reasons["short.xml.gz"].split("after ")[1].split(" ")[0])
    assert 50 < kept < 400 and len(docs) == 2 + kept  # what was read before the break is kept
    assert {d.doc_id for d in docs} >= {f"pmid-{p}" for p in pmids[:2]} and good.exists()


def test_a_file_that_lies_about_its_encoding_fails_alone(tmp_path, pubmedqa, mesh_ids):
    title = "Fieber und Schüttelfrost bei Kindern"
    xml = next(x for p in pubmedqa if (x := HEAD + pubmed_xml(p, pubmedqa[p], mesh_ids, title=title) + TAIL).isascii()
               or all(ord(c) < 256 for c in x))
    (tmp_path / "lies.xml").write_bytes(xml.encode("latin-1"))  # declared UTF-8
    honest = xml.replace('encoding="UTF-8"', 'encoding="ISO-8859-1"')
    (tmp_path / "latin1.xml").write_bytes(honest.encode("latin-1"))
    docs, failures = load([tmp_path])
    assert [d.title for d in docs] == [title]
    [failure] = failures
    assert Path(failure.source).name == "lies.xml"
    assert "not valid UTF-8 at byte" in failure.reason and "its XML declaration says UTF-8" in failure.reason


# --- PMC JATS -------------------------------------------------------------------------------


def jats_xml(pmcid: str, pmid: str, item: dict, mesh_ids: dict[str, str], root: bool = True) -> str:
    """A PMC Open Access article built from a PubMedQA record: the labelled contexts as the
    structured abstract and the body, MeSH headings as a table, the question as a figure caption."""
    labels = item["LABELS"]
    abstract = "".join(f"<sec><title>{escape(lab.title())}</title><p>{escape(ctx)}</p></sec>"
                       for lab, ctx in zip(labels, item["CONTEXTS"], strict=False))
    rows = "".join(f"<tr><td>{escape(n)}</td><td>{mesh_ids.get(n, '')}</td></tr>" for n in item["MESHES"])
    table = ('<table-wrap id="tab1" position="float"><label>Table 1</label><caption><title>MeSH headings of the '
             "study.</title><p>Descriptor names and UIs.</p></caption><table><thead><tr><th>Heading</th><th>UI</th>"
             f"</tr></thead><tbody>{rows}</tbody></table></table-wrap>")
    figure = (f'<fig id="f1"><label>Figure 1</label><caption><title>Study question.</title><p>{escape(item["QUESTION"])}'
              "</p></caption><graphic/></fig>")
    ns = ' xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:mml="http://www.w3.org/1998/Math/MathML"' if root else ""
    return (
        f'<article{ns} article-type="research-article" xml:lang="en"><front><journal-meta>'
        '<journal-title-group><journal-title>PubMedQA Records</journal-title></journal-title-group></journal-meta>'
        f'<article-meta><article-id pub-id-type="pmid">{pmid}</article-id>'
        f'<article-id pub-id-type="pmc">{pmcid}</article-id>'
        f"<title-group><article-title>{escape(item['QUESTION'])}</article-title></title-group>"
        f'<pub-date pub-type="epub"><year>{item["YEAR"]}</year></pub-date><abstract>{abstract}</abstract>'
        "</article-meta></front><body>"
        f"<sec><title>Background</title><p>{escape(item['CONTEXTS'][0])} (<xref ref-type=\"bibr\" rid=\"r1\">1</xref>)"
        f"</p>{figure}</sec>"
        f"<sec><title>Results</title><sec><title>Main finding</title><p>{escape(item['CONTEXTS'][-1])}</p>"
        f"<p>See <xref ref-type=\"table\" rid=\"tab1\">Table 1</xref>.</p>{table}</sec></sec>"
        f"<sec><title>Conclusions</title><p><italic>{escape(item['LONG_ANSWER'])}</italic></p></sec>"
        '</body><back><ref-list><title>References</title><ref id="r1"><mixed-citation>Reference list text that is '
        "never a document section.</mixed-citation></ref></ref-list></back></article>"
    )


def test_pmc_nxml_article_sections_tables_and_figures(tmp_path, pubmedqa, mesh_ids):
    pmid = next(iter(pubmedqa))
    item = pubmedqa[pmid]
    head = ('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE article PUBLIC "-//NLM//DTD JATS (Z39.96) Journal '
            'Archiving and Interchange DTD v1.0 20120330//EN" "JATS-archivearticle1.dtd">\n')
    path = tmp_path / "PMC3460867.nxml"
    path.write_text(head + jats_xml("3460867", pmid, item, mesh_ids), encoding="utf-8")
    [doc] = load([path])[0]
    assert doc.doc_id == "pmc-3460867" and doc.source_id == "PMCID:PMC3460867" and doc.title == item["QUESTION"]
    assert doc.language == "en" and doc.metadata["pmid"] == pmid and doc.metadata["year"] == int(item["YEAR"])
    assert doc.metadata["journal"] == "PubMedQA Records" and doc.metadata["pmcid"] == "PMC3460867"
    outline = [(s.title, s.level) for s in doc.sections]
    n = len(item["LABELS"])
    assert outline[: n + 1] == [("Abstract", 1)] + [(lab.title(), 2) for lab in item["LABELS"]]
    assert outline[n + 1:] == [("Background", 1), ("Results", 1), ("Main finding", 2), ("Conclusions", 1),
                               ("Figure 1: Study question.", 1), ("Table 1: MeSH headings of the study.", 1)]
    by_title = {s.title: s.text for s in doc.sections}
    assert by_title["Background"] == f"{item['CONTEXTS'][0]} (1)"  # the figure is not in the paragraph
    assert by_title["Main finding"].endswith("See Table 1.") and "Descriptor" not in by_title["Main finding"]
    assert by_title["Conclusions"] == item["LONG_ANSWER"]
    assert by_title["Figure 1: Study question."] == f"Study question.\n{item['QUESTION']}"
    table = by_title["Table 1: MeSH headings of the study."].splitlines()
    assert table[:3] == ["MeSH headings of the study.", "Descriptor names and UIs.", "Heading | UI"]
    assert f"{item['MESHES'][1]} | {mesh_ids[item['MESHES'][1]]}" in table
    assert not any("Reference list text" in s.text for s in doc.sections)


def test_pmc_articleset_is_detected_by_its_root_not_its_suffix(tmp_path, pubmedqa, mesh_ids):
    a, b = list(pubmedqa)[:2]
    no_id = jats_xml("", b, pubmedqa[b], mesh_ids, root=False).replace('<article-id pub-id-type="pmc"></article-id>', "")
    path = tmp_path / "efetch_pmc.xml"
    path.write_text('<?xml version="1.0"?>\n<pmc-articleset>' + jats_xml("1234567", a, pubmedqa[a], mesh_ids, False)
                    + no_id + "</pmc-articleset>", encoding="utf-8")
    docs, failures = load([path, FIXTURES / "mesh" / "desc_fixture.xml"])
    assert [d.doc_id for d in docs] == ["pmc-1234567"]
    reasons = {Path(f.source).name: f.reason for f in failures}
    assert reasons == {"efetch_pmc.xml#2": 'article has no PMC ID (article-id pub-id-type="pmc")',
                       "desc_fixture.xml": "XML root <DescriptorRecordSet> is neither PubMed (<PubmedArticleSet>) "
                                           "nor PMC JATS (<article>, <pmc-articleset>)"}


# --- globs ----------------------------------------------------------------------------------


def test_globs_expand_to_the_matching_files(tmp_path, pubmedqa, mesh_ids, monkeypatch):
    pmids = list(pubmedqa)[:4]
    (tmp_path / "data" / "deep").mkdir(parents=True)
    for i, p in enumerate(pmids[:3]):
        baseline(tmp_path / "data" / f"pubmed25n000{i + 1}.xml.gz", [pubmed_xml(p, pubmedqa[p], mesh_ids)])
    baseline(tmp_path / "data" / "deep" / "pubmed25n0009.xml.gz", [pubmed_xml(pmids[3], pubmedqa[pmids[3]], mesh_ids)])
    (tmp_path / "data" / "notes.txt").write_text("not matched", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    files, failures = expand_inputs(["data/*.xml.gz", "data/pubmed25n0001.xml.gz", "nothing/*.xml", "gone.xml"])
    assert [f.name for f in files] == ["pubmed25n0001.xml.gz", "pubmed25n0002.xml.gz", "pubmed25n0003.xml.gz"]
    assert all(f.is_absolute() for f in files)  # the same files whatever directory a worker runs in
    assert [(f.source, f.reason) for f in failures] == [("nothing/*.xml", "no file matches the pattern"),
                                                        ("gone.xml", "no such file or directory")]
    deep, _ = expand_inputs([str(tmp_path / "data" / "**" / "*.xml.gz")])
    assert len(deep) == 4
    docs, _ = load(["data/**/*.xml.gz"])
    assert sorted(d.doc_id for d in docs) == sorted(f"pmid-{p}" for p in pmids)
