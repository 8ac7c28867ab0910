"""The Serve application over real HTTP on a local Ray cluster, answering from a real corpus.

One module-scoped app on a copy of ``demo_stores`` (20 PubMedQA abstracts + the CDC PDF, built with
the Ray job; then built again here from an input it cannot load, for the build history), deployed
and exercised through every endpoint, including an OpenAI client.
"""

from __future__ import annotations

import concurrent.futures
import json
import re
from pathlib import Path

import httpx
import pytest

from jobs.build_corpus import build_corpus
from tests.helpers import require_module

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
QUESTION = "What are the minimum expectations for hand hygiene in outpatient settings?"
REBUILD = "serve-rebuild"  # a build after demo_stores's, that loads nothing
HAND_HYGIENE = "D063373"


@pytest.fixture(scope="module")
def app_url(tmp_path_factory, demo_stores):
    from ray import serve

    from serve.demo import start

    root = tmp_path_factory.mktemp("serve")
    cfg = demo_stores.config(root)  # own stores and quota counts, not the checkout's
    (root / "notes.xyz").write_text("not a corpus file")  # a later build that loads nothing and fails one input
    assert build_corpus(cfg, [str(root / "notes.xyz")], run_id=REBUILD)["status"] == "succeeded"
    url = start(cfg)
    yield url
    serve.shutdown()


def test_health(app_url):
    assert httpx.get(f"{app_url}/health/live").json() == {"status": "live"}
    ready = httpx.get(f"{app_url}/health/ready", timeout=30).json()
    assert ready["status"] == "ready" and ready["stores"]["documents"] == 21
    assert ready["stores"]["vectors"] == ready["stores"]["chunks"] > 0


def _check_citations(body):
    markers = [int(n) for n in re.findall(r"\[(\d+)\]", body["content"])]
    numbers = {c["number"] for c in body["citations"]}
    assert markers and set(markers) == numbers  # every [N] resolves, every citation is used
    for c in body["citations"]:
        assert c["section_path"] and c["title"] and c["source_id"] and c["snippet"]


def test_chat_answers_with_resolving_citations(app_url):
    r = httpx.post(f"{app_url}/chat", json={"message": QUESTION}, timeout=60)
    assert r.status_code == 200, r.text
    body = r.json()
    assert not body["refused"] and "hand" in body["content"].lower()
    _check_citations(body)
    assert any(c["page"] for c in body["citations"])  # PDF evidence is cited with its page
    assert set(body["retrieval_paths_used"]) <= {"dense", "sparse", "feedback", "vector", "ppr", "hop", "relational"}
    assert body["retrieval_paths_used"]
    assert body["disclaimer"] and body["session_id"] and body["model_used"] == "extractive"


def test_german_question_is_answered_from_the_english_section_with_a_german_lead(app_url):
    """Cross-lingual: the English CDC section on hand hygiene answers a German question."""
    question = "Ist die Händedesinfektion in der ambulanten Versorgung wichtig?"
    body = httpx.post(f"{app_url}/chat", json={"message": question}, timeout=60).json()
    assert not body["refused"], body["content"]
    assert body["content"].startswith("Belege aus englischsprachigen Quellen")  # the asker's language
    _check_citations(body)
    assert any(c["page"] in (8, 9) and "Hand Hygiene" in c["section_path"] for c in body["citations"])
    assert "Ich habe" not in body["content"] and "medizinische" in body["disclaimer"]


def test_off_corpus_question_is_refused(app_url):
    body = httpx.post(f"{app_url}/chat", json={"message": "Who won the football world cup in 1998?"},
                      timeout=60).json()
    assert body["refused"] and body["citations"] == [] and "[" not in body["content"]


def test_sse_stream_matches_chat(app_url):
    full = httpx.post(f"{app_url}/chat", json={"message": QUESTION}, timeout=60).json()
    deltas, done = [], None
    with httpx.stream("POST", f"{app_url}/chat/stream", json={"message": QUESTION}, timeout=60) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        for line in r.iter_lines():
            if line.startswith("data: "):
                event = json.loads(line[6:])
                if event.get("done"):
                    done = event
                elif "delta" in event:
                    deltas.append(event["delta"])
                else:  # the agent's progress (nodes finished)
                    assert set(event) == {"status"}
    assert "".join(deltas) == full["content"]
    assert done is not None and done["citations"] == full["citations"] and done["disclaimer"]


