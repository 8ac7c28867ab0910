"""The router's model tier as a DSPy program: classify the question, then score it like the rules.

Input: a ``QueryAnalysis`` and a DSPy LM (on a project tier: ``medgraph.llm.dspy_bridge.chat_lm``).
Output: a ``RouteDecision``. The program (``RouterProgram``, one ``Predict`` or ``ChainOfThought``
over the ``ClassifyQuestion`` signature, one LM call through ``dspy.ChatAdapter``) names the
question's intent, its medical entities, its patient constraints and a standalone rewrite of the
question for retrieval. E (entities + constraints) and I (intent depth) are then scored exactly
as ``RuleRouter`` and ``LLMRouter`` do (``medgraph.route.types``), ``method="dspy"``; the rewrite
is kept in ``notes`` (``rewritten_question`` reads it back). When the LM fails, its reply does not
parse, or it names an unknown intent, the decision is the rule router's, ``method="dspy-fallback"``
with the reason in ``notes``.

``route`` runs the program synchronously (on ``self.lm``); ``aroute`` awaits it
(``program.acall``), so a Serve replica calls an engine handle without blocking its event loop.

Few-shot compile (optional): ``compile_program`` puts labelled questions of the TRAIN split
(``"split": "train"`` in ``tests/fixtures/router/labelled_questions.jsonl``) into the program as
demos with ``dspy.LabeledFewShot``; rows of the evaluation split are refused. ``save_program``
writes the compiled program as JSON (``router.program`` in the config); ``load_program`` reads it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import dspy

from medgraph import lang
from medgraph.lang.sections.dialogue import listing
from medgraph.llm.base import ChatParams
from medgraph.llm.programs import load_state
from medgraph.llm.programs import save_program as save_state
from medgraph.retrieve.types import QueryAnalysis
from medgraph.route.rules import RuleRouter, counted_entities, find_constraints
from medgraph.route.types import CONSTRAINT_KINDS, INTENT_DEPTH, Intent, RouteDecision, entity_score, tier_for

log = logging.getLogger(__name__)
REWRITE_NOTE = "rewritten: "
# the chat-format reply of four short fields (and the reasoning with ChainOfThought) fits in this
PARAMS = ChatParams(max_tokens=256, temperature=0.0, stop=("[[ ## completed ## ]]",))


# "{languages}": the registered packs' names, filled in by ``classify_signature``
class ClassifyQuestion(dspy.Signature):  # type: ignore[misc]  # dspy ships no type hints
    """Classify a clinical question ({languages}) so it is routed to the right model.

    intent: PATIENT_FAQ (a lay question about one thing), CLINICAL_DECISION (what to do for a
    patient), DRUG_INTERACTION (drugs taken together), LITERATURE_MULTIHOP (what studies show,
    mechanisms, associations), CROSS_CORPUS (comparing guidelines or sources).
    """

    question: str = dspy.InputField(desc="the user's question, in {languages}")
    intent: str = dspy.OutputField(desc="one of: " + ", ".join(i.value for i in Intent))
    entities: list[str] = dspy.OutputField(
        desc="the distinct medical entities named: drugs, diseases, symptoms, procedures (not the patient)")
    constraints: list[str] = dspy.OutputField(
        desc=f"the patient constraints stated, among: {', '.join(CONSTRAINT_KINDS)} (empty list if none)")
    rewritten: str = dspy.OutputField(
        desc="the question as one standalone search query in its own language, without small talk")


def classify_signature() -> type[dspy.Signature]:
    """``ClassifyQuestion`` naming the languages of the registered packs ("English, German or Chinese")."""
    languages = listing([p.name for p in lang.packs()])
    question = ClassifyQuestion.input_fields["question"].json_schema_extra["desc"]
    signature: type[dspy.Signature] = (
        ClassifyQuestion.with_instructions(ClassifyQuestion.instructions.format(languages=languages))
        .with_updated_fields("question", desc=question.format(languages=languages)))
    return signature


class RouterProgram(dspy.Module):  # type: ignore[misc]
    """One LM call: ``ClassifyQuestion`` with ``Predict`` (or ``ChainOfThought``: reasoning first)."""

    def __init__(self, reasoning: bool = False) -> None:
        super().__init__()
        signature = classify_signature()
        self.classify = dspy.ChainOfThought(signature) if reasoning else dspy.Predict(signature)

    def forward(self, question: str) -> dspy.Prediction:
        return self.classify(question=question)

    async def aforward(self, question: str) -> dspy.Prediction:
        return await self.classify.acall(question=question)


class RouterOutputError(ValueError):
    """The program's output cannot be mapped to a route (unknown intent, missing field)."""


