"""The retrieval paths: one class each, in one registry (``PATHS``).

A path is given the question (``Search``: the analysis, its query vectors, the limit, the lists
of the paths that ran before it and the fusion weights) and returns ranked candidate lists by
name: one list under its own name, or one per language (``translate:de``), which fusion weighs
as separate paths (weight ``translate:<lang>``, else ``translate``). A path with ``after = True``
runs once every other path has, and reads their lists. ``retrieval.paths`` names the paths that
run; a new path is a class here and one ``register_path`` call (``Retriever`` runs whatever the
registry holds; unlisted fusion weights are 1).

Paths:
- ``ppr``: Personalized PageRank over the entity–chunk graph seeded from the question's MeSH
  entities (only with at least ``ppr_min_entities`` seeds); each hit carries the entity path that
  reached it. ``retrieval.ppr_engine``: ``process`` (default) runs it on an in-process index
  (``medgraph.retrieve.ppr.ProcessPPR``) built from the store's incidence, for any store (Neo4j
  included), checked against the store's graph signature at most every ``ppr_refresh_s`` seconds
  and rebuilt in the background (questions meanwhile use the previous index); ``store`` calls the
  store's own ``GraphStore.ppr`` (GDS PageRank on Neo4j). A store without ``incidence`` /
  ``entity_chunk_pairs`` is always asked for ``ppr`` itself.
- ``dense`` / ``sparse``: one vector search each, fused with their own RRF weights. With
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
  search restricted to chunks in that language, one list per language (``translate:en`` ...).
  The dense path is cross-lingual by itself when the embedder is multilingual (USE, mE5).
- ``translate_dense``: the translations into the languages of ``retrieval.dense_translate``
  (English: the glossary's word-by-word translation of a German or Chinese question) searched by the
  dense path among chunks in that language, one list per language (``translate_dense:en``).
- ``translate_feedback`` (after): cross-lingual pseudo-relevance feedback: each translation's
  weighted terms expanded with terms of the top chunks of the other paths' fused list, searched
  among chunks in that language (``translate_feedback:en``).
- ``community``: for overview and cross-corpus questions (``medgraph.route.rules.wants_overview``),
  the chunks cited by the summaries of the question's communities: summary search plus membership
  of the question's entities (``medgraph.community.index.CommunitySearch``; built by
  ``jobs.build_communities``). Without a ``communities`` searcher it returns nothing.
- ``hop`` (after): the second hop of a question whose answer joins two passages (see ``HopPath``).

Every vector path takes an optional filter on the question's language (``retrieval.language_filter``);
the lexical paths searched with the question as written (``sparse``, ``feedback``) search only
passages in the question's language by default (``retrieval.lexical_own_language``): passages in
other languages are the ``translate`` paths'.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import numpy as np

from medgraph.config.models import RetrievalConfig
from medgraph.embed.base import Embedder, GlossGroups, SparseVector
from medgraph.graph.ppr import PPRHit
from medgraph.retrieve.fusion import rrf
from medgraph.retrieve.ppr import ProcessPPR
from medgraph.retrieve.types import Candidate, QueryAnalysis
from medgraph.stores.vector import VectorStore


class QueryVectors(NamedTuple):
    dense: np.ndarray | None
    sparse: SparseVector | None


class CommunityCandidates(Protocol):
    """The community path's search (``medgraph.community.index.CommunitySearch``): the chunks cited
    by the summaries of the question's communities, or none when the question is not an overview."""

    def candidates(self, analysis: QueryAnalysis, dense: np.ndarray | None, sparse: SparseVector | None,
                   limit: int) -> list[Candidate]: ...


class Searcher(Protocol):
    """What the paths search with (``medgraph.retrieve.retriever.Retriever``)."""

    cfg: RetrievalConfig
    vectors: VectorStore
    embedder: Embedder
    ppr_index: ProcessPPR | None
    communities: CommunityCandidates | None

    def ppr(self, seeds: dict[str, float], top_k: int) -> list[PPRHit]: ...

    def query_vectors(self, analysis: QueryAnalysis) -> QueryVectors: ...

    def translations(self, analysis: QueryAnalysis) -> dict[str, GlossGroups]: ...

    def expand_sparse(self, query: SparseVector, ranked_chunk_ids: list[str]) -> SparseVector: ...

    def bridge_entities(self, chunk_ids: list[str], exclude: set[str]) -> list[tuple[str, float]]: ...


@dataclass
class Search:
    """One path's question: ``vectors``: its query vectors when already embedded (else embedded on
    first use, ``qv``); ``found``: the lists of the paths that ran before it (by list name);
    ``weights``: the fusion weights for the question's language; ``translated``: the translations
    a path searched (language → text), reported with the result."""

    by: Searcher
    analysis: QueryAnalysis
    limit: int
    vectors: QueryVectors | None
    found: dict[str, list[Candidate]]
    weights: dict[str, float]
    translated: dict[str, str]

    @property
    def cfg(self) -> RetrievalConfig:
        return self.by.cfg

    @property
    def qv(self) -> QueryVectors:
        if self.vectors is None:
            self.vectors = self.by.query_vectors(self.analysis)
        return self.vectors


