"""Grounded generation: inline [N] citations that resolve, repaired or refused otherwise.

``ScriptedModel`` stands in for the language model (it returns fixed text, streamed in small
pieces); everything after it — prompt, sentence splitting of the stream, citation resolution,
repair, renumbering, refusal — is the production code. The same engine runs a real GGUF in
tests/integration/test_tiers.py.
"""

from __future__ import annotations

import re

import pytest

from medgraph.config.llm import LlamaCppEngineConfig
from medgraph.config.models import AnswerConfig
from medgraph.generate.base import Answer
from medgraph.generate.citations import SentenceSplitter, marker_numbers, strip_markers
from medgraph.generate.engines import GroundedEngine, answer_deltas, make_engine
from medgraph.generate.prompt import build_messages, number_evidence
from medgraph.llm.base import ChatParams
from medgraph.retrieve.types import Candidate, QueryAnalysis
from medgraph.schemas import Chunk
from tests.helpers import require_module

PASSAGES = [
    "Metformin is the first-line drug for type 2 diabetes. It lowers hepatic glucose production.",
    "In patients with severe renal impairment metformin is contraindicated because of lactic acidosis.",
    "Hand hygiene is the most important measure to prevent infections in outpatient settings.",
]


def _cand(i: int, text: str, relevance: float = 0.9) -> Candidate:
    chunk = Chunk(f"c{i}", f"doc{i}", 0, text, ["Results"], "p", text, 30, "en", title=f"Title {i}",
                  page=i, source_id=f"PMID:{i}")
    return Candidate(f"c{i}", chunk=chunk, relevance=relevance)


EVIDENCE = [_cand(i + 1, t) for i, t in enumerate(PASSAGES)]
ANALYSIS = QueryAnalysis("Is metformin safe in renal impairment?", "en")


class ScriptedModel:
    name = "scripted"

    def __init__(self, text: str) -> None:
        self.text = text
        self.prompts: list[list[dict[str, str]]] = []
        self.asleep = False

    def stream(self, messages, params):
        self.prompts.append(messages)
        for i in range(0, len(self.text), 3):  # tiny deltas: markers and full stops arrive split
            yield self.text[i:i + 3]

    def generate(self, messages, params):
        return "".join(self.stream(messages, params))

    def sleep(self):
        self.asleep = True

    def wake(self):
        self.asleep = False

    def is_sleeping(self):
        return self.asleep


def _engine(text: str, **cfg) -> GroundedEngine:
    ecfg = LlamaCppEngineConfig(kind="llamacpp", model_path="unused.gguf", **cfg)
    return GroundedEngine(ScriptedModel(text), ecfg, AnswerConfig(), "llamacpp")


def _resolves(answer: Answer) -> None:
    markers = {int(n) for n in re.findall(r"\[(\d+)\]", answer.content)}
    assert markers == {c.number for c in answer.citations}
    assert sorted(markers) == list(range(1, len(markers) + 1))


def test_cited_sentences_are_kept_and_renumbered_in_order_of_use():
    engine = _engine("Metformin is contraindicated in severe renal impairment [2]. It is first-line [1].")
    answer = engine.generate("q", ANALYSIS, EVIDENCE)
    assert answer.content == "Metformin is contraindicated in severe renal impairment. [1] It is first-line. [2]"
    assert [c.chunk_id for c in answer.citations] == ["c2", "c1"]  # passage 2 is cited first -> [1]
    assert answer.citations[0].source_id == "PMID:2" and answer.citations[0].page == 2
    assert answer.grounding == {"cited": 2, "repaired": 0, "dropped": 0, "unresolved_markers": 0}
    assert not answer.refused and answer.model_used == "scripted" and answer.disclaimer
    _resolves(answer)


def test_unresolvable_markers_are_repaired_from_the_evidence_or_dropped():
    engine = _engine("Hand hygiene is the most important measure to prevent infections [7]. "
                     "The moon is made of cheese [12]. Metformin lowers hepatic glucose production.")
    answer = engine.generate("q", ANALYSIS, EVIDENCE)
    assert "cheese" not in answer.content and "[7]" not in answer.content
    assert answer.content.startswith("Hand hygiene is the most important measure to prevent infections. [1]")
    assert [c.chunk_id for c in answer.citations] == ["c3", "c1"]
    assert answer.grounding["repaired"] == 2 and answer.grounding["dropped"] == 1
    assert answer.grounding["unresolved_markers"] == 2
    _resolves(answer)


def test_nothing_grounded_is_refused():
    answer = _engine("Bananas are yellow [5]. The sky is blue.").generate("q", ANALYSIS, EVIDENCE)
    assert answer.refused and answer.citations == [] and "[" not in answer.content
    assert answer.grounding["dropped"] == 2


def test_no_usable_evidence_refuses_without_calling_the_model():
    engine = _engine("anything [1].")
    low = [_cand(1, PASSAGES[0], relevance=0.01)]
    answer = engine.generate("q", ANALYSIS, low)
    assert answer.refused and engine.model.prompts == []


