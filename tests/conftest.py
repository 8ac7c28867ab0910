"""Shared fixtures.

``shared_data``: the real data sets in ``../shared/data`` (or ``$MEDGRAPH_SHARED_DATA``). Tests that
need them skip with the reason when the folder is missing, unless ``MEDGRAPH_REQUIRE_SHARED=1``
(set by ``.ci/run``), in which case they fail.

``tiny_index`` (one per module) and ``fresh_tiny_index`` (one per test, for tests that write to it):
the module's ``CORPUS`` records indexed with the hashing embedder and a vocabulary built from its
``SOURCES`` (default: the fixture MeSH XML), with its ``INDEX_SETTINGS`` overrides; an
``(EvalIndex, config)`` pair, closed afterwards.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import FIXTURES, index_tiny_corpus, unavailable

REPO = Path(__file__).resolve().parents[1]


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