Lists = dict[str, list[Candidate]]


class RetrievalPath(Protocol):
    name: str
    after: bool  # runs after every other path, reading their lists

    def search(self, s: Search) -> Lists: ...


PATHS: dict[str, RetrievalPath] = {}


def register_path(path: RetrievalPath) -> RetrievalPath:
    if ":" in path.name:
        raise ValueError(f"a path name has no ':' ({path.name!r}): that separates a path's per-language lists")
    PATHS[path.name] = path
    return path


def hit(h: Any, path: str) -> Candidate:
    """A vector search hit as a candidate of ``path`` (with its chunk's language from the payload)."""
    return Candidate(h.chunk_id, h.score, {path: h.score}, language=str(h.payload.get("language") or ""))


def balanced(lists: list[list[Any]], limit: int) -> list[Any]:
    """Vector hits of one question searched in each language, merged by each hit's score minus the
    mean score of its own language's list: a multilingual model scores passages in the question's
    own language higher whatever they say (a Chinese question's cosines to Chinese passages sit
    about 0.07 above those to English ones), so a raw merge would put the question's language first;
    centred, each language's best stands out from its own background.

    A list shorter than ``limit`` is every passage its language has. Its mean is that of a whole
    small language, not of a best ``limit``: centred on it, the one German passage of an English
    corpus scored 0, level with the middle of the English best, and was among the dense hits of
    every question. Such a list is centred on the highest mean of the full lists instead: its hits
    must stand out from a well-populated language's background. (A few passages in the question's
    own language keep the model's bias for that language then; without a full list to compare
    with, each list keeps its own mean.)"""
    means = [sum(h.score for h in hits) / len(hits) if hits else 0.0 for hits in lists]
    full = [m for hits, m in zip(lists, means, strict=True) if len(hits) >= limit]
    ceiling = max(full, default=None)
    scored = []
    for hits, mean in zip(lists, means, strict=True):
        if hits and len(hits) < limit and ceiling is not None:
            mean = ceiling
        scored += [(h.score - mean, h) for h in hits]
    scored.sort(key=lambda sh: (-sh[0], sh[1].chunk_id))
    return [h for _, h in scored[:limit]]


def _language(s: Search) -> str | None:
    return s.analysis.language if s.cfg.language_filter else None


def _lexical_language(s: Search) -> str | None:
    # the question's own words match passages in its own language; other languages are the
    # translate paths' (a German question's words over English passages match only noise)
    c = s.cfg
    return s.analysis.language if c.language_filter or c.lexical_own_language else None


class _Path:
    name: str
    after: bool = False


class PprPath(_Path):
    name = "ppr"

    def search(self, s: Search) -> Lists:
        if len(s.analysis.seeds) < max(s.cfg.ppr_min_entities, 1):  # the question's entities (+ interests)
            return {self.name: []}
        hits = s.by.ppr(s.analysis.seeds, top_k=s.limit)
        return {self.name: [Candidate(h.chunk_id, h.score, {"ppr": h.score}, entity_path=list(h.entity_path))
                            for h in hits]}


class VectorPath(_Path):
    name = "vector"

    def search(self, s: Search) -> Lists:
        dense, sparse = s.qv
        return {self.name: [hit(h, self.name) for h in s.by.vectors.hybrid_search(dense, sparse, s.limit, _language(s))]}


class DensePath(_Path):
    name = "dense"

    def search(self, s: Search) -> Lists:
        dense, language, c = s.qv.dense, _language(s), s.cfg
        if dense is None:
            hits = []
        elif language is None and c.dense_balance and len(c.languages) > 1:
            hits = balanced([s.by.vectors.search_dense(dense, s.limit, lang) for lang in c.languages], s.limit)
        else:
            hits = s.by.vectors.search_dense(dense, s.limit, language)
        return {self.name: [hit(h, self.name) for h in hits]}


def _sparse(s: Search, vector: SparseVector, limit: int) -> list[Any]:
    """Sparse hits of ``vector`` among the passages the question's own words may search."""
    return list(s.by.vectors.search_sparse(vector, limit, _lexical_language(s)))


class SparsePath(_Path):
    name = "sparse"

    def search(self, s: Search) -> Lists:
        sparse = s.qv.sparse
        return {self.name: [hit(h, self.name) for h in _sparse(s, sparse, s.limit)] if sparse is not None else []}


class FeedbackPath(_Path):
    name = "feedback"

    def search(self, s: Search) -> Lists:
        sparse = s.qv.sparse
        if sparse is None:
            return {self.name: []}
        first = s.found.get(SparsePath.name) or _sparse(s, sparse, s.cfg.feedback.docs)
        expanded = s.by.expand_sparse(sparse, [c.chunk_id for c in first])
        return {self.name: [hit(h, self.name) for h in _sparse(s, expanded, s.limit)]}


