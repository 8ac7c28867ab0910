"""Extractive, citation-grounded composer (the offline generation tier).

Input: the question, its analysis and reranked evidence. Output: an ``Answer`` made of sentences
quoted verbatim from the evidence chunks, each followed by ``[N]`` where citation N is the chunk
that contains it. Quoting keeps each sentence's language; the answer speaks the asker's language
only in its lead line.

1. Evidence below ``answer.min_relevance`` (the reranker's calibrated relevance) is not used.
2. Every sentence of the rest (in the asker's language or English, see 5) is scored for the
   question (``medgraph.generate.sentences``: passage relevance, IDF-weighted term overlap, the
   question's entities, the kind of answer asked for, finding vs aim, and with an embedder the
   dense question–sentence similarity; weights ``answer.sentence_weights``).
3. A question asking an aspect of an entity (adverse effects, dosage, contraindications, cost,
   duration: ``medgraph.generate.aspects``) is answered only with sentences that state something
   of that aspect, when there are any (when the evidence names the entity but not the aspect,
   the agent replies so before any engine runs).
4. Sentences below ``answer.min_sentence_score``, or below ``answer.relative_floor`` times the
   best sentence's score, are dropped; so are a document's aims and methods (role −1) when a
   finding or a neutral sentence of the same document is left (``answer.findings_first``); the
   best ones are kept, at most ``max_sentences`` and ``max_per_chunk`` per passage, in the
   order of the evidence and of the text.
5. Quotes are in the asker's language or in English, never in a third language (a Chinese
   passage is no answer for a German reader; the English or German version of the same finding
   usually exists): with nothing left, the answer is a refusal.
6. When some quoted sentence is in English and the question is not, a lead line in the asker's
   language (its pack's ``lead``) says so and names the question's entities found (their MeSH
   names in that language): "Belege aus englischsprachigen Quellen zu Diabetes Mellitus:".
"""

from __future__ import annotations

from functools import partial

from medgraph import lang
from medgraph.config.models import AnswerConfig
from medgraph.embed.base import Embedder, dense_feature
from medgraph.generate.aspects import addresses, asked_aspects
from medgraph.generate.base import Answer, Citation, disclaimer, refusal
from medgraph.generate.sentences import ScoredSentence, score_sentences
from medgraph.retrieve.types import Candidate, QueryAnalysis

DENSE_SENTENCE_CHARS = 300  # a sentence's dense feature reads at most its first 300 characters


def lead_line(language: str, quote_languages: list[str], names: list[str]) -> str:
    """One line in the asker's language (its pack's ``lead``): the quotes are in other languages, about ``names``."""
    strings = lang.get_or_pivot(language).answer
    langs = [strings.language_names.get(q, q) for q in quote_languages]
    about = strings.lead_about.format(names=strings.list_separator.join(names)) if names else ""
    return strings.lead.format(languages=strings.conjunction_and.join(langs), about=about)


