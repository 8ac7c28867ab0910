"""A Chinese or German question whose words link to no MeSH descriptor still reaches English evidence:
the glossary translates it word by word (``translate``), the dense path reads that translation
(``translate_dense``), and pseudo-relevance feedback from the first lists searches the passage's own
words (``translate_feedback``).

The dense embedder here is the hashing one (not multilingual), and neither question links an entity
(the fixture MeSH has no radiotherapy or pelvic exenteration), so without the glossary nothing bridges
the languages: each test checks that too.
"""

from __future__ import annotations

import pytest

from medgraph.eval.retrieval import EvalIndex
from medgraph.ontology.glossary import Glossary
from medgraph.retrieve.query import QueryAnalyzer
from medgraph.retrieve.retriever import Retriever
from tests.helpers import FIXTURES

CORPUS = [
    {"doc_id": "rt", "title": "", "language": "en",
     "text": "Radiotherapy of the primary tumour worsened the prognosis after pelvic exenteration for relapse."},
    {"doc_id": "lead", "title": "", "language": "en",
     "text": "Blood lead levels in workers of a battery plant exceeded the limits for occupational exposure."},
    {"doc_id": "fever", "title": "", "language": "en",
     "text": "Fever after vaccination resolved within two days in most children."},
    {"doc_id": "leber", "title": "", "language": "de",
     "text": "Die Strahlentherapie der Lebermetastasen verschlechtert die Prognose nicht."},
]
QUESTIONS = {"zh": "放疗会影响盆腔廓清术后的预后吗？", "de": "Verschlechtert eine Strahlentherapie im Becken den Verlauf?"}
GLOSSARY = FIXTURES / "glossary"
SOURCES = [{"kind": "mesh_xml", "path": str(FIXTURES / "mesh" / "desc_fixture.xml")},
           {"kind": "ding", "path": str(GLOSSARY / "de-en.txt")},
           {"kind": "cedict", "path": str(GLOSSARY / "cedict.txt")}]


@pytest.fixture(scope="module")
def index(tiny_index: tuple[EvalIndex, object]) -> tuple[EvalIndex, object]:
    return tiny_index


def _docs(idx: EvalIndex, cands: list) -> list[str]:
    return list(dict.fromkeys(idx.chunk_doc[c.chunk_id] for c in cands))


def _retriever(idx: EvalIndex, cfg: object, paths: tuple[str, ...],
               dense_translate: tuple[str, ...] = ("en",)) -> Retriever:
    """The configured retriever on ``paths``; feedback from the first passage only (three English
    passages are all this corpus has: feedback from three would read every one of them). The dense
    path searches the English translation only: this corpus has one German passage, which a dense
    search of the German translation returns first whatever the question (the configured languages
    are chosen on real corpora: docs/retrieval.md)."""
    r = cfg.retrieval  # type: ignore[attr-defined]
    feedback = r.feedback.model_copy(update={"docs": 1})
    return Retriever(r.model_copy(update={"paths": paths, "feedback": feedback, "dense_translate": dense_translate}),
                     idx.graph, idx.vectors, idx.embedder)


@pytest.mark.parametrize("language", ["zh", "de"])
def test_unlinked_question_reaches_english_evidence_through_the_glossary(
        index: tuple[EvalIndex, object], language: str) -> None:
    idx, cfg = index
    assert sorted(idx.vocab.glossary.languages()) == ["de", "zh"]  # built with the vocabulary, read back
    analysis = QueryAnalyzer(idx.extractor, 0).analyze(QUESTIONS[language])
    assert analysis.language == language and not analysis.entity_ids
    assert "radiotherapy" in dict(analysis.translations)["en"]

    plain = _retriever(idx, cfg, ("dense", "sparse")).retrieve(analysis)
    assert "rt" not in _docs(idx, plain.candidates)[:1]

    result = _retriever(idx, cfg, ("dense", "translate", "translate_dense", "translate_feedback")).retrieve(analysis)
    for path in ("translate:en", "translate_dense:en", "translate_feedback:en"):
        docs = _docs(idx, result.per_path[path])
        assert docs[0] == "rt", path
        assert "leber" not in docs, path  # each list searches chunks of its own language only
    assert _docs(idx, result.candidates)[0] == "rt"
    assert {"translate_dense", "translate_feedback"} <= set(result.timings_ms)

    without = QueryAnalyzer(idx.extractor, 0)
    without.translator.glossary = Glossary()  # the vocabulary's names and loan-word spellings only
    bare = _retriever(idx, cfg, ("dense", "translate", "translate_dense")).retrieve(without.analyze(QUESTIONS[language]))
    assert "rt" not in _docs(idx, bare.per_path.get("translate:en", []))[:1]


