"""The web interface's files, served by the ingress itself (one HTTP endpoint, no CDN).

``GET /`` redirects to ``/ui/``; ``GET /ui/`` is the page and ``GET /ui/<file>`` its scripts,
styles and vendored libraries (``serve/web``; ``make web`` copies Cytoscape.js into
``serve/web/vendor`` from ``web/``'s npm packages). Files are read once, compressed once, and
sent gzip-encoded to browsers that accept it, with an ETag (a repeat load is a 304). The page
itself needs no key: every call it makes to the API carries the key the user entered.

Every response carries a Content-Security-Policy that allows only this origin's scripts, styles
and API, so an injected string in an answer or a document cannot load or run anything.
No ``from __future__ import annotations``: Serve runs a pickled copy of these route functions,
and FastAPI must see the real ``Request`` type there, not a name it cannot resolve.
"""

import gzip
import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import RedirectResponse, Response

from medgraph import lang

log = logging.getLogger(__name__)
WEB_DIR = Path(__file__).resolve().parent / "web"
STRINGS_FILE = "i18n.json"
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".mjs": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
         ".svg": "image/svg+xml", ".png": "image/png", ".txt": "text/plain; charset=utf-8",
         ".json": "application/json"}
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                               "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


@dataclass(frozen=True)
class Asset:
    body: bytes
    gzipped: bytes
    media_type: str
    etag: str

    @classmethod
    def of(cls, body: bytes, media_type: str) -> "Asset":
        return cls(body, gzip.compress(body, 9, mtime=0), media_type, '"' + hashlib.sha256(body).hexdigest()[:20] + '"')


def interface_strings() -> dict[str, object]:
    """The languages of the registered packs and their interface strings, for ``i18n.js``."""
    return {
        "pivot": lang.PIVOT,
        "languages": [{"code": p.code, "name": p.native_name, "html_lang": p.html_lang} for p in lang.packs()],
        "strings": {p.code: dict(p.ui) for p in lang.packs()},
    }


def _strings_asset(packs: tuple[lang.LanguagePack, ...], cache: dict[tuple[int, ...], Asset]) -> Asset:
    key = tuple(id(p) for p in packs)
    if key not in cache:
        body = json.dumps(interface_strings(), ensure_ascii=False, sort_keys=True).encode("utf-8")
        cache.clear()
        cache[key] = Asset.of(body, TYPES[".json"])
    return cache[key]


class Assets:
    """The files under ``root`` (read on first request, then kept in memory), kept by their path
    inside the folder: only files that exist are kept, once whatever the spelling of the request
    (``a1/../app.js`` is ``app.js``), so requests cannot grow the cache."""

    def __init__(self, root: Path = WEB_DIR) -> None:
        self.root = root.resolve()
        self._cache: dict[str, Asset] = {}
        self._strings: dict[tuple[int, ...], Asset] = {}

    def get(self, name: str) -> Asset | None:
        if name == STRINGS_FILE:  # built from the registered language packs, not a file
            return _strings_asset(lang.packs(), self._strings)
        key = self._key(name)
        if key is None:
            return None
        asset = self._cache.get(key)
        if asset is None:
            asset = self._load(key)
            if asset is not None:
                self._cache[key] = asset
        return asset

    def _key(self, name: str) -> str | None:
        """The requested file's path inside the folder, or None outside it."""
        try:
            path = (self.root / name).resolve()
        except (ValueError, OSError):  # a NUL in the name, a name too long for the file system
            return None
        return path.relative_to(self.root).as_posix() if path.is_relative_to(self.root) else None

    def _load(self, name: str) -> Asset | None:
        try:
            return self._read(name)
        except (ValueError, OSError):  # a NUL in the name, a name too long for the file system
            return None

    def _read(self, name: str) -> Asset | None:
        path = (self.root / name).resolve()
        media_type = TYPES.get(path.suffix)
        # only known kinds of file, only inside the folder (no ../, no absolute paths, no dotfiles)
        if media_type is None or not path.is_relative_to(self.root):
            return None
        if any(part.startswith(".") for part in path.relative_to(self.root).parts):
            return None
        if not path.is_file():
            return None
        return Asset.of(path.read_bytes(), media_type)


def _response(request: Request, asset: Asset) -> Response:
    headers = {**SECURITY_HEADERS, "ETag": asset.etag, "Cache-Control": "no-cache", "Vary": "Accept-Encoding"}
    if request.headers.get("if-none-match") == asset.etag:
        return Response(status_code=304, headers=headers)
    if "gzip" in request.headers.get("accept-encoding", "") and len(asset.gzipped) < len(asset.body):
        return Response(asset.gzipped, media_type=asset.media_type, headers={**headers, "Content-Encoding": "gzip"})
    return Response(asset.body, media_type=asset.media_type, headers=headers)


def ui_router(assets: Assets | None = None) -> APIRouter:
    """The routes of the interface (kept out of the OpenAPI schema: they are not the API)."""
    files = assets or Assets()
    router = APIRouter(include_in_schema=False)

    @router.get("/")
    async def root() -> RedirectResponse:
        return RedirectResponse("/ui/", status_code=307)

    @router.get("/ui")
    async def ui_bare() -> RedirectResponse:
        return RedirectResponse("/ui/", status_code=307)

    @router.get("/ui/{name:path}")
    async def ui_file(request: Request, name: str) -> Response:
        asset = files.get(name or "index.html")
        if asset is None:
            return Response(b'{"detail": "no such file"}', status_code=404, media_type="application/json")
        return _response(request, asset)

    return router


def mount_ui(app: FastAPI) -> None:
    if not (WEB_DIR / "vendor" / "cytoscape.esm.min.mjs").is_file():
        log.warning("the graph explorer's library is missing (%s): run `make web`", WEB_DIR / "vendor")
    app.include_router(ui_router())
