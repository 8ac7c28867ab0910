"""German names from the Ding German–English dictionary, paired with their English translations.

Ding (Frank Richter, TU Chemnitz; GPL-2+) is packaged by Debian as ``trans-de-en``
(``/usr/share/trans/de-en``). Each line is one entry, German side and English side separated by
``::``; each side holds the same number of ``|``-separated senses (the headword, its plural, then
compounds and phrases), and each sense holds ``;``-separated alternatives::

    Lunge {f} [anat.] | Lungen {pl} | gefesselte Lunge :: lung | lungs | trapped lung

Only senses with a medical subject label (``[med.]``, ``[anat.]``, ``[pharm.]``, ...) on their
German side, or in an entry whose headword has one, are read: an unlabelled ``Kultur`` is culture
in the arts, and joining it to MeSH's Culture would make a false friend of every microbiological
culture in a clinical letter. Verbs, adjectives and phrases with placeholders (``etw.``, ``jdn.``)
are left out: MeSH names things.

Within an entry, alternatives marked colloquial, humorous, slang, vulgar or pejorative are dropped
(``Tage [ugs.]`` is a period, not days), and so are a German alternative with no capitalised word
(a verb or adjective the entry does not mark) and an all-capitals one (an acronym: German clinical
abbreviations come from the curated table, ``medgraph.text.abbreviations``).

``read_ding`` yields ``(german, english, rank)`` pairs: every German alternative of a sense with
every English alternative of the same sense. ``rank`` orders the readings of one German word: the
first alternative of an entry's headword sense comes first (``Lungenentzündung {f}; Pneumonie {f}
:: pneumonia`` outranks the same word as a second alternative under bronchopneumonia), then the
English alternatives in their order (``Kropf {m} :: goitre; ... crop`` reads goitre first). The
vocabulary build joins the English side to MeSH and keeps each German word's best-ranked
descriptor (``medgraph.ontology.build``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import IO, NamedTuple

# Subject labels whose entries name medical, anatomical, pharmacological or biochemical things.
# (Not "psych.": its entries are mostly everyday words, Grund → motive, Augenmerk → attention.)
MEDICAL_LABELS = frozenset({"med.", "anat.", "pharm.", "biochem.", "physiol."})

_LABEL = re.compile(r"\[([^\]]+)\]")
_NOT_A_NOUN = re.compile(r"\{(?:vt|vi|vr|adj|adv|prp|conj|num|interj|ppron|art|vimp|v)\}")
_PLACEHOLDER = re.compile(r"\b(?:etw|jdn|jdm|jds|sth|sb|so)\.|…|\.\.\.")
_UNWANTED = re.compile(r"\[(?:humor\.|slang|vulg\.|pej\.|ugs\.|coll\.)\]")
_NOISE = re.compile(r"\{[^}]*\}|\[[^\]]*\]|\([^)]*\)|/[^/]*/|<[^>]*>")
_SECONDARY = 1000  # rank offset of every reading that is not an entry's headword


class DingPair(NamedTuple):
    german: str
    english: str
    rank: int


def _clean(alternative: str) -> str:
    return " ".join(_NOISE.sub(" ", alternative).split()).strip(" ,;:")


def _alternatives(sense: str, *, german: bool) -> list[str]:
    out = []
    for raw in sense.split(";"):
        if _PLACEHOLDER.search(raw) or _UNWANTED.search(raw) or (german and _NOT_A_NOUN.search(raw)):
            continue
        text = _clean(raw)
        if len(text) < (4 if german else 3) or text[0].isdigit():
            continue  # three-letter German words are mostly everyday words (Mal: time, not mole)
        if german and not any(word[:1].isupper() for word in text.split()):
            continue
        if german and not any(c.islower() for c in text):  # an acronym: too ambiguous here
            continue
        out.append(text)
    return out


def provenance(fh: IO[str]) -> dict[str, str]:
    """The file's ``# Key :: value`` header lines (version, copyright, licence, URL)."""
    out: dict[str, str] = {}
    for line in fh:
        if not line.startswith("#"):
            break
        if " :: " in line:
            key, value = line[1:].split(" :: ", 1)
            out[key.strip().lower()] = value.strip()
    return out


def read_ding(fh: IO[str], labels: frozenset[str] = MEDICAL_LABELS) -> Iterator[DingPair]:
    """German–English pairs of the labelled noun entries of a Ding file."""
    for line in fh:
        if line.startswith("#") or " :: " not in line:
            continue
        german, english = line.rstrip("\n").split(" :: ", 1)
        if not labels.intersection(_LABEL.findall(german)):
            continue
        de_senses, en_senses = german.split(" | "), english.split(" | ")
        if len(de_senses) != len(en_senses):
            de_senses, en_senses = de_senses[:1], en_senses[:1]
        headword_medical = bool(labels.intersection(_LABEL.findall(de_senses[0])))
        for i, (de_sense, en_sense) in enumerate(zip(de_senses, en_senses, strict=True)):
            if not (headword_medical or labels.intersection(_LABEL.findall(de_sense))):
                continue  # a medical sub-sense of a general word: only that sense is read
            de_alts = _alternatives(de_sense, german=True)
            en_alts = _alternatives(en_sense, german=False)
            for j, de in enumerate(de_alts):
                headword = i == 0 and j == 0
                for k, en in enumerate(en_alts):
                    yield DingPair(de, en, k if headword else _SECONDARY + k)
