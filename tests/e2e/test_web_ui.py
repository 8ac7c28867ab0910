"""The web interface in a real browser (Debian's chromium driven by Playwright) against the real
Serve app, on a slice of the demo corpus: the CDC PDF, the German and Chinese documents and 40
English abstracts, built with the Ray job (added to a copy of ``demo_stores``), with communities
built too. Keys are required
(``auth.required``), as on a cluster: the admin key comes from ``auth.admin_key_env``.

Every test fails on a console error or an uncaught exception in the page, and writes a
screenshot of what it saw to ``$MEDGRAPH_ARTIFACTS`` (default ``.medgraph/artifacts/ui``).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from jobs.build_communities import build_communities
from jobs.build_corpus import build_corpus
from tests.helpers import require_module, unavailable

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "demo"
CHROMIUM = os.environ.get("MEDGRAPH_CHROMIUM", "/usr/bin/chromium")
AXE = REPO / "web" / "node_modules" / "axe-core" / "axe.min.js"
ARTIFACTS = Path(os.environ.get("MEDGRAPH_ARTIFACTS", REPO / ".medgraph" / "artifacts" / "ui"))
ADMIN_KEY = f"mgk_{secrets.token_hex(6)}_{secrets.token_urlsafe(32)}"
QUESTIONS = {
    "en": "What are the minimum expectations for hand hygiene in outpatient settings?",
    "de": "Ist die Händedesinfektion in der ambulanten Versorgung wichtig?",
    "zh": "妊娠期高血压的治疗方案是什么？",
}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    playwright = require_module("playwright.sync_api", "MEDGRAPH_REQUIRE_BROWSER",
                                "Playwright is not installed (the dev extra)")
    if not Path(CHROMIUM).is_file():
        unavailable(f"no chromium at {CHROMIUM} (make system-deps installs Debian's)", "MEDGRAPH_REQUIRE_BROWSER")
    if not (REPO / "serve" / "web" / "vendor" / "cytoscape.esm.min.mjs").is_file() or not AXE.is_file():
        unavailable("the interface's npm packages are missing (make web)", "MEDGRAPH_REQUIRE_BROWSER")
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture(scope="session")
def admin_key_env() -> str:
    """The admin key in the environment before Ray starts (its workers inherit it): session-scoped
    and asked for before ``demo_stores``, whose build may be the first to start Ray."""
    os.environ["MEDGRAPH_UI_TEST_ADMIN_KEY"] = ADMIN_KEY
    return "MEDGRAPH_UI_TEST_ADMIN_KEY"


@pytest.fixture(scope="module")
def app(admin_key_env: str, tmp_path_factory: pytest.TempPathFactory, demo_stores: Any,
        browser: Any) -> Iterator[dict[str, Any]]:
    from ray import serve

    from serve.demo import start

    root = tmp_path_factory.mktemp("web")
    corpus = root / "corpus"
    corpus.mkdir()
    abstracts = json.loads((DEMO / "pubmedqa_demo.json").read_text())
    (corpus / "abstracts.json").write_text(json.dumps({k: abstracts[k] for k in sorted(abstracts)[:40]}))
    for name in ("pubmedqa_de_demo.jsonl", "huatuo_zh_demo.jsonl"):
        shutil.copy(DEMO / name, corpus / name)
    cfg = demo_stores.config(root, ["auth.required=true", f"auth.admin_key_env={admin_key_env}",
                                    "auth.per_user_daily=1000"])
    # the demo stores hold the PDF and the first 20 abstracts: this build adds the rest
    summary = build_corpus(cfg, [str(corpus)])
    assert summary["status"] == "succeeded" and summary["documents_skipped"] == 20, summary
    assert build_communities(cfg)["status"] == "succeeded"
    url = start(cfg)
    admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
    r = httpx.post(f"{url}/admin/users", json={"user_id": "reader"}, headers=admin, timeout=30)
    assert r.status_code == 201, r.text
    yield {"url": url, "admin_key": ADMIN_KEY, "user_key": r.json()["api_key"], "summary": summary,
           "graph_path": root / "graph.sqlite"}
    serve.shutdown()


class Page:
    """A page of the interface with its console watched."""

    def __init__(self, page: Any, base: str) -> None:
        self.page, self.base = page, base
        self.errors: list[str] = []
        self.allowed: list[str] = []  # console messages a test expects (a 401/403 it provokes)
        page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        page.on("pageerror", lambda e: self.errors.append(f"uncaught: {e}"))

    def open(self, hash_: str, key: str | None = None, lang: str = "en") -> Any:
        """The page at ``hash_`` with the API key and interface language set before its script runs
        (once per tab: a key the test types later stays)."""
        self.page.add_init_script(
            "if (!sessionStorage.getItem('medgraph.test')) { sessionStorage.setItem('medgraph.test', '1'); "
            f"sessionStorage.setItem('medgraph.key', {json.dumps(key or '')}); "
            f"localStorage.setItem('medgraph.lang', {json.dumps(lang)}); }}")
        self.page.goto(f"{self.base}/ui/{hash_}")
        return self.page

    def shot(self, name: str) -> None:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)

    def console_errors(self) -> list[str]:
        return [e for e in self.errors if not any(a in e for a in self.allowed)]


@pytest.fixture()
def ui(browser: Any, app: dict[str, Any]) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    page = Page(context.new_page(), app["url"])
    page.page.set_default_timeout(60_000)
    yield page
    errors = page.console_errors()
    context.close()
    assert errors == [], errors


def _ask(page: Any, question: str) -> Any:
    turns = page.locator("section.turn")
    n = turns.count()
    page.fill("#question", question)
    page.keyboard.press("Enter")
    turn = turns.nth(n)
    turn.locator(".disclaimer").filter(has_text=re.compile(r"\S")).wait_for()
    return turn


# The page position of the neighbour node (not ``focus``) farthest from every other node, among
# those drawn inside both the graph's box and the browser window; null if there is none.
PICK_NODE = """(focus) => { const cy = window.medgraph.cy; const box = cy.container().getBoundingClientRect();
    const top = Math.max(box.top, 0) + 12, bottom = Math.min(box.bottom, window.innerHeight) - 12;
    const left = Math.max(box.left, 0) + 12, right = Math.min(box.right, window.innerWidth) - 12;
    const at = cy.nodes().map(n => ({id: n.id(), x: box.left + n.renderedPosition().x, y: box.top + n.renderedPosition().y}));
    let best = null, bestGap = -1;
    for (const a of at) {
      if (a.id === focus || a.x < left || a.x > right || a.y < top || a.y > bottom) continue;
      const gap = Math.min(...at.filter(b => b !== a).map(b => Math.hypot(a.x - b.x, a.y - b.y)));
      if (gap > bestGap) { best = a; bestGap = gap; }
    }
    return best; }"""


def _nodes_drawn(page: Any, at_least: int, timeout_s: float = 30.0) -> int:
    """The graph's node count once it is drawn with at least ``at_least`` nodes (polled from Python:
    the page's CSP forbids the string evaluation ``wait_for_function`` uses)."""
    deadline = time.monotonic() + timeout_s
    while True:
        n = int(page.get_attribute("#graph", "data-nodes") or 0)
        if n >= at_least or time.monotonic() > deadline:
            return n
        time.sleep(0.1)