BRIDGE = ("A guideline sets minimum expectations for hand hygiene in outpatient settings. "
          "Which infections can this practice prevent?")


def test_a_multi_hop_question_is_retrieved_hop_by_hop_and_streams_its_hops(app_url):
    streamed, done = [], None
    with httpx.stream("POST", f"{app_url}/chat/stream", json={"message": BRIDGE, "progress": True}, timeout=90) as r:
        assert r.status_code == 200
        for line in r.iter_lines():
            if line.startswith("data: "):
                event = json.loads(line[6:])
                if "hop" in event:
                    assert done is None  # each hop arrives as it is retrieved, before the answer ends
                    streamed.append(event["hop"])
                elif event.get("done"):
                    done = event
    assert done is not None
    agent = done["agent"]
    assert agent["plan"] == {"kind": "bridge", "hops": [
        "A guideline sets minimum expectations for hand hygiene in outpatient settings.",
        "Which infections can #1 prevent?"]}
    first, second = agent["hops"]
    assert [h["hop"] for h in streamed][:2] == [1, 2]
    # streamed as retrieved (verified afterwards: "supported" is set in the answer only)
    assert {**streamed[-1], "supported": None} == {**second, "supported": None} and streamed[0]["supported"] is None
    # the sub-answer of hop 1, an entity its passages name, is what hop 2 searched for
    assert first["answer"] and first["answer_id"] and second["resolved"] == f"Which infections can {first['answer']} prevent?"
    assert first["passages"] and second["passages"] and isinstance(second["supported"], bool)
    assert "hops" in done["retrieval_paths_used"]


def test_openai_client_non_streaming_and_streaming(app_url):
    openai = require_module("openai")
    client = openai.OpenAI(base_url=f"{app_url}/v1", api_key="unused")
    resp = client.chat.completions.create(model="medgraph", messages=[{"role": "user", "content": QUESTION}])
    content = resp.choices[0].message.content
    assert content and re.search(r"\[\d+\]", content)
    extra = resp.model_extra or {}
    assert extra["citations"] and extra["disclaimer"]
    stream = client.chat.completions.create(model="medgraph", stream=True,
                                            messages=[{"role": "user", "content": QUESTION}])
    pieces = [c.choices[0].delta.content or "" for c in stream if c.choices]
    assert "".join(pieces) == content


def test_graph_entity_neighbourhood(app_url):
    r = httpx.get(f"{app_url}/graph/entity", params={"name": "hand hygiene"}, timeout=30)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["mesh_id"] == "D063373" and "Entity" in body["labels"]
    assert body["edges"] and all(e["type"] == "CO_OCCURS_WITH" and e["weight"] >= 1 for e in body["edges"])
    weights = [e["weight"] for e in body["edges"] if e["source"] == "D063373"]
    assert weights == sorted(weights, reverse=True)
    assert _entity(app_url, name="Handhygiene", lang="de").status_code in (200, 404)
    assert _entity(app_url, name="zzzz qqqq xxxx").status_code == 404  # fuzzy lookup: no name near it


def _entity(app_url, **params):
    return httpx.get(f"{app_url}/graph/entity", params=params, timeout=30)


def test_graph_entity_by_id_is_the_entity_by_name(app_url):
    by_name = _entity(app_url, name="hand hygiene")
    by_id = _entity(app_url, id=HAND_HYGIENE)
    assert by_name.status_code == by_id.status_code == 200, (by_name.text, by_id.text)
    assert by_id.json() == by_name.json() and by_id.json()["mesh_id"] == HAND_HYGIENE
    assert by_id.json()["neighbours"] and by_id.json()["names"]["en"]
    german = _entity(app_url, id=HAND_HYGIENE, lang="de").json()
    assert set(german["names"]) == {"de"} and german["mesh_id"] == HAND_HYGIENE
    # the reader's language for every shown name, whatever language the name was asked in
    shown = _entity(app_url, name="hand hygiene", names_in="de").json()
    # Hand Hygiene has no German name: English; a neighbour with one is shown in German
    assert shown["name"] == (german["names"]["de"] or [by_name.json()["name"]])[0]
    assert shown["mesh_id"] == HAND_HYGIENE and set(shown["names"]) == set(by_name.json()["names"])
    english = {n["mesh_id"]: n["name"] for n in by_name.json()["neighbours"]}
    localised = {n["mesh_id"]: n["name"] for n in shown["neighbours"]}
    assert localised.keys() == english.keys() and any(localised[i] != english[i] for i in english), localised
    for params in ({}, {"name": "hand hygiene", "id": HAND_HYGIENE}, {"hops": 2}):
        r = _entity(app_url, **params)
        assert r.status_code == 400 and "exactly one of name" in r.json()["detail"], (params, r.text)
    for bad in ("D63373", "d063373", "hand hygiene", "D063373' OR 1=1 --", "D0633730000"):
        r = _entity(app_url, id=bad)
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["query", "id"], (bad, r.text)
    unknown = _entity(app_url, id="D000000")
    assert unknown.status_code == 404 and "D000000" in unknown.json()["detail"]


