"""Glossary rules: the bilingual dictionary and word splitting that translate a question.

A question in a language other than the pivot (English, ``lang.PIVOT``) is translated word by word
(``medgraph.retrieve.translate``): its linked entities by their pivot names, the words around them
by the glosses of the vocabulary's glossary (``medgraph.ontology.glossary``), and back from the
pivot into the language by reading the glossary backwards. These rules say, for one language, where
its glosses come from, how a question is cut into words, which words carry no meaning of their own,
and how a word the dictionary lists only in its base form is looked up. Every field has a default
that turns its feature off, so a minimal pack (no dictionary) still translates entity names.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

# letters and digits outside the CJK blocks (CJK punctuation, ideographs, compatibility ideographs,
# full-width forms): the words of a language written with spaces, Chinese characters left out
SPACED_WORDS = re.compile("[^\\W_\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]+")


@dataclass(frozen=True)
class GlossaryRules:
    """How one language's words are glossed in the pivot language and found again from it.

    Lookup of a word (``Glossary.glosses``): the word as written, then its lemma candidates (the
    word in lower case and capitalised, without each of ``case_endings``; a verb form without each
    of ``verb_endings``, or a participle matching ``participle``, with each of
    ``infinitive_endings`` added), then, where ``compound_linking`` is set, a split of a compound
    into known parts, a modifier's linking element dropped. Segmentation (``Glossary.segments``):
    runs of ``segment`` characters are cut into dictionary words by bidirectional maximum matching.
    """

    dictionary: str | None = None  # vocabulary source kind of the general dictionary glossing it ("ding"); None: none
    words: re.Pattern[str] = SPACED_WORDS  # a residue's words in text order, as kept when nothing glosses them
    segment: re.Pattern[str] | None = None  # runs of characters cut into dictionary words; None: words are spaced
    max_segment: int = 8  # longest dictionary word the segmentation tries, in characters
    function_words: frozenset[str] = frozenset()  # folded words that only carry grammar: dropped, never glossed
    question_words: frozenset[str] = frozenset()  # lower-case words that only carry the question's form: dropped
    min_reverse: int = 1  # shortest word (in characters) the glossary reads backwards from a pivot gloss
    # nouns are written capitalised (German): a word written in lower case is no noun, so its
    # lower-case lemmas are tried before any capitalised form ("alkoholisches": alcoholic, not the
    # noun "Alkoholisches", booze)
    capitalised_nouns: bool = False
    case_endings: tuple[str, ...] = ()  # case and plural endings stripped for a lemma candidate, tried in order
    verb_endings: tuple[str, ...] = ()  # verb endings replaced by each of ``infinitive_endings``
    infinitive_endings: tuple[str, ...] = ()  # endings of an infinitive, the dictionary's form of a verb
    participle: re.Pattern[str] | None = None  # a participle; its group 2 plus an infinitive ending is the verb
    min_stem: int = 3  # shortest stem left by stripping an ending
    compound_linking: tuple[str, ...] | None = None  # linking elements of compounds; None: compounds not split
    min_part: int = 3  # shortest part of a compound
    respell: Callable[[str], list[str]] | None = None  # pivot spellings of a loan word the dictionary lacks
