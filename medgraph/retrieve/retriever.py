"""The retriever: graph (PPR) and hybrid vector paths, fused by RRF, with rerank features.

Input: a ``QueryAnalysis``. Output: ``RetrievalResult`` — fused candidates (chunks loaded,
``features`` filled for the reranker), each path's own ranked list, and the paths used.

The paths (``retrieval.paths``) are the classes of ``medgraph.retrieve.paths``, one each, in its
registry; each returns ranked lists by name (one, or one per language), and the paths marked
``after`` (``translate_feedback``, ``hop``) run last, in the order of ``retrieval.paths``, reading the
lists before them. The fusion weights are ``retrieval.weights`` (unlisted: 1) times the factors of
``retrieval.language_weights`` for the question's language (e.g. German questions over an English
corpus: the untranslated sparse searches weigh less).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from medgraph.config.models import RetrievalConfig
from medgraph.embed.base import Embedder, GlossGroups, SparseVector, dense_feature
from medgraph.embed.lexical import tokenize
from medgraph.graph.ppr import PPRHit
from medgraph.lang import PIVOT
from medgraph.lru import Lru
from medgraph.observe import metrics, tracing
from medgraph.retrieve.fusion import language_weights, path_weight, rrf
from medgraph.retrieve.paths import PATHS, CommunityCandidates, QueryVectors, Search
from medgraph.retrieve.ppr import ProcessPPR
from medgraph.retrieve.served_graph import ServedGraph
from medgraph.retrieve.types import Candidate, QueryAnalysis
from medgraph.schemas import Entity
from medgraph.stores.graph import GraphReader
from medgraph.stores.vector import VectorStore

log = logging.getLogger(__name__)

__all__ = ["QueryVectors", "RetrievalResult", "Retriever"]


QUERY_VECTORS_KEPT = 256  # the latest questions' query vectors, per retriever
PARENT_TERMS_KEPT = 4096  # the index terms of the latest passages read for the reranker's features
BRIDGE_KINDS_READ = 10  # bridge candidates whose category is looked up when the question names one
LANGUAGE_COUNTS_S = 30.0  # how long the vector store's passages per language are kept (fusion weights)
FOLLOW_TIMEOUT_S = 30.0  # longest follow_store waits for a rebuild (a 10k-document graph builds in seconds)


@dataclass
class RetrievalResult:
    analysis: QueryAnalysis  # as retrieved, with its ``query_dense`` vector
    candidates: list[Candidate]
    per_path: dict[str, list[Candidate]] = field(default_factory=dict)
    paths_used: list[str] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    translations: dict[str, str] = field(default_factory=dict)  # language -> translated question


class Retriever:
    def __init__(self, cfg: RetrievalConfig, graph: GraphReader, vectors: VectorStore, embedder: Embedder,
                 communities: CommunityCandidates | None = None) -> None:
        unknown = [p for p in cfg.paths if p not in PATHS]
        if unknown:
            raise ValueError(f"unknown retrieval paths {unknown}; known: {', '.join(PATHS)}")
        self.cfg = cfg
        self.graph = graph
        self.vectors = vectors
        self.embedder = embedder
        self.communities = communities  # medgraph.community.index.CommunitySearch, for the community path
        self.ppr_index: ProcessPPR | None = None  # the in-process PPR index (ppr_engine: process)
        # (text, language) -> its query vectors: the relational channel's featurisation and a
        # repeated hop reuse the retrieval's, rather than embed the same question again
        self._query_vectors: Lru[tuple[str, str], QueryVectors] = Lru(QUERY_VECTORS_KEPT)
        # (language, parent text) -> its index terms, for the reranker's lexical feature: the same
        # passages come back question after question, and tokenising them was a sixth of retrieval
        self._parent_terms: Lru[tuple[str | None, str], frozenset[str]] = Lru(PARENT_TERMS_KEPT)
        # passages per language in the vector store, and when they were read (``_language_counts``)
        self._counts: tuple[float, dict[str, int]] = (-math.inf, {})
        if cfg.ppr_engine == "process":
            self.ppr_index = ProcessPPR(graph, poll_s=cfg.ppr_refresh_s)
        # what the relational channel and the gap search read: co-occurrence lookups from the
        # in-process index when there is one (medgraph.retrieve.served_graph), else the store
        self.served_graph: ServedGraph | GraphReader = (
            graph if self.ppr_index is None else ServedGraph(graph, self.ppr_index))

    # --- paths ------------------------------------------------------------------------------

    def warm_up(self) -> None:
        """Load the embedder's weights, the vector store's in-process index and the graph index
        now, not on the first question."""
        self.query_vectors(QueryAnalysis("warm-up", PIVOT))
        self.vectors.warm_up()
        self.ppr({"warm-up": 1.0}, top_k=1)

    def refresh(self, wait: bool = True) -> None:
        """See data written since the graph index was built (after a live ingest): the graph store
        drops its cached incidence / PPR index (``GraphReader.refresh``; Neo4j re-projects by
        itself when the graph changed) and the index is rebuilt now, not on the next question;
        the in-process index is rebuilt in the background and swapped in, ``wait``: returns once
        it is served (questions meanwhile are answered from the previous one). The vector store's
        local index follows its writes by itself."""
        self.graph.refresh()
        if self.ppr_index is not None:
            self.ppr_index.refresh(wait=wait)
        else:
            self.graph.ppr({"warm-up": 1.0}, damping=self.cfg.damping, top_k=1)

    def follow_store(self, timeout: float | None = FOLLOW_TIMEOUT_S) -> bool:
        """Bring the in-process graph index up to the store now, not at its next poll: compare the
        store's signature and, when another writer (another replica's live ingest) changed it,
        rebuild and wait for the swap (at most ``timeout`` s). True when a newer index is served.
        For callers about to act on something missing from the graph (the gap search)."""
        if self.ppr_index is None:
            return False  # the store answers itself, always current
        before = self.ppr_index.state
        self.ppr_index.check(wait=True, timeout=timeout)
        after = self.ppr_index.state
        return after is not None and (before is None or after.generation != before.generation)

    def ppr(self, seeds: dict[str, float], top_k: int) -> list[PPRHit]:
        """Top-``top_k`` chunks by PPR from the weighted seeds, on the configured engine."""
        if self.ppr_index is not None:
            if self.cfg.ppr_specificity and seeds:
                counts = self.ppr_index.chunk_counts(list(seeds))
                seeds = {m: w * max(counts[m], 1) ** -self.cfg.ppr_specificity for m, w in seeds.items()}
            return self.ppr_index.query(seeds, damping=self.cfg.damping, top_k=top_k)
        hits: list[PPRHit] = self.graph.ppr(seeds, damping=self.cfg.damping, top_k=top_k)
        return hits

    def query_vectors(self, analysis: QueryAnalysis) -> QueryVectors:
        """The question's dense and sparse query vectors: embedded once per question (the latest
        ``QUERY_VECTORS_KEPT`` are kept; a ``query_dense`` the analysis carries is used as it is)."""
        key = (analysis.text, analysis.language)
        kept = self._query_vectors.get(key)
        if kept is not None:
            return kept
        e = self.embedder
        dense = None
        if e.has_dense:
            carried = analysis.query_dense
            dense = (np.asarray(carried, dtype=np.float32) if len(carried) == e.dim
                     else e.embed_query_dense([analysis.text])[0])
            dense.setflags(write=False)  # kept and shared: nobody may change it in place
        vectors = QueryVectors(
            dense, e.embed_query_sparse([analysis.text], [analysis.language])[0] if e.has_sparse else None
        )
        self._query_vectors.put(key, vectors)
        return vectors

    def search_lists(self, path: str, analysis: QueryAnalysis, limit: int, qv: QueryVectors | None = None,
                     done: dict[str, list[Candidate]] | None = None,
                     weights: dict[str, float] | None = None) -> dict[str, list[Candidate]]:
        """One path's ranked lists by name (``translate``: one per language). ``done``: the lists
        already searched for this question (``feedback`` reuses ``sparse``; ``hop`` and
        ``translate_feedback`` read them all); ``weights``: the fusion weights (default: the
        configured ones for the question's language)."""
        if path not in PATHS:
            raise ValueError(f"unknown retrieval path {path!r}; known: {', '.join(PATHS)}")
        weights = weights or language_weights(self.cfg.weights, self.cfg.language_weights, analysis.language)
        return PATHS[path].search(Search(self, analysis, limit, qv, dict(done or {}), weights, {}))

    def search_path(self, path: str, analysis: QueryAnalysis, limit: int, qv: QueryVectors | None = None,
                    done: dict[str, list[Candidate]] | None = None) -> list[Candidate]:
        """One path's ranked candidates as one list (a path's per-language lists fused by RRF)."""
        lists = self.search_lists(path, analysis, limit, qv, done)
        if list(lists) == [path]:
            return lists[path]
        return rrf(lists, self.cfg.rrf_k)[:limit]

    def bridge_entities(self, chunk_ids: list[str], exclude: set[str], kind: str | None = None,
                        toward: Sequence[str] = ()) -> list[tuple[str, float]]:
        """The entities that may join ranked passages ``chunk_ids`` to a second passage, best first:
        those the passages mention, not in ``exclude`` (the question's own), each weighted by
        its passage's rank over how many chunks mention it (a rare entity is a likelier bridge;
        more than ``hop.max_chunks`` is too common to be one). Without the in-process index the
        chunk counts are unknown and the rank alone weighs. ``kind``: an entity category the
        question says the bridge has ("this drug": Drug); the best ``BRIDGE_KINDS_READ`` are
        looked up and those of that category come first. ``toward``: the entities of the hop that
        will ask about the bridge; the best ``BRIDGE_KINDS_READ`` are ordered by their connection
        to them (``_connection``), the order so far breaking ties: a bridge joins the first hop's
        passages to a passage about the second hop's subject, so an entity that no other passage
        names beside that subject (a mislinked abbreviation, a passing mention) leads nowhere."""
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
        ranked = sorted(weights.items(), key=lambda mw: (-mw[1], mw[0]))
        if kind is not None:
            head = ranked[:BRIDGE_KINDS_READ]
            same = [mw for mw in head if _category(self.graph.get_entity(mw[0])) == kind]
            ranked = same + [mw for mw in ranked if mw not in same]
        if toward and self.ppr_index is not None:
            head = ranked[:BRIDGE_KINDS_READ]
            score = self._connection([m for m, _ in head], toward, set(chunk_ids))
            ranked = sorted(head, key=lambda mw: -score[mw[0]]) + ranked[BRIDGE_KINDS_READ:]
        return ranked

    def _connection(self, candidates: list[str], toward: Sequence[str], seen: set[str]) -> dict[str, float]:
        """Per candidate, the summed specificity (log of chunks over the entity's chunks) of the
        ``toward`` entities it shares a chunk with outside ``seen`` (those of at most
        ``hop.max_chunks`` chunks: a common one, "Humans", connects everything)."""
        assert self.ppr_index is not None
        lookups = self.ppr_index.connections()
        counts = self.ppr_index.chunk_counts(list(toward))
        total = max(len(lookups.chunks), 1)
        targets = [(t, math.log(total / counts[t])) for t in dict.fromkeys(toward)
                   if 0 < counts[t] <= self.cfg.hop.max_chunks]
        return {m: sum(weight for t, weight in targets
                       if t != m and any(c not in seen for c in lookups.both(m, t, len(seen) + 1)))
                for m in candidates}

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
        with tracing.span("retrieve.embed"):
            qv = self.query_vectors(analysis)
        timings = {"embed": round((time.perf_counter() - start) * 1000, 2)}
        weights = language_weights(self.cfg.weights, self.cfg.language_weights, analysis.language)
        translations: dict[str, str] = {}
        paths = [PATHS[p] for p in self.cfg.paths]
        for path in [p for p in paths if not p.after] + [p for p in paths if p.after]:  # after: they read the rest
            start = time.perf_counter()
            with tracing.span(f"retrieve.{path.name}", {"openinference.span.kind": "RETRIEVER"}) as span:
                found = path.search(Search(self, analysis, limit, qv, per_path, weights, translations))
                span.set_attribute("candidates", sum(len(hits) for hits in found.values()))
            per_path.update(found)
            timings[path.name] = round((time.perf_counter() - start) * 1000, 2)
            metrics.observe("medgraph_retrieval_path_seconds", timings[path.name] / 1000, path=path.name)
        fused = rrf(per_path, self.cfg.rrf_k, self._supported(weights, per_path, analysis, limit))[:limit]
        start = time.perf_counter()
        with tracing.span("retrieve.features"):
            self._load_and_featurise(analysis, fused, qv, list(translations.items()))
        timings["features"] = round((time.perf_counter() - start) * 1000, 2)
        used = [p for p, hits in per_path.items() if hits]
        if qv.dense is not None:  # carried to the answer step (QueryAnalysis.query_dense)
            analysis = replace(analysis, query_dense=tuple(qv.dense.tolist()))
        return RetrievalResult(analysis, fused, per_path, used, timings, translations)

    def _supported(self, weights: dict[str, float], lists: dict[str, list[Candidate]], analysis: QueryAnalysis,
                   limit: int) -> dict[str, float]:
        """The fusion weights with each translation's list (``translate:de``: searched in that one
        language, never the question's) scaled by how much of a full list that language can give:
        its passages over ``limit``, or over the passages of the corpus's best-populated language
        where that has fewer (at most 1). RRF counts ranks, and rank 1 among a language's only
        passage is no evidence: the one passage detected as German in an English corpus topped every
        translation into German and sat in the best 8 of 47 of 76 English multi-hop questions (68
        Chinese). The question's own words (``sparse``, ``feedback``) keep their weight
        (``language_weights``): where its language is the corpus's smallest, its few passages are
        still where its words are."""
        searched = {name: language for name, hits in lists.items()
                    if hits and (language := name.partition(":")[2]) and language != analysis.language}
        if not searched:
            return weights
        counts = self._language_counts(set(searched.values()))
        if any(len(lists[name]) > counts.get(language, 0) for name, language in searched.items()):
            counts = self._language_counts(set(), fresh=True)  # a list longer than its count: written since
        full = min(limit, max(counts.values(), default=0))
        out = dict(weights)
        for name, language in searched.items():
            if counts.get(language, 0) < full:
                out[name] = path_weight(weights, name) * counts.get(language, 0) / full
        return out

    def _language_counts(self, also: set[str], fresh: bool = False) -> dict[str, int]:
        """Passages per language in the vector store, for the corpus languages (``languages``),
        ``also`` and those read before; read at most every ``LANGUAGE_COUNTS_S`` (and when a
        language is new, or ``fresh``)."""
        now = time.monotonic()
        read_at, counts = self._counts
        if fresh or now - read_at > LANGUAGE_COUNTS_S or not also <= counts.keys():
            counts = self.vectors.language_counts(sorted({*self.cfg.languages, *counts, *also}))
            self._counts = (now, counts)
        return counts

    def featurise(self, analysis: QueryAnalysis, cands: list[Candidate]) -> None:
        """Load the chunks and reranker features of candidates found outside ``retrieve`` (the
        agent's relational channel); ``ppr`` and ``rrf`` features are relative to this list."""
        self._load_and_featurise(analysis, cands, self.query_vectors(analysis), list(analysis.translations))

    def translations(self, analysis: QueryAnalysis) -> dict[str, GlossGroups]:
        """The analysis' translations (gloss groups) into the corpus languages of ``retrieval.languages``."""
        return {lang: analysis.glosses_in(lang) for lang, _ in analysis.translations
                if lang in self.cfg.languages and analysis.glosses_in(lang)}

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
        bridged = set(analysis.bridged)
        best_ppr = max((c.path_scores.get("ppr", 0.0) for c in cands), default=0.0) or 1.0
        best_rrf = max((c.score for c in cands), default=0.0) or 1.0
        for cand in cands:
            cand.chunk = chunks.get(cand.chunk_id)
            parent = cand.chunk.parent_text if cand.chunk else ""
            language = cand.chunk.language if cand.chunk else None
            parent_terms = self._terms(parent, language)
            vec = vectors.get(cand.chunk_id)
            named = mentions.get(cand.chunk_id, set())
            cand.features = {
                "dense": dense_feature(self.embedder, float(np.dot(q_vec, vec)))
                if q_vec is not None and vec is not None else 0.0,
                "lexical": max(_lexical_overlap(term_sets, parent_terms),
                               _gloss_coverage(glossed.get(language or "", []), parent_terms)),
                "entity": max(_share(seeds, named), _share(bridged, named)),
                "ppr": cand.path_scores.get("ppr", 0.0) / best_ppr,
                "rrf": cand.score / best_rrf,
                "cross_lingual": float(cand.chunk is not None and cand.chunk.language != analysis.language),
            }
        cands[:] = [c for c in cands if c.chunk is not None]  # a chunk deleted meanwhile is dropped

    def _terms(self, text: str, language: str | None) -> frozenset[str]:
        """The index terms of a passage's text (kept: ``PARENT_TERMS_KEPT``)."""
        key = (language, text)
        terms = self._parent_terms.get(key)
        if terms is None:
            terms = frozenset(tokenize(text, language=language))
            self._parent_terms.put(key, terms)
        return terms


def _share(entities: set[str], named: set[str]) -> float:
    """The share of ``entities`` among the ``named`` ones (0 when there are none to find)."""
    return len(entities & named) / len(entities) if entities else 0.0


def _gloss_coverage(groups: list[list[set[str]]], text_terms: frozenset[str]) -> float:
    """The share of a translation's gloss groups (source words and entities) with an alternative all
    of whose terms are in the text."""
    groups = [g for g in groups if any(g)]
    if not groups:
        return 0.0
    return sum(any(alt and alt <= text_terms for alt in group) for group in groups) / len(groups)


def _lexical_overlap(term_sets: list[set[str]], text_terms: frozenset[str]) -> float:
    """The best share, over the question and its translations, of its terms found in the text."""
    return max((len(q & text_terms) / len(q) for q in term_sets if q), default=0.0)


def _category(entity: Entity | None) -> str | None:
    return entity.category if entity is not None else None
