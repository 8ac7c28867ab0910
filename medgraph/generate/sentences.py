"""Which evidence sentences answer the question: the extractive composer's sentence scores.

Input: the question's ``QueryAnalysis`` and the reranked evidence (chunks loaded, ``relevance``
set). Output: ``ScoredSentence`` records, one per candidate sentence, with its features and score
``Σ weight[f] · f`` (weights: ``answer.sentence_weights``):

- ``relevance``: the passage's calibrated relevance (the reranker's; the same for its sentences).
- ``lexical``: the IDF-weighted share of the question's terms found in the sentence, the best over
  the question and its translations (``QueryAnalysis.translations``). IDF is taken over the
  candidate sentences, so a question term that no sentence has ("side effects") weighs most and
  a sentence that only repeats the common terms ("metformin") scores low. For a version of the
  question in another language than the sentence, or a translation, only the terms that occur in
  some candidate sentence count (a translation's untranslated words cannot match), and a
  translation's share is scaled by the share of the question it translates (its linked mentions'
  letters): "门诊中的感染如何预防" translated to "Infection" matches much less than it seems.
- ``entity``: the share of the question's MeSH entities named in the sentence (any of their names
  in ``QueryAnalysis.entity_names``, or the question's own words for them).
- ``type``: 1 when the question asks for a kind of answer (adverse effects, dosage, risk,
  procedure, timing, population, or a yes / no claim; the cue words of every registered language
  pack, ``AnswerStrings.question_kinds``) and the sentence has a cue of that kind
  (``answer_kinds``) (a claim's: conclusion cues such as "suggest", "associated with", "no
  difference").
- ``role``: +1 for findings, conclusions and recommendations, −1 for aims, background and
  methods: the section label (RESULTS / CONCLUSIONS of structured abstracts, Ergebnisse, 结论 ...),
  then cue phrases of the sentence ("To evaluate ...", "We aimed ...", "... suggest ..."); the
  packs' ``finding_sections``, ``aim_sections``, ``aim_sentences`` and ``finding_sentences``.
- ``dense``: the question–sentence similarity of the dense embedder (its ``dense_feature`` scale),
  when the composer has an embedder (``answer.sentence_dense``): for sentences in another
  language than the question (``cross_lingual``; term overlap cannot see a German question's
  match in an English sentence) or all (``all``), from the top ``answer.dense_passages``
  passages, at most ``answer.dense_max_sentences`` in passage order. Costs one embedding per
  sentence (~30 ms each with e5 on one CPU thread).

Sentences lose a trailing list marker left by the splitter ("... care. f."); a list's lead-in
("... include:") is no candidate. A sentence is a candidate when it has at least
``MIN_SENTENCE_TOKENS`` tokens, is no question (``is_question``: a record's own question, a
"What is ...?" heading) and no reference
list entry (``is_reference``: a References / Literatur / 参考文献 section, or citation marks such
as "2014;42(1):12-6", "et al.", a URL) and shares a term or an entity with the question, has a
dense score, or states an aspect the question asks (``medgraph.generate.aspects``: "intolerance"
answers "side effects" without the words).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from medgraph import lang
from medgraph.config.models import DEFAULT_SENTENCE_WEIGHTS
from medgraph.embed.lexical import tokenize
from medgraph.generate.aspects import addresses, asked_aspects, name_pattern
from medgraph.ingest.text import count_tokens, split_sentences
from medgraph.lang import LanguagePack
from medgraph.retrieve.types import Candidate, QueryAnalysis

MIN_SENTENCE_TOKENS = 5
FEATURES = tuple(DEFAULT_SENTENCE_WEIGHTS)


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


KINDS = ("adverse", "dosage", "risk", "procedure", "timing", "claim", "population")  # kinds of answer asked for
# sentence cues of a kind of answer in no particular language (each pack adds its words)
_NEUTRAL_ANSWER_CUES = {"dosage": r"\d\s?(?:mg|g|µg|mcg|ml|l|iu|units?|%|kcal)\b"}
# bibliography marks in no particular language: "2014;42(1):12-6", "et al.", a URL, a DOI, an e-mail address
_NEUTRAL_CITATION = (r"\b(?:19|20)\d\d\s*;\s*\d+\s*(?:\(\d+\))?\s*:\s*\d+|\bet al\.|https?://|www\.|\bdoi\s*:"
                     r"|[\w.]+@[\w-]+\.\w")


def _either(fragments: Iterable[str]) -> re.Pattern[str]:
    """One case-insensitive pattern matching any of ``fragments``; one that never matches when none."""
    kept = [f for f in fragments if f]
    return _rx("|".join(kept) if kept else "(?!)")


@dataclass(frozen=True)
class _Cues:
    """The cue patterns of every registered pack, joined (``AnswerStrings``)."""

    questions: dict[str, re.Pattern[str]]  # kind -> question cues
    answers: dict[str, re.Pattern[str]]  # kind -> sentence cues
    finding_section: re.Pattern[str]
    aim_section: re.Pattern[str]
    aim_sentence: re.Pattern[str]
    finding_sentence: re.Pattern[str]
    reference_section: re.Pattern[str]
    citation: re.Pattern[str]


@lru_cache(maxsize=8)
def _cues(packs: tuple[LanguagePack, ...]) -> _Cues:
    answers = [p.answer for p in packs]
    headings = "|".join(a.reference_sections for a in answers if a.reference_sections) or "(?!)"
    return _Cues(
        questions={k: _either(a.question_kinds.get(k, "") for a in answers) for k in KINDS},
        answers={k: _either([_NEUTRAL_ANSWER_CUES.get(k, ""), *(a.answer_kinds.get(k, "") for a in answers)])
                 for k in KINDS},
        finding_section=_either(a.finding_sections for a in answers),
        aim_section=_either(a.aim_sections for a in answers),
        aim_sentence=_either(a.aim_sentences for a in answers),
        finding_sentence=_either(a.finding_sentences for a in answers),
        # a heading, after an optional section number ("7.", "2.1 "), starts with one of them
        reference_section=_rx(rf"^\W*(?:\d+(?:\.\d+)*\.?\s*)?(?:{headings})\b"),
        citation=_either([_NEUTRAL_CITATION, *(a.citation_marks for a in answers)]),
    )


# the next list item's marker left at a sentence's end by the splitter: "... include: a." / "... care. f."
_TRAILING_MARKER = re.compile(r"(?<=[.:;])\s+(?:[a-zA-Z]|[ivx]{1,4}|\d{1,2})[.)]$")


def clean_sentence(sentence: str) -> str | None:
    """The sentence without a trailing list marker; None for a list's lead-in ("... include:"),
    which says nothing without its items."""
    text = _TRAILING_MARKER.sub("", sentence.strip())
    return None if text.endswith((":", "：")) else text


def is_question(sentence: str) -> bool:
    """A sentence that asks (a record's question, a heading such as "What is ...?"): it states
    nothing, so it is never quoted as an answer."""
    return sentence.rstrip().endswith(("?", "？"))


def is_reference(sentence: str, section_path: Sequence[str]) -> bool:
    """A bibliography entry or front matter (by its section: References, Acknowledgements, Funding
    ...; or by citation marks such as "2014;42(1):12-6", "et al.", a URL, an e-mail address):
    never quoted as an answer."""
    cues = _cues(lang.packs())
    return any(cues.reference_section.search(p) for p in section_path) or cues.citation.search(sentence) is not None


def question_types(text: str) -> frozenset[str]:
    """The kinds of answer a question asks for (may be several, or none)."""
    return frozenset(kind for kind, cue in _cues(lang.packs()).questions.items() if cue.search(text))


def sentence_role(sentence: str, section_path: Sequence[str]) -> int:
    """+1 finding / conclusion / recommendation, −1 aim / background / method, 0 unknown."""
    cues = _cues(lang.packs())
    if cues.aim_sentence.search(sentence):
        return -1
    section = section_path[-1] if section_path else ""
    if cues.finding_section.search(section):
        return 1
    if cues.aim_section.search(section):
        return -1
    return 1 if cues.finding_sentence.search(sentence) else 0


@dataclass(frozen=True)
class ScoredSentence:
    score: float
    rank: int  # the evidence passage's rank
    position: int  # the sentence's position in its passage
    sentence: str
    language: str
    cand: Candidate
    features: dict[str, float] = field(default_factory=dict)
    entities: tuple[str, ...] = ()  # the question's MeSH IDs the sentence names


def _linked_share(analysis: QueryAnalysis) -> float:
    """The share of the question's letters inside linked mentions (what a translation translates)."""
    letters = sum(ch.isalnum() for ch in analysis.text)
    linked = sum(ch.isalnum() for m in analysis.mentions if m.mesh_id for ch in m.surface)
    return min(1.0, linked / letters) if letters else 0.0


def _idf(df: int, n: int) -> float:
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


# (question, sentences) -> each sentence's dense similarity to the question (dense_feature scale)
DenseScorer = Callable[[str, list[str]], list[float]]


def score_sentences(analysis: QueryAnalysis, evidence: Sequence[Candidate], weights: Mapping[str, float],
                    dense: DenseScorer | None = None, dense_mode: str = "cross_lingual",
                    dense_passages: int = 5, dense_max_sentences: int = 8) -> list[ScoredSentence]:
    """Every candidate sentence of ``evidence`` (chunks loaded), scored for the question."""
    pieces: list[tuple[int, int, str, Candidate, list[str]]] = []
    for rank, cand in enumerate(evidence):
        if cand.chunk is None:
            continue
        for pos, raw in enumerate(split_sentences(cand.chunk.text)):
            sentence = clean_sentence(raw)
            if sentence is None or count_tokens(sentence) < MIN_SENTENCE_TOKENS or is_question(sentence):
                continue
            if not is_reference(sentence, cand.chunk.section_path):
                pieces.append((rank, pos, sentence, cand, tokenize(sentence, language=cand.chunk.language)))
    if not pieces:
        return []
    n = len(pieces)
    df = Counter(t for *_, terms in pieces for t in set(terms))
    versions = [(analysis.language, set(tokenize(analysis.text, language=analysis.language)), 1.0)]
    linked = _linked_share(analysis)  # a translation's matches count for the share of the question it translates
    versions += [(code, set(tokenize(text, language=code)), linked) for code, text in analysis.translations]
    patterns = {mesh_id: [p for name in analysis.names_of(mesh_id) if (p := name_pattern(name))]
                for mesh_id in analysis.entity_ids}
    kinds = question_types(analysis.text)
    aspects = asked_aspects(analysis.text)
    language = analysis.language
    answer_cues = _cues(lang.packs()).answers
    dense_scores: dict[tuple[int, int], float] = {}
    if dense is not None and dense_mode != "off":
        wanted = [(rank, pos, sentence) for rank, pos, sentence, cand, _ in pieces if rank < dense_passages
                  and (dense_mode == "all" or (cand.chunk is not None and cand.chunk.language != language))]
        wanted = wanted[:dense_max_sentences]
        if wanted:
            scores = dense(analysis.text, [s for *_, s in wanted])
            dense_scores = {(r, p): v for (r, p, _), v in zip(wanted, scores, strict=True)}
    out = []
    for rank, pos, sentence, cand, terms in pieces:
        assert cand.chunk is not None
        s_lang = cand.chunk.language
        present = set(terms)
        lexical = 0.0
        for i, (q_lang, q_terms, factor) in enumerate(versions):
            counted = q_terms if i == 0 and q_lang == s_lang else {t for t in q_terms if df[t]}
            total = sum(_idf(df[t], n) for t in counted)
            if total:
                lexical = max(lexical, factor * sum(_idf(df[t], n) for t in counted & present) / total)
        named = tuple(m for m, ps in patterns.items() if any(p.search(sentence) for p in ps))
        sim = dense_scores.get((rank, pos))
        if lexical == 0.0 and not named and sim is None and not any(addresses(sentence, a) for a in aspects):
            continue  # shares nothing with the question (a sentence stating an asked aspect may use other words)
        features = {
            "relevance": cand.relevance,
            "lexical": lexical,
            "entity": len(named) / len(patterns) if patterns else 0.0,
            "type": float(any(answer_cues[k].search(sentence) for k in kinds)),
            "role": float(sentence_role(sentence, cand.chunk.section_path)),
            "dense": sim if sim is not None else 0.0,
        }
        score = sum(weights.get(f, 0.0) * v for f, v in features.items())
        out.append(ScoredSentence(score, rank, pos, sentence, s_lang, cand, features, named))
    return out