def test_stream_deltas_join_to_the_answer_and_end_with_it():
    engine = _engine("Metformin is first-line [1]. In severe renal impairment it is contraindicated [2].")
    events = list(engine.stream("q", ANALYSIS, EVIDENCE))
    *deltas, final = events
    assert isinstance(final, Answer) and all(isinstance(d, str) for d in deltas)
    assert "".join(deltas) == final.content and len(deltas) == 2
    assert final.content == engine.generate("q", ANALYSIS, EVIDENCE).content


def test_prompt_numbers_the_evidence_in_the_question_language():
    numbered = number_evidence(EVIDENCE, max_passages=2, max_chars=60)
    assert len(numbered) == 2 and numbered.texts[0].endswith("…") and len(numbered.texts[0]) <= 62
    de = build_messages("Ist Metformin sicher?", "de", numbered)
    assert de[0]["role"] == "system" and "Deutsch" in de[0]["content"]
    assert "[1] Title 1: Metformin" in de[1]["content"] and "[2] Title 2:" in de[1]["content"]
    assert "[3]" not in de[1]["content"] and "Frage: Ist Metformin sicher?" in de[1]["content"]
    zh = build_messages("二甲双胍安全吗？", "zh", numbered)
    assert "中文" in zh[0]["content"]


def test_prompt_puts_passages_in_the_askers_language_or_english_first():
    chinese = _cand(9, "二甲双胍在肾功能不全时应减量。")
    chinese.chunk.language = "zh"
    evidence = [chinese, *EVIDENCE]
    ids = [c.chunk_id for c in number_evidence(evidence, 3, 200, language="de").candidates]
    assert ids == ["c1", "c2", "c3"]  # a German asker: English first, the Chinese passage after them
    assert [c.chunk_id for c in number_evidence(evidence, 2, 200, language="zh").candidates] == ["c9", "c1"]
    assert [c.chunk_id for c in number_evidence(evidence, 2, 200).candidates] == ["c9", "c1"]  # no language: as ranked


@pytest.mark.parametrize("text,expected", [
    ("A [1]. B [2]", ["A [1].", "B [2]"]),
    ("Dose 2.5 mg daily. [1] Next one [2].", ["Dose 2.5 mg daily. [1]", "Next one [2]."]),
    ("二甲双胍是一线药物[1]。肾功能不全时禁用[2]。", ["二甲双胍是一线药物[1]。", "肾功能不全时禁用[2]。"]),
    ("- item one [1]\n- item two [2]", ["- item one [1]", "- item two [2]"]),
])
def test_sentence_splitter_is_the_same_whole_or_streamed(text, expected):
    whole = SentenceSplitter()
    assert whole.feed(text) + whole.flush() == expected
    streamed, out = SentenceSplitter(), []
    for ch in text:
        out += streamed.feed(ch)
    assert out + streamed.flush() == expected


def test_marker_parsing():
    assert marker_numbers("a [1, 2] b [3-5] c [7][1]") == [1, 2, 3, 4, 5, 7]
    assert strip_markers("It works [1] [2] .") == "It works."


def test_extractive_engine_streams_the_composer_answer():
    from medgraph.generate.engines import ExtractiveEngine

    analysis = QueryAnalysis("metformin renal impairment contraindicated", "en")
    engine = ExtractiveEngine(AnswerConfig())
    *deltas, final = list(engine.stream(analysis.text, analysis, EVIDENCE))
    assert "".join(deltas) == final.content == engine.generate(analysis.text, analysis, EVIDENCE).content
    assert deltas == answer_deltas(final) and not final.refused
    _resolves(final)


def test_make_engine_kinds():
    from medgraph.config.llm import ExtractiveEngineConfig, VLLMEngineConfig
    from medgraph.llm.base import ModelUnavailable

    assert make_engine(ExtractiveEngineConfig(), AnswerConfig()).kind == "extractive"
    gguf = make_engine(LlamaCppEngineConfig(kind="llamacpp", model_path="/nope.gguf"), AnswerConfig())
    assert gguf.kind == "llamacpp" and gguf.is_sleeping()  # nothing is loaded before the first wake
    vllm = VLLMEngineConfig(kind="vllm", model_id="m", model_source="/m")
    with pytest.raises(ModelUnavailable, match="ray.serve.llm"):
        make_engine(vllm, AnswerConfig())
    assert make_engine(vllm, AnswerConfig(), model=ScriptedModel("x")).kind == "vllm"


def test_missing_gguf_file_is_a_clear_unavailable_error(tmp_path):
    require_module("llama_cpp", "MEDGRAPH_REQUIRE_LLM", "llama-cpp-python not installed (extra 'llm')")
    from medgraph.llm.base import ModelUnavailable

    engine = make_engine(LlamaCppEngineConfig(kind="llamacpp", model_path=str(tmp_path / "none.gguf")), AnswerConfig())
    with pytest.raises(ModelUnavailable, match="not found"):
        engine.wake()


def test_chat_params_default_to_deterministic_decoding():
    assert ChatParams().temperature == 0.0 and ChatParams().seed == 0