class ExtractiveComposer:
    name = "extractive"

    def __init__(self, cfg: AnswerConfig, embedder: Embedder | None = None) -> None:
        """``embedder``: a dense ``Embedder`` for the sentences' ``dense`` feature (``answer.sentence_dense``;
        one without dense vectors, such as the lexical one, gives none)."""
        self.cfg = cfg
        self.embedder = embedder if embedder is not None and embedder.has_dense else None

    def _dense(self, question: str, sentences: list[str], analysis: QueryAnalysis | None = None) -> list[float]:
        """The sentences' dense feature: their passage vectors' cosine to the question's query vector,
        the one the retriever carried in ``analysis.query_dense`` where it is this question's."""
        import numpy as np

        e = self.embedder
        assert e is not None, "called only with an embedder (select)"
        carried = analysis.query_dense if analysis is not None and analysis.text == question else ()
        q = np.asarray(carried, dtype=np.float32) if len(carried) == e.dim else e.embed_query_dense([question])[0]
        cut = [s[:DENSE_SENTENCE_CHARS] for s in sentences]  # list items run long; their start says what they are
        return [dense_feature(e, float(np.dot(q, v))) for v in e.embed_dense(cut)]

    def generate(self, question: str, analysis: QueryAnalysis, evidence: list[Candidate]) -> Answer:
        usable = [c for c in evidence if c.chunk is not None and c.relevance >= self.cfg.min_relevance]
        chosen = self.select(analysis, usable)
        language = analysis.language
        if not chosen:
            return Answer(refusal(language), refused=True, language=language, model_used=self.name,
                          disclaimer=disclaimer(language))
        numbers: dict[str, int] = {}
        citations: list[Citation] = []
        parts: list[str] = []
        sentences: list[tuple[str, int]] = []
        for item in chosen:
            chunk_id = item.cand.chunk_id
            if chunk_id not in numbers:
                numbers[chunk_id] = len(numbers) + 1
                citations.append(self._citation(numbers[chunk_id], item.cand, chosen))
            parts.append(f"{item.sentence} [{numbers[chunk_id]}]")
            sentences.append((item.sentence, numbers[chunk_id]))
        lead = self._lead(analysis, chosen)
        content = " ".join([lead, *parts] if lead else parts)
        return Answer(content, citations, False, language, self.name, disclaimer(language), sentences, lead=lead)

    def select(self, analysis: QueryAnalysis, usable: list[Candidate]) -> list[ScoredSentence]:
        """The sentences that answer, in evidence then text order; [] when none should be quoted."""
        dense = partial(self._dense, analysis=analysis) if self.embedder is not None else None
        readable = [c for c in usable if c.chunk is not None and c.chunk.language in (analysis.language, lang.PIVOT)]
        scored = score_sentences(analysis, readable, self.cfg.sentence_weights, dense, self.cfg.sentence_dense,
                                 self.cfg.dense_passages, self.cfg.dense_max_sentences)
        if not scored:
            return []
        aspects = asked_aspects(analysis.text)
        if aspects:  # an aspect asked of an entity: only sentences that state something of it answer
            stating = [s for s in scored if any(addresses(s.sentence, a) for a in aspects)]
            scored = stating or scored
        best = max(s.score for s in scored)
        floor = max(self.cfg.min_sentence_score, self.cfg.relative_floor * best)
        above = [s for s in scored if s.score >= floor]
        if self.cfg.findings_first:  # a document's aims and methods only when it states nothing else
            stating = {s.cand.chunk.doc_id for s in above if s.features["role"] >= 0 and s.cand.chunk is not None}
            above = [s for s in above if s.features["role"] >= 0 or s.cand.chunk is None
                     or s.cand.chunk.doc_id not in stating]
        ranked = sorted(above, key=lambda s: (-s.score, s.rank, s.position))
        picked: list[ScoredSentence] = []
        per_chunk: dict[str, int] = {}
        for item in ranked:
            if per_chunk.get(item.cand.chunk_id, 0) >= self.cfg.max_per_chunk:
                continue
            per_chunk[item.cand.chunk_id] = per_chunk.get(item.cand.chunk_id, 0) + 1
            picked.append(item)
            if len(picked) == self.cfg.max_sentences:
                break
        return sorted(picked, key=lambda s: (s.rank, s.position))

    @staticmethod
    def _lead(analysis: QueryAnalysis, chosen: list[ScoredSentence]) -> str:
        others = list(dict.fromkeys(s.language for s in chosen if s.language != analysis.language))
        if not others:
            return ""
        found = list(dict.fromkeys(m for s in chosen for m in s.entities))
        names = [n[0] for m in found if (n := analysis.names_of(m, analysis.language))]
        return lead_line(analysis.language, others, names)

    @staticmethod
    def _citation(number: int, cand: Candidate, chosen: list[ScoredSentence]) -> Citation:
        assert cand.chunk is not None
        chunk = cand.chunk
        snippet = " ".join(s.sentence for s in chosen if s.cand.chunk_id == cand.chunk_id)
        return Citation(number, chunk.chunk_id, chunk.doc_id, chunk.title, chunk.source_id or chunk.doc_id,
                        chunk.section_path, chunk.page, snippet, round(cand.relevance, 4))
