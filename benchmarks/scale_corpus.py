"""A scale corpus of any size made of real biomedical sentences, as PubMed baseline files.

    python benchmarks/scale_corpus.py --docs 200000 --out /data/scale [--per-file 10000] [--seed 0]
        [--shared ../shared/data]

Writes ``scale-000000000.xml.gz``, ``scale-000010000.xml.gz``, ... (named by their first article;
``PubmedArticleSet``, gzipped, as NCBI
publishes its baseline; ``--per-file`` articles each, so the corpus job gets one shard per file), streamed:
the corpus is never held in memory. Prints JSON: files, articles, sentences, bytes, seconds.

Where the text comes from: the sentences of the real abstracts of ``../shared/data``: SciFact's
corpus (5,183 abstracts), PubMedQA's 1,000 labelled ones and BC5CDR's training set (500). NFCorpus
is left out: its text is preprocessed (lower-cased, stop words removed), not text a build ever sees.

Article ``i`` (PMID ``90000000 + i``, outside the range of real PMIDs) is made from its own seeded
random stream, so it is the same whatever ``--docs`` and ``--per-file`` are: a 10k corpus is the
first 10k articles of a 200k one, and the next 1% is the increment of an incremental build. Each
article takes a real abstract as its template (its title, year, section labels and number of
sentences per section) and fills every sentence slot with a sentence drawn from the whole pool, so
abstract lengths, chunk lengths and the mention and entity distributions are those of biomedical
text, while no two articles are the same (the co-occurrence of entities across sentences is
random, not topical: a community build sees a flatter graph than real PubMed's).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from medgraph.ingest.text import count_tokens, split_sentences  # noqa: E402
from medgraph.testing.eutils import Article, article_xml, load_bc5cdr, load_pubmedqa  # noqa: E402

FIRST_PMID = 90_000_000
MIN_TOKENS = 4  # shorter pieces are section debris ("Methods:", "(n = 12).")
MAX_SENTENCES = 40  # per section: a template longer than this is cut


@dataclass(frozen=True)
class Pool:
    """The templates (real abstracts), each one's sentences per section (``shapes``, the slots an
    article fills), and the sentences the articles are drawn from."""

    templates: tuple[Article, ...]
    shapes: tuple[tuple[int, ...], ...]
    sentences: tuple[str, ...]


def _scifact(shared: Path) -> list[Article]:
    out = []
    for part in sorted((shared / "ir" / "scifact").glob("corpus.part-*.jsonl")):
        with part.open(encoding="utf-8") as fh:
            for line in fh:
                rec = json.loads(line)
                if rec.get("text"):
                    out.append(Article(str(rec["doc_id"]), rec.get("title") or "", (("", rec["text"]),)))
    return out


def load_pool(shared: Path) -> Pool:
    """Every template and sentence, in a fixed order (the random draws then depend on the seed only)."""
    articles = (_scifact(shared) + load_pubmedqa(shared / "pubmedqa" / "ori_pqal.json")
                + load_bc5cdr(shared / "bc5cdr" / "CDR_TrainingSet.PubTator.txt"))
    sentences = tuple(dict.fromkeys(  # each sentence once (a few abstracts share boilerplate)
        s for a in articles for _, text in a.sections for s in split_sentences(text) if count_tokens(s) >= MIN_TOKENS))
    templates = tuple(a for a in articles if a.title and any(text for _, text in a.sections))
    if not sentences or not templates:
        raise SystemExit(f"no abstracts found under {shared} (SciFact, PubMedQA, BC5CDR expected)")
    shapes = tuple(tuple(min(max(len(split_sentences(text)), 1), MAX_SENTENCES) for _, text in t.sections)
                   for t in templates)
    return Pool(templates, shapes, sentences)


def article(pool: Pool, i: int, seed: int = 0) -> Article:
    """Article ``i`` of the corpus with ``seed``: the same whatever the corpus size."""
    rng = random.Random(seed * 1_000_003 + i)
    k = rng.randrange(len(pool.templates))
    template = pool.templates[k]
    sections = [(label, " ".join(pool.sentences[rng.randrange(len(pool.sentences))] for _ in range(n)))
                for (label, _), n in zip(template.sections, pool.shapes[k], strict=True)]
    return Article(str(FIRST_PMID + i), template.title, tuple(sections), template.year)


def articles(pool: Pool, n: int, seed: int = 0, start: int = 0) -> Iterator[Article]:
    for i in range(start, start + n):
        yield article(pool, i, seed)


def write_corpus(pool: Pool, out: Path, n: int, per_file: int = 10_000, seed: int = 0,
                 start: int = 0) -> dict[str, int]:
    """Articles ``start .. start + n - 1`` as gzipped baseline files in ``out`` (named by their first article)."""
    out.mkdir(parents=True, exist_ok=True)
    files = written = sentences = size = 0
    for first in range(start, start + n, per_file):
        count = min(per_file, start + n - first)
        path = out / f"scale-{first:09d}.xml.gz"
        with gzip.open(path, "wb", compresslevel=6) as fh:
            fh.write(b'<?xml version="1.0" encoding="UTF-8"?>\n<PubmedArticleSet>\n')
            for a in articles(pool, count, seed, first):
                fh.write((article_xml(a) + "\n").encode("utf-8"))
                sentences += sum(len(split_sentences(text)) for _, text in a.sections)
                written += 1
            fh.write(b"</PubmedArticleSet>\n")
        files += 1
        size += path.stat().st_size
    return {"files": files, "articles": written, "sentences": sentences, "gzip_bytes": size}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, required=True, help="articles to write")
    ap.add_argument("--out", type=Path, required=True, help="folder for the .xml.gz files")
    ap.add_argument("--per-file", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--start", type=int, default=0, help="first article (an increment: --start 200000 --docs 2000)")
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared" / "data")
    args = ap.parse_args(argv)
    if args.docs < 1 or args.per_file < 1 or args.start < 0:
        ap.error("--docs and --per-file must be >= 1, --start >= 0")
    started = time.perf_counter()
    pool = load_pool(args.shared)
    summary = write_corpus(pool, args.out, args.docs, args.per_file, args.seed, args.start)
    print(json.dumps({**summary, "templates": len(pool.templates), "pool_sentences": len(pool.sentences),
                      "seed": args.seed, "start": args.start, "seconds": round(time.perf_counter() - started, 1)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
