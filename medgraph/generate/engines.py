"""Answer engines: what one LLM tier runs. Interface: generate, stream, sleep, wake, is_sleeping.

Input: the question, its ``QueryAnalysis`` and the reranked evidence. Output: an ``Answer`` with
inline ``[N]`` markers that resolve to its citations; ``stream`` yields the answer's text deltas
and then the final ``Answer`` (the deltas joined are exactly its ``content``).

- ``ExtractiveEngine`` (kind ``extractive``): the extractive composer; nothing to load or free.
- ``GroundedEngine`` (kinds ``llamacpp``, ``vllm``, ``openai``): prompts a ``ChatModel`` with the
  numbered evidence (the hand-written prompt, or the messages of the tier's compiled generator
  program: ``medgraph.generate.program``), cuts its output into sentences as it streams, and keeps
  only sentences whose citations resolve or can be repaired (``medgraph.generate.citations``); citation numbers are
  renumbered 1..k in order of first use. With no usable evidence or no grounded sentence left it
  refuses. ``generate`` is the collected ``stream``, so streamed and whole answers are identical.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

from medgraph.config.llm import (
    EngineConfig,
    ExtractiveEngineConfig,
    GenerativeEngineBase,
    LlamaCppEngineConfig,
    OpenAIEngineConfig,
)
from medgraph.config.models import AnswerConfig
from medgraph.embed.base import Embedder
from medgraph.generate.base import Answer, Citation, disclaimer, refusal
from medgraph.generate.citations import GroundedSentence, GroundingStats, SentenceSplitter, ground_sentence
from medgraph.generate.extractive import ExtractiveComposer
from medgraph.generate.prompt import NumberedEvidence, build_messages, number_evidence
from medgraph.generate.reply import STOP, AnswerField, is_no_answer
from medgraph.llm.base import ChatModel, ChatParams, Message, ModelUnavailable
from medgraph.retrieve.types import Candidate, QueryAnalysis

if TYPE_CHECKING:  # DSPy (the llm extra) is imported only for a tier that has a compiled program
    from medgraph.generate.program import GeneratorProgram

Event = str | Answer  # a text delta, then the final Answer
SNIPPET_CHARS = 300


class Engine(Protocol):
    kind: str

    @property
    def name(self) -> str: ...  # what answered: ``model_used``

    def generate(self, question: str, analysis: QueryAnalysis, evidence: list[Candidate]) -> Answer: ...

    def stream(self, question: str, analysis: QueryAnalysis, evidence: list[Candidate]) -> Iterator[Event]: ...

    def chat(self, messages: list[Message], params: ChatParams) -> str: ...

    def sleep(self) -> None: ...

    def wake(self) -> None: ...

    def is_sleeping(self) -> bool: ...


def answer_deltas(answer: Answer) -> list[str]:
    """The text deltas of a finished answer: its lead line, then one per cited sentence (joined:
    ``answer.content``)."""
    if answer.refused or not answer.sentences:
        return [answer.content]
    lead = [answer.lead] if answer.lead else []
    return lead + [f"{s} [{n}]" if i == 0 and not lead else f" {s} [{n}]" for i, (s, n) in enumerate(answer.sentences)]


class ExtractiveEngine:
    kind = "extractive"

    def __init__(self, answer_cfg: AnswerConfig, embedder: Embedder | None = None) -> None:
        self.composer = ExtractiveComposer(answer_cfg, embedder)
        self.name = self.composer.name
        self._sleeping = False

    def generate(self, question: str, analysis: QueryAnalysis, evidence: list[Candidate]) -> Answer:
        return self.composer.generate(question, analysis, evidence)

    def stream(self, question: str, analysis: QueryAnalysis, evidence: list[Candidate]) -> Iterator[Event]:
        answer = self.generate(question, analysis, evidence)
        yield from answer_deltas(answer)
        yield answer

    def chat(self, messages: list[Message], params: ChatParams) -> str:
        raise ModelUnavailable("the extractive engine has no language model to chat with")

    def sleep(self) -> None:
        self._sleeping = True  # nothing is held: sleeping only marks the tier idle

    def wake(self) -> None:
        self._sleeping = False

    def is_sleeping(self) -> bool:
        return self._sleeping


class GroundedEngine:
    """``program``: a compiled generator program whose messages replace the hand-written prompt."""

    def __init__(self, model: ChatModel, cfg: GenerativeEngineBase, answer_cfg: AnswerConfig, kind: str,
                 program: GeneratorProgram | None = None) -> None:
        self.model, self.cfg, self.answer_cfg, self.kind = model, cfg, answer_cfg, kind
        self.program = program
        stop = (STOP,) if program is not None else ()
        self.params = ChatParams(max_tokens=cfg.max_tokens, temperature=cfg.temperature, stop=stop)

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def program_path(self) -> str | None:
        """The compiled generator program's file, when the engine prompts with one."""
        return self.cfg.program if self.program is not None else None

    def sleep(self) -> None:
        self.model.sleep()

    def wake(self) -> None:
        self.model.wake()

    def is_sleeping(self) -> bool:
        return self.model.is_sleeping()

    def chat(self, messages: list[Message], params: ChatParams) -> str:
        return self.model.generate(messages, params)

    def generate(self, question: str, analysis: QueryAnalysis, evidence: list[Candidate]) -> Answer:
        *_, answer = self.stream(question, analysis, evidence)
        assert isinstance(answer, Answer)
        return answer

    def _refusal(self, lang: str, stats: GroundingStats | None = None) -> Answer:
        grounding = _stats_dict(stats) if stats else {}
        return Answer(refusal(lang), refused=True, language=lang, model_used=self.name,
                      disclaimer=disclaimer(lang), grounding=grounding)

    def stream(self, question: str, analysis: QueryAnalysis, evidence: list[Candidate]) -> Iterator[Event]:
        lang = analysis.language
        numbered = number_evidence(evidence, self.cfg.max_evidence, self.cfg.evidence_chars,
                                   self.answer_cfg.min_relevance, lang)
        if not len(numbered):
            answer = self._refusal(lang)
            yield answer.content
            yield answer
            return
        composer = _Composer(numbered, self.cfg.min_support)
        splitter = SentenceSplitter()
        if self.program is None:
            messages, field = build_messages(question, lang, numbered), None
        else:
            from medgraph.generate.program import program_messages

            messages, field = program_messages(self.program, question, lang, numbered), AnswerField()
        for delta in self.model.stream(messages, self.params):
            for sentence in splitter.feed(field.feed(delta) if field is not None else delta):
                yield from composer.add(sentence)
        for sentence in splitter.feed(field.flush()) if field is not None else ():
            yield from composer.add(sentence)
        for sentence in splitter.flush():
            yield from composer.add(sentence)
        if not composer.kept:
            answer = self._refusal(lang, composer.stats)
            yield answer.content
            yield answer
            return
        yield Answer("".join(composer.pieces), composer.citations(), False, lang, self.name,
                     disclaimer(lang), [(g.text, composer.numbers[g.passages[0]]) for g in composer.kept],
                     _stats_dict(composer.stats))