def _strings(value: Any, field: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value] if value.strip() else []
    if not isinstance(value, list | tuple):
        raise RouterOutputError(f"{field} is not a list")
    return list(dict.fromkeys(s for s in (str(v).strip().lower() for v in value) if s))


def parse_prediction(pred: Any) -> tuple[Intent, list[str], list[str], str]:
    """(intent, entities, constraints, rewritten question) of a ``RouterProgram`` prediction."""
    raw_intent = str(getattr(pred, "intent", "") or "").strip().strip("'\"`").upper().replace(" ", "_")
    try:
        intent = Intent(raw_intent)
    except ValueError as exc:
        raise RouterOutputError(f"unknown intent {getattr(pred, 'intent', None)!r}") from exc
    entities = _strings(getattr(pred, "entities", None), "entities")
    stated = _strings(getattr(pred, "constraints", None), "constraints")
    constraints = [c for c in stated if c in CONSTRAINT_KINDS]
    rewritten = str(getattr(pred, "rewritten", "") or "").strip()
    return intent, entities, constraints, rewritten


def rewritten_question(decision: RouteDecision) -> str | None:
    """The program's standalone rewrite of the question, when the decision is the program's."""
    for note in decision.notes:
        if note.startswith(REWRITE_NOTE):
            return note[len(REWRITE_NOTE):]
    return None


class DSPyRouter:
    """The model-tier router as a DSPy program, falling back to ``RuleRouter`` (module docstring)."""

    name = "dspy"

    def __init__(self, lm: dspy.BaseLM | None = None, small_max: int = 3, medium_max: int = 4,
                 program: RouterProgram | None = None, reasoning: bool = False, history: bool = True) -> None:
        self.lm = lm
        # DSPy keeps up to 10,000 prompts per LM and globally: a long-running service turns that off
        self.settings: dict[str, Any] = {} if history else {"disable_history": True}
        self.small_max, self.medium_max = small_max, medium_max
        self.program = program if program is not None else RouterProgram(reasoning)
        # one LM call per question: no second call through the JSON adapter when the chat format fails
        self.adapter = dspy.ChatAdapter(use_json_adapter_fallback=False)
        self.fallback = RuleRouter(small_max, medium_max)

    def decide(self, analysis: QueryAnalysis, pred: Any, error: str | None = None) -> RouteDecision:
        """The decision for the program's prediction ``pred`` (or the rules' when it is unusable)."""
        try:
            if pred is None:
                raise RouterOutputError(error or "no prediction")
            intent, entities, constraints, rewritten = parse_prediction(pred)
        except RouterOutputError as exc:
            return self._fallback(analysis, str(exc))
        e, i = entity_score(len(entities), len(constraints)), INTENT_DEPTH[intent]
        notes = (f"{REWRITE_NOTE}{rewritten}",) if rewritten else ()
        return RouteDecision(tier=tier_for(e + i, self.small_max, self.medium_max), intent=intent,
                             entity_score=e, intent_score=i, entities=tuple(entities),
                             constraints=tuple(constraints), method=self.name, notes=notes)

    def _fallback(self, analysis: QueryAnalysis, reason: str) -> RouteDecision:
        rules = self.fallback.route(analysis)
        return RouteDecision(**{**rules.__dict__, "method": f"{self.name}-fallback",
                                "notes": (*rules.notes, f"dspy: {reason}")})

    def route(self, analysis: QueryAnalysis) -> RouteDecision:
        if self.lm is None:
            raise RuntimeError("DSPyRouter.route needs an LM; async callers use aroute(analysis, lm)")
        try:
            with dspy.context(lm=self.lm, adapter=self.adapter, **self.settings):
                pred = self.program(question=analysis.text)
        except Exception as exc:  # noqa: BLE001 - any LM or parse failure falls back to the rules
            return self.decide(analysis, None, _reason(exc))
        return self.decide(analysis, pred)

    async def aroute(self, analysis: QueryAnalysis, lm: dspy.BaseLM | None = None) -> RouteDecision:
        """``route`` awaiting the program (``acall``) on ``lm`` (default: ``self.lm``)."""
        lm = lm if lm is not None else self.lm
        if lm is None:
            raise RuntimeError("DSPyRouter.aroute needs an LM")
        try:
            with dspy.context(lm=lm, adapter=self.adapter, **self.settings):
                pred = await self.program.acall(question=analysis.text)
        except Exception as exc:  # noqa: BLE001 - any LM or parse failure falls back to the rules
            return self.decide(analysis, None, _reason(exc))
        return self.decide(analysis, pred)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text[:200]}"