def _edge(app_url, **params):
    return httpx.get(f"{app_url}/graph/edge", params=params, timeout=30)


def test_graph_edge_lists_the_chunks_both_entities_are_mentioned_in(app_url):
    entity = _entity(app_url, id=HAND_HYGIENE).json()
    first = next(e for e in entity["edges"] if e["source"] == HAND_HYGIENE)  # the strongest neighbour
    r = _edge(app_url, source=HAND_HYGIENE, target=first["target"])
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["source"] == HAND_HYGIENE and body["target"] == first["target"]
    assert 1 <= body["weight"] == len(body["chunks"]) == min(first["weight"], 20)
    assert [c["chunk_id"] for c in body["chunks"]] == sorted(c["chunk_id"] for c in body["chunks"])
    for c in body["chunks"]:
        assert set(c) == {"chunk_id", "doc_id", "title", "source_id", "section_path", "page", "text"}
        assert "hand" in c["text"].lower()  # it mentions hand hygiene
        passage = httpx.get(f"{app_url}/chunks/{c['chunk_id']}", timeout=30)
        assert passage.status_code == 200 and passage.json() == {**c, "language": passage.json()["language"]}
    back = _edge(app_url, source=first["target"], target=HAND_HYGIENE, limit=1).json()
    assert back["weight"] == 1 and back["chunks"][0] == body["chunks"][0]


@pytest.mark.parametrize("params,status", [
    ({"source": HAND_HYGIENE, "target": "D000000"}, 404),  # not in the corpus
    ({"source": "D000000", "target": HAND_HYGIENE}, 404),
    ({"source": HAND_HYGIENE, "target": HAND_HYGIENE}, 400),
    ({"source": HAND_HYGIENE}, 422), ({"source": HAND_HYGIENE, "target": "hand"}, 422),
    ({"source": HAND_HYGIENE, "target": "D000001", "limit": 101}, 422),
])
def test_graph_edges_that_do_not_exist_or_are_malformed(app_url, params, status):
    r = _edge(app_url, **params)
    assert r.status_code == status and r.json()["detail"], r.text


def test_a_cited_passage_contains_the_citations_snippet(app_url):
    body = httpx.post(f"{app_url}/chat", json={"message": QUESTION}, timeout=60).json()
    for citation in body["citations"]:
        r = httpx.get(f"{app_url}/chunks/{citation['chunk_id']}", timeout=30)
        assert r.status_code == 200, r.text
        passage = r.json()
        assert passage["chunk_id"] == citation["chunk_id"] and passage["doc_id"] == citation["doc_id"]
        assert passage["title"] == citation["title"] and passage["page"] == citation["page"]
        assert passage["section_path"] == citation["section_path"] and passage["language"]
        first_words = " ".join(citation["snippet"].split()[:5])
        assert first_words in " ".join(passage["text"].split()), (first_words, passage["text"][:300])


def test_unknown_and_malformed_chunk_ids(app_url):
    assert httpx.get(f"{app_url}/chunks/{'0' * 16}", timeout=30).status_code == 404
    for bad in ("0" * 15, "0123456789ABCDEF", "memory:0123456789", "0123456789abcdef0", "x'%20OR%201=1"):
        r = httpx.get(f"{app_url}/chunks/{bad}", timeout=30)
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["path", "chunk_id"], (bad, r.text)


