"""OCR of pages without a usable text layer: Tesseract 5 (offline tier) or PaddleOCR (model tier).

Input: a PDF path, the 1-based pages to read, the document's language when the other pages told
it (a language pack's code, or ``""``), and the ``parse.ocr`` config. Output: ``PageLines`` per
page (lines with boxes in points and an estimated font size, ``source`` = the engine's name) and
the language used, ready for the same layout analysis as a text layer (``layout.py``).

- Pages are rendered with pypdfium2 at ``ocr.dpi`` in grayscale and handed to the engine chosen
  per language in ``ocr.engines``. 200 dpi by default: on the benchmark's scans (README) it reads
  English and German as well as 300 dpi (9-12 pt text) at 15-20% less time, and Chinese better
  (11 pt characters at 300 dpi are taller than what the chi_sim model reads best); 150 dpi loses
  accuracy on English.
- Tesseract runs as the ``tesseract`` binary (Debian ``tesseract-ocr`` with ``-eng``, ``-deu`` and
  ``-chi-sim``; ``make install`` installs them), one process per page with a timeout and one
  thread (``OMP_THREAD_LIMIT=1``: Ray workers are the unit of parallelism). It is called
  directly rather than through pytesseract: the TSV output, the timeout and the error text are
  all we need, and it keeps the core free of another dependency.
- The language: the document's own when known (its pack's ``text.tesseract`` codes, or the
  config's ``languages`` override); otherwise the first page is read with ``languages.default``
  (default: every Latin-script pack's codes, ``eng+deu``), and again with the models of each pack
  whose script identifies it (Chinese) when the engine is not confident (mean word confidence
  under 50: Han script read as Latin); the better reading is kept and the language detected from its text is used for the rest. (Tesseract's script
  detection, OSD, costs as much as reading the page, so it is not used.)
- Results are cached by (file content hash, page, engine, languages, dpi) under
  ``ocr.cache_dir``, so a re-run or a resumed job does not OCR a page twice.

``character_error_rate`` (Levenshtein distance / reference length) measures OCR quality in the
tests and the benchmark.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from medgraph import lang
from medgraph.config.models import OcrConfig
from medgraph.ingest.layout import Line, PageLines
from medgraph.ingest.parsed import OcrError
from medgraph.ingest.text import detect_language

log = logging.getLogger(__name__)

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")
_CJK_GAP = re.compile(r"(?<=[\u3400-\u4dbf\u4e00-\u9fff\u3000-\u303f\uff00-\uffef]) (?=[\u3400-\u4dbf\u4e00-\u9fff\u3000-\u303f\uff00-\uffef])")


class OcrTimeout(OcrError):
    """The engine did not finish a page within its time."""


class OcrEngine(Protocol):
    """Reads one rendered page (grayscale, H x W uint8) into lines with boxes in points, and the
    engine's mean confidence over its words (0-100)."""

    name: str

    def read(self, image: np.ndarray, dpi: int, languages: str, timeout_s: float) -> tuple[list[Line], float]: ...


# --- Tesseract -------------------------------------------------------------------------------


def _pgm(image: np.ndarray) -> bytes:
    """A grayscale image as binary PGM, which Tesseract (Leptonica) reads from stdin."""
    h, w = image.shape[:2]
    return f"P5 {w} {h} 255\n".encode() + np.ascontiguousarray(image.reshape(h, w), dtype=np.uint8).tobytes()


def _size_points(word: str, height_px: float, dpi: int) -> float:
    """Font size from a word's box height: the box spans caps/ascenders and descenders it has."""
    if _CJK.search(word):
        share = 0.88
    else:
        tall = any(c.isupper() or c.isdigit() or c in "bdfhiklt" for c in word)
        deep = any(c in "gjpqy" for c in word)
        share = 0.95 if tall and deep else 0.72 if tall or deep else 0.5
    return height_px / share * 72.0 / dpi


def tsv_lines(tsv: str, dpi: int) -> tuple[list[Line], float]:
    """Tesseract TSV (word rows: level 5) → lines in reading order (boxes, sizes in points), mean confidence."""
    groups: dict[tuple[str, str, str], list[list[str]]] = {}
    for row in tsv.splitlines()[1:]:
        cols = row.split("\t")
        if len(cols) == 12 and cols[0] == "5" and cols[11].strip() and float(cols[10]) >= 0:
            groups.setdefault((cols[2], cols[3], cols[4]), []).append(cols)
    scale = 72.0 / dpi
    lines = []
    for words in groups.values():
        left = min(int(w[6]) for w in words)
        top = min(int(w[7]) for w in words)
        right = max(int(w[6]) + int(w[8]) for w in words)
        bottom = max(int(w[7]) + int(w[9]) for w in words)
        text = _CJK_GAP.sub("", " ".join(w[11] for w in words))
        sizes = [_size_points(w[11], int(w[9]), dpi) for w in words if len(w[11]) > 1] or \
                [_size_points(w[11], int(w[9]), dpi) for w in words]
        lines.append(Line(text, round(left * scale, 1), round(top * scale, 1), round(right * scale, 1),
                          round(bottom * scale, 1), round(statistics.median(sizes), 1)))
    confidences = [float(w[10]) for words in groups.values() for w in words]
    return lines, statistics.fmean(confidences) if confidences else 0.0