@pytest.mark.parametrize("lang", ["en", "de", "zh"])
def test_a_question_in_each_language_streams_a_cited_answer(ui: Page, app: dict[str, Any], lang: str) -> None:
    page = ui.open("#/chat", app["user_key"], lang)
    assert page.locator("nav a[aria-current=page]").inner_text() == {"en": "Chat", "de": "Chat", "zh": "问答"}[lang]
    turn = _ask(page, QUESTIONS[lang])
    assert turn.locator(".badge.refused").count() == 0, turn.inner_text()
    cites = turn.locator(".answer a.cite")
    assert cites.count() >= 1
    # the answer streamed: the browser measured the first text before the answer finished
    first = page.evaluate("performance.getEntriesByName('medgraph:first-answer-text').map(e => e.duration)")
    assert len(first) == 1 and first[0] > 0
    cites.first.click()
    dialog = page.locator("dialog#passage")
    dialog.locator("mark").first.wait_for()
    assert dialog.locator("#passage-meta").inner_text().strip()
    citation_no = int(cites.first.inner_text().strip("[]"))
    listed = turn.locator(f"ol.citations li[value='{citation_no}']").inner_text()
    assert page.locator("#passage-title").inner_text() in listed  # the dialog is that citation's passage
    mark = dialog.locator("mark").first.inner_text()
    assert len(mark) > 20 and mark in dialog.locator("#passage-text").inner_text()
    ui.shot(f"chat-{lang}-passage")
    page.keyboard.press("Escape")
    assert not dialog.is_visible()
    ui.shot(f"chat-{lang}")


