"""Memory and speed of streaming PubMed baseline files through ``load_shard``.

    python benchmarks/pubmed_stream.py [--shared ../shared/data] [--sizes 1000 10000]

Builds PubMed baseline-format files (``PubmedArticleSet``, gzipped, as NCBI publishes them) of
each size from real records (BC5CDR and PubMedQA abstracts, ``medgraph/testing/eutils.py``; repeated
with new PMIDs to reach the size), then loads each one in a fresh subprocess:

- ``stream``: ``load_shard`` over the file (the corpus job's path), documents dropped as they come;
- ``tree``: the control, ``ElementTree.parse`` of the whole file then the same per-article code
  (what reading a file whole would cost).

Prints JSON: per run the articles, file sizes, documents and failures, seconds, articles/s and
the subprocess's peak RSS (``ru_maxrss``, and ``VmHWM`` on Linux) with the RSS after imports; and
the ratio of the largest to the smallest file's peak RSS for each mode. Streaming should stay flat (ratio ~1)
while the tree grows with the file.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def build(path: Path, n: int, shared: Path) -> int:
    """A gzipped baseline file of ``n`` articles (real records, PMIDs renumbered); returns the XML size."""
    from medgraph.testing.eutils import article_xml, shared_articles

    articles = shared_articles(shared)
    size = 0
    with gzip.open(path, "wb", compresslevel=6) as out:
        head = b'<?xml version="1.0" encoding="UTF-8"?>\n<PubmedArticleSet>\n'
        out.write(head)
        size += len(head)
        for i in range(n):
            record = dataclasses.replace(articles[i % len(articles)], pmid=str(90_000_000 + i))
            data = (article_xml(record) + "\n").encode("utf-8")
            out.write(data)
            size += len(data)
        out.write(b"</PubmedArticleSet>\n")
    return size + 20


def _rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # KiB on Linux


def _hwm_mb() -> float | None:
    """The process's own peak RSS (``VmHWM``; Linux). ``ru_maxrss`` also counts the RSS the
    parent had when it forked, which is why files are built and loaded in separate processes."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            line = next(x for x in fh if x.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return None
    return round(int(line.split()[1]) / 1024, 1)


def child(path: str, mode: str) -> dict[str, Any]:
    """Runs in the subprocess: load the file, count what comes out."""
    from medgraph.ingest.loaders import Shard, load_shard
    from medgraph.ingest.xml_articles import pubmed_article
    from medgraph.schemas import Document

    import_rss = _rss_mb()
    started = time.perf_counter()
    docs = failures = 0
    if mode == "stream":
        for item in load_shard(Shard(path)):
            docs += isinstance(item, Document)
            failures += not isinstance(item, Document)
    else:
        import xml.etree.ElementTree as ET

        with gzip.open(path, "rb") as fh:
            root = ET.parse(fh).getroot()
        for n, elem in enumerate(root.iterfind("PubmedArticle"), 1):
            item = pubmed_article(elem, path, n)
            docs += isinstance(item, Document)
            failures += not isinstance(item, Document)
    seconds = time.perf_counter() - started
    return {"documents": docs, "failures": failures, "seconds": round(seconds, 2),
            "articles_per_s": round((docs + failures) / seconds, 1), "peak_rss_mb": _rss_mb(),
            "vm_hwm_mb": _hwm_mb(), "import_rss_mb": import_rss}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--modes", nargs="+", default=["stream", "tree"], choices=["stream", "tree"])
    ap.add_argument("--child", nargs=2, metavar=("PATH", "MODE"), help=argparse.SUPPRESS)
    ap.add_argument("--build", nargs=2, metavar=("PATH", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    if args.build:
        print(build(Path(args.build[0]), int(args.build[1]), args.shared))
        return
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sorted(args.sizes):
            path = Path(tmp) / f"pubmed_{n}.xml.gz"
            xml_bytes = int(subprocess.run(  # built in its own process: this one stays small (see _hwm_mb)
                [sys.executable, __file__, "--build", str(path), str(n), "--shared", str(args.shared)],
                check=True, capture_output=True, text=True, cwd=REPO).stdout.split()[-1])
            for mode in args.modes:
                out = subprocess.run([sys.executable, __file__, "--child", str(path), mode], check=True,
                                     capture_output=True, text=True, cwd=REPO).stdout
                runs.append({"articles": n, "mode": mode, "xml_mb": round(xml_bytes / 2**20, 1),
                             "gz_mb": round(path.stat().st_size / 2**20, 1), **json.loads(out.splitlines()[-1])})
    ratios = {}
    for mode in args.modes:
        mine = [r for r in runs if r["mode"] == mode]
        ratios[mode] = round(mine[-1]["peak_rss_mb"] / mine[0]["peak_rss_mb"], 2)
    print(json.dumps({
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "python": platform.python_version(),
        "cpus": os.cpu_count(), "load_avg_1_5_15": [round(x, 2) for x in os.getloadavg()],
        "runs": runs, "peak_rss_ratio_largest_over_smallest": ratios,
    }, indent=1))


if __name__ == "__main__":
    main()
