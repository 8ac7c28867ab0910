"""The DSPy router (model tier): mapping to the rules' scoring, fallbacks, async calls, few-shot compile."""

from __future__ import annotations

import asyncio
from pathlib import Path

import dspy
import pytest
from dspy.utils import DummyLM

from medgraph.llm.base import ChatParams
from medgraph.llm.dspy_bridge import chat_lm
from medgraph.retrieve.types import QueryAnalysis
from medgraph.route import RuleRouter
from medgraph.route.dspy_router import (
    DSPyRouter,
    compile_program,
    load_program,
    rewritten_question,
    save_program,
    training_examples,
)
from medgraph.route.evaluate import load_labelled
from medgraph.route.types import Intent

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "router"
QUESTION = "Does warfarin interact with aspirin in a 79-year-old man with kidney failure?"


def _reply(intent: str, entities: list[str], constraints: list[str], rewritten: str) -> str:
    """What a model answering in DSPy's chat format would write."""
    return (f"[[ ## intent ## ]]\n{intent}\n\n[[ ## entities ## ]]\n{entities!r}\n\n"
            f"[[ ## constraints ## ]]\n{constraints!r}\n\n[[ ## rewritten ## ]]\n{rewritten}\n\n"
            "[[ ## completed ## ]]")


def test_prediction_is_scored_like_the_rules():
    lm = DummyLM([{"intent": "DRUG_INTERACTION", "entities": ["Warfarin", "aspirin", "warfarin"],
                   "constraints": ["age", "sex", "renal", "smoker"],
                   "rewritten": "warfarin aspirin interaction"}])
    decision = DSPyRouter(lm).route(QueryAnalysis(QUESTION, "en"))
    # E: 2 entities (deduplicated, lower-cased) + 3 known constraints ("smoker" is not one) = 5 -> 3; I: 2
    assert decision.intent is Intent.DRUG_INTERACTION and decision.method == "dspy"
    assert decision.entities == ("warfarin", "aspirin") and decision.constraints == ("age", "sex", "renal")
    assert (decision.entity_score, decision.intent_score, decision.tier) == (3, 2, "large")
    assert rewritten_question(decision) == "warfarin aspirin interaction"
    prompt = lm.history[-1]["messages"]
    assert QUESTION in prompt[-1]["content"] and "DRUG_INTERACTION" in prompt[0]["content"]


def test_thresholds_apply_to_the_program_scores():
    answer = {"intent": "PATIENT_FAQ", "entities": ["metformin"], "constraints": [], "rewritten": "metformin"}
    analysis = QueryAnalysis("What are the side effects of metformin?", "en")
    assert DSPyRouter(DummyLM([answer])).route(analysis).tier == "small"  # 1 + 1
    assert DSPyRouter(DummyLM([answer]), small_max=1, medium_max=2).route(analysis).tier == "medium"


@pytest.mark.parametrize("answer, reason", [
    ({"intent": "SURGERY", "entities": [], "constraints": [], "rewritten": "x"}, "unknown intent 'SURGERY'"),
    ({"verdict": "no idea"}, "AdapterParseError"),
])
def test_unusable_output_falls_back_to_the_rules(answer, reason):
    analysis = QueryAnalysis("What is hypertension?", "en")
    decision = DSPyRouter(DummyLM([answer])).route(analysis)
    rules = RuleRouter().route(analysis)
    assert decision.method == "dspy-fallback"
    assert (decision.tier, decision.intent) == (rules.tier, rules.intent)
    assert decision.cues == rules.cues and any(reason in n for n in decision.notes)
    assert rewritten_question(decision) is None


def test_lm_error_falls_back_and_costs_one_call():
    calls = []

    def broken(messages: list[dict[str, str]], params: ChatParams) -> str:
        calls.append(messages)
        raise ConnectionError("tier down")

    decision = DSPyRouter(chat_lm(broken)).route(QueryAnalysis("Was ist Bluthochdruck?", "de"))
    assert decision.method == "dspy-fallback" and any("tier down" in n for n in decision.notes)
    assert len(calls) == 1  # no retries

    garbled: list[int] = []

    def chatty(messages: list[dict[str, str]], params: ChatParams) -> str:
        garbled.append(1)
        return "I think this is about blood pressure."

    decision = DSPyRouter(chat_lm(chatty)).route(QueryAnalysis("Was ist Bluthochdruck?", "de"))
    assert decision.method == "dspy-fallback" and len(garbled) == 1  # no second try through the JSON adapter


def test_aroute_awaits_an_async_chat_function():
    seen: list[list[dict[str, str]]] = []

    async def handle_chat(messages: list[dict[str, str]], params: ChatParams) -> str:
        await asyncio.sleep(0)
        seen.append(messages)
        return _reply("LITERATURE_MULTIHOP", ["statins", "stroke"], [], "statin pretreatment stroke outcome")

    router = DSPyRouter()
    decision = asyncio.run(router.aroute(QueryAnalysis("Statine und Schlaganfall: was zeigen Studien?", "de"),
                                         chat_lm(achat=handle_chat)))
    assert (decision.method, decision.intent, decision.tier) == ("dspy", Intent.LITERATURE_MULTIHOP, "large")
    assert len(seen) == 1 and "Statine und Schlaganfall" in seen[0][-1]["content"]
    with pytest.raises(RuntimeError, match="needs an LM"):
        router.route(QueryAnalysis("x", "en"))