def test_a_multi_hop_question_shows_its_steps_as_they_are_retrieved(ui: Page, app: dict[str, Any]) -> None:
    # when the first step line appears, and whether any answer text was there yet
    ui.page.add_init_script("""window.stepsAt = null; new MutationObserver(() => {
        const step = document.querySelector('.hops li');
        if (step && window.stepsAt === null) window.stepsAt = {
            answered: [...document.querySelectorAll('.answer')].some((a) => a.textContent.trim())};
    }).observe(document, {subtree: true, childList: true});""")
    page = ui.open("#/chat", app["user_key"])
    turn = _ask(page, "A guideline sets minimum expectations for hand hygiene in outpatient settings. "
                      "Which infections can this practice prevent?")
    assert page.evaluate("window.stepsAt") == {"answered": False}  # the steps came before the answer
    assert turn.locator(".hops h3").inner_text() == "Steps of the question"
    steps = turn.locator(".hops li")
    assert steps.count() == 2
    first, second = steps.nth(0).inner_text(), steps.nth(1).inner_text()
    assert first.startswith("A guideline sets minimum expectations for hand hygiene") and "found: " in first
    found = steps.nth(0).get_attribute("data-answer")
    assert found and f"found: {found}" in first
    assert second.startswith(f"Which infections can {found} prevent?"), (first, second)
    ui.shot("chat-hops")


def test_a_follow_up_continues_the_conversation_and_progress_is_shown(ui: Page, app: dict[str, Any]) -> None:
    # every text the status line shows while the agent works, recorded as it changes
    # (from the mutation records: several statuses set within one task are each a record)
    ui.page.add_init_script("""window.statusSeen = []; new MutationObserver((records) => {
        for (const r of records) if (r.target.classList?.contains('status'))
            for (const n of r.addedNodes) if (n.nodeType === Node.TEXT_NODE) window.statusSeen.push(n.data);
    }).observe(document, {subtree: true, childList: true});""")
    page = ui.open("#/chat", app["user_key"])
    _ask(page, QUESTIONS["en"])
    seen = set(page.evaluate("window.statusSeen"))
    assert {"Recognising medical entities", "Searching passages"} <= seen, seen
    session = page.locator(".row .muted").inner_text()
    assert session.startswith("Conversation: ")
    second = _ask(page, "And which products should be used for it?")
    assert second.locator(".answer").inner_text().strip()
    assert page.locator(".row .muted").inner_text() == session  # the same conversation
    page.click("text=New conversation")
    assert page.locator("section.turn").count() == 0 and page.locator(".row .muted").inner_text() == ""


def test_without_a_key_the_chat_says_one_is_needed(ui: Page) -> None:
    ui.allowed.append("401")
    page = ui.open("#/chat", None)
    page.fill("#question", QUESTIONS["en"])
    page.click("button[type=submit]")
    alert = page.locator("section.turn [role=alert]")
    alert.wait_for()
    assert "API key" in alert.inner_text()


def test_explorer_finds_a_german_name_and_expands_a_neighbour(ui: Page, app: dict[str, Any]) -> None:
    page = ui.open("#/explore", app["user_key"], "de")
    page.fill("#entity-name", "Herzinfarkt")
    page.keyboard.press("Enter")
    title = page.locator("#entity-title")
    title.filter(has_text="D009203").wait_for()
    card = page.locator("#entity-card").inner_text()
    assert "Herzinfarkt" in card and "心肌梗死" in card and "Myocardial Infarction" in card
    drawn = _nodes_drawn(page, at_least=2)
    # click a neighbour node on the canvas itself: the layout is random, so pick a neighbour that
    # lies inside the visible window and away from every other node (a click elsewhere would miss
    # or hit another node)
    page.locator("#graph").scroll_into_view_if_needed()
    point = page.evaluate(PICK_NODE, "D009203")
    assert point is not None, "no neighbour node is visible on its own on the canvas"
    page.mouse.click(point["x"], point["y"])
    title.filter(has_text=point["id"]).wait_for()
    assert _nodes_drawn(page, at_least=drawn) >= drawn
    # an edge lists the passages that connect its two entities
    page.locator("#neighbour-list .edge-button").first.click()
    page.locator("#edge-title").wait_for()
    assert page.locator("#edge-passages li").count() >= 1
    ui.shot("explorer")


