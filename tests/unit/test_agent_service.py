"""serve/agent.py's ``AgentService`` in process, without Ray: its calls to the app state (``app.path``,
SQLite here) before any other deployment is reached."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from medgraph.agent.graph import AgentRequest
from medgraph.config import load_config
from medgraph.stores.errors import StoreUnavailable
from serve.agent import STORE_DOWN, AgentService, unavailable_reason

REPO = Path(__file__).resolve().parents[2]


def test_a_session_store_that_does_not_answer_is_a_503_within_the_store_timeout(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch):
    """A paused PostgreSQL or a half-open connection: the question's session call is given
    ``serve.store_timeout_s``, then the question fails as a store that is down (a 503), as the
    ingress's key checks do; it does not wait, holding its concurrency slot, until the database is
    back (benchmarks/chaos.py, PostgreSQL paused)."""
    from medgraph.memory.sessions import SessionStore

    release = threading.Event()
    open_session = SessionStore.open_session

    def stalled(self: SessionStore, *args: Any, **kwargs: Any) -> Any:
        release.wait(30)  # a database that does not answer
        return open_session(self, *args, **kwargs)

    monkeypatch.setattr(SessionStore, "open_session", stalled)
    cfg = load_config(REPO / "configs" / "local.yaml", [f"app.path={tmp_path}/app.sqlite", "serve.store_timeout_s=0.5"])
    service = AgentService(cfg, None, None, None, None, {})
    question = AgentRequest("What are the side effects of metformin?", session_id="s1", user_id="u1")
    started = time.monotonic()
    try:
        with pytest.raises(StoreUnavailable) as raised:
            asyncio.run(asyncio.wait_for(service.run(question), 10))
        assert time.monotonic() - started < 3
        assert unavailable_reason(raised.value) == STORE_DOWN
    finally:
        release.set()
