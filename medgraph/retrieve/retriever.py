"""The retriever: graph (PPR) and hybrid vector paths, fused by RRF, with rerank features.

Input: a ``QueryAnalysis``. Output: ``RetrievalResult`` — fused candidates (chunks loaded,
``features`` filled for the reranker), each path's own ranked list, and the paths used.

Paths:
- ``ppr``: Personalized PageRank over the entity–chunk graph seeded from the question's MeSH
  entities (only with at least ``ppr_min_entities`` seeds); each hit carries the entity path that
  reached it. ``retrieval.ppr_engine``: ``process`` (default) runs it on an in-process index
  (``medgraph.retrieve.ppr.ProcessPPR``) built from the store's incidence, for any store (Neo4j
  included), checked against the store's graph signature at most every ``ppr_refresh_s`` seconds
  and rebuilt in the background (questions meanwhile use the previous index); ``store`` calls the
  store's own ``GraphStore.ppr`` (GDS PageRank on Neo4j). A store without ``incidence`` /
  ``entity_chunk_pairs`` is always asked for ``ppr`` itself.
- ``dense`` / ``sparse``: one vector search each, fused here with their own RRF weights. With
  ``retrieval.dense_balance`` (default), the dense search runs once per corpus language and the lists
  are merged by each score minus its language's mean (``balanced``): the multilingual model's cosines
  depend on the language pair, not only on what a passage says.
- ``feedback``: the sparse search again with pseudo-relevance feedback (RM3-style): the mean of
  the stored sparse vectors of the top ``feedback.docs`` sparse hits gives ``feedback.terms``
  expansion terms, added with weights scaled to at most ``feedback.weight`` (query terms weigh 1;
  a store with an IDF modifier applies IDF to both). It lifts recall on topical questions and can
  hurt on known-item ones, so it is a path of its own that RRF weighs against the plain sparse one.
- ``vector``: dense + sparse fused inside the vector store (Qdrant ``prefetch`` + RRF, equal
  weights): one call.
- ``translate``: cross-lingual lexical search. The question is translated into each corpus
  language other than its own by ontology term substitution during query analysis
  (``QueryAnalysis.translations``: linked mentions replaced by their MeSH entity's names in
  that language); each translation into a language of ``retrieval.languages`` gets a sparse
  search restricted to chunks in that language; each language is a list of its own (``translate:en`` ...) with ``candidates``
  results (its quota), fused by RRF like any path (weight ``translate:<lang>`` or ``translate``).
  The dense path is cross-lingual by itself when the embedder is multilingual (USE, mE5).
- ``translate_dense``: the translations into the languages of ``retrieval.dense_translate``
  (English: the glossary's word-by-word translation of a German or Chinese question) searched by the
  dense path among chunks in that language, one list per language (``translate_dense:en``).
- ``translate_feedback``: cross-lingual pseudo-relevance feedback, after every other path: each
  translation's weighted terms expanded with terms of the top chunks of the other paths' fused list,
  searched among chunks in that language (``translate_feedback:en``).
- ``community``: for overview and cross-corpus questions (``medgraph.route.rules.wants_overview``),
  the chunks cited by the summaries of the question's communities: summary search plus membership
  of the question's entities (``medgraph.community.index.CommunitySearch``; built by
  ``jobs.build_communities``). Without a ``communities`` searcher it returns nothing.
Every vector path takes an optional filter on the question's language (``retrieval.language_filter``);
the lexical paths searched with the question as written (``sparse``, ``feedback``) search only passages
in the question's language by default (``retrieval.lexical_own_language``): passages in other languages
are the ``translate`` paths'. The fusion weights are
``retrieval.weights`` times the factors of ``retrieval.language_weights`` for the question's
language (e.g. German questions over an English corpus: the untranslated sparse searches weigh less).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from medgraph.config.models import RetrievalConfig
from medgraph.embed.base import Embedder, GlossGroups, SparseVector, dense_feature
from medgraph.embed.lexical import tokenize
from medgraph.graph.ppr import PPRHit
from medgraph.retrieve.fusion import language_weights, rrf
from medgraph.retrieve.ppr import ProcessPPR
from medgraph.retrieve.types import Candidate, QueryAnalysis

log = logging.getLogger(__name__)


class QueryVectors(NamedTuple):
    dense: np.ndarray | None
    sparse: SparseVector | None


@dataclass
class RetrievalResult:
    analysis: QueryAnalysis
    candidates: list[Candidate]
    per_path: dict[str, list[Candidate]] = field(default_factory=dict)
    paths_used: list[str] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    translations: dict[str, str] = field(default_factory=dict)  # language -> translated question


class Retriever:
    def __init__(self, cfg: RetrievalConfig, graph: Any, vectors: Any, embedder: Embedder,
                 communities: Any = None) -> None:
        self.cfg = cfg
        self.graph = graph
        self.vectors = vectors
        self.embedder = embedder
        self.communities = communities  # medgraph.community.index.CommunitySearch, for the community path
        self.ppr_index: ProcessPPR | None = None  # the in-process PPR index (ppr_engine: process)
        if cfg.ppr_engine == "process" and _has_incidence(graph):
            self.ppr_index = ProcessPPR(graph, poll_s=cfg.ppr_refresh_s)

    # --- paths ------------------------------------------------------------------------------

    def warm_up(self) -> None:
        """Load the embedder's weights and build the graph index now, not on the first question."""
        self.query_vectors(QueryAnalysis("warm-up", "en"))
        self.ppr({"warm-up": 1.0}, top_k=1)

    def refresh(self, wait: bool = True) -> None:
        """See data written since the graph index was built (after a live ingest): the graph store
        drops its cached incidence / PPR index (``refresh()`` where it has one; Neo4j re-projects
        by itself when the graph changed) and the index is rebuilt now, not on the next question;
        the in-process index is rebuilt in the background and swapped in, ``wait``: returns once
        it is served (questions meanwhile are answered from the previous one). The vector store's
        local index rebuilds after writes by itself."""
        refresh = getattr(self.graph, "refresh", None)
        if callable(refresh):
            refresh()
        if self.ppr_index is not None:
            self.ppr_index.refresh(wait=wait)
        else:
            self.graph.ppr({"warm-up": 1.0}, damping=self.cfg.damping, top_k=1)

    def ppr(self, seeds: dict[str, float], top_k: int) -> list[PPRHit]:
        """Top-``top_k`` chunks by PPR from the weighted seeds, on the configured engine."""
        if self.ppr_index is not None:
            if self.cfg.ppr_specificity and seeds:
                counts = self.ppr_index.chunk_counts(list(seeds))
                seeds = {m: w * max(counts[m], 1) ** -self.cfg.ppr_specificity for m, w in seeds.items()}
            return self.ppr_index.query(seeds, damping=self.cfg.damping, top_k=top_k)
        hits: list[PPRHit] = self.graph.ppr(seeds, damping=self.cfg.damping, top_k=top_k)
        return hits

    def _ppr_path(self, analysis: QueryAnalysis, limit: int) -> list[Candidate]:
        if len(analysis.seeds) < max(self.cfg.ppr_min_entities, 1):  # the question's entities (+ interests)
            return []
        hits = self.ppr(analysis.seeds, top_k=limit)
        return [Candidate(h.chunk_id, h.score, {"ppr": h.score}, entity_path=list(h.entity_path)) for h in hits]

    def query_vectors(self, analysis: QueryAnalysis) -> QueryVectors:
        e = self.embedder
        return QueryVectors(
            e.embed_query_dense([analysis.text])[0] if e.has_dense else None,
            e.embed_query_sparse([analysis.text], [analysis.language])[0] if e.has_sparse else None,
        )

    def search_path(
        self,
        path: str,
        analysis: QueryAnalysis,
        limit: int,
        qv: QueryVectors | None = None,
        done: dict[str, list[Candidate]] | None = None,
    ) -> list[Candidate]:
        """One path's ranked candidates: ``ppr``, ``vector``, ``dense``, ``sparse``, ``feedback`` or ``translate``.

        ``done``: lists already searched for this question (``feedback`` reuses ``sparse``).
        """
        if path == "ppr":
            return self._ppr_path(analysis, limit)
        if path == "translate":  # the per-language lists as one (retrieve() fuses them as separate paths)
            return rrf(self.translated_paths(self.translations(analysis), limit), self.cfg.rrf_k)[:limit]
        if path == "translate_dense":
            return rrf(self.dense_translated_paths(analysis, limit), self.cfg.rrf_k)[:limit]
        if path == "translate_feedback":
            found = {p: hits for p, hits in (done or {}).items() if not p.startswith("translate_feedback")}
            return rrf(self.feedback_translated_paths(analysis, found, limit), self.cfg.rrf_k)[:limit]
        if path == "community":
            return self._community_path(analysis, limit, qv)
        if path == "hop":
            found = {p: hits for p, hits in (done or {}).items() if p != "hop"}
            return self.hop_path(analysis, found, limit)
        language = analysis.language if self.cfg.language_filter else None
        # the question's own words match passages in its own language; other languages are the
        # translate paths' (a German question's words over English passages match only noise)
        lexical = analysis.language if self.cfg.language_filter or self.cfg.lexical_own_language else None
        dense, sparse = qv or self.query_vectors(analysis)
        if path == "vector":
            hits = self.vectors.hybrid_search(dense, sparse, limit, language)
        elif path == "dense":
            if dense is None:
                hits = []
            elif language is None and self.cfg.dense_balance and len(self.cfg.languages) > 1:
                hits = balanced([self.vectors.search_dense(dense, limit, lang) for lang in self.cfg.languages], limit)
            else:
                hits = self.vectors.search_dense(dense, limit, language)
        elif path == "sparse":
            hits = self.vectors.search_sparse(sparse, limit, lexical) if sparse is not None else []
        elif path == "feedback":
            first = (done or {}).get("sparse") or self.search_path("sparse", analysis, self.cfg.feedback.docs, qv)
            expanded = self.expand_sparse(sparse, [c.chunk_id for c in first]) if sparse is not None else None
            hits = self.vectors.search_sparse(expanded, limit, lexical) if expanded is not None else []
        else:
            raise ValueError(f"unknown retrieval path {path!r}")
        return [_hit(h, path) for h in hits]

    def hop_path(self, analysis: QueryAnalysis, first: dict[str, list[Candidate]], limit: int,
                 weights: dict[str, float] | None = None) -> list[Candidate]:
        """The second hop of a question whose answer joins two passages: the entities of the first
        hop's best ``hop.passages`` chunks (the other paths' fused list, ``first``) that the question
        does not name and that at most ``hop.max_chunks`` chunks mention seed PPR, each weighted by
        its passage's rank over its chunk count (a rare entity is a likelier bridge); the chunks it
        reaches, those passages left out, are the list. In-process PPR engine only."""
        if self.ppr_index is None or not first:
            return []
        weights = weights or language_weights(self.cfg.weights, self.cfg.language_weights, analysis.language)
        top = [c.chunk_id for c in rrf(first, self.cfg.rrf_k, weights)[: self.cfg.hop.passages]]
        seeds = dict(self.bridge_entities(top, set(analysis.seeds)))
        if not seeds:
            return []
        hits = self.ppr_index.query(seeds, damping=self.cfg.damping, top_k=limit + len(top))
        return [Candidate(h.chunk_id, h.score, {"hop": h.score}, entity_path=list(h.entity_path))
                for h in hits if h.chunk_id not in top][:limit]

    def bridge_entities(self, chunk_ids: list[str], exclude: set[str]) -> list[tuple[str, float]]:
        """The entities that may join ranked passages ``chunk_ids`` to a second passage, best first:
        those the passages mention, not in ``exclude`` (the question's own), each weighted by
        its passage's rank over how many chunks mention it (a rare entity is a likelier bridge;
        more than ``hop.max_chunks`` is too common to be one). Without the in-process index the
        chunk counts are unknown and the rank alone weighs."""
        votes: dict[str, float] = {}
        mentions = self.graph.chunk_entities(chunk_ids)
        for rank, chunk_id in enumerate(chunk_ids, 1):
            for mesh_id in mentions.get(chunk_id, set()) - exclude:
                votes[mesh_id] = votes.get(mesh_id, 0.0) + 1.0 / rank
        if self.ppr_index is None:
            weights = votes
        else:
            counts = self.ppr_index.chunk_counts(list(votes))
            weights = {m: v / counts[m] for m, v in votes.items() if 0 < counts[m] <= self.cfg.hop.max_chunks}
        return sorted(weights.items(), key=lambda mw: (-mw[1], mw[0]))

    def _community_path(self, analysis: QueryAnalysis, limit: int, qv: QueryVectors | None) -> list[Candidate]:
        """The chunks cited by the summaries of the question's communities (overview questions)."""
        if self.communities is None:
            return []
        dense, sparse = qv or self.query_vectors(analysis)
        return list(self.communities.candidates(analysis, dense, sparse, limit))

    def expand_sparse(self, query: SparseVector, ranked_chunk_ids: list[str]) -> SparseVector:
        """``query`` plus feedback terms from the stored sparse vectors of the top ranked chunks."""
        fb = self.cfg.feedback
        stored = self.vectors.get_sparse(ranked_chunk_ids[: fb.docs])
        if not stored or not len(query):
            return query
        weights: dict[int, float] = {}
        for vec in stored.values():
            for term, value in zip(vec.indices.tolist(), vec.values.tolist(), strict=True):
                weights[term] = weights.get(term, 0.0) + value / len(stored)
        for term in query.indices.tolist():
            weights.pop(term, None)
        top = sorted(weights.items(), key=lambda tv: (-tv[1], tv[0]))[: fb.terms]
        if not top or top[0][1] <= 0:
            return query
        scale = fb.weight / top[0][1]
        terms = query.indices.tolist() + [t for t, _ in top]
        values = query.values.tolist() + [v * scale for _, v in top]
        return SparseVector.from_arrays(terms, values)

    # --- the whole retrieval ----------------------------------------------------------------

    def retrieve(self, analysis: QueryAnalysis, limit: int | None = None) -> RetrievalResult:
        limit = limit or self.cfg.candidates
        per_path: dict[str, list[Candidate]] = {}
        start = time.perf_counter()
        qv = self.query_vectors(analysis)
        timings = {"embed": round((time.perf_counter() - start) * 1000, 2)}
        translations: dict[str, str] = {}
        for path in self.cfg.paths:
            start = time.perf_counter()
            if path in ("translate_feedback", "hop"):  # after every other path: they read their fused list
                continue
            if path == "translate":
                glossed = self.translations(analysis)
                per_path.update(self.translated_paths(glossed, limit))
                translations = {lang: text for lang, text in analysis.translations if lang in glossed}
            elif path == "translate_dense":
                per_path.update(self.dense_translated_paths(analysis, limit))
            else:
                per_path[path] = self.search_path(path, analysis, limit, qv, per_path)
            timings[path] = round((time.perf_counter() - start) * 1000, 2)
        weights = language_weights(self.cfg.weights, self.cfg.language_weights, analysis.language)
        if "translate_feedback" in self.cfg.paths:
            start = time.perf_counter()
            per_path.update(self.feedback_translated_paths(analysis, per_path, limit, weights))
            timings["translate_feedback"] = round((time.perf_counter() - start) * 1000, 2)
        if "hop" in self.cfg.paths:  # after every other path: it reads their fused list
            start = time.perf_counter()
            per_path["hop"] = self.hop_path(analysis, per_path, limit, weights)
            timings["hop"] = round((time.perf_counter() - start) * 1000, 2)
        fused = rrf(per_path, self.cfg.rrf_k, weights)[:limit]
        start = time.perf_counter()
        self._load_and_featurise(analysis, fused, qv, list(translations.items()))
        timings["features"] = round((time.perf_counter() - start) * 1000, 2)
        used = [p for p, hits in per_path.items() if hits]
        return RetrievalResult(analysis, fused, per_path, used, timings, translations)

    def featurise(self, analysis: QueryAnalysis, cands: list[Candidate]) -> None:
        """Load the chunks and reranker features of candidates found outside ``retrieve`` (the
        agent's relational channel); ``ppr`` and ``rrf`` features are relative to this list."""
        self._load_and_featurise(analysis, cands, self.query_vectors(analysis), list(analysis.translations))

    def translations(self, analysis: QueryAnalysis) -> dict[str, GlossGroups]:
        """The analysis' translations (gloss groups) into the corpus languages of ``retrieval.languages``."""
        return {lang: analysis.glosses_in(lang) for lang, _ in analysis.translations
                if lang in self.cfg.languages and analysis.glosses_in(lang)}

    def translated_paths(self, translations: dict[str, GlossGroups], limit: int) -> dict[str, list[Candidate]]:
        """``translate:<lang>`` → a sparse search of the translated question (its gloss groups,
        weighted) among chunks in that language."""
        if not self.embedder.has_sparse or not translations:
            return {}
        languages = list(translations)
        vectors = self.embedder.embed_query_glossed([translations[lang] for lang in languages], languages)
        out = {}
        for language, vector in zip(languages, vectors, strict=True):
            path = f"translate:{language}"
            hits = self.vectors.search_sparse(vector, limit, language)
            out[path] = [_hit(h, path) for h in hits]
        return out

    def dense_translated_paths(self, analysis: QueryAnalysis, limit: int) -> dict[str, list[Candidate]]:
        """``translate_dense:<lang>`` → a dense search of the question's translation into ``lang``
        (``retrieval.dense_translate``) among chunks in that language: the model reads the dictionary's
        English better than it matches the Chinese or German question to English text."""
        wanted = [(lang, text) for lang, text in analysis.translations
                  if lang in self.cfg.dense_translate and lang in self.cfg.languages and lang != analysis.language]
        if not self.embedder.has_dense or not wanted:
            return {}
        vectors = self.embedder.embed_query_dense([text for _, text in wanted])
        out = {}
        for (language, _), vector in zip(wanted, vectors, strict=True):
            path = f"translate_dense:{language}"
            hits = self.vectors.search_dense(vector, limit, language)
            out[path] = [_hit(h, path) for h in hits]
        return out

    def feedback_translated_paths(self, analysis: QueryAnalysis, first: dict[str, list[Candidate]], limit: int,
                                  weights: dict[str, float] | None = None) -> dict[str, list[Candidate]]:
        """``translate_feedback:<lang>`` → cross-lingual pseudo-relevance feedback: the translation's
        weighted terms plus ``feedback.terms`` terms of the top ``feedback.docs`` chunks in that
        language of the other paths' fused list (``first``), searched among chunks in that language. The first lists find
        the passage in any language (the dense path reads the question as written); its own words then
        search the lexical index, as a question in the corpus's language would."""
        glossed = self.translations(analysis)
        if not self.embedder.has_sparse or not glossed or not first:
            return {}
        weights = weights or language_weights(self.cfg.weights, self.cfg.language_weights, analysis.language)
        fused = rrf(first, self.cfg.rrf_k, weights)
        languages = list(glossed)
        vectors = self.embedder.embed_query_glossed([glossed[lang] for lang in languages], languages)
        out = {}
        for language, vector in zip(languages, vectors, strict=True):
            top = [c.chunk_id for c in fused if c.language == language][: self.cfg.feedback.docs]
            if not top:
                continue
            path = f"translate_feedback:{language}"
            hits = self.vectors.search_sparse(self.expand_sparse(vector, top), limit, language)
            out[path] = [_hit(h, path) for h in hits]
        return out

    def _load_and_featurise(
        self, analysis: QueryAnalysis, cands: list[Candidate], qv: QueryVectors,
        translations: list[tuple[str, str]] | None = None,
    ) -> None:
        """Load the chunks of ``cands`` and fill their reranker features; ``translations``:
        (language, text) of the question's translations."""
        ids = [c.chunk_id for c in cands]
        chunks = {c.chunk_id: c for c in self.graph.get_chunks(ids)}
        mentions = self.graph.chunk_entities(ids)
        q_vec = qv.dense
        vectors = self.vectors.get_dense(ids) if q_vec is not None else {}
        # the question's terms, and those of its translations (a German question's evidence may be English)
        questions = [(analysis.language, analysis.text), *(translations or [])]
        term_sets = [set(tokenize(text, language=lang)) for lang, text in questions]
        # ... and its word-by-word translations: a source word counts as found when any of its glosses is
        glossed = {lang: [[set(tokenize(alt, language=lang)) for alt, _ in group] for group in groups]
                   for lang, groups in analysis.glosses}
        seeds = set(analysis.entity_ids)  # the question's own entities, not its seed bias
        best_ppr = max((c.path_scores.get("ppr", 0.0) for c in cands), default=0.0) or 1.0
        best_rrf = max((c.score for c in cands), default=0.0) or 1.0
        for cand in cands:
            cand.chunk = chunks.get(cand.chunk_id)
            parent = cand.chunk.parent_text if cand.chunk else ""
            language = cand.chunk.language if cand.chunk else None
            parent_terms = set(tokenize(parent, language=language))
            vec = vectors.get(cand.chunk_id)
            cand.features = {
                "dense": dense_feature(self.embedder, float(np.dot(q_vec, vec)))
                if q_vec is not None and vec is not None else 0.0,
                "lexical": max(_lexical_overlap(term_sets, parent_terms),
                               _gloss_coverage(glossed.get(language or "", []), parent_terms)),
                "entity": len(seeds & mentions.get(cand.chunk_id, set())) / len(seeds) if seeds else 0.0,
                "ppr": cand.path_scores.get("ppr", 0.0) / best_ppr,
                "rrf": cand.score / best_rrf,
                "cross_lingual": float(cand.chunk is not None and cand.chunk.language != analysis.language),
            }
        cands[:] = [c for c in cands if c.chunk is not None]  # a chunk deleted meanwhile is dropped


