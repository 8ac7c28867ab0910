"""Query analysis: the question's language, the MeSH entities it mentions (the PPR seeds) and
its translations into the other corpus languages.

Input: a question (and optionally its language). Output: ``QueryAnalysis``. The same NER +
linking code as ingestion runs on the question (``EntityExtractor.for_queries``: with the Chinese
dictionary words, which ingestion leaves out by default); each linked entity's names in the other
``languages`` give the translations (``medgraph.retrieve.translate``) and ``entity_names`` (the
answer composer looks for them in sentences and names them in its lead line). Results are cached
so a repeated question skips it: by default in this process (LRU of ``cache_size``), or in any
``AnalysisCache`` given as ``cache`` (``medgraph.retrieve.analysis_cache``: the LRU in front of
Redis, shared by every analyzer replica). ``hits`` counts answers from the cache, ``misses``
analyses computed. In a Chinese question, a mention that starts or ends inside a word of the
glossary's segmentation is dropped (流感 "influenza" inside 分流感染, "shunt infection").
A German or Chinese question's English translation is linked as well (``bridged``): what its words
name in English, for the reranker's entity feature over English passages.
"""

from __future__ import annotations

import threading

from medgraph import lang
from medgraph.ingest.text import detect_language
from medgraph.link import EntityExtractor
from medgraph.retrieve.analysis_cache import AnalysisCache, LruAnalysisCache
from medgraph.retrieve.translate import GLOSSES_PER_WORD, OntologyTranslator
from medgraph.retrieve.types import QueryAnalysis


class QueryAnalyzer:
    def __init__(
        self,
        extractor: EntityExtractor,
        cache_size: int = 1024,
        languages: tuple[str, ...] | None = None,
        names_per_entity: int = 2,
        cache: AnalysisCache | None = None,
        glosses_per_word: int = GLOSSES_PER_WORD,
    ) -> None:
        self.extractor = extractor.for_queries()  # with the gazetteer's question-only keys
        self.languages = languages  # the translations' languages; None: every registered language
        self.translator = OntologyTranslator(extractor.vocab.get, names_per_entity, glossary=extractor.vocab.glossary,
                                             glosses_per_word=glosses_per_word)
        self.cache_size = cache_size
        self.cache: AnalysisCache = cache if cache is not None else LruAnalysisCache(cache_size)
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def analyze(self, question: str, language: str | None = None) -> QueryAnalysis:
        text = " ".join(question.split())
        language = language or detect_language(text)
        key = (text, language)
        cached = self.cache.get(key)
        if cached is not None:
            with self._lock:
                self.hits += 1
            return cached
        mentions = tuple(self.extractor.extract(text, language))
        glossary = self.translator.glossary
        segmented = lang.get_or_pivot(language).glossary.segment is not None
        if segmented and language in glossary.languages():  # a name matched inside a word is no mention
            bounds = glossary.boundaries(text, language)
            mentions = tuple(m for m in mentions if m.start in bounds and m.end in bounds)
        linked = QueryAnalysis(text, language, mentions)
        targets = self.languages if self.languages is not None else lang.codes()
        translations = [(t, x) for t in targets if (x := self.translator.translate(linked, t))]
        names = tuple((mesh_id, t, name) for mesh_id in linked.entity_ids
                      for t in dict.fromkeys((language, *targets)) for name in self.translator.names(mesh_id, t))
        english = next((x.text for t, x in translations if t == lang.PIVOT), "") if language != lang.PIVOT else ""
        bridged = tuple(dict.fromkeys(m.mesh_id for m in self.extractor.extract(english, lang.PIVOT) if m.mesh_id)) \
            if english else ()
        analysis = QueryAnalysis(text, language, linked.mentions, tuple((t, x.text) for t, x in translations),
                                 entity_names=names, glosses=tuple((t, x.groups) for t, x in translations),
                                 bridged=bridged)
        with self._lock:
            self.misses += 1
        self.cache.put(key, analysis)
        return analysis