class Tesseract:
    """The ``tesseract`` binary: one process per page, TSV output, a timeout, one thread."""

    name = "tesseract"

    def __init__(self, binary: str = "tesseract") -> None:
        path = shutil.which(binary)
        if path is None:
            raise OcrError("the tesseract binary is not installed: apt-get install tesseract-ocr "
                           "tesseract-ocr-eng tesseract-ocr-deu tesseract-ocr-chi-sim (or run make install)")
        self.binary = path
        self._langs: set[str] | None = None

    def languages(self) -> set[str]:
        if self._langs is None:
            out = subprocess.run([self.binary, "--list-langs"], capture_output=True, text=True, timeout=30)
            self._langs = {ln.strip() for ln in out.stdout.splitlines()[1:] if ln.strip()}
        return self._langs

    def check(self, languages: str) -> None:
        missing = [code for code in languages.split("+") if code not in self.languages()]
        if missing:
            pkgs = " ".join(f"tesseract-ocr-{m.replace('_', '-')}" for m in missing)  # Debian's package names
            raise OcrError(f"Tesseract has no language data for {'+'.join(missing)}: apt-get install {pkgs}")

    def _run(self, image: np.ndarray, args: list[str], timeout_s: float) -> str:
        env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
        try:
            proc = subprocess.run([self.binary, "stdin", "stdout", *args], input=_pgm(image),
                                  capture_output=True, timeout=timeout_s, env=env)
        except subprocess.TimeoutExpired as exc:
            raise OcrTimeout(f"tesseract timed out after {timeout_s:.0f} s") from exc
        if proc.returncode != 0:
            err = proc.stderr.decode(errors="replace").strip().splitlines()
            raise OcrError(f"tesseract failed (exit {proc.returncode}): {err[-1] if err else 'no message'}")
        return proc.stdout.decode("utf-8", errors="replace")

    def read(self, image: np.ndarray, dpi: int, languages: str, timeout_s: float) -> tuple[list[Line], float]:
        self.check(languages)
        return tsv_lines(self._run(image, ["-l", languages, "--dpi", str(dpi), "--psm", "3", "tsv"], timeout_s), dpi)


def make_engine(name: str, cfg: OcrConfig) -> OcrEngine:
    if name == "tesseract":
        return Tesseract()
    if name == "paddleocr":
        from medgraph.ingest.model_tier import PaddleOcr

        return PaddleOcr(cfg)
    raise OcrError(f"unknown OCR engine {name!r}")


# --- pages -----------------------------------------------------------------------------------


def render_page(pdf: Any, page_no: int, dpi: int) -> tuple[np.ndarray, float, float]:
    """A page as a grayscale image at ``dpi``, and its size in points."""
    page = pdf[page_no - 1]
    try:
        width, height = page.get_size()
        bitmap = page.render(scale=dpi / 72.0, grayscale=True)
        image = np.array(bitmap.to_numpy(), dtype=np.uint8, copy=True)
        return image.reshape(image.shape[0], image.shape[1]), width, height
    finally:
        page.close()


def _file_hash(path: Path) -> str:
    h = hashlib.blake2b(digest_size=16)
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class _Cache:
    """OCR'd pages as JSON files keyed by content, written atomically; a no-op without a directory."""

    def __init__(self, directory: str | None, file_hash: str) -> None:
        self.dir = Path(directory) if directory else None
        self.file_hash = file_hash

    def _path(self, key: str) -> Path | None:
        if self.dir is None:
            return None
        digest = hashlib.blake2b(f"{self.file_hash}|{key}|v1".encode(), digest_size=16).hexdigest()
        return self.dir / digest[:2] / f"{digest}.json"

    def get(self, key: str) -> tuple[list[Line], float] | None:
        path = self._path(key)
        if path is None or not path.is_file():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return [Line(**ln) for ln in data["lines"]], float(data["confidence"])
        except (ValueError, TypeError, KeyError):
            return None  # a damaged entry is simply redone

    def put(self, key: str, lines: list[Line], confidence: float) -> None:
        path = self._path(key)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        data = {"lines": [ln.__dict__ for ln in lines], "confidence": confidence}
        tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        tmp.replace(path)