def test_communities_page_through_and_lead_into_the_explorer(ui: Page, app: dict[str, Any]) -> None:
    calls: list[str] = []  # each view is one quota-counted API call, however many levels there are
    ui.page.on("request", lambda r: "/graph/communities" in r.url and calls.append(r.url))
    page = ui.open("#/communities", app["user_key"])
    rng = page.locator("#comm-range")
    rng.wait_for()
    first = rng.inner_text()
    assert first.startswith("1–")
    total = int(first.rsplit(" ", 1)[-1])
    assert len(calls) == 1, calls
    levels = page.locator("#comm-level option").all_inner_texts()  # "all levels", then "L0 (n)", ...
    assert len(levels) >= 2 and levels[1].startswith("L0 (")
    assert sum(int(o.split("(")[1].rstrip(")")) for o in levels[1:]) == total
    assert page.locator("section.community").count() >= 1
    assert page.locator("section.community .summary").first.inner_text().strip()
    if total > 10:
        page.click("text=Next")
        rng.filter(has_text="11–").wait_for()
    ui.shot("communities")
    member = page.locator("section.community p a[href^='#/explore']").first
    mesh_id = member.get_attribute("href").rsplit("=", 1)[-1]
    member.click()
    page.locator("#entity-title").filter(has_text=mesh_id).wait_for()


def test_corpus_shows_the_last_build(ui: Page, app: dict[str, Any]) -> None:
    page = ui.open("#/corpus", app["user_key"])
    page.locator("#runs").wait_for()
    summary = app["summary"]
    corpus_row = page.locator("#runs tr.run", has_text=summary["run_id"])
    text = corpus_row.inner_text()
    assert "succeeded" in text and f"{summary['documents_written']} documents" in text
    counts = page.locator("#store-counts").inner_text()
    assert re.search(rf"chunks\s+{summary['store']['chunks']}\b", counts), counts
    ui.shot("corpus")


def test_a_running_build_updates_without_a_reload(ui: Page, app: dict[str, Any]) -> None:
    from medgraph.stores.embedded import EmbeddedGraphStore

    store = EmbeddedGraphStore(app["graph_path"])  # what a build job writes while it runs
    try:
        store.start_run("live-build", {"inputs": ["s3://bucket/pubmed/"], "files": 3})
        store.report_progress("live-build", {"documents_done": 5, "chunks": 40, "elapsed_s": 2.0})
        page = ui.open("#/corpus", app["user_key"])
        row = page.locator("#runs tr.run", has_text="live-build")
        row.filter(has_text="5 documents, 40 chunks").wait_for()
        assert "running" in row.inner_text() and "s3://bucket/pubmed/" in row.inner_text()
        store.report_progress("live-build", {"documents_done": 9, "chunks": 77, "elapsed_s": 4.0})
        row.filter(has_text="9 documents, 77 chunks").wait_for(timeout=15_000)
        store.finish_run("live-build", "succeeded", {"documents_written": 12, "chunks_written": 90, "failures": []})
        row.filter(has_text="succeeded").wait_for(timeout=15_000)
        assert "12 documents, 90 chunks" in row.inner_text()
    finally:
        store.close()


def test_admin_issues_a_key_that_a_user_then_uses(ui: Page, app: dict[str, Any]) -> None:
    ui.allowed.append("403")
    page = ui.open("#/admin", app["admin_key"])
    engine = page.locator("#tiers tbody tr").first
    engine.wait_for()
    engine.locator("button", has_text="Sleep").click()
    engine.locator("td.state", has_text="asleep").wait_for()
    engine.locator("button", has_text="Wake").click()
    engine.locator("td.state", has_text="awake").wait_for()
    assert int(engine.locator("td.num").nth(2).inner_text()) >= 1  # wakes
    page.fill("#new-user", "browser-user")
    page.click("text=Create user and key")
    key = page.locator("#new-key").inner_text()
    assert key.startswith("mgk_")
    page.locator("#users tr[data-user='browser-user']").wait_for()
    ui.shot("admin")
    page.fill("#api-key", key)
    page.dispatch_event("#api-key", "change")
    page.goto(f"{app['url']}/ui/#/chat")
    turn = _ask(page, QUESTIONS["en"])
    assert turn.locator(".answer a.cite").count() >= 1
    page.goto(f"{app['url']}/ui/#/admin")
    page.locator("[role=alert]").filter(has_text="admin").wait_for()  # a user's key is not an admin's


