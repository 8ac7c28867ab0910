"""Shared fixtures.

``shared_data``: the real data sets in ``../shared/data`` (or ``$MEDGRAPH_SHARED_DATA``). Tests that
need them skip with the reason when the folder is missing, unless ``MEDGRAPH_REQUIRE_SHARED=1``
(set by ``.ci/run``), in which case they fail.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import unavailable

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