def test_compile_uses_the_train_split_only(tmp_path):
    rows = load_labelled(FIXTURES / "labelled_questions.jsonl")
    train = [r for r in rows if r["split"] == "train"]
    assert len(train) == 18 and {r["lang"] for r in train} == {"en", "de", "zh"}
    with pytest.raises(ValueError, match="not in the train split"):
        training_examples(rows)
    program = compile_program(train, max_demos=6)
    demos = program.classify.demos
    train_questions = {r["question"] for r in train}
    assert len(demos) == 6 and all(d["question"] in train_questions for d in demos)
    renal = training_examples([r for r in train if r["id"] == "en-07"])[0]
    assert renal.constraints == ["renal"] and renal.intent == "CLINICAL_DECISION"

    path = save_program(program, tmp_path / "router.json")
    loaded = load_program(path)
    assert [d["question"] for d in loaded.classify.demos] == [d["question"] for d in demos]
    lm = DummyLM([{"intent": "PATIENT_FAQ", "entities": ["flu"], "constraints": [], "rewritten": "flu"}])
    DSPyRouter(lm, program=loaded).route(QueryAnalysis("How long does the flu last?", "en"))
    prompt = "\n".join(m["content"] for m in lm.history[-1]["messages"])
    assert demos[0]["question"] in prompt  # the demos reach the model


def test_load_program_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_program(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not a JSON router program"):
        load_program(bad)


def test_dspy_settings_are_left_alone():
    before = dspy.settings.lm
    lm = DummyLM([{"intent": "PATIENT_FAQ", "entities": [], "constraints": [], "rewritten": "q"}])
    DSPyRouter(lm).route(QueryAnalysis("What is a cold?", "en"))
    assert dspy.settings.lm is before  # the router's LM is scoped to its call


class _Remote:
    """A Serve handle method: ``remote(...)`` returns an awaitable (here a coroutine)."""

    def __init__(self, reply: str | Exception) -> None:
        self.reply, self.calls = reply, 0

    def remote(self, messages: list[dict[str, str]], params: ChatParams):
        self.calls += 1

        async def answer() -> str:
            if isinstance(self.reply, Exception):
                raise self.reply
            assert params.max_tokens == 256 and messages[-1]["role"] == "user"
            return self.reply

        return answer()


class _EngineHandle:
    def __init__(self, reply: str | Exception) -> None:
        self.chat = _Remote(reply)


def test_router_service_kind_dspy_calls_the_engine_handle(repo_root, tmp_path):
    from medgraph.config import load_config
    from serve.services import RouterService

    program = save_program(compile_program([r for r in load_labelled(FIXTURES / "labelled_questions.jsonl")
                                            if r["split"] == "train"], max_demos=4), tmp_path / "router.json")
    cfg = load_config(repo_root / "configs" / "local.yaml",
                      ["router.kind=dspy", "router.engine=gemma", f"router.program={program}"])
    handle = _EngineHandle(_reply("CLINICAL_DECISION", ["asthma"], ["age"], "asthma treatment children"))
    service = RouterService(cfg, handle)
    analysis = QueryAnalysis("Wie wird Asthma bei Kindern behandelt?", "de")
    decision = asyncio.run(service.route(analysis))
    assert (decision.method, decision.intent, decision.tier) == ("dspy", Intent.CLINICAL_DECISION, "medium")
    assert handle.chat.calls == 1 and len(service.dspy.program.classify.demos) == 4

    down = RouterService(cfg, _EngineHandle(ConnectionError("replica gone")))
    decision = asyncio.run(down.route(analysis))
    assert decision.method == "dspy-fallback" and any("replica gone" in n for n in decision.notes)
    forced = asyncio.run(service.route(analysis, tier="large"))
    assert (forced.tier, forced.method) == ("large", "forced") and handle.chat.calls == 1


def test_router_config_kind_dspy():
    from medgraph.config.llm import RouterConfig

    assert RouterConfig(kind="dspy", engine="gemma", program="p.json").program == "p.json"
    with pytest.raises(ValueError, match="router.kind dspy needs router.engine"):
        RouterConfig(kind="dspy")
    with pytest.raises(ValueError, match="needs router.kind dspy"):
        RouterConfig(kind="llm", engine="gemma", program="p.json")


def test_history_can_be_turned_off_for_services():
    answer = {"intent": "PATIENT_FAQ", "entities": ["cold"], "constraints": [], "rewritten": "cold"}
    kept, dropped = DummyLM([answer]), DummyLM([answer])
    DSPyRouter(kept).route(QueryAnalysis("What is a cold?", "en"))
    decision = DSPyRouter(dropped, history=False).route(QueryAnalysis("What is a cold?", "en"))
    assert decision.method == "dspy" and len(kept.history) == 1 and dropped.history == []
