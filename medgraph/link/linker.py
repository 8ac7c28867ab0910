"""Entity linking: surface form (any language) → MeSH descriptor ID.

Input: a ``Vocabulary``, ``LinkingConfig``, and surface strings (optionally with the document or
chunk text they come from, used to resolve in-document abbreviations).
Output: ``LinkResult(mesh_id | None, method, score, category)``.

The language-specific steps read the pack of the text's language (``LanguagePack.lexicon``), or,
for a surface written in a pack's own script (``lexicon.script``: Chinese characters), that pack's,
in text of any language (``medgraph.link.compose.surface_pack``); a pack without a hook skips its step.

Cascade (first hit wins; deterministic):
0. ``abbreviation`` (text in a language with a curated table, ``lexicon.abbreviations``: German): the
   surface, spelled exactly so, is a short form of the curated clinical abbreviation table (``KHK``,
   ``pAVK``, ``HI``; ``medgraph.lang.de.abbreviations.german_abbreviations``).
1. ``abbreviation``: the surface is a short form defined in the context (``long form (SF)``);
   the long form is linked with steps 2-5 and its score kept.
2. ``exact``: ``match_key`` (case/diacritic/width-folded, punctuation as spaces) in the index.
3. ``normalised``: ``norm_key`` (plural/singular, British spellings, function words, word order).
4. ``composite``: ``"X and Y disease"`` style conjunctions (the packs' ``lexicon.conjunctions``): the
   first conjunct completed with the shared head (``"breast and ovarian cancer"`` → ``"breast cancer"``,
   ``肾和输尿管结石`` → ``肾结石``) through steps 2-3 (in an unspaced script: and its spelling variants).
5. ``variant``: the MeSH head-noun convention (``cancer`` / ``carcinoma`` / ``tumour`` →
   ``neoplasms``) and the phrase with leading modifiers dropped (``sporadic Wilms tumours`` →
   ``Wilms tumours``; at least two words kept), through steps 2-3.
6. ``compose``: a surface of a pack with composition rules (``lexicon.compose``: German, Chinese)
   glossed part by part into English
   (``medgraph.link.compose``: ``Schilddrüsenkrebs`` → thyroid neoplasms, ``急性肾衰竭`` → acute renal
   failure), the English phrase looked up through steps 2-3 and the neoplasm head; then, with
   ``linking.dictionary_compose``, parts only the general dictionaries know (``手卫生`` → hand ·
   hygiene → Hand Hygiene; method ``compose_dictionary``).
7. ``language``: the pack's morphology hooks (``medgraph.lang.de.morphology``,
   ``medgraph.lang.zh.morphology``), in this order where the pack has them: a word of its general
   dictionary (``lexicon.dictionary_words``, ``Vocabulary.dictionary_words``: 卵巢 → Ovary), its
   generated forms (``Vocabulary.forms_index``: inflected German names, German spellings of English
   names), its compound key (``lexicon.compounds``: compounds split into parts the German names know,
   ``Lungenentzündung`` ~ ``Entzündung der Lunge``, Snowball stems), then its spelling variants
   (``lexicon.forms``: German inflection, umlaut and loan-word spellings, ``Sklerose`` → ``sclerosis``;
   Chinese modifiers ``急性``/``慢性`` and disease heads ``病``/``症``/``综合征``), through steps 2-3.
8. ``general`` (a language whose pack reads the general dictionary's words, ``lexicon.general_words``:
   German; with the fuzzy steps only): an everyday word of the general dictionary
   (``Vocabulary.general_words``: Ratten → Rats, Frauen → Women; Mäusen, a dative plural, through
   Mäuse by ``lexicon.base_forms``), for a span the linker is given (gold mentions, the model tier's spans).
   The gazetteer never reads these words, so they add no mentions of their own in running text.
9. ``tfidf``: character n-gram TF-IDF nearest normalised name with cosine ≥ ``tfidf_threshold``
   (not for short all-caps acronyms, whose character n-grams say little); also the first
   ``lexicon.fuzzy_forms`` spelling variants of the surface (German loan-word spellings).
10. ``dense`` (``linking.dense``): the nearest MeSH name in any language by a multilingual dense
   embedder (``medgraph.link.dense``): the ``dense_top_k`` nearest descriptors re-scored with
   character overlap and a disease prior, accepted at score ≥ ``dense_threshold``: a German or
   Chinese term the dictionary lacks can still reach its descriptor.
11. ``head``: the last word alone, when it is a dictionary term (``nonocular tumors`` → tumors).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from medgraph import lang
from medgraph.config.models import LinkingConfig
from medgraph.lang.sections.lexicon import CompoundKey
from medgraph.link.compose import Composer, script_pack, surface_pack
from medgraph.link.dense import rescore
from medgraph.link.tfidf import CharNgramIndex
from medgraph.ontology.vocabulary import Index, Vocabulary, build_index
from medgraph.text.abbreviations import abbreviation_map
from medgraph.text.keys import match_key, norm_key

# one fuzzy-index build at a time in a process (a warm-up thread and a request may race for it)
_TFIDF_BUILD = threading.Lock()

SCORE_EXACT = 1.0
SCORE_NORMALISED = 0.95
SCORE_COMPOSITE = 0.9
SCORE_VARIANT = 0.85
SCORE_LANGUAGE = 0.85
SCORE_COMPOSED = 0.8
SCORE_DICTIONARY_COMPOSED = 0.75
COMPOSE_CACHE = 200_000  # compose results kept per linker
SCORE_GENERAL = 0.75
SCORE_HEAD = 0.6
_NEOPLASM_WORDS = re.compile(
    r"\b(?:cancers?|carcinomas?|tumou?rs?|neoplasias?|malignanc(?:y|ies)|adenocarcinomas?)\b", re.IGNORECASE
)
_ACRONYM = re.compile(r"^[A-Z0-9][A-Za-z0-9-]{0,6}$")


@dataclass(frozen=True)
class LinkResult:
    mesh_id: str | None
    method: str
    score: float
    category: str = ""


NO_LINK = LinkResult(None, "none", 0.0)


class Linker:
    """Dictionary → normalised → composite → TF-IDF cascade with abbreviation resolution."""

    def __init__(
        self, vocab: Vocabulary, cfg: LinkingConfig | None = None, dense: Any = None, german_morphology: bool = True
    ) -> None:
        """``dense``: a ``DenseNameIndex`` (built on first use when ``cfg.dense`` and not given).
        ``german_morphology=False`` drops the curated abbreviation tables, the generated forms and
        the full compound stemming of every pack (German: the Snowball stems; the previous German
        rules, for before/after measurements)."""
        self.vocab = vocab
        self.cfg = cfg or LinkingConfig()
        self.german_morphology = german_morphology
        self._tfidf: CharNgramIndex | None = None
        self._dense = dense
        self._compounds: dict[str, tuple[CompoundKey, Index]] = {}  # language -> compound key, its index
        self._composer: Composer | None = None
        self._composed: dict[tuple[str, str, bool], LinkResult | None] = {}

    @property
    def dense(self) -> Any:
        """The cross-lingual dense name index (``cfg.dense``), built on first use."""
        if self._dense is None:
            from medgraph.config.models import EmbeddingConfig
            from medgraph.embed import make_embedder
            from medgraph.link.dense import DenseNameIndex

            embedder = make_embedder(EmbeddingConfig(
                dense=self.cfg.dense_embedder, sparse="none", model_path=self.cfg.dense_model_path,
                pooling=self.cfg.dense_pooling, max_length=32,  # terms, not passages
            ))
            self._dense = DenseNameIndex(self.vocab, embedder, self.vocab.directory or None)
        return self._dense

    @property
    def tfidf(self) -> CharNgramIndex:
        """The fuzzy index, built on first use (a few seconds for the full vocabulary); callers that
        arrive while it is being built wait for that build."""
        if self._tfidf is None:
            with _TFIDF_BUILD:
                if self._tfidf is None:
                    self._tfidf = CharNgramIndex.for_vocabulary(self.vocab, self.cfg.ngram)
        return self._tfidf

    def _result(self, mesh_id: str, method: str, score: float) -> LinkResult:
        return LinkResult(mesh_id, method, score, self.vocab.category(mesh_id))

    def dictionary(self, surface: str) -> LinkResult | None:
        """Exact then normalised lookup (no fuzzy matching)."""
        ids = self.vocab.exact_index.get(match_key(surface))
        if ids:
            return self._result(ids[0], "exact", SCORE_EXACT)
        if not self.cfg.normalise:
            return None
        ids = self.vocab.norm_index.get(norm_key(surface))
        if ids:
            return self._result(ids[0], "normalised", SCORE_NORMALISED)
        return None

    def _composite(self, surface: str) -> LinkResult | None:
        if not self.cfg.composites:
            return None
        m = None
        for pack in lang.packs():  # the first pack whose conjunctions split the surface
            pattern = pack.lexicon.conjunctions
            if pattern is not None and (m := pattern.match(surface)) is not None:
                break
        if m is None:
            return None
        first, rest = m.group(1).strip(), m.group(2).strip()
        script = script_pack(rest)
        if script is not None and not script.spaced:  # 肾和输尿管结石: the first conjunct with the second's ending (肾结石)
            candidates = [first + rest[i:] for i in range(1, len(rest))] + [first, rest]
        else:
            rest_words = rest.split()
            candidates = [f"{first} {rest_words[-1]}" if rest_words else first, first, rest]
        for cand in candidates:
            own = script_pack(cand)  # a candidate in a pack's own script: with that pack's variants
            hit = self.dictionary(cand) or (self._language(cand, own.code) if own is not None else None)
            if hit is not None and hit.mesh_id is not None:
                return self._result(hit.mesh_id, "composite", SCORE_COMPOSITE * hit.score)
        return None

    def _variant(self, surface: str) -> LinkResult | None:
        if not self.cfg.normalise:
            return None
        words = surface.split()
        forms = [_NEOPLASM_WORDS.sub("neoplasms", surface)] if _NEOPLASM_WORDS.search(surface) else []
        for start in range(1, len(words) - 1):
            tail = " ".join(words[start:])
            forms.append(tail)
            if _NEOPLASM_WORDS.search(tail):
                forms.append(_NEOPLASM_WORDS.sub("neoplasms", tail))
        for form in forms:
            hit = self.dictionary(form)
            if hit is not None and hit.mesh_id is not None:
                return self._result(hit.mesh_id, "variant", SCORE_VARIANT * hit.score)
        return None

    def compounds(self, language: str) -> tuple[CompoundKey, Index] | None:
        """The compound key of ``language``'s pack (``lexicon.compounds``: German) built from the
        vocabulary's names in that language, and the index of those names by that key; ``None`` when
        the pack splits no compounds."""
        factory = lang.get_or_pivot(language).lexicon.compounds
        if factory is None:
            return None
        if language not in self._compounds:
            terms = [t for t in self.vocab.terms if t[1] == language]
            key = factory((t[0] for t in terms), self.german_morphology)
            self._compounds[language] = key, build_index(terms, key.key)
        return self._compounds[language]

    @property
    def composer(self) -> Composer:
        """English glosses of the composing languages' parts (built on first use)."""
        if self._composer is None:
            self._composer = Composer.for_vocabulary(self.vocab)
        return self._composer

    def compose(self, surface: str, language: str, dictionary: bool | None = None) -> LinkResult | None:
        """Step 6 alone: the surface glossed into English (``medgraph.link.compose``), or ``None``;
        ``dictionary``: with the general dictionaries' parts too (default: unless
        ``linking.dictionary_compose`` is false; the extractor passes whether they apply to its
        text). Results are cached per (surface, language, dictionary): the extractor tries the same
        spans in every chunk. Only a surface a pack with composition rules reads (``surface_pack``)."""
        if not (self.cfg.normalise and self.cfg.compose):
            return None
        pack = surface_pack(surface, language)
        if pack is None or pack.lexicon.compose is None:
            return None
        dictionary = bool(self.cfg.dictionary_compose) if dictionary is None else dictionary
        key = (surface, language, dictionary)
        if key not in self._composed:
            if len(self._composed) >= COMPOSE_CACHE:
                self._composed.pop(next(iter(self._composed)))  # the oldest first
            self._composed[key] = self._compose(surface, language, dictionary)
        return self._composed[key]

    def _compose(self, surface: str, language: str, dictionary: bool) -> LinkResult | None:
        phrases = self.composer.glosses(surface, language)
        neoplasms = [_NEOPLASM_WORDS.sub("neoplasms", p) for p in phrases if _NEOPLASM_WORDS.search(p)]
        for phrase in (*phrases, *neoplasms):
            mesh_id = self.composer.lookup(phrase)
            if mesh_id is not None:
                return self._result(mesh_id, "compose", SCORE_COMPOSED)
        if dictionary and self.vocab.glossary.languages():
            for phrase in self.composer.dictionary_glosses(surface, language, self.vocab.glossary):
                mesh_id = self.composer.lookup(phrase)
                if mesh_id is not None:
                    return self._result(mesh_id, "compose_dictionary", SCORE_DICTIONARY_COMPOSED)
        return None

    def _language(self, surface: str, language: str) -> LinkResult | None:
        """Step 7: the morphology hooks of the pack that reads ``surface`` (``surface_pack``)."""
        if not self.cfg.normalise:
            return None
        pack = surface_pack(surface, language)
        if pack is None:
            return None
        lexicon = pack.lexicon
        key = match_key(surface)
        if lexicon.dictionary_words is not None:
            ids = self.vocab.dictionary_words(pack.code).get(key)
            if ids:
                return self._result(ids[0], "language", SCORE_LANGUAGE)
        if lexicon.generates_forms and self.german_morphology:
            ids = self.vocab.forms_index(pack.code).get(key)
            if ids:
                return self._result(ids[0], "language", SCORE_LANGUAGE)
        compounds = self.compounds(pack.code)
        if compounds is not None:
            compound_key, index = compounds
            ids = index.get(compound_key.key(surface))
            if ids:
                return self._result(ids[0], "language", SCORE_LANGUAGE)
        forms = lexicon.forms(surface) if lexicon.forms is not None else []
        for form in forms:
            hit = self.dictionary(form)
            if hit is not None and hit.mesh_id is not None:
                return self._result(hit.mesh_id, "language", SCORE_LANGUAGE * hit.score)
        return None

    def general(self, surface: str, language: str) -> LinkResult | None:
        """Step 8: a span in the general dictionary's language (``lexicon.general_words``: German)
        that is a word of that dictionary (``general_words``), or an inflected form of one."""
        lexicon = lang.get_or_pivot(language).lexicon
        if not lexicon.general_words or not (self.cfg.normalise and self.cfg.general_words):
            return None
        words = self.vocab.general_words
        key = match_key(surface)
        bases = lexicon.base_forms(key) if lexicon.base_forms is not None else []
        ids = words.get(key) or next((words[b] for b in bases if b in words), None)
        return self._result(ids[0], "general", SCORE_GENERAL) if ids else None

    def head_word(self, surface: str) -> LinkResult | None:
        """The last step: a multi-word surface linked by its head word alone (score 0.6)."""
        words = surface.split()
        if len(words) < 2 or not self.cfg.normalise:
            return None
        hit = self.dictionary(_NEOPLASM_WORDS.sub("neoplasms", words[-1]))
        return self._result(hit.mesh_id, "head", SCORE_HEAD) if hit and hit.mesh_id else None

    def fuzzy(self, surfaces: Sequence[str], results: list[LinkResult | None], language: str = lang.PIVOT) -> None:
        """TF-IDF nearest name; a surface is also searched in the first ``lexicon.fuzzy_forms`` of
        its language's spelling variants (German: its loan-word spellings)."""
        missing = [
            i
            for i, r in enumerate(results)
            if r is None and surfaces[i].strip() and not _ACRONYM.match(surfaces[i].strip())
        ]
        if not missing or not self.cfg.tfidf:
            return
        owner: list[int] = []
        queries: list[str] = []
        lexicon = lang.get_or_pivot(language).lexicon
        variants = lexicon.forms if lexicon.fuzzy_forms > 0 else None
        for i in missing:
            extra = variants(surfaces[i])[: lexicon.fuzzy_forms] if variants is not None else []
            for query in (surfaces[i], *extra):
                owner.append(i)
                queries.append(query)
        best: dict[int, tuple[str, float]] = {}
        for i, (key, score) in zip(owner, self.tfidf.search(queries), strict=True):
            if key is not None and score > best.get(i, ("", 0.0))[1]:
                best[i] = (key, score)
        for i, (key, score) in best.items():
            if score >= self.cfg.tfidf_threshold:
                results[i] = self._result(self.vocab.norm_index[key][0], "tfidf", round(score, 4))

    def _dense_fallback(self, surfaces: Sequence[str], results: list[LinkResult | None]) -> None:
        missing = [i for i, r in enumerate(results) if r is None and surfaces[i].strip()]
        if not missing or not (self.cfg.dense or self._dense is not None):
            return
        queries = [surfaces[i] for i in missing]
        for i, cands in zip(missing, self.dense.candidates(queries, self.cfg.dense_top_k), strict=True):
            mesh_id, score = rescore(
                surfaces[i], cands, self.vocab, self.cfg.dense_char_weight, self.cfg.dense_disease_bonus
            )
            if mesh_id is not None and score >= self.cfg.dense_threshold:
                results[i] = self._result(mesh_id, "dense", round(score, 4))

    def table_abbreviation(self, surface: str, language: str) -> LinkResult | None:
        """Step 0: a short form of the curated table of the text's language (``lexicon.abbreviations``:
        German), spelled exactly so."""
        table = lang.get_or_pivot(language).lexicon.abbreviations
        if table is None or not self.german_morphology:
            return None
        row = table.read().get(surface.strip())
        if row is None or row.mesh_id not in self.vocab:
            return None
        return self._result(row.mesh_id, "abbreviation", SCORE_LANGUAGE)

    def rules(self, surface: str, language: str = lang.PIVOT) -> LinkResult | None:
        """Steps 0 and 2-7 of the cascade: every dictionary-based step, nothing fuzzy."""
        return (
            self.table_abbreviation(surface, language)
            or self.dictionary(surface)
            or self._composite(surface)
            or self._variant(surface)
            or self.compose(surface, language)
            or self._language(surface, language)
        )

    def _plain(self, surfaces: Sequence[str], fuzzy: bool = True, language: str = lang.PIVOT) -> list[LinkResult]:
        results = [self.rules(s, language) for s in surfaces]
        if fuzzy:
            results = [r or self.general(s, language) for s, r in zip(surfaces, results, strict=True)]
            self.fuzzy(surfaces, results, language)
            self._dense_fallback(surfaces, results)
        if not fuzzy:
            return [r or NO_LINK for r in results]
        return [r or self.head_word(s) or NO_LINK for s, r in zip(surfaces, results, strict=True)]

    def link_many(
        self,
        surfaces: Sequence[str],
        language: str = lang.PIVOT,
        context: str | None = None,
        fuzzy: bool = True,
    ) -> list[LinkResult]:
        """Link a batch of surfaces that share one context (document or chunk text).

        ``fuzzy=False`` skips the TF-IDF and head-word steps (cheap, high-precision linking).
        """
        abbr = abbreviation_map(context) if (context and self.cfg.abbreviations) else {}
        queries = [abbr.get(s.strip(), s) for s in surfaces]
        results = self._plain(queries, fuzzy, language)
        out = []
        for surface, query, res in zip(surfaces, queries, results, strict=True):
            if query != surface and res.mesh_id is None:
                res = self._plain([surface], fuzzy, language)[0]
            elif query != surface:
                res = LinkResult(res.mesh_id, "abbreviation", res.score, res.category)
            out.append(res)
        return out

    def link(
        self, surface: str, language: str = lang.PIVOT, context: str | None = None, fuzzy: bool = True
    ) -> LinkResult:
        """Link one surface (see the module docstring for the cascade)."""
        return self.link_many([surface], language, context, fuzzy)[0]