def test_corpus_shows_the_stores_and_the_builds_newest_first(app_url, demo_stores):
    r = httpx.get(f"{app_url}/corpus", timeout=30)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["stores"]["documents"] == 21 and body["stores"]["chunks"] > 0 and "last_run" not in body["stores"]
    assert [run["run_id"] for run in body["runs"]] == [REBUILD, demo_stores.run_id]
    rebuild, build = body["runs"]
    assert rebuild["started"] >= build["finished"] >= build["started"]
    assert build["status"] == "succeeded" and build["summary"]["documents_written"] == 21
    assert build["failure_count"] == 0 and build["failures"] == [] and build["info"]["inputs"]
    assert rebuild["status"] == "succeeded" and rebuild["failure_count"] == len(rebuild["failures"]) == 1
    failure = rebuild["failures"][0]
    assert failure["source"].endswith("notes.xyz") and failure["stage"] == "load" and failure["reason"]
    assert set(failure) == {"source", "stage", "reason", "doc_id"}
    assert [run["run_id"] for run in httpx.get(f"{app_url}/corpus", params={"limit": 1}).json()["runs"]] == [REBUILD]
    assert httpx.get(f"{app_url}/corpus", params={"limit": 201}).status_code == 422


@pytest.mark.parametrize("path,payload", [
    ("/chat", {}), ("/chat", {"message": ""}), ("/chat", {"message": "x", "language": "fr"}),
    ("/chat", "not json"), ("/v1/chat/completions", {"messages": []}),
    ("/v1/chat/completions", {"messages": [{"role": "system", "content": "only system"}]}),
    ("/chat", {"message": "\u0085"}), ("/chat/stream", {"message": "\u3000 "}),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "\u0085"}]}),
])
def test_malformed_requests_get_4xx(app_url, path, payload):
    kwargs = {"content": payload} if isinstance(payload, str) else {"json": payload}
    r = httpx.post(f"{app_url}{path}", timeout=30, **kwargs)
    # under /v1/ in OpenAI's error shape, so its clients raise their typed errors
    message = r.json()["error"]["message"] if path.startswith("/v1/") else r.json().get("detail")
    assert 400 <= r.status_code < 500 and message
    bad = httpx.get(f"{app_url}/graph/entity", params={"name": "x", "hops": 9})
    assert bad.status_code == 422


def test_anonymous_sessions_are_issued_by_the_server_and_cannot_be_guessed(app_url):
    first = httpx.post(f"{app_url}/chat", json={"message": QUESTION}, timeout=60).json()
    session = first["session_id"]
    assert session.startswith("anon_")
    follow = httpx.post(f"{app_url}/chat", json={"message": "And in clinics?", "session_id": session}, timeout=60)
    assert follow.status_code == 200 and follow.json()["session_id"] == session
    nonce = session.split("_")[1]
    for guessed in ("session1", f"anon_{nonce}_{'0' * 24}", f"anon_{'f' * 32}_{session.rsplit('_', 1)[1]}"):
        r = httpx.post(f"{app_url}/chat", json={"message": QUESTION, "session_id": guessed}, timeout=60)
        assert r.status_code == 403 and "anonymous" in r.json()["detail"]


def test_v1_models_and_unknown_models(app_url):
    models = httpx.get(f"{app_url}/v1/models", timeout=30).json()
    assert [m["id"] for m in models["data"]] == ["medgraph", "medgraph-small", "medgraph-medium", "medgraph-large"]
    r = httpx.post(f"{app_url}/v1/chat/completions", timeout=30,
                   json={"model": "gpt-4o", "messages": [{"role": "user", "content": QUESTION}]})
    assert r.status_code == 404 and r.json()["error"]["code"] == "model_not_found"


def test_concurrent_requests(app_url):
    questions = [QUESTION, "Is diabetes a risk factor for stroke?", "Who won the football world cup in 1998?"] * 4

    def ask(q):
        return httpx.post(f"{app_url}/chat", json={"message": q}, timeout=120)

    with concurrent.futures.ThreadPoolExecutor(max_workers=12) as pool:
        responses = list(pool.map(ask, questions))
    assert all(r.status_code == 200 for r in responses)
    assert len({r.json()["session_id"] for r in responses}) == len(questions)
