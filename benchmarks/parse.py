"""Parsing and OCR throughput (pages/s, in-process and on Ray with 1 and 2 workers) and OCR CER per language.

    python benchmarks/parse.py [--pdfs ../shared/data/pdfs] [--copies 4] [--ocr-docs 4] [--ocr-pages 2]
                               [--parts text,ocr,cer] [--repeats 2] [--json]

Prints JSON:
- ``text_layer``: pages/s of the offline parser (text layer + layout + sections) over the shared PDFs
  (CDC 44 p., WHO IPC 91 p., WHO EMRO 20 p. with its one image-only page OCR'd), in this process;
  then the ``Parse`` stage of the corpus build on a local Ray cluster (2 CPUs) with 1 and 2 workers
  over ``--copies`` copies of the PDFs (each parsed in its worker's isolated process); 1 and 2
  workers alternate ``--repeats`` times and the fastest run of each is reported (all are listed);
- ``ocr``: pages/s of Tesseract (rendering at ``parse.ocr.dpi``, 200) on CDC pages scanned to
  image-only PDFs at 300 dpi, in this process (one tesseract at a time), then the ``Parse`` → ``OcrAndChunk`` stages with 1 and 2 OCR
  workers over ``--ocr-docs`` scanned documents of ``--ocr-pages`` pages;
- ``cer``: OCR character error rate (and seconds) per language sample, OCR'd at 150, 200 and 300
  dpi. EN: CDC pages 3-4 (public domain) scanned at 300 dpi, against their own text layer. DE: two
  German clinical letters of GraSCCo, ZH: Huatuo answers (both from ../shared/data, research use
  only, not copied into the repository), typeset at 11 pt with DejaVu Sans / WenQuanYi Micro Hei
  into a PDF (``pdf_tools.text_pdf``), rasterised at 300 dpi, OCR'd with the language unknown (it is
  detected), and compared with the text layer of the typeset PDF parsed the same way (headings
  and text). No scanned medical PDF with an open licence exists in the shared data, hence the
  renderings.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from medgraph.config import load_config  # noqa: E402
from medgraph.config.models import OcrConfig, ParseConfig  # noqa: E402
from medgraph.ingest.ocr import character_error_rate  # noqa: E402
from medgraph.ingest.parsed import open_pdf  # noqa: E402
from medgraph.ingest.pdf import load_pdf  # noqa: E402
from medgraph.ingest.pdf_tools import rasterise_pdf, text_pdf  # noqa: E402

SHARED = Path(os.environ.get("MEDGRAPH_SHARED_DATA", REPO.parent / "shared" / "data"))
CDC = "cdc_guide_infection_prevention_outpatient_2016.pdf"
FONTS = {"de": Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
         "zh": Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc")}


def all_text(doc: Any) -> str:
    parts, last = [], None
    for s in doc.sections:
        if s.title and s.title != last:
            parts.append(s.title)
        parts.append(s.text)
        last = s.title
    return "\n\n".join(parts)


def rate(pages: int, seconds: float) -> dict[str, float]:
    return {"pages": pages, "seconds": round(seconds, 2), "pages_per_s": round(pages / seconds, 2)}


def in_process_text_layer(pdfs: list[Path]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    total_pages, total_s = 0, 0.0
    for path in pdfs:
        start = time.perf_counter()
        doc = load_pdf(path)
        seconds = time.perf_counter() - start
        out[path.name] = {**rate(doc.metadata["pages"], seconds), "sections": len(doc.sections),
                          "ocr_pages": doc.metadata["ocr_pages"]}
        total_pages += doc.metadata["pages"]
        total_s += seconds
    out["all"] = rate(total_pages, total_s)
    return out


def ray_stages(cfg: Any, files: list[Path], workers: int, ocr: bool) -> float:
    """Wall seconds of the parse (and, with ``ocr``, OCR + chunk) stages over ``files`` on Ray."""
    import ray.data

    from jobs.build_corpus import pool_options
    from jobs.stages import OcrAndChunk, Parse

    per_worker = 0.9 if ocr else 1.0  # 2 CPUs: two OCR workers and a small parse worker must fit
    workers_pool = {"num_cpus": per_worker, "min_actors": workers, "max_actors": workers}
    items = [{"path": str(f), "start": 0, "stop": -1} for f in files]
    start = time.perf_counter()
    ds = ray.data.from_items(items, override_num_blocks=len(items))
    if not ocr:
        ds = ds.flat_map(Parse, fn_constructor_kwargs={"parse": cfg.parse},
                         **pool_options(cfg.pipeline.load.model_copy(update=workers_pool)))
    else:
        parse_pool = cfg.pipeline.load.model_copy(update={"num_cpus": 0.1, "min_actors": 1, "max_actors": 1})
        ds = ds.flat_map(Parse, fn_constructor_kwargs={"parse": cfg.parse}, **pool_options(parse_pool))
        ds = ds.flat_map(OcrAndChunk, fn_constructor_kwargs={"parse": cfg.parse, "chunking": cfg.chunking,
                                                              "complete": {}},
                         **pool_options(cfg.parse.ocr.pool.model_copy(update=workers_pool)))
    rows = ds.take_all()
    seconds = time.perf_counter() - start
    failed = [r for r in rows if r["kind"] == "failure"]
    if failed:
        raise RuntimeError(f"benchmark documents failed: {failed[:2]}")
    return seconds


def ray_text_layer(cfg: Any, pdfs: list[Path], copies: int, tmp: Path, repeats: int) -> dict[str, Any]:
    files = []
    for i in range(copies):
        for path in pdfs:
            files.append(shutil.copy(path, tmp / f"copy{i}_{path.name}"))
    pages = copies * sum(len(open_pdf(p)) for p in pdfs)
    text_only = cfg.model_copy(update={"parse": cfg.parse.model_copy(update={"ocr": cfg.parse.ocr.model_copy(
        update={"min_chars": 0})})})  # the EMRO image page is not OCR'd here: text-layer throughput only
    ray_stages(text_only, [Path(files[0])], 1, ocr=False)  # warm-up: workers, imports
    return best_of(repeats, pages, lambda w: ray_stages(text_only, [Path(f) for f in files], w, ocr=False))


def best_of(repeats: int, pages: int, run: Any) -> dict[str, Any]:
    """1 and 2 workers, alternated ``repeats`` times; the fastest run of each (least disturbed)."""
    seconds: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(repeats):
        for workers in (1, 2):
            seconds[workers].append(run(workers))
    runs: dict[str, Any] = {f"{w}_workers": {**rate(pages, min(s)), "all_seconds": [round(x, 1) for x in s]}
                            for w, s in seconds.items()}
    runs["speedup_2_vs_1"] = round(runs["2_workers"]["pages_per_s"] / runs["1_workers"]["pages_per_s"], 2)
    return runs


def scans(n_docs: int, n_pages: int, tmp: Path) -> list[Path]:
    """``n_docs`` image-only PDFs of ``n_pages`` single-column CDC pages each, at 300 dpi."""
    pool = [3, 4, 5, 9, 10, 11, 13, 15]
    return [rasterise_pdf(SHARED / "pdfs" / CDC, tmp / f"scan{i}.pdf",
                          [pool[(i * n_pages + k) % len(pool)] for k in range(n_pages)], dpi=300)
            for i in range(n_docs)]


def ocr_in_process(files: list[Path]) -> dict[str, Any]:
    cfg = ParseConfig()
    start = time.perf_counter()
    pages = sum(load_pdf(f, cfg).metadata["pages"] for f in files)
    return rate(pages, time.perf_counter() - start)


def samples() -> dict[str, str]:
    with (SHARED / "german_grascco" / "grascco_phi.jsonl").open(encoding="utf-8") as fh:
        letters = [json.loads(next(fh))["text"] for _ in range(2)]
    with (SHARED / "chinese_huatuo" / "llama_data.jsonl").open(encoding="utf-8") as fh:
        records = [json.loads(next(fh)) for _ in range(40)]
    de = "\n\n".join(" ".join(t.split())[:1500] for t in letters)
    zh = "\n\n".join(r["output"] for r in records)[:2000]
    return {"de": de, "zh": zh}


def cer_per_language(tmp: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    scan = rasterise_pdf(SHARED / "pdfs" / CDC, tmp / "en_scan.pdf", [3, 4], dpi=300)
    ref = tmp / "en_ref.pdf"
    import pypdfium2 as pdfium

    ref_pdf = pdfium.PdfDocument.new()
    ref_pdf.import_pages(pdfium.PdfDocument(str(SHARED / "pdfs" / CDC)), [2, 3])
    ref_pdf.save(str(ref))
    sources = {"en": (ref, scan)}
    for lang, text in samples().items():
        if not FONTS[lang].is_file():
            out[lang] = {"skipped": f"font {FONTS[lang]} missing (make install)"}
            continue
        born = text_pdf(text, FONTS[lang], tmp / f"{lang}.pdf", size=11, cjk=lang == "zh")
        sources[lang] = (born, rasterise_pdf(born, tmp / f"{lang}_scan.pdf", dpi=300))
    for lang, (truth_pdf, scan_pdf) in sources.items():
        truth = all_text(load_pdf(truth_pdf))
        out[lang] = {"chars": len(truth), "pages": len(open_pdf(scan_pdf))}
        for dpi in (150, 200, 300):
            start = time.perf_counter()
            doc = load_pdf(scan_pdf, ParseConfig(ocr=OcrConfig(dpi=dpi)))
            out[lang][f"{dpi}_dpi"] = {"cer": round(character_error_rate(truth, all_text(doc)), 4),
                                       "seconds": round(time.perf_counter() - start, 2),
                                       "detected_language": doc.language}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pdfs", default=str(SHARED / "pdfs"))
    ap.add_argument("--copies", type=int, default=4, help="copies of the shared PDFs for the Ray text-layer runs")
    ap.add_argument("--ocr-docs", type=int, default=4)
    ap.add_argument("--ocr-pages", type=int, default=2)
    ap.add_argument("--parts", default="text,ocr,cer", help="comma-separated: text, ocr, cer")
    ap.add_argument("--repeats", type=int, default=2, help="Ray runs per worker count (the fastest is reported)")
    ap.add_argument("--json", action="store_true", help="(output is always JSON)")
    args = ap.parse_args(argv)
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    pdfs = sorted(Path(args.pdfs).glob("*.pdf"))
    cfg = load_config(REPO / "configs" / "local.yaml", ["ray.num_cpus=2", "parse.ocr.cache_dir=null"])
    result: dict[str, Any] = {"machine": {"cpus": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 2)}}
    parts = set(args.parts.split(","))
    with tempfile.TemporaryDirectory(prefix="parse-bench-") as tmp_name:
        tmp = Path(tmp_name)
        if "cer" in parts:
            result["cer"] = cer_per_language(tmp)
        if "text" in parts:
            result["text_layer"] = {"in_process": in_process_text_layer(pdfs)}
        scanned = scans(args.ocr_docs, args.ocr_pages, tmp) if "ocr" in parts else []
        if scanned:
            result["ocr"] = {"dpi": cfg.parse.ocr.dpi, "in_process": ocr_in_process(scanned[:2])}
        if parts & {"text", "ocr"}:
            from jobs.ray_runtime import init_ray

            init_ray(cfg.ray)
        if "text" in parts:
            result["text_layer"]["ray"] = ray_text_layer(cfg, pdfs, args.copies, tmp, args.repeats)
        if scanned:
            ray_stages(cfg, scanned[:1], 1, ocr=True)  # warm-up
            pages = args.ocr_docs * args.ocr_pages
            result["ocr"]["ray"] = best_of(args.repeats, pages, lambda w: ray_stages(cfg, scanned, w, ocr=True))
    result["machine"]["load_avg_1m_end"] = round(os.getloadavg()[0], 2)
    print(json.dumps(result, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