def balanced(lists: list[list[Any]], limit: int) -> list[Any]:
    """Vector hits of one question searched in each language, merged by each hit's score minus the
    mean score of its own language's list: a multilingual model scores passages in the question's
    own language higher whatever they say (a Chinese question's cosines to Chinese passages sit
    about 0.07 above those to English ones), so a raw merge would put the question's language first;
    centred, each language's best stands out from its own background."""
    scored = []
    for hits in lists:
        if hits:
            mean = sum(h.score for h in hits) / len(hits)
            scored += [(h.score - mean, h) for h in hits]
    scored.sort(key=lambda sh: (-sh[0], sh[1].chunk_id))
    return [h for _, h in scored[:limit]]


def _hit(hit: Any, path: str) -> Candidate:
    """A vector search hit as a candidate of ``path`` (with its chunk's language from the payload)."""
    return Candidate(hit.chunk_id, hit.score, {path: hit.score}, language=str(hit.payload.get("language") or ""))


def _has_incidence(graph: Any) -> bool:
    """Whether the store hands out its entity–chunk incidence (the in-process index's input)."""
    return any(callable(getattr(type(graph), name, None)) for name in ("incidence", "entity_chunk_pairs"))


def _gloss_coverage(groups: list[list[set[str]]], text_terms: set[str]) -> float:
    """The share of a translation's gloss groups (source words and entities) with an alternative all
    of whose terms are in the text."""
    groups = [g for g in groups if any(g)]
    if not groups:
        return 0.0
    return sum(any(alt and alt <= text_terms for alt in group) for group in groups) / len(groups)


def _lexical_overlap(term_sets: list[set[str]], text_terms: set[str]) -> float:
    """The best share, over the question and its translations, of its terms found in the text."""
    return max((len(q & text_terms) / len(q) for q in term_sets if q), default=0.0)
