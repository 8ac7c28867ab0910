"""Query translation with every language pack's glossary rules, the French test pack included.

A question in each language that names a vocabulary entity in that language is translated into the
pivot (English) with the entity's English names put in its place, its function and question words
dropped and the other words glossed by the language's dictionary (German: Ding, Chinese: CC-CEDICT),
or kept as written where the language has no dictionary (French). An English question goes the
other way, into every other registered language. The translator and the glossary read the packs at
call time, so the French pack registered for the test is seen.
"""

from __future__ import annotations

import pytest

from medgraph import lang
from medgraph.ontology.glossary import Glossary, build_glossary, lemmas
from medgraph.retrieve.translate import OntologyTranslator
from medgraph.retrieve.types import QueryAnalysis
from medgraph.schemas import Entity, Mention
from tests.helpers import FIXTURES
from tests.lang_fr import registered

CODES = ["en", "de", "zh", "fr"]
MI = Entity("D009203", "Myocardial Infarction", "disease",
            names={"en": ["Heart Attack"], "de": ["Herzinfarkt"], "zh": ["心肌梗死"], "fr": ["infarctus du myocarde"]})
# (question, the entity's name in it, words that only carry grammar or the question's form)
QUESTIONS = {
    "en": ("Does a heart attack worsen the prognosis?", "heart attack", {"Does", "a", "the"}),
    "de": ("Verschlechtert ein Herzinfarkt die Prognose?", "Herzinfarkt", {"ein", "die"}),
    "zh": ("心肌梗死会影响预后吗？", "心肌梗死", {"会", "吗"}),
    "fr": ("L'infarctus du myocarde aggrave-t-il le pronostic ?", "infarctus du myocarde", {"L", "t", "il", "le"}),
}
# words of the translation (source, target) besides the entity's names: glosses, or words kept as written
EXPECTED = {
    ("de", "en"): {"worsened", "prognosis"},
    ("zh", "en"): {"influence", "prognosis"},
    ("fr", "en"): {"aggrave", "pronostic"},  # no dictionary: kept as written
    ("en", "de"): {"Prognose"},
    ("en", "zh"): {"预后"},
    ("en", "fr"): {"worsen", "prognosis"},  # no French word: kept as written
}
HD = Entity("D006331", "Heart Diseases", "disease", names={"de": ["Herzkrankheit"], "fr": ["cardiopathie"]})
ENTITIES = {MI.mesh_id: MI, HD.mesh_id: HD}


def _glossary() -> Glossary:
    return build_glossary([("ding", FIXTURES / "glossary" / "de-en.txt"),
                           ("cedict", FIXTURES / "glossary" / "cedict.txt")], ENTITIES.values())


def _question(code: str, linked: bool = True) -> QueryAnalysis:
    text, name, _ = QUESTIONS[code]
    start = text.index(name)
    return QueryAnalysis(text, code, (Mention(start, start + len(name), name, MI.mesh_id),) if linked else ())


def _names(target: str) -> tuple[tuple[str, float], ...]:
    names = [MI.name, *MI.names["en"]] if target == lang.PIVOT else MI.names[target]
    return tuple((name, 1.0 / len(names)) for name in names)


def _targets(code: str) -> list[str]:
    """The pivot for a question in another language; every other language for a pivot question."""
    return [lang.PIVOT] if code != lang.PIVOT else [c for c in lang.codes() if c != lang.PIVOT]


@pytest.mark.parametrize("code", CODES)
def test_a_question_is_translated_with_its_entity_names(code: str) -> None:
    with registered():
        glossary = _glossary()
        assert glossary.languages() == [c for c in lang.codes() if c != lang.PIVOT]  # every other language
        translator = OntologyTranslator(ENTITIES.get, glossary=glossary)
        _, name, dropped = QUESTIONS[code]
        for target in _targets(code):
            translation = translator.translate(_question(code), target)
            assert translation is not None
            assert _names(target) in translation.groups  # the entity's names in the target language
            alternatives = {alt for group in translation.groups for alt, _ in group}
            assert EXPECTED[(code, target)] <= alternatives
            assert not alternatives & (dropped | {name})  # function words dropped, the name replaced
            assert all(sum(w for _, w in group) == pytest.approx(1.0) for group in translation.groups)


@pytest.mark.parametrize("code", CODES)
def test_without_a_dictionary_entity_names_are_still_translated(code: str) -> None:
    """An empty glossary (no dictionary for any language): the entity's names are substituted; words
    nothing glosses are kept as written in a spaced language and dropped in a segmented one."""
    with registered():
        translator = OntologyTranslator(ENTITIES.get, glossary=Glossary())
        for target in _targets(code):
            translation = translator.translate(_question(code), target)
            assert translation is not None and _names(target) in translation.groups
            assert QUESTIONS[code][1] not in translation.text
            if lang.get(code).glossary.segment is not None:  # segmented: no gloss, no word
                assert translation.groups == (_names(target),)
            # nothing linked: a translation only where the pack respells its words (German loan words)
            unlinked = translator.translate(_question(code, linked=False), target)
            assert (unlinked is None) == (lang.get(code).glossary.respell is None)
        if code == "fr":  # the pack has no dictionary at all: the same translation with the glossary
            expected = (_names(lang.PIVOT), (("aggrave", 1.0),), (("pronostic", 1.0),))
            assert translator.translate(_question(code), lang.PIVOT).groups == expected  # type: ignore[union-attr]
            with_glossary = OntologyTranslator(ENTITIES.get, glossary=_glossary())
            assert with_glossary.translate(_question(code), lang.PIVOT).groups == expected  # type: ignore[union-attr]


@pytest.mark.parametrize("code", CODES)
def test_each_pack_cuts_its_question_into_words(code: str) -> None:
    with registered():
        rules = lang.get(code).glossary
        glossary = _glossary()
        text, name, dropped = QUESTIONS[code]
        bounds = glossary.boundaries(text, code)
        if rules.segment is not None:  # segmented: the entity's name is one dictionary word
            segments = glossary.segments(text, code)
            assert segments[0] == (name, (MI.name,)) and {seg for seg, _ in segments} >= dropped
            assert all(glosses == () for seg, glosses in segments if seg in dropped)
            assert 1 not in bounds and len(name) in bounds  # no word boundary inside the name
        else:  # spaced: words as written, every offset a boundary
            assert glossary.segments(text, code) == []
            assert set(name.split()) | dropped <= set(rules.words.findall(text))
            assert bounds == set(range(len(text) + 1))


@pytest.mark.parametrize(("code", "word"), [("de", "Herzkrankheiten"), ("fr", "cardiopathies")])
def test_a_plural_is_glossed_through_the_packs_endings(code: str, word: str) -> None:
    with registered():
        glossary = _glossary()
        assert glossary.glosses(word, code) == [(HD.name,)]
        assert glossary.lookup(word, code) == ()  # not as written: through a lemma
        assert HD.names[code][0] in lemmas(word, lang.get(code).glossary)