def _stats_dict(stats: GroundingStats) -> dict[str, int]:
    return {"cited": stats.cited, "repaired": stats.repaired, "dropped": stats.dropped,
            "unresolved_markers": stats.unresolved_markers}


class _Composer:
    """Grounds sentences one by one and renumbers their citations in order of first use."""

    def __init__(self, numbered: NumberedEvidence, min_support: float) -> None:
        self.numbered, self.min_support = numbered, min_support
        self.stats = GroundingStats()
        self.numbers: dict[int, int] = {}  # passage number -> citation number
        self.kept: list[GroundedSentence] = []
        self.pieces: list[str] = []

    def add(self, sentence: str) -> Iterator[str]:
        if is_no_answer(sentence):
            return  # the program's refusal token: no sentence
        grounded = ground_sentence(sentence, self.numbered.texts, self.min_support, self.stats)
        if grounded is None:
            return
        for p in grounded.passages:
            self.numbers.setdefault(p, len(self.numbers) + 1)
        markers = "".join(f"[{self.numbers[p]}]" for p in grounded.passages)
        piece = f"{'' if not self.pieces else ' '}{grounded.text} {markers}"
        self.kept.append(grounded)
        self.pieces.append(piece)
        yield piece

    def citations(self) -> list[Citation]:
        out: list[Citation] = []
        for passage, number in sorted(self.numbers.items(), key=lambda kv: kv[1]):
            cand = self.numbered.candidates[passage - 1]
            chunk = cand.chunk
            assert chunk is not None
            text = self.numbered.texts[passage - 1]
            snippet = text if len(text) <= SNIPPET_CHARS else text[:SNIPPET_CHARS].rsplit(" ", 1)[0] + " …"
            out.append(Citation(number, chunk.chunk_id, chunk.doc_id, chunk.title, chunk.source_id or chunk.doc_id,
                                chunk.section_path, chunk.page, snippet, round(cand.relevance, 4)))
        return out


def make_engine(cfg: EngineConfig, answer_cfg: AnswerConfig, model: ChatModel | None = None,
                embedder: Embedder | None = None) -> Engine:
    """The engine of one tier. ``model`` injects the chat model (the vLLM kind gets it from serve/);
    ``embedder`` the extractive composer's sentence embedder (``answer.sentence_dense``)."""
    if isinstance(cfg, ExtractiveEngineConfig):
        return ExtractiveEngine(answer_cfg, embedder if answer_cfg.sentence_dense != "off" else None)
    program = None
    if cfg.program:  # a bad file fails the start, not a request
        from medgraph.generate.program import load_generator

        program = load_generator(cfg.program)
    if model is None:
        model = _make_model(cfg)
    return GroundedEngine(model, cfg, answer_cfg, cfg.kind, program)


def _make_model(cfg: EngineConfig) -> ChatModel:
    if isinstance(cfg, LlamaCppEngineConfig):
        from medgraph.llm.llamacpp import LlamaCppModel

        return LlamaCppModel(cfg)
    if isinstance(cfg, OpenAIEngineConfig):
        from medgraph.llm.openai_compat import OpenAICompatModel

        return OpenAICompatModel(cfg)
    raise ModelUnavailable(f"{cfg.kind} engines run behind ray.serve.llm: serve/vllm_engine.py builds their model")