def test_a_translation_into_a_language_with_few_passages_weighs_its_share_of_a_full_list(
        index: tuple[EvalIndex, object]) -> None:
    from medgraph.retrieve.fusion import path_weight
    from medgraph.retrieve.types import Candidate

    idx, cfg = index
    assert idx.vectors.language_counts(["en", "de", "zh"]) == {"en": 3, "de": 1, "zh": 0}
    retriever = _retriever(idx, cfg, ("dense", "sparse", "translate"))
    analysis = QueryAnalyzer(idx.extractor, 0).analyze(QUESTIONS["zh"])
    lists = {name: [Candidate("c")] for name in ("sparse", "translate:en", "translate:de", "dense", "ppr")}
    given = {"sparse": 1.0, "translate": 1.5, "dense": 1.0}
    weights = retriever._supported(given, lists, analysis, 40)
    # the Chinese question's German translation searches the one German passage: a third of what
    # the three English ones give (English is the full list here); its own words, dense and PPR
    # keep their weights
    assert path_weight(weights, "translate:de") == pytest.approx(1.5 / 3) and path_weight(weights, "translate:en") == 1.5
    assert weights["sparse"] == 1.0 and weights["dense"] == 1.0 and "ppr" not in weights
    german = retriever._supported(given, lists, QueryAnalyzer(idx.extractor, 0).analyze(QUESTIONS["de"]), 40)
    assert german["sparse"] == 1.0  # a German question's own words, over its language's one passage
    result = retriever.retrieve(analysis)
    leber = next(c for c in result.candidates if idx.chunk_doc[c.chunk_id] == "leber")
    k = cfg.retrieval.rrf_k  # type: ignore[attr-defined]
    assert leber.path_ranks["translate:de"] == 1  # first of one: a third of a first place
    assert leber.score == pytest.approx(1 / (k + leber.path_ranks["dense"]) + (1.5 / 3) / (k + 1))
    # counts read before a write: a list longer than its language's count reads them again
    retriever._counts = (retriever._counts[0], {"en": 3, "de": 0, "zh": 0})
    again = retriever._supported(given, {"translate:de": [Candidate("c")]}, analysis, 40)
    assert path_weight(again, "translate:de") == pytest.approx(1.5 / 3)


def test_dense_translation_only_into_configured_languages(index: tuple[EvalIndex, object]) -> None:
    idx, cfg = index
    analysis = QueryAnalyzer(idx.extractor, 0).analyze(QUESTIONS["de"])
    paths = ("dense", "translate_dense")
    assert "translate_dense:en" in _retriever(idx, cfg, paths).retrieve(analysis).per_path
    other = Retriever(cfg.retrieval.model_copy(update={"paths": paths, "dense_translate": ("zh",)}),
                      idx.graph, idx.vectors, idx.embedder).retrieve(analysis)
    assert "translate_dense:en" not in other.per_path
    english = QueryAnalyzer(idx.extractor, 0).analyze("Does radiotherapy worsen the prognosis?")
    assert not any(p.startswith("translate_dense") for p in _retriever(idx, cfg, paths).retrieve(english).per_path)
    # the configured languages (en, de, zh): an English question's German translation is searched
    # among the German passages, never the English ones
    found = _retriever(idx, cfg, paths, cfg.retrieval.dense_translate).retrieve(english).per_path  # type: ignore[attr-defined]
    assert "translate_dense:de" in found and "translate_dense:en" not in found
    assert {_docs(idx, [c])[0] for c in found["translate_dense:de"]} == {"leber"}


def test_cross_lingual_feedback_adds_the_first_passages_words(index: tuple[EvalIndex, object]) -> None:
    idx, cfg = index
    analysis = QueryAnalyzer(idx.extractor, 0).analyze(QUESTIONS["zh"])
    retriever = _retriever(idx, cfg, ("translate", "translate_feedback"))
    result = retriever.retrieve(analysis)
    first = {p: hits for p, hits in result.per_path.items() if not p.startswith("translate_feedback")}
    glossed = idx.embedder.embed_query_glossed([analysis.glosses_in("en")], ["en"])[0]
    top = [result.per_path["translate:en"][0].chunk_id]
    expanded = retriever.expand_sparse(glossed, top)
    assert len(expanded) > len(glossed)  # "tumour", "exenteration", ... from the passage found first
    assert set(glossed.as_dict()) <= set(expanded.as_dict())
    found = retriever.search_lists("translate_feedback", analysis, 10, done=first)
    assert _docs(idx, found["translate_feedback:en"])[0] == "rt"
    assert retriever.search_lists("translate_feedback", analysis, 10, done={}) == {}  # nothing found first: no feedback


def test_own_words_search_own_language_passages_and_dense_is_balanced(index: tuple[EvalIndex, object]) -> None:
    from medgraph.retrieve.paths import balanced
    from medgraph.stores.vector import VectorHit

    idx, cfg = index
    analysis = QueryAnalyzer(idx.extractor, 0).analyze("Tumour relapse: Strahlentherapie der Lebermetastasen?", "de")
    own = _retriever(idx, cfg, ("sparse",)).retrieve(analysis)
    assert _docs(idx, own.per_path["sparse"]) == ["leber"]  # German words, German passages only
    everywhere = Retriever(cfg.retrieval.model_copy(update={"paths": ("sparse",), "lexical_own_language": False}),
                           idx.graph, idx.vectors, idx.embedder).retrieve(analysis)
    assert "rt" in _docs(idx, everywhere.per_path["sparse"])  # before: the English passage by "tumour relapse"

    def hit(cid: str, score: float, lang: str) -> VectorHit:
        return VectorHit(cid, score, {"language": lang})
    # Chinese passages score ~0.9 for a Chinese question whatever they say, English ones ~0.8:
    # centred on its own language's mean, the English passage that stands out comes first
    zh = [hit("z1", 0.91, "zh"), hit("z2", 0.90, "zh"), hit("z3", 0.90, "zh")]
    en = [hit("e1", 0.88, "en"), hit("e2", 0.80, "en"), hit("e3", 0.79, "en")]
    assert [h.chunk_id for h in balanced([zh, en], 4)][0] == "e1"
    assert [h.chunk_id for h in balanced([zh, []], 2)] == ["z1", "z2"]  # one language: its own order
    # a language with a single passage: centred on its own score it came out level with the middle
    # of the full list; it must stand out from the full list's background instead
    en = [hit(f"e{i}", 0.90 - 0.01 * i, "en") for i in range(4)]
    lone = [hit("d1", 0.84, "de")]
    assert "d1" not in [h.chunk_id for h in balanced([en, lone], 4)]
    assert [h.chunk_id for h in balanced([en, [hit("d1", 0.92, "de")]], 4)][0] == "d1"  # unless it does
