"""Shared fixtures.

``shared_data``: the real data sets in ``../shared/data`` (or ``$MEDGRAPH_SHARED_DATA``). Tests that
need them skip with the reason when the folder is missing, unless ``MEDGRAPH_REQUIRE_SHARED=1``
(set by ``.ci/run``), in which case they fail. ``full_vocab``: the vocabulary built from them and
every other default source, once per session (``configs/local.yaml``'s, which the corpus builds use too).

``tiny_index`` (one per module) and ``fresh_tiny_index`` (one per test, for tests that write to it):
the module's ``CORPUS`` records indexed with the hashing embedder and a vocabulary built from its
``SOURCES`` (default: the fixture MeSH XML), with its ``INDEX_SETTINGS`` overrides; an
``(EvalIndex, config)`` pair, closed afterwards.

``demo_stores``: one corpus build per session that the modules serving a small demo corpus share
(test_serve, test_hostile_http, test_tiers, and the web interface's tests, which add to it): 20
demo PubMedQA abstracts and the CDC outpatient guide (21 documents), built by the corpus job with
configs/local.yaml's default models under the run ID ``demo_stores.run_id``.
``demo_stores.config(root, sets)`` copies the built stores into ``root`` and returns the local
config pointing at the copy, with an app database of its own in ``root``, a free Serve port, and
the module's ``sets``: each module writes to its own copy.

``tracing_session``: with a tracing backend (``$MEDGRAPH_TRACING_URL``, set by ``make test``) the
exporter's environment, with a project of this session, is set before anything starts Ray, so every
Ray process of the session carries it and the tracing tests need not restart Ray (traces off
elsewhere: no process exports anything).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import FIXTURES, index_tiny_corpus, unavailable

REPO = Path(__file__).resolve().parents[1]
TRACING_PROJECT_ENV = "MEDGRAPH_TEST_TRACING_PROJECT"  # the session's project in the tracing backend


@pytest.fixture(scope="session", autouse=True)
def tracing_session() -> str | None:
    url = os.environ.get("MEDGRAPH_TRACING_URL", "")
    if not url:
        return None
    import uuid

    from medgraph.config.observe import TracingConfig
    from medgraph.observe.tracing import exporter_environment

    project = os.environ.setdefault(TRACING_PROJECT_ENV, f"medgraph-tests-{uuid.uuid4().hex[:8]}")
    os.environ.update(exporter_environment(TracingConfig(enabled=True, endpoint=url, project=project)))
    return project


def shared_data_dir() -> Path:
    return Path(os.environ.get("MEDGRAPH_SHARED_DATA", REPO.parent / "shared" / "data")).resolve()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    path = shared_data_dir()
    if not (path / "mesh").is_dir():
        reason = f"shared data not found at {path} (set MEDGRAPH_SHARED_DATA)"
        unavailable(reason, "MEDGRAPH_REQUIRE_SHARED")
    return path


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def full_vocab(shared_data: Path) -> Any:
    """The vocabulary of every default source (shipped files, the shared data sets, the dictionaries).

    Shared with the rest of the suite: it is ``configs/local.yaml``'s own vocabulary (same sources,
    same cache at ``$MEDGRAPH_HOME/vocab``), which every corpus build and Serve app of the tests
    loads, so a clean checkout builds it once (~35 s), not twice. That config's paths are relative
    to the repository root: run from anywhere else, it is built from ``default_sources`` into
    ``.medgraph/test-vocab`` instead."""
    from medgraph.config import load_config
    from medgraph.config.models import VocabularyConfig
    from medgraph.ontology.build import default_sources, load_or_build

    if Path.cwd().resolve() == REPO:
        return load_or_build(load_config(REPO / "configs" / "local.yaml").vocabulary)
    cfg = VocabularyConfig(path=str(REPO / ".medgraph" / "test-vocab"), sources=default_sources(str(shared_data)))
    return load_or_build(cfg)


def _index_of(module: Any, tmp: Path) -> tuple[Any, Any]:
    sources = getattr(module, "SOURCES", [{"kind": "mesh_xml", "path": str(FIXTURES / "mesh" / "desc_fixture.xml")}])
    return index_tiny_corpus(tmp, module.CORPUS, sources, getattr(module, "INDEX_SETTINGS", []))


@pytest.fixture(scope="module")
def tiny_index(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Any]]:
    idx, cfg = _index_of(request.module, tmp_path_factory.mktemp(request.module.__name__.rsplit(".", 1)[-1]))
    yield idx, cfg
    idx.close()


@pytest.fixture
def fresh_tiny_index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    idx, cfg = _index_of(request.module, tmp_path)
    yield idx, cfg
    idx.close()


CDC_PDF = "cdc_guide_infection_prevention_outpatient_2016.pdf"


def stores_in(root: Path) -> list[str]:
    """Config overrides that put the embedded graph and vector stores in ``root``."""
    return [f"stores.graph.path={root}/graph.sqlite", f"stores.vector.path={root}/qdrant"]


@dataclass(frozen=True)
class DemoStores:
    root: Path
    run_id: str
    summary: dict[str, Any]

    def config(self, root: Path, sets: Sequence[str] = ()) -> Any:
        from medgraph.config import load_config
        from medgraph.testing.net import free_port

        for db in self.root.glob("graph.sqlite*"):  # the database and any WAL files beside it
            shutil.copy(db, root / db.name)
        shutil.copytree(self.root / "qdrant", root / "qdrant")
        return load_config(REPO / "configs" / "local.yaml", [
            *stores_in(root), f"app.path={root}/app.sqlite", f"serve.port={free_port()}", *sets])


@pytest.fixture(scope="session")
def demo_stores(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> DemoStores:
    from jobs.build_corpus import build_corpus
    from medgraph.config import load_config

    root = tmp_path_factory.mktemp("demo-stores")
    corpus = root / "corpus"
    corpus.mkdir()
    data = json.loads((REPO / "data" / "demo" / "pubmedqa_demo.json").read_text())
    (corpus / "abstracts.json").write_text(json.dumps({k: data[k] for k in sorted(data)[:20]}))
    shutil.copy(shared_data / "pdfs" / CDC_PDF, corpus / "cdc.pdf")
    run_id = "demo-build"
    cfg = load_config(REPO / "configs" / "local.yaml", stores_in(root))
    summary = build_corpus(cfg, [str(corpus)], run_id=run_id)
    assert summary["status"] == "succeeded" and summary["documents_written"] == 21, summary
    return DemoStores(root, run_id, summary)
