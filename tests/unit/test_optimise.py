"""GEPA compile of the router and generator programs: metrics with diagnoses, the compile itself,
the saved program and its record, and the generator program in the engine.

The language models are scripted chat functions behind the project's DSPy bridge (``chat_lm``);
DSPy's adapter, GEPA's optimiser and reflection prompt, the metrics, grounding and saving are the
production code. The same job runs on the GGUF tier in tests/integration/test_optimise.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import dspy
import pytest

from medgraph.config.llm import LlamaCppEngineConfig
from medgraph.config.models import AnswerConfig
from medgraph.generate.citations import ground_text
from medgraph.generate.engines import GroundedEngine, make_engine
from medgraph.generate.program import GeneratorProgram, load_generator, program_messages
from medgraph.generate.prompt import number_evidence
from medgraph.generate.reply import AnswerField, answer_text, is_no_answer
from medgraph.llm.base import ChatParams
from medgraph.llm.dspy_bridge import chat_lm
from medgraph.llm.programs import meta_path, save_program
from medgraph.optimise.generator import GeneratorMetric, evaluate_replies, evidence_example, summarise_replies
from medgraph.optimise.gepa import compile_gepa, config_hash, evaluate, instructions
from medgraph.optimise.router import RouterMetric, router_examples
from medgraph.retrieve.types import Candidate, QueryAnalysis
from medgraph.route.dspy_router import RouterProgram, load_program
from medgraph.route.evaluate import load_labelled
from medgraph.schemas import Chunk
from tests.unit.test_grounded_generation import ScriptedModel

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "router"
PASSAGES = [
    "Hand hygiene is the most important measure to prevent infections in outpatient settings.",
    "Metformin is contraindicated in severe renal impairment because of lactic acidosis.",
    "Aspirin lowers the risk of a second myocardial infarction.",
]


def _cand(i: int, text: str) -> Candidate:
    chunk = Chunk(f"c{i}", f"doc{i}", 0, text, ["Results"], "p", text, 30, "en", title=f"Title {i}", page=i)
    return Candidate(f"c{i}", chunk=chunk, relevance=0.9)


NUMBERED = number_evidence([_cand(i + 1, t) for i, t in enumerate(PASSAGES)], 3, 400)


def _example(gold: list[int], answerable: bool = True, qid: str = "q1") -> dspy.Example:
    return evidence_example(qid, "When is metformin contraindicated?", "en", NUMBERED, gold, answerable)


# --- the generator program's messages and the reply's answer field ------------------------------

def test_answer_field_drops_the_header_and_stops_at_the_next_marker_however_the_reply_is_cut():
    reply = "[[ ## answer ## ]]\nMetformin is contraindicated in renal impairment [2].\n\n[[ ## completed ## ]]"
    for size in (1, 2, 3, 7, len(reply)):
        field = AnswerField()
        out = "".join(field.feed(reply[i:i + size]) for i in range(0, len(reply), size)) + field.flush()
        assert out.strip() == "Metformin is contraindicated in renal impairment [2]."
    assert answer_text("Aspirin lowers the risk [3].") == "Aspirin lowers the risk [3]."  # no header: taken whole
    assert answer_text("[1] is about hand hygiene.") == "[1] is about hand hygiene."  # a leading citation stays


def test_program_messages_carry_the_numbered_passages_and_compiled_instructions():
    program = GeneratorProgram()
    messages = program_messages(program, "Wann ist Metformin kontraindiziert?", "de", NUMBERED)
    text = "\n".join(m["content"] for m in messages)
    assert "[2] Title 2: Metformin is contraindicated" in text and "German" in text
    assert "[[ ## answer ## ]]" in text
    program.respond.signature = program.respond.signature.with_instructions("Cite passages; be brief.")
    assert "Cite passages; be brief." in program_messages(program, "Q?", "en", NUMBERED)[0]["content"]


def test_engine_with_a_compiled_program_prompts_with_it_and_grounds_the_reply(tmp_path):
    program = GeneratorProgram()
    program.respond.signature = program.respond.signature.with_instructions("COMPILED INSTRUCTIONS")
    path = save_program(program, tmp_path / "generator.json", {"program": "generator"})
    cfg = LlamaCppEngineConfig(kind="llamacpp", model_path="unused.gguf", program=str(path))
    model = ScriptedModel("[[ ## answer ## ]]\nMetformin is contraindicated in severe renal impairment [2]. "
                          "It causes lactic acidosis [9].\n\n[[ ## completed ## ]] trailing text [1].")
    engine = make_engine(cfg, AnswerConfig(), model=model)
    assert isinstance(engine, GroundedEngine) and engine.program_path == str(path)
    answer = engine.generate("When is metformin contraindicated?", QueryAnalysis("q", "en"),
                             [_cand(i + 1, t) for i, t in enumerate(PASSAGES)])
    assert "COMPILED INSTRUCTIONS" in model.prompts[0][0]["content"]
    assert engine.params.stop == ("[[ ## completed ## ]]",)
    assert not answer.refused and [c.chunk_id for c in answer.citations] == ["c2"]
    assert "trailing" not in answer.content and "[[" not in answer.content
    refusal = make_engine(cfg, AnswerConfig(), model=ScriptedModel("[[ ## answer ## ]]\nNO_ANSWER\n\n[[ ## completed ## ]]"))
    assert refusal.generate("q", QueryAnalysis("q", "en"), [_cand(1, PASSAGES[0])]).refused


def test_a_broken_program_file_fails_the_engine_start_with_its_reason(tmp_path):
    bad = tmp_path / "generator.json"
    bad.write_text("{not json", encoding="utf-8")
    cfg = LlamaCppEngineConfig(kind="llamacpp", model_path="unused.gguf", program=str(bad))
    with pytest.raises(ValueError, match="not a JSON generator program"):
        make_engine(cfg, AnswerConfig(), model=ScriptedModel(""))
    with pytest.raises(FileNotFoundError, match="generator program not found"):
        load_generator(tmp_path / "missing.json")


def test_saved_program_round_trips_with_its_record(tmp_path):
    program = GeneratorProgram()
    program.respond.signature = program.respond.signature.with_instructions("Answer with citations.")
    path = save_program(program, tmp_path / "g.json", {"config_hash": "abc"})
    assert json.loads(meta_path(path).read_text())["config_hash"] == "abc"
    assert instructions(load_generator(path)) == {"respond": "Answer with citations."}


# --- the generator metric ---------------------------------------------------------------------------

def test_generator_metric_scores_citation_and_says_what_is_wrong():
    metric = GeneratorMetric(0.5)
    right = metric.score_text(_example([2]), "Metformin is contraindicated in severe renal impairment [2].")
    assert right.score == 1.0 and "Right" in right.feedback
    wrong = metric.score_text(_example([2]), "Hand hygiene prevents infections [1].")
    assert wrong.score == 0.0 and "Cites [1], which does not answer" in wrong.feedback and "[2]" in wrong.feedback
    mixed = metric.score_text(_example([2]), "Metformin is contraindicated in renal impairment [2]. "
                                             "Hand hygiene prevents infections [1].")
    assert mixed.score == 0.75 and "Cites [1] besides the answering passage [2]" in mixed.feedback
    refused = metric.score_text(_example([2]), "NO_ANSWER")
    assert refused.score == 0.0 and "passage [2] answers" in refused.feedback
    unresolved = metric.score_text(_example([2]), "Metformin is contraindicated in renal impairment [7].")
    assert "name no passage" in unresolved.feedback and unresolved.score == 1.0  # repaired onto [2] by its words
    assert "matched to a passage by their words" in unresolved.feedback


def test_generator_metric_wants_a_refusal_where_nothing_answers():
    metric = GeneratorMetric(0.5)
    assert metric.score_text(_example([], answerable=False), "NO_ANSWER.").score == 1.0
    answered = metric.score_text(_example([], answerable=False), "Aspirin lowers the risk of infarction [3].")
    assert answered.score == 0.0 and "must be only NO_ANSWER" in answered.feedback
    assert is_no_answer("NO_ANSWER.") and is_no_answer("no answer") and not is_no_answer("No answer was found.")


def test_ground_text_grounds_a_whole_reply_like_the_stream():
    kept, stats = ground_text("Aspirin lowers the risk of a second myocardial infarction. Unrelated words here.",
                              PASSAGES, 0.5)
    assert [g.passages for g in kept] == [(3,)] and stats.repaired == 1 and stats.dropped == 1


def test_hand_written_prompt_and_a_program_are_scored_on_the_same_model():
    examples = [_example([2], qid="a"), _example([], answerable=False, qid="b")]

    def chat(messages, params):
        prompt = messages[-1]["content"]
        if "[[ ## answer ## ]]" in "\n".join(m["content"] for m in messages):  # the program's messages
            return "[[ ## answer ## ]]\nMetformin is contraindicated in severe renal impairment [2]."
        return "Hand hygiene prevents infections [1]." if prompt else ""

    metric = GeneratorMetric(0.5)
    params = ChatParams(max_tokens=64)
    hand = summarise_replies(evaluate_replies(chat, examples, metric, params))
    prog = summarise_replies(evaluate_replies(chat, examples, metric, params, GeneratorProgram()))
    assert hand["overall"]["cited_gold"] == 0.0 and prog["overall"]["cited_gold"] == 1.0
    assert prog["by_language"]["en"]["citation_precision"] == 1.0
    assert hand["overall"]["refused_unanswerable"] == 0.0


# --- the router metric and GEPA end to end ----------------------------------------------------------

ROWS = load_labelled(FIXTURES / "labelled_questions.jsonl")
GOLD = {r["question"]: r for r in ROWS}
BETTER = "Read the whole question before naming its intent."


def _router_reply(question: str, intent: str) -> str:
    return (f"[[ ## intent ## ]]\n{intent}\n\n[[ ## entities ## ]]\n[]\n\n[[ ## constraints ## ]]\n[]\n\n"
            f"[[ ## rewritten ## ]]\n{question}\n\n[[ ## completed ## ]]")


class ScriptedStudent:
    """Names the gold intent only when its instructions are the improved ones (else PATIENT_FAQ)."""

    def __call__(self, messages, params):
        system, user = messages[0]["content"], messages[-1]["content"]
        question = next(q for q in GOLD if q in user)
        return _router_reply(question, GOLD[question]["intent"] if BETTER in system else "PATIENT_FAQ")


class ScriptedReflection:
    def __init__(self) -> None:
        self.prompts: list[str] = []

    def __call__(self, messages, params):
        self.prompts.append("\n".join(m["content"] for m in messages))
        return f"[[ ## new_instruction ## ]]\n{BETTER}\n\n[[ ## completed ## ]]"  # DSPy's chat format


def test_router_metric_names_the_wrong_intent_and_tier():
    metric = RouterMetric()
    gold = router_examples([{"id": "x", "question": "Does warfarin interact with aspirin?", "lang": "en",
                             "intent": "DRUG_INTERACTION", "tier": "medium", "e": 2}])[0]
    wrong = metric(gold, dspy.Prediction(intent="PATIENT_FAQ", entities=["warfarin"], constraints=[], rewritten="q"))
    assert wrong.score == 0.0 and "Misclassified intent: PATIENT_FAQ, expected DRUG_INTERACTION" in wrong.feedback
    assert "tier: small, expected medium" in wrong.feedback and "E 1" in wrong.feedback
    right = metric(gold, dspy.Prediction(intent="DRUG_INTERACTION", entities=["warfarin", "aspirin"],
                                         constraints=[], rewritten="q"))
    assert right.score == 1.0 and right.intent_ok and right.tier_ok
    unusable = metric(gold, dspy.Prediction(intent="SOMETHING", entities=[], constraints=[], rewritten=""))
    assert unusable.score == 0.0 and "No usable route" in unusable.feedback


def test_gepa_compiles_the_router_from_the_metrics_diagnosis(tmp_path):
    train = router_examples([r for r in ROWS if r["split"] == "train" and r["intent"] != "PATIENT_FAQ"][:4])
    dev = router_examples([r for r in ROWS if r["split"] == "eval" and r["intent"] != "PATIENT_FAQ"][:4])
    student = chat_lm(ScriptedStudent(), name="student")
    reflect = ScriptedReflection()
    metric = RouterMetric()
    baseline = evaluate(RouterProgram(), metric, dev, student)
    compiled = compile_gepa(RouterProgram(), metric, train, dev, student, chat_lm(reflect, name="reflection"),
                            max_metric_calls=40)
    after = evaluate(compiled, metric, dev, student)
    assert instructions(compiled)["classify"] == BETTER
    assert after.score > baseline.score and all(r["intent_ok"] for r in after.rows)
    assert reflect.prompts and "Misclassified intent" in reflect.prompts[0]  # the diagnosis reached the reflection
    path = save_program(compiled, tmp_path / "router.json", {"program": "router"})
    assert load_program(path).classify.signature.instructions == BETTER  # what Serve loads (router.program)


def test_gepa_refuses_a_budget_that_cannot_cover_the_validation_set():
    ex = router_examples(ROWS[:3])
    with pytest.raises(ValueError, match="max_metric_calls 3"):
        compile_gepa(RouterProgram(), RouterMetric(), ex, ex, chat_lm(ScriptedStudent()), chat_lm(ScriptedReflection()), 3)


def test_config_hash_changes_with_the_config():
    from medgraph.config import load_config

    a = load_config("configs/local.yaml")
    b = load_config("configs/local.yaml", ["router.small_max=2"])
    assert config_hash(a) == config_hash(load_config("configs/local.yaml")) != config_hash(b)
