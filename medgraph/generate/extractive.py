"""Extractive, citation-grounded composer (the offline generation tier).

Input: the question, its analysis and reranked evidence. Output: an ``Answer`` made of sentences
quoted verbatim from the evidence chunks, each followed by ``[N]`` where citation N is the chunk
that contains it. Evidence below ``min_relevance`` is not used; when nothing usable remains, or
no sentence shares a content term or entity name with the question, the answer is a plain
refusal. Sentences keep the language of their evidence (it quotes, it does not translate).
"""

from __future__ import annotations

from dataclasses import dataclass

from medgraph.config.models import AnswerConfig
from medgraph.embed.lexical import tokenize
from medgraph.generate.base import Answer, Citation, disclaimer, refusal
from medgraph.ingest.text import count_tokens, split_sentences
from medgraph.retrieve.types import Candidate, QueryAnalysis

MIN_SENTENCE_TOKENS = 5


@dataclass(frozen=True)
class _Scored:
    score: float
    rank: int  # evidence rank
    position: int  # sentence position in its chunk
    sentence: str
    cand: Candidate


class ExtractiveComposer:
    name = "extractive"

    def __init__(self, cfg: AnswerConfig) -> None:
        self.cfg = cfg

    def generate(self, question: str, analysis: QueryAnalysis, evidence: list[Candidate]) -> Answer:
        usable = [c for c in evidence if c.chunk is not None and c.relevance >= self.cfg.min_relevance]
        chosen = self._select(analysis, usable)
        lang = analysis.language
        if not chosen:
            return Answer(refusal(lang), refused=True, language=lang, model_used=self.name, disclaimer=disclaimer(lang))
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
        return Answer(" ".join(parts), citations, False, lang, self.name, disclaimer(lang), sentences)

    def _select(self, analysis: QueryAnalysis, usable: list[Candidate]) -> list[_Scored]:
        # the question's terms and those of its translations: evidence may be in another language
        terms = {t for lang, text in [(analysis.language, analysis.text), *analysis.translations]
                 for t in tokenize(text, language=lang)}
        names = {m.surface.lower() for m in analysis.mentions if m.mesh_id}
        scored: list[_Scored] = []
        for rank, cand in enumerate(usable):
            assert cand.chunk is not None
            for pos, sentence in enumerate(split_sentences(cand.chunk.text)):
                if count_tokens(sentence) < MIN_SENTENCE_TOKENS:
                    continue
                overlap = len(terms & set(tokenize(sentence, language=cand.chunk.language))) / len(terms) if terms else 0.0
                entity = any(n in sentence.lower() for n in names)
                if overlap == 0.0 and not entity:
                    continue
                scored.append(_Scored(cand.relevance * (0.2 + overlap + 0.3 * entity), rank, pos, sentence, cand))
        best = sorted(scored, key=lambda s: (-s.score, s.rank, s.position))
        picked: list[_Scored] = []
        per_chunk: dict[str, int] = {}
        for item in best:
            if per_chunk.get(item.cand.chunk_id, 0) >= self.cfg.max_per_chunk:
                continue
            per_chunk[item.cand.chunk_id] = per_chunk.get(item.cand.chunk_id, 0) + 1
            picked.append(item)
            if len(picked) == self.cfg.max_sentences:
                break
        return sorted(picked, key=lambda s: (s.rank, s.position))

    @staticmethod
    def _citation(number: int, cand: Candidate, chosen: list[_Scored]) -> Citation:
        assert cand.chunk is not None
        chunk = cand.chunk
        snippet = " ".join(s.sentence for s in chosen if s.cand.chunk_id == cand.chunk_id)
        return Citation(number, chunk.chunk_id, chunk.doc_id, chunk.title, chunk.source_id or chunk.doc_id,
                        chunk.section_path, chunk.page, snippet, round(cand.relevance, 4))
