"""The web interface's file routes (serve/webui.py) in process: what is served, how, and what is not."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from serve.webui import WEB_DIR, Assets, ui_router


@pytest.fixture()
def site(tmp_path: Path) -> tuple[TestClient, Path]:
    root = tmp_path / "web"
    (root / "vendor").mkdir(parents=True)
    (root / "index.html").write_text("<!doctype html><title>t</title>" + "x" * 500)
    (root / "app.js").write_text("export const a = 1;\n" * 50)
    (root / "vendor" / "lib.mjs").write_text("export default 2;\n" * 50)
    (root / ".secret.js").write_text("hidden")
    (root / "notes.py").write_text("print('no')")
    (tmp_path / "outside.js").write_text("outside")
    app = FastAPI()
    app.include_router(ui_router(Assets(root)))
    return TestClient(app), root


def test_root_and_bare_ui_redirect_to_the_page(site: tuple[TestClient, Path]) -> None:
    client, _ = site
    for path in ("/", "/ui"):
        r = client.get(path, follow_redirects=False)
        assert r.status_code == 307 and r.headers["location"] == "/ui/"


def test_files_are_gzipped_for_browsers_that_accept_it_with_an_etag(site: tuple[TestClient, Path]) -> None:
    client, root = site
    r = client.get("/ui/app.js", headers={"Accept-Encoding": "gzip"})
    assert r.status_code == 200 and r.headers["content-encoding"] == "gzip"
    assert r.headers["content-type"].startswith("text/javascript") and r.text == (root / "app.js").read_text()
    assert int(r.headers["content-length"]) < len((root / "app.js").read_bytes())  # compressed on the wire
    plain = client.get("/ui/vendor/lib.mjs", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers and plain.text.startswith("export default")
    again = client.get("/ui/app.js", headers={"If-None-Match": r.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    page = client.get("/ui/")
    assert page.headers["content-type"].startswith("text/html") and page.text.startswith("<!doctype html>")


def test_every_response_carries_the_security_headers(site: tuple[TestClient, Path]) -> None:
    client, _ = site
    headers = client.get("/ui/").headers
    csp = headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert headers["x-content-type-options"] == "nosniff" and headers["referrer-policy"] == "no-referrer"


@pytest.mark.parametrize("path", ["../outside.js", "..%2Foutside.js", "%2e%2e/outside.js", ".secret.js",
                                  "notes.py", "missing.js", "vendor/../../outside.js", "vendor",
                                  "%00.js", "a%00b.js", "x" * 5000 + ".js"])
def test_nothing_outside_the_folder_hidden_or_of_another_kind_is_served(site: tuple[TestClient, Path], path: str) -> None:
    client, _ = site
    r = client.get(f"/ui/{path}")
    assert r.status_code == 404 and "outside" not in r.text and "hidden" not in r.text


def test_the_shipped_page_loads_only_its_own_files() -> None:
    html = (WEB_DIR / "index.html").read_text()
    refs = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert refs and all(r.startswith(("/ui/", "#", "data:")) for r in refs), refs
    for ref in refs:
        if ref.startswith("/ui/"):
            assert (WEB_DIR / ref.removeprefix("/ui/")).is_file(), ref
    scripts = [p.read_text() for p in WEB_DIR.glob("*.js")]
    assert not any(re.search(r"https?://(?!www\.w3\.org)", s) for s in scripts)  # no CDN, no remote call
    assert not any("innerHTML" in s for s in scripts)  # server text is always set as text


def test_made_up_names_are_not_kept(tmp_path: Path) -> None:
    (tmp_path / "app.js").write_text("export {};")
    assets = Assets(tmp_path)
    for i in range(100):
        assert assets.get(f"missing-{i}.js") is None
    assert assets.get("app.js") is not None and list(assets._cache) == ["app.js"]


def test_spellings_of_one_file_are_kept_once(tmp_path: Path) -> None:
    """/ui/a1/../app.js, /ui/a2/../app.js, ...: one file, one entry (each spelling used to hold a copy)."""
    (tmp_path / "app.js").write_text("export {};" * 1000)
    assets = Assets(tmp_path)
    first = assets.get("app.js")
    for i in range(100):
        assert assets.get(f"a{i}/../app.js") is first
        assert assets.get(f"./b{i}/./../app.js") is first
    assert assets.get("../" + tmp_path.name + "/app.js") is first  # leaves the folder and comes back in
    assert assets.get("../outside.js") is None and assets.get("x\x00.js") is None
    assert list(assets._cache) == ["app.js"]


def test_gzip_round_trips_the_body() -> None:
    asset = Assets().get("app.js")
    assert asset is not None and gzip.decompress(asset.gzipped) == asset.body
