"""The ``openai`` engine kind through litellm against a local OpenAI-compatible server.

The server (medgraph/testing/openai_server.py) is a test double for a remote provider speaking the real wire
format on 127.0.0.1; the engine, litellm, streaming, citation grounding and the key handling are
the production code.
"""

from __future__ import annotations

import re

import pytest

from medgraph.config.llm import OpenAIEngineConfig
from medgraph.config.models import AnswerConfig
from medgraph.generate.engines import make_engine
from medgraph.llm.base import ChatParams, ModelAsleep, ModelUnavailable
from medgraph.retrieve.types import QueryAnalysis
from medgraph.testing.openai_server import FakeOpenAIServer
from tests.helpers import require_module
from tests.unit.test_grounded_generation import EVIDENCE

require_module("litellm", "MEDGRAPH_REQUIRE_LLM", "litellm not installed (extra 'llm')")


@pytest.fixture(scope="module")
def server():
    with FakeOpenAIServer(api_key="sk-test") as srv:
        yield srv


def _cfg(server: FakeOpenAIServer, **kw) -> OpenAIEngineConfig:
    return OpenAIEngineConfig(kind="openai", model="openai/tiny-med", api_base=server.base_url,
                              api_key_env="MEDGRAPH_TEST_OPENAI_KEY", **kw)


def test_generate_and_stream_ground_the_providers_answer(server, monkeypatch):
    monkeypatch.setenv("MEDGRAPH_TEST_OPENAI_KEY", "sk-test")
    engine = make_engine(_cfg(server, max_tokens=64), AnswerConfig())
    assert engine.is_sleeping()
    engine.wake()
    analysis = QueryAnalysis("Is metformin first-line?", "en")
    answer = engine.generate("Is metformin first-line?", analysis, EVIDENCE)
    # the provider cited [1] correctly and [9], which does not exist: that sentence is dropped
    assert answer.content == "Metformin is the first-line drug for type 2 diabetes. [1]"
    assert answer.grounding["unresolved_markers"] == 1 and answer.grounding["dropped"] == 1
    assert [c.chunk_id for c in answer.citations] == ["c1"] and answer.model_used == "openai:openai/tiny-med"
    body = server.requests[-1]
    assert body["model"] == "tiny-med" and body["max_tokens"] == 64 and body["temperature"] == 0.0
    assert "[1] Title 1: Metformin" in body["messages"][-1]["content"]
    *deltas, final = list(engine.stream("Is metformin first-line?", analysis, EVIDENCE))
    assert server.requests[-1]["stream"] is True
    assert "".join(deltas) == final.content == answer.content
    assert re.fullmatch(r"[^\[]+\[1\]", final.content)
    assert engine.chat([{"role": "user", "content": "[1] Plain passage."}], ChatParams()) .startswith("Plain passage.")


def test_key_comes_from_the_environment_only(server, monkeypatch):
    monkeypatch.delenv("MEDGRAPH_TEST_OPENAI_KEY", raising=False)
    cloud = OpenAIEngineConfig(kind="openai", model="openai/gpt-x", api_key_env="MEDGRAPH_TEST_OPENAI_KEY")
    with pytest.raises(ModelUnavailable, match="MEDGRAPH_TEST_OPENAI_KEY is not set"):
        make_engine(cloud, AnswerConfig()).wake()
    monkeypatch.setenv("MEDGRAPH_TEST_OPENAI_KEY", "sk-wrong")
    engine = make_engine(_cfg(server), AnswerConfig())
    engine.wake()
    with pytest.raises(Exception, match="(?i)auth|401|invalid api key"):
        engine.generate("q", QueryAnalysis("q", "en"), EVIDENCE)


def test_a_sleeping_engine_refuses_calls(server, monkeypatch):
    monkeypatch.setenv("MEDGRAPH_TEST_OPENAI_KEY", "sk-test")
    engine = make_engine(_cfg(server), AnswerConfig())
    with pytest.raises(ModelAsleep):
        engine.generate("q", QueryAnalysis("q", "en"), EVIDENCE)
    engine.wake()
    engine.sleep()
    assert engine.is_sleeping()