def test_pages_have_no_serious_accessibility_violations(browser: Any, app: dict[str, Any]) -> None:
    context = browser.new_context(bypass_csp=True)  # axe is injected as an inline script
    context.add_init_script(f"sessionStorage.setItem('medgraph.key', {json.dumps(app['admin_key'])})")
    page = context.new_page()
    page.set_default_timeout(60_000)
    found = {}
    for hash_, ready in (("#/chat", "#question"), ("#/explore?name=Herzinfarkt", "#entity-title"),
                         ("#/communities", "#comm-range"), ("#/corpus", "#runs"), ("#/admin", "#tiers")):
        page.goto(f"{app['url']}/ui/{hash_}")
        page.locator(ready).wait_for()
        page.add_script_tag(path=str(AXE))
        violations = page.evaluate("""async () => (await axe.run(document)).violations
            .filter(v => ['serious', 'critical'].includes(v.impact))
            .map(v => `${v.id}: ${v.nodes.map(n => n.target.join(' ')).slice(0, 3).join(', ')}`)""")
        found[hash_] = violations
    context.close()
    assert all(not v for v in found.values()), json.dumps(found, indent=1)


def test_everything_is_reachable_by_keyboard(ui: Page, app: dict[str, Any]) -> None:
    page = ui.open("#/chat", app["user_key"])
    page.locator("#question").wait_for()  # the chat view is drawn once the interface strings are in
    page.evaluate("() => import('/ui/i18n.js').then(m => m.ready)")
    seen = []
    for _ in range(20):
        page.keyboard.press("Tab")
        seen.append(page.evaluate("() => { const e = document.activeElement; "
                                  "return e.id || e.getAttribute('href') || e.textContent.trim(); }"))
    for target in ("#main", "#/chat", "#/explore", "#/communities", "#/corpus", "#/admin", "ui-lang", "api-key",
                   "question", "tier"):
        assert target in seen, (target, seen)
    # a question asked with the keyboard alone
    page.focus("#question")
    page.keyboard.type(QUESTIONS["en"])
    page.keyboard.press("Enter")
    page.locator("section.turn .disclaimer").filter(has_text=re.compile(r"\S")).wait_for()
    # the explorer's neighbours are buttons: Enter on one expands it
    page.goto(f"{app['url']}/ui/#/explore?name=Herzinfarkt")
    page.locator("#neighbour-list button").first.focus()
    target = page.locator("#neighbour-list button").first.get_attribute("data-id")
    page.keyboard.press("Enter")
    page.locator("#entity-title").filter(has_text=target).wait_for()


def test_every_language_has_every_interface_string(ui: Page, app: dict[str, Any]) -> None:
    page = ui.open("#/chat", app["user_key"], "zh")
    page.locator("html[lang='zh-Hans']").wait_for(state="attached")  # the page has loaded its strings
    assert page.evaluate("async () => (await import('/ui/i18n.js')).missingKeys()") == {"en": [], "de": [], "zh": []}
    page.select_option("#ui-lang", "de")
    assert page.locator("nav a[data-page=explore]").inner_text() == "Graph-Explorer"
    assert page.locator("h1").inner_text() == "Eine medizinische Frage stellen"


def test_the_interface_is_served_offline_compressed_and_locked_down(app: dict[str, Any]) -> None:
    url = app["url"]
    assert httpx.get(f"{url}/", follow_redirects=False).headers["location"] == "/ui/"
    page = httpx.get(f"{url}/ui/", headers={"Accept-Encoding": "gzip"})
    assert page.status_code == 200 and page.headers["content-encoding"] == "gzip"
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert not re.search(r"(src|href)=\"https?://", page.text)  # nothing from the internet
    again = httpx.get(f"{url}/ui/", headers={"If-None-Match": page.headers["etag"]})
    assert again.status_code == 304
    for bad in ("../pyproject.toml", "..%2f..%2fpyproject.toml", ".hidden", "nope.js", "app.py"):
        assert httpx.get(f"{url}/ui/{bad}").status_code == 404, bad