class TranslatePath(_Path):
    """``translate:<lang>``: a sparse search of the translated question (its gloss groups, weighted)
    among chunks in that language."""

    name = "translate"

    def search(self, s: Search) -> Lists:
        glossed = s.by.translations(s.analysis)
        s.translated.update({lang: text for lang, text in s.analysis.translations if lang in glossed})
        if not s.by.embedder.has_sparse or not glossed:
            return {}
        languages = list(glossed)
        vectors = s.by.embedder.embed_query_glossed([glossed[lang] for lang in languages], languages)
        out = {}
        for language, vector in zip(languages, vectors, strict=True):
            path = f"{self.name}:{language}"
            out[path] = [hit(h, path) for h in s.by.vectors.search_sparse(vector, s.limit, language)]
        return out


class TranslateDensePath(_Path):
    """``translate_dense:<lang>``: a dense search of the question's translation into ``lang``
    (``retrieval.dense_translate``) among chunks in that language: the model reads the dictionary's
    English better than it matches the Chinese or German question to English text."""

    name = "translate_dense"

    def search(self, s: Search) -> Lists:
        c, a = s.cfg, s.analysis
        wanted = [(lang, text) for lang, text in a.translations
                  if lang in c.dense_translate and lang in c.languages and lang != a.language]
        if not s.by.embedder.has_dense or not wanted:
            return {}
        vectors = s.by.embedder.embed_query_dense([text for _, text in wanted])
        out = {}
        for (language, _), vector in zip(wanted, vectors, strict=True):
            path = f"{self.name}:{language}"
            out[path] = [hit(h, path) for h in s.by.vectors.search_dense(vector, s.limit, language)]
        return out


class TranslateFeedbackPath(_Path):
    """``translate_feedback:<lang>``: cross-lingual pseudo-relevance feedback: the translation's
    weighted terms plus ``feedback.terms`` terms of the top ``feedback.docs`` chunks in that language
    of the other paths' fused list, searched among chunks in that language. The first lists find the
    passage in any language (the dense path reads the question as written); its own words then
    search the lexical index, as a question in the corpus's language would."""

    name = "translate_feedback"
    after = True

    def search(self, s: Search) -> Lists:
        glossed = s.by.translations(s.analysis)
        first = {p: hits for p, hits in s.found.items() if not p.startswith(self.name)}
        if not s.by.embedder.has_sparse or not glossed or not first:
            return {}
        fused = rrf(first, s.cfg.rrf_k, s.weights)
        languages = list(glossed)
        vectors = s.by.embedder.embed_query_glossed([glossed[lang] for lang in languages], languages)
        out = {}
        for language, vector in zip(languages, vectors, strict=True):
            top = [c.chunk_id for c in fused if c.language == language][: s.cfg.feedback.docs]
            if not top:
                continue
            path = f"{self.name}:{language}"
            hits = s.by.vectors.search_sparse(s.by.expand_sparse(vector, top), s.limit, language)
            out[path] = [hit(h, path) for h in hits]
        return out


class CommunityPath(_Path):
    """The chunks cited by the summaries of the question's communities (overview questions)."""

    name = "community"

    def search(self, s: Search) -> Lists:
        if s.by.communities is None:
            return {self.name: []}
        dense, sparse = s.qv
        return {self.name: list(s.by.communities.candidates(s.analysis, dense, sparse, s.limit))}


class HopPath(_Path):
    """The second hop of a question whose answer joins two passages: the entities of the first
    hop's best ``hop.passages`` chunks (the other paths' fused list) that the question does not name
    and that at most ``hop.max_chunks`` chunks mention seed PPR, each weighted by its passage's rank
    over its chunk count (a rare entity is a likelier bridge); the chunks it reaches, those passages
    left out, are the list. In-process PPR engine only."""

    name = "hop"
    after = True

    def search(self, s: Search) -> Lists:
        first = {p: hits for p, hits in s.found.items() if p != self.name}
        index = s.by.ppr_index
        if index is None or not first:
            return {self.name: []}
        top = [c.chunk_id for c in rrf(first, s.cfg.rrf_k, s.weights)[: s.cfg.hop.passages]]
        seeds = dict(s.by.bridge_entities(top, set(s.analysis.seeds)))
        if not seeds:
            return {self.name: []}
        hits = index.query(seeds, damping=s.cfg.damping, top_k=s.limit + len(top))
        return {self.name: [Candidate(h.chunk_id, h.score, {"hop": h.score}, entity_path=list(h.entity_path))
                            for h in hits if h.chunk_id not in top][: s.limit]}


for _path in (PprPath(), VectorPath(), DensePath(), SparsePath(), FeedbackPath(), TranslatePath(),
              TranslateDensePath(), TranslateFeedbackPath(), CommunityPath(), HopPath()):
    register_path(_path)
