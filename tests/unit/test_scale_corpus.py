"""The scale corpus generator (benchmarks/scale_corpus.py): real sentences, unique PMIDs, the same
article ``i`` at every corpus size, files the corpus job reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.scale_corpus import FIRST_PMID, load_pool, write_corpus
from medgraph.ingest.loaders import expand_inputs, load_shard, plan_shards
from medgraph.ingest.text import split_sentences
from medgraph.schemas import Document


@pytest.fixture(scope="module")
def pool(shared_data: Path):
    return load_pool(shared_data)


def _documents(folder: Path) -> dict[str, Document]:
    files, failures = expand_inputs([folder])
    assert failures == []
    docs = [d for s in plan_shards(files) for d in load_shard(s)]
    assert all(isinstance(d, Document) for d in docs), [d for d in docs if not isinstance(d, Document)]
    return {d.doc_id: d for d in docs}


def test_a_corpus_of_real_sentences_with_unique_pmids(pool, tmp_path: Path) -> None:
    assert len(pool.templates) > 6000 and len(pool.sentences) > 40_000  # SciFact + PubMedQA + BC5CDR
    summary = write_corpus(pool, tmp_path / "big", 30, per_file=12)
    assert (summary["files"], summary["articles"]) == (3, 30)
    docs = _documents(tmp_path / "big")
    assert sorted(docs) == sorted(f"pmid-{FIRST_PMID + i}" for i in range(30))
    known = set(pool.sentences)
    titles = {t.title for t in pool.templates}
    for doc in docs.values():
        assert doc.title in titles and doc.language == "en"
        for section in doc.sections:
            assert set(split_sentences(section.text)) <= known
    assert len({d.sections[0].text for d in docs.values()}) == 30  # no two articles alike


def test_article_i_is_the_same_at_every_size_and_an_increment_continues_it(pool, tmp_path: Path) -> None:
    write_corpus(pool, tmp_path / "big", 30, per_file=12)
    write_corpus(pool, tmp_path / "small", 10, per_file=4)
    big, small = _documents(tmp_path / "big"), _documents(tmp_path / "small")
    assert {k: v.sections for k, v in small.items()} == {k: big[k].sections for k in small}
    write_corpus(pool, tmp_path / "more", 5, per_file=4, start=30)
    assert sorted(_documents(tmp_path / "more")) == sorted(f"pmid-{FIRST_PMID + i}" for i in range(30, 35))
    write_corpus(pool, tmp_path / "other", 10, per_file=10, seed=1)
    other = _documents(tmp_path / "other")
    assert sum(other[k].sections != small[k].sections for k in small) >= 9
