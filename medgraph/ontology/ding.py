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

``read_ding_general`` yields the pairs of the other entries (everyday nouns: Ratte → rat), each word
from its first entry only; the build joins them into ``Vocabulary.general_words``, which only the
linker reads, for German spans it is given.
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
# A German alternative written with its article (die Menschen {pl}, das Äußere {n}): the article is
# not part of the word a text or a span has.
_ARTICLE = re.compile(r"^(?:der|die|das) (?=[A-ZÄÖÜ])")
# Ding's subject labels outside the life sciences: a general entry carrying one names a thing of
# that field (Einsatz: a mission; Besetzung: a cast), and so does a figurative or colloquial one
# (Allgemeinplätze [übtr.]: platitudes, "bromides"). A general entry is read when its headword sense
# has none of these (unlabelled, or labelled zool., bot., ornith., biol., chem., myc., envir., sci.,
# statist., or with a region or register only), and then without its sub-senses that have one.
OTHER_SUBJECTS = frozenset(
    "techn. geogr. comp. econ. fin. jur. adm. cook. electr. pol. soc. mil. constr. min. sport auto "
    "hist. textil. mus. phys. agr. geol. math. relig. ling. naut. mach. aviat. telco. psych. art lit. "
    "transp. phil. school arch. print meteo. astron. stud. photo. astrol. archeol. Jägersprache "
    "übtr. fig. ugs. slang vulg. pej. humor. iron. euphem. Kindersprache Jugendsprache".split(" ")
)
_SECONDARY = 1000  # rank offset of every reading that is not an entry's headword


class DingPair(NamedTuple):
    german: str
    english: str
    rank: int


_OPEN, _CLOSE = "({[", ")}]"


def split_alternatives(sense: str) -> list[str]:
    """A sense's alternatives: split at the semicolons outside brackets and abbreviation slashes
    (``weight /w.; wt/`` is one alternative with two abbreviations, ``worsen {worsened; worsened}``
    one with its forms). An abbreviation slash opens after a space or at the start, before a
    non-space, and only where another slash closes it (``and/or`` and ``x / y`` open none)."""
    out, start, depth, in_slash = [], 0, 0, False
    for i, c in enumerate(sense):
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth = max(0, depth - 1)
        elif c == "/":
            if in_slash:
                in_slash = False
            elif (i == 0 or sense[i - 1] == " ") and sense[i + 1 : i + 2].strip() and "/" in sense[i + 1 :]:
                in_slash = True
        elif c == ";" and depth == 0 and not in_slash:
            out.append(sense[start:i])
            start = i + 1
    out.append(sense[start:])
    return out


def _clean(alternative: str) -> str:
    return " ".join(_NOISE.sub(" ", alternative).split()).strip(" ,;:")


def _alternatives(sense: str, *, german: bool) -> list[str]:
    out = []
    for raw in split_alternatives(sense):
        if _PLACEHOLDER.search(raw) or _UNWANTED.search(raw) or (german and _NOT_A_NOUN.search(raw)):
            continue
        text = _ARTICLE.sub("", _clean(raw)) if german else _clean(raw)
        if len(text) < (4 if german else 3) or text[0].isdigit():
            continue  # three-letter German words are mostly everyday words (Mal: time, not mole)
        if "!" in text or "?" in text:
            continue  # an utterance, not a name (Fuß! :: Heel!, a command to a dog)
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


def _pairs(de_alts: list[str], en_sense: str, headword_sense: bool) -> Iterator[tuple[str, str, bool, int]]:
    """(German, English, is the entry's headword, English position) of one sense, given its German
    alternatives (``_alternatives(de_sense, german=True)``)."""
    en_alts = _alternatives(en_sense, german=False)
    for j, de in enumerate(de_alts):
        for k, en in enumerate(en_alts):
            yield de, en, headword_sense and j == 0, k


def _senses(german: str, english: str) -> list[tuple[str, str]]:
    de_senses, en_senses = german.split(" | "), english.split(" | ")
    if len(de_senses) != len(en_senses):
        de_senses, en_senses = de_senses[:1], en_senses[:1]
    return list(zip(de_senses, en_senses, strict=True))


def read_ding(fh: IO[str], labels: frozenset[str] = MEDICAL_LABELS) -> Iterator[DingPair]:
    """German–English pairs of the labelled noun entries of a Ding file."""
    for line in fh:
        if line.startswith("#") or " :: " not in line:
            continue
        german, english = line.rstrip("\n").split(" :: ", 1)
        if not labels.intersection(_LABEL.findall(german)):
            continue
        senses = _senses(german, english)
        headword_medical = bool(labels.intersection(_LABEL.findall(senses[0][0])))
        for i, (de_sense, en_sense) in enumerate(senses):
            if not (headword_medical or labels.intersection(_LABEL.findall(de_sense))):
                continue  # a medical sub-sense of a general word: only that sense is read
            for de, en, headword, k in _pairs(_alternatives(de_sense, german=True), en_sense, i == 0):
                yield DingPair(de, en, k if headword else _SECONDARY + k)


