"""The German pack's glossary section: Ding glosses, German lemmas and compounds, loan-word respelling."""

from __future__ import annotations

import re

from medgraph.lang.de.morphology import DE_FUNCTION_WORDS, FUGEN, loan_spellings
from medgraph.lang.sections.glossary import GlossaryRules
from medgraph.text.keys import fold

# German words that only carry the question's form: no gloss
DE_QUESTION_WORDS = frozenset(
    "ist sind war waren wird werden wurde wurden hat haben hatte hatten kann können konnte könnte "
    "könnten muss müssen soll sollte sollten darf dürfen gibt gab es sich man welche welcher welches "
    "welchen welchem was wer wie wann wo warum wieso weshalb ob dass als auch noch nur schon etwa bzw "
    "nicht kein keine keinen keiner eigentlich tatsächlich überhaupt wirklich denn doch sowie beziehungsweise".split()
)
MIN_RESPELLED = 4  # shorter German words are left as they are
# German derivational endings → English ones (first match wins), applied before the loan-word rules
_DE_SUFFIXES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), english)
    for pattern, english in (
        (r"isierend(?:e[nmrs]?)?$", "izing"),  # nekrotisierende → necrotizing
        (r"fizierung(?:en)?$", "fication"),  # Identifizierung → identification
        (r"isierung(?:en)?$", "ization"),  # Somatisierung → somatization
        (r"ierung(?:en)?$", "ation"),  # Implantierung → implantation
        (r"iert(?:e[nmrs]?)?$", "ated"),  # aktiviert → activated
        (r"ität(?:en)?$", "ity"),  # Kapazität → capacity
        (r"är(?:e[nmrs]?)?$", "ar"),  # hepatozellulären → hepatocellular
        (r"iv(?:e[nmrs]?)?$", "ive"),  # invasiven → invasive
        (r"ik(?:en)?$", "ics"),  # Diagnostik → diagnostics
        (r"gra(?:f|ph)ie(?:n)?$", "graphy"),  # Myelografie → myelography
    )
)


def english_spellings(word: str) -> list[str]:
    """English spellings of a German word read as a Latin/Greek loan word (the linker's loan-word
    rules, after the word's derivational ending is put into English).

    ``Fasziitis`` → [fasciitis, ...]; ``nekrotisierende`` → [..., necrotizing]. Function words and
    short words give none; the word's own folded form is not repeated. Most spellings are not
    English words; they match nothing.
    """
    lower = word.lower()
    own = fold(lower)
    if len(lower) < MIN_RESPELLED or own in DE_FUNCTION_WORDS:
        return []
    # the ending rules run before the loan-word rules (``-ären`` is gone once ``ä`` is folded) and
    # after them (``-isierend`` becomes ``-izing`` only after ``z`` → ``c`` ran on the stem)
    spellings = [s for form in (lower, *_derived(lower)) for s in loan_spellings(form)]
    spellings += [d for s in spellings for d in _derived(s)]
    return list(dict.fromkeys(s for s in spellings if s != own and len(s) >= MIN_RESPELLED))


def _derived(word: str) -> list[str]:
    """``word`` with its German derivational ending in English (the first rule that fits), or []."""
    for pattern, english in _DE_SUFFIXES:
        if pattern.search(word):
            return [pattern.sub(english, word)]
    return []


GLOSSARY = GlossaryRules(
    dictionary="ding",  # Debian's trans-de-en (Ding)
    function_words=DE_FUNCTION_WORDS,
    question_words=DE_QUESTION_WORDS,
    capitalised_nouns=True,
    case_endings=("ern", "ens", "es", "en", "er", "em", "e", "s", "n"),  # primären → primär, Kindern → Kinder
    verb_endings=("test", "tet", "ten", "te", "t", "st"),  # verschlechtert → verschlechtern
    infinitive_endings=("en", "n"),
    participle=re.compile(r"^(ge)(\w{3,}?)(?:t|te|ten|tem|ter|tes|et|ete|eten)$"),  # gestörte → stören
    compound_linking=FUGEN,  # Leber·metastasen, Patient·en·versorgung
    min_part=3,
    respell=english_spellings,  # Fasziitis → fasciitis
)