# --- few-shot compile over the TRAIN split -------------------------------------------------------

def _entity_names(analysis: QueryAnalysis) -> tuple[list[str], list[str]]:
    """Entity names and constraint kinds the rules count in the question (for demos)."""
    constraints = find_constraints(analysis.text, analysis.language)
    spans = [s for v in constraints.values() for s in v]
    counted = counted_entities(analysis, spans)
    surface = {m.mesh_id: m.surface for m in analysis.mentions if m.mesh_id}
    names = [key[4:] if key.startswith("inn:") else surface.get(key, key) for key in counted]
    return list(dict.fromkeys(n.lower() for n in names)), list(constraints)


def training_examples(rows: Iterable[dict[str, Any]],
                      analyze: Callable[[str, str], QueryAnalysis] | None = None) -> list[dspy.Example]:
    """Demos from labelled TRAIN rows: gold intent, constraints, and entity names where they add up.

    Constraints come from the rules' patterns; with ``analyze`` (NER + linking) the entities the
    rules count are named when, with the constraints, they give the gold E; otherwise the demo
    leaves ``entities`` out rather than teach a wrong count. Raises ``ValueError`` on a row that is
    not in the train split: the evaluation split never becomes a demo.
    """
    out = []
    for row in rows:
        if row.get("split") != "train":
            raise ValueError(f"row {row.get('id')!r} is not in the train split (split={row.get('split')!r})")
        question, lang = row["question"], row["lang"]
        analysis = analyze(question, lang) if analyze else QueryAnalysis(question, lang)
        entities, constraints = _entity_names(analysis)
        fields: dict[str, Any] = {"question": question, "intent": row["intent"], "constraints": constraints,
                                  "rewritten": question}
        if analyze is not None and entity_score(len(entities), len(constraints)) == row["e"]:
            fields["entities"] = entities
        out.append(dspy.Example(**fields).with_inputs("question"))
    return out


def compile_program(rows: Iterable[dict[str, Any]],
                    analyze: Callable[[str, str], QueryAnalysis] | None = None,
                    max_demos: int = 8, reasoning: bool = False) -> RouterProgram:
    """A ``RouterProgram`` with up to ``max_demos`` demos (``dspy.LabeledFewShot``) from TRAIN rows."""
    trainset = training_examples(rows, analyze)
    if not trainset:
        raise ValueError("compile_program needs at least one train row")
    compiled = dspy.LabeledFewShot(k=max_demos).compile(RouterProgram(reasoning), trainset=trainset)
    if not isinstance(compiled, RouterProgram):
        raise TypeError("LabeledFewShot returned an unexpected program type")
    return compiled


def save_program(program: RouterProgram, path: str | Path) -> Path:
    return save_state(program, path)


def load_program(path: str | Path, reasoning: bool = False) -> RouterProgram:
    """A compiled ``RouterProgram`` from its JSON (``save_program``); a clear error when it is unusable."""
    return load_state(RouterProgram(reasoning), path, "router")