def read_ding_general(fh: IO[str], labels: frozenset[str] = MEDICAL_LABELS) -> Iterator[DingPair]:
    """German–English pairs of the noun entries with no medical label (``read_ding`` reads the others).

    These are everyday words (Ratte: rat, Frau: woman, Kind: child). The vocabulary keeps them apart
    from every name (``Vocabulary.general_words``): the linker reads them only for a German span it
    is given, never to find mentions in running text. A word is read in the first entry it appears
    in only: Ding lists a word's main sense first (Frau: woman, then wife; Ende: an end, then a
    tail, a quietus), so when the main sense names nothing in MeSH, a later one must not stand in for
    it; and not at all when that entry is medical or from another field. ``rank`` as in ``read_ding``.
    """
    seen: set[str] = set()
    for line in fh:
        if line.startswith("#") or " :: " not in line:
            continue
        german, english = line.rstrip("\n").split(" :: ", 1)
        senses = [(_alternatives(de, german=True), de, en) for de, en in _senses(german, english)]
        words = {de for de_alts, _, _ in senses for de in de_alts}
        fresh = words - seen
        seen |= words
        if not fresh or labels.intersection(_LABEL.findall(german)):
            continue
        for i, (de_alts, de_sense, en_sense) in enumerate(senses):
            if OTHER_SUBJECTS.intersection(_LABEL.findall(f"{de_sense} {en_sense}")):
                if i == 0:
                    break  # the headword's field is the entry's: Bahre [techn.] | Bahren
                continue  # a figurative or technical sub-sense: only that one is dropped
            for de, en, headword, k in _pairs(de_alts, en_sense, i == 0):
                if de in fresh:
                    yield DingPair(de, en, k if headword else _SECONDARY + k)


# --- glosses for query translation (medgraph.ontology.glossary) -------------------------------

_REFLEXIVE = re.compile(r"^(?:sich|etw\.|jdn\.|jdm\.|jds\.)\s+")
_EN_PLACEHOLDER = re.compile(r"\b(?:sth|sb|so)\.|\bsomething\b|\bsomebody\b|\bone's\b|…|\.\.\.")


def english_gloss(alternative: str) -> str:
    """An English alternative as a gloss: markup and placeholders dropped, an infinitive's ``to`` cut
    (``to worsen {worsened; worsened}`` → ``worsen``)."""
    text = " ".join(_EN_PLACEHOLDER.sub(" ", _NOISE.sub(" ", alternative)).split()).strip(" ,;:")
    return text[3:] if text.startswith("to ") else text


def read_ding_glosses(fh: IO[str], per_word: int = 6) -> Iterator[tuple[str, tuple[str, ...]]]:
    """``(German word, English glosses)`` for every one-word German alternative of every entry, all
    parts of speech (``verschlechtern`` → worsen ...): the glossary that translates the words of a
    German question (``medgraph.ontology.glossary``). A word's glosses are those of the senses it is
    listed in, at most ``per_word``: first those more of its senses give, then in file order (Ding
    lists a word's main sense first, but a word that is one synonym among several shares a sense's
    English with the others: "Ausdünstung; Dunst; Dampf; Brodem :: exhalation; effluvium; damp;
    reek; steam; vapour" comes before "Wasserdampf; Dampf :: steam" and "Dampf :: vapour", and the
    glosses two senses agree on, steam and vapour, are the word's). The German side is the word as
    written (case kept: nouns are capitalised)."""
    words: dict[str, dict[str, list[int]]] = {}  # word -> gloss -> [senses giving it, first position]
    for line in fh:
        if line.startswith("#") or " :: " not in line:
            continue
        german, english = line.rstrip("\n").split(" :: ", 1)
        for de_sense, en_sense in _senses(german, english):
            if _UNWANTED.search(de_sense):
                continue
            glosses = [g for g in (english_gloss(a) for a in split_alternatives(en_sense)) if 2 <= len(g) <= 40]
            if not glosses:
                continue
            for raw in split_alternatives(de_sense):
                if _UNWANTED.search(raw):
                    continue
                word = _REFLEXIVE.sub("", _ARTICLE.sub("", _clean(raw)))
                if " " in word or len(word) < 2 or not any(c.isalpha() for c in word):
                    continue
                have = words.setdefault(word, {})
                for gloss in dict.fromkeys(glosses):
                    if gloss in have:
                        have[gloss][0] += 1
                    else:
                        have[gloss] = [1, len(have)]
    for word, have in words.items():
        ranked = sorted(have.items(), key=lambda kv: (-kv[1][0], kv[1][1]))
        yield word, tuple(gloss for gloss, _ in ranked[:per_word])