def _engine_for(language: str, cfg: OcrConfig, engines: dict[str, OcrEngine]) -> OcrEngine:
    name = cfg.engines.get(language, cfg.engines["default"])
    if name not in engines:
        engines[name] = make_engine(name, cfg)
    return engines[name]


def _language_codes(language: str, cfg: OcrConfig) -> str:
    """The engine's codes for a document language: the config's override, else the pack's
    ``text.tesseract``; ``default`` (language unknown): every Latin-script pack's codes joined."""
    if language in cfg.languages:
        return cfg.languages[language]
    if lang.is_known(language):
        return lang.get(language).text.tesseract
    return cfg.languages.get("default") or "+".join(p.text.tesseract for p in lang.packs() if not p.text.script)


def ocr_pdf_pages(path: Path, pages: list[int], language: str, cfg: OcrConfig,
                  engines: dict[str, OcrEngine] | None = None) -> tuple[list[PageLines], str]:
    """OCR the given pages of a PDF; returns their lines and the language used (see module docstring)."""
    from medgraph.ingest.parsed import open_pdf

    engines = engines if engines is not None else {}
    cache = _Cache(cfg.cache_dir, _file_hash(path))
    deadline = time.monotonic() + cfg.timeout_s
    pdf = open_pdf(path)
    out: list[PageLines] = []
    try:
        for page_no in pages:
            remaining = deadline - time.monotonic()
            over = f"OCR of the document exceeded {cfg.timeout_s:.0f} s (at page {page_no}, {len(out)} of {len(pages)} done)"
            if remaining <= 0:
                raise OcrTimeout(over)
            image, width, height = render_page(pdf, page_no, cfg.dpi)
            read = _reader(cache, page_no, cfg, engines, image, min(cfg.page_timeout_s, remaining))
            try:
                lines, language = _read_page(read, language)
            except OcrTimeout as exc:
                raise OcrTimeout(over if remaining < cfg.page_timeout_s else f"page {page_no}: {exc}") from exc
            except OcrError as exc:
                raise OcrError(f"page {page_no}: {exc}") from exc
            out.append(PageLines(page_no, round(width, 1), round(height, 1), lines, _engine_for(language, cfg, engines).name))
    finally:
        pdf.close()
    return out, language


Reader = Callable[[str], tuple[list[Line], float]]


def _reader(cache: _Cache, page_no: int, cfg: OcrConfig, engines: dict[str, OcrEngine],
            image: np.ndarray, timeout_s: float) -> Reader:
    """read(language) → (lines, confidence) of this page, through the cache."""

    def read(language: str) -> tuple[list[Line], float]:
        engine = _engine_for(language, cfg, engines)
        codes = _language_codes(language, cfg)
        key = f"{page_no}|{engine.name}|{codes}|{cfg.dpi}"
        cached = cache.get(key)
        if cached is not None:
            return cached
        lines, confidence = engine.read(image, cfg.dpi, codes, timeout_s)
        cache.put(key, lines, confidence)
        return lines, confidence

    return read


def _read_page(read: Reader, language: str) -> tuple[list[Line], str]:
    """Lines of a page; decides the language first when nothing told it yet (module docstring)."""
    if language:
        return read(language)[0], language
    lines, confidence = read("default")
    if lines and confidence < 50:  # text, but not Latin script as far as the Latin models can tell
        for pack in lang.packs():  # the packs whose script identifies them (Chinese), best reading wins
            if pack.text.script:
                other, other_confidence = read(pack.code)
                if other_confidence > confidence:
                    return other, pack.code
    text = " ".join(ln.text for ln in lines)
    return lines, detect_language(text) if len(text) >= 80 else ""


# --- quality ---------------------------------------------------------------------------------


def normalise_for_cer(text: str) -> str:
    """Whitespace collapsed (none between CJK characters), soft hyphens dropped."""
    text = " ".join(text.replace("\u00ad", "").split())
    return _CJK_GAP.sub("", text)


def levenshtein(a: str, b: str) -> int:
    """Edit distance, one row of the DP table at a time in numpy (fast for page-sized texts)."""
    if not a or not b:
        return len(a) or len(b)
    codes = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    offsets = np.arange(len(b) + 1, dtype=np.int64)
    prev = offsets.copy()
    for i, ch in enumerate(a, 1):
        cost = (codes != ord(ch)).astype(np.int64)
        cur = np.empty_like(prev)
        cur[0] = i
        np.minimum(prev[1:] + 1, prev[:-1] + cost, out=cur[1:])
        prev = np.minimum.accumulate(cur - offsets) + offsets  # insertions, left to right
    return int(prev[-1])


def character_error_rate(reference: str, hypothesis: str) -> float:
    ref, hyp = normalise_for_cer(reference), normalise_for_cer(hypothesis)
    return levenshtein(ref, hyp) / max(len(ref), 1)
