"""German spelling variants and morphology, tried when the dictionary misses.

Input: a German surface string and, for German compounds, a ``GermanLexicon`` built from the
vocabulary's German names. Output: candidate strings (``german_forms``) or a German index key
(``GermanLexicon.key``) the linker looks up.

German (general rules, no term lists):
- inflection: ``-en``, ``-n``, ``-e``, ``-es``, ``-s``, ``-er`` endings stripped (``Entzündungen`` →
  ``Entzündung``); umlauts written as ``ae``/``oe``/``ue`` folded like ``ä``/``ö``/``ü``;
- Latin/Greek loan words in German spelling → English/Latin spelling (``k``/``z`` → ``c``,
  ``ä`` → ``e``, ``-ose`` → ``-osis``, ``-ie`` → ``-ia``/``-y``, ``-om`` → ``-oma``, ``-ismus`` →
  ``-ism``, ``-isch`` → ``-ic``, ``-(i)ämie`` → ``-emia``, ``-ös`` → ``-ous``, ``-enz`` → ``-ence``,
  ``-ell`` → ``-al``, ``-em`` → ``-ema``, ``-ur`` → ``-ure``): ``Sklerose`` → ``sclerosis``,
  ``Hypokaliämie`` → ``hypokalemia``, ``Karzinome`` → ``carcinoma``, ``Inkontinenz`` → ``incontinence``;
- compounds: a word split into parts the German vocabulary knows, with linking ``s``/``n``/``en``/
  ``es``/``e`` (Fugen) dropped; ``GermanLexicon.key`` is the sorted stems of all parts, so
  ``Lungenentzündung`` and ``Entzündung der Lunge`` share a key.

Morphology for the German index keys and the gazetteer (general rules, no term lists):
- ``de_snowball``: the German Snowball stemmer (PyStemmer, already the lexical retrieval path's
  stemmer) on folded words: ``Nierenerkrankungen`` / ``Nierenerkrankung`` → ``nierenerkrank``,
  ``chronischer`` / ``chronischen`` → ``chronisch``; the linker's ``GermanLexicon`` keys use it
  (``stemmer="snowball"``; ``"simple"``, the lexicon's default, is the one-ending ``de_stem``),
  chosen on the held-out German dev names;
- ``german_inflections``: the inflected forms of a German name the gazetteer also matches in German
  text: noun plural/genitive endings by the noun's ending (``-e`` → ``-en``, ``-ung`` → ``-ungen``,
  ``-om`` → ``-ome``, ``-itis`` → ``-itiden``, …) and adjective endings (``chronische`` →
  ``chronischen``/``chronischer``/``chronisches``/``chronischem``);
- ``german_spellings``: the German spellings of an English Latin/Greek medical name (the loan-word
  rules above run backwards: ``pneumonia`` → ``pneumonie``, ``carcinoma`` → ``karzinom``,
  ``osteoporosis`` → ``osteoporose``, ``hypoglycemia`` → ``hypoglykamie``, ``furosemide`` →
  ``furosemid``, ``diabetic nephropathy`` → ``diabetische nephropathie``), each with its
  inflections; the gazetteer adds them as German-only keys.

For glossing a term part by part (``medgraph.link.compose``): ``DE_MORPHEMES`` (general
word-formation elements with their English glosses), ``de_key`` (the key a word or compound part is
looked up by) and ``FUGEN``; ``compound_key`` builds the linker's ``GermanLexicon``. The German pack's
lexicon section (``medgraph.lang.de.lexicon``) names these hooks.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable
from functools import lru_cache

import Stemmer

from medgraph.text.keys import fold, match_key

MAX_FORMS = 24
_DE_ENDINGS = ("en", "es", "er", "e", "n", "s")
FUGEN = ("es", "en", "s", "n", "e")  # linking elements between the parts of a compound
DE_FUNCTION_WORDS = frozenset(
    {"der", "die", "das", "des", "dem", "den", "von", "vom", "mit", "und", "oder", "bei", "im", "am",
     "an", "in", "zu", "zur", "zum", "durch", "nach", "ohne", "fur", "ein", "eine", "einer", "eines"}
)
# ordered: longer endings first; each (German ending, English/Latin endings)
_LOAN_ENDINGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ismus", ("ism",)),
    ("enz", ("ence", "ency")),
    ("anz", ("ance",)),
    ("ell", ("al",)),
    ("itat", ("ity",)),
    ("ische", ("ic", "ical")),
    ("ischer", ("ic", "ical")),
    ("isches", ("ic", "ical")),
    ("isch", ("ic", "ical")),
    ("iemie", ("emia",)),
    ("emie", ("emia",)),
    ("ose", ("osis",)),
    ("ase", ("ase", "asis")),
    ("ie", ("ia", "y")),
    ("om", ("oma",)),
    ("em", ("ema",)),
    ("ur", ("ure",)),
    ("al", ("al", "ary")),
    ("in", ("ine", "in")),
    ("e", ("", "e")),
)


def de_stem(word: str) -> str:
    """Strip one German inflection ending, keeping at least four letters."""
    for ending in _DE_ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 4:
            return word[: -len(ending)]
    return word


_SNOWBALL = Stemmer.Stemmer("german")


@lru_cache(maxsize=200_000)
def de_snowball(word: str) -> str:
    """German Snowball stem of one (folded) word: ``erkrankungen`` → ``erkrank``."""
    return str(_SNOWBALL.stemWord(word))


# noun endings → the endings of its plural / genitive forms (first match wins; ordered)
_NOUN_ENDINGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("itis", ("itiden",)),
    ("ung", ("ungen",)),
    ("heit", ("heiten",)),
    ("keit", ("keiten",)),
    ("ion", ("ionen",)),
    ("tat", ("taten",)),
    ("ie", ("ien",)),
    ("e", ("en",)),
    ("enz", ("enzen",)),
    ("anz", ("anzen",)),
    ("ur", ("uren",)),
    ("en", ("ens",)),
    ("um", ("en", "ums")),
    ("om", ("ome", "oms", "omen")),
    ("em", ("eme", "ems", "emen")),
    ("ik", ("iken",)),
    ("in", ("ins", "ine", "inen")),
    ("el", ("els", "eln")),
    ("er", ("ers", "ern")),
    ("", ("e", "es", "s", "en")),
)
_ADJECTIVE_ENDINGS = ("e", "en", "er", "es", "em")
MAX_INFLECTIONS = 24


def noun_inflections(noun: str) -> list[str]:
    """Plural and genitive forms of a (folded) German noun, by its ending."""
    if len(noun) < 4 or not noun.isalpha():
        return []
    for ending, forms in _NOUN_ENDINGS:
        if noun.endswith(ending):
            stem = noun[: len(noun) - len(ending)]
            return [stem + f for f in forms if stem + f != noun]
    return []


def adjective_stem(word: str) -> str | None:
    """The stem of an inflected German adjective (``chronische`` → ``chronisch``), else None."""
    for ending in ("em", "en", "er", "es", "e"):
        if word.endswith(ending) and len(word) - len(ending) >= 3 and word.isalpha():
            return word[: -len(ending)]
    return None


def noun_bases(key: str) -> list[str]:
    """The forms a one-word German noun ``key`` (``match_key`` spelling) may be the dative plural or
    the genitive singular of, for a dictionary that lists nominative singular and plural only:
    ``kindern`` → ``kinder``, ``mausen`` → ``mause`` (dative plural: an ``-n`` after a plural in
    ``-e``/``-er``/``-el``), ``arztes`` → ``arzt``, ``wassers`` → ``wasser`` (genitive ``-es``, or
    ``-s`` after ``-er``/``-el``/``-en``)."""
    if " " in key or len(key) < 6:
        return []
    out = []
    if key.endswith(("en", "ern", "eln")):
        out.append(key[:-1])
    if key.endswith("es"):
        out.append(key[:-2])
    if key.endswith(("ers", "els", "ens")):
        out.append(key[:-1])
    return out


def german_inflections(term: str) -> list[str]:
    """Inflected forms (``match_key`` spelling) of a German name: adjectives before the last word
    with every adjective ending, the last word with its plural / genitive endings."""
    words = match_key(term).split()
    if not words or len(words) > 4 or any(not w.isalpha() for w in words):
        return []
    options: list[list[str]] = []
    for word in words[:-1]:
        stem = adjective_stem(word) if word not in DE_FUNCTION_WORDS else None
        options.append([word, *(stem + e for e in _ADJECTIVE_ENDINGS if stem + e != word)] if stem else [word])
    options.append([words[-1], *noun_inflections(words[-1])])
    key = " ".join(words)
    forms = (" ".join(c) for c in itertools.product(*options))
    return [f for f in itertools.islice(forms, MAX_INFLECTIONS + 1) if f != key][:MAX_INFLECTIONS]


# English endings → German endings of Latin/Greek medical words (the loan rules run backwards)
_EN_TO_DE_ENDINGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("aemia", ("amie",)),
    ("emia", ("amie",)),
    ("entia", ("enz",)),
    ("osis", ("ose",)),
    ("esis", ("ese",)),
    ("asis", ("ase",)),
    ("omas", ("ome",)),
    ("oma", ("om",)),
    ("ism", ("ismus",)),
    ("ence", ("enz",)),
    ("ance", ("anz",)),
    ("ics", ("ik",)),
    ("ia", ("ie",)),
    ("ea", ("oe",)),
    ("y", ("ie",)),
    ("ine", ("in",)),
    ("ide", ("id",)),
    ("ate", ("at",)),
    ("one", ("on",)),
    ("ome", ("om",)),
    ("ure", ("ur",)),
    ("ous", ("os",)),
)
# English adjective endings → German adjective stems (inflected with _ADJECTIVE_ENDINGS)
_EN_TO_DE_ADJECTIVES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ical", ("isch",)),
    ("ic", ("isch",)),
    ("ary", ("ar", "al")),
    ("al", ("al", "ell")),
    ("ive", ("iv",)),
    ("ous", ("os",)),
    ("ar", ("ar",)),
    ("ute", ("ut",)),
)
MIN_SPELLING = 6


def _german_letters(word: str) -> list[str]:
    """``c`` → ``k`` (and → ``z`` before e/i/y, the Latin rule), ``ct`` → ``kt``: both spellings."""
    all_k = re.sub(r"c(?!h)", "k", word.replace("ck", "k"))
    latin = re.sub(r"c(?=[eiy])", "z", word.replace("ck", "k"))
    latin = re.sub(r"c(?!h)", "k", latin)
    return list(dict.fromkeys((latin, all_k)))


def _german_word(word: str, endings: tuple[tuple[str, tuple[str, ...]], ...]) -> list[str]:
    out: list[str] = []
    for ending, replacements in endings:
        if word.endswith(ending) and len(word) > len(ending) + 2:
            out += [word[: len(word) - len(ending)] + r for r in replacements]
            break
    else:
        out.append(word)
    return list(dict.fromkeys(s for w in out for s in _german_letters(w)))


def german_spellings(english: str) -> list[str]:
    """German spellings (folded, umlauts as plain vowels) of an English Latin/Greek name of one or
    two words (an adjective and a noun), each with its inflections; the name itself excluded."""
    key = match_key(english)
    words = key.split()
    if not key.isascii() or not 1 <= len(words) <= 2 or any(not w.isalpha() for w in words) or "," in english:
        return []
    nouns = [n for n in _german_word(words[-1], _EN_TO_DE_ENDINGS) if len(n) >= MIN_SPELLING]
    if len(words) == 1:  # an English word German spells alike matches as it is (no new inflections)
        nouns = [n for n in nouns if n != words[0]]
    if len(words) == 1:
        bases = nouns
        forms = [*bases, *(f for n in bases for f in noun_inflections(n))]
    else:
        stems: list[str] = []
        for ending, replacements in _EN_TO_DE_ADJECTIVES:
            if words[0].endswith(ending) and len(words[0]) > len(ending) + 1:
                stems = [words[0][: len(words[0]) - len(ending)] + r for r in replacements]
                break
        # attributive endings only (chronische, chronischen, chronischer, chronisches), the Latin
        # spelling only, the noun and its first plural form: a bounded number of keys per name
        adjectives = [_german_letters(s)[0] + e for s in stems for e in _ADJECTIVE_ENDINGS[:4]]
        nouns = nouns[:1]
        forms = [f"{a} {n}" for a in adjectives for n in (*nouns, *noun_inflections(nouns[0])[:1])] if nouns else []
    return [f for f in dict.fromkeys(forms) if f != key]


def umlaut_folded(text: str) -> str:
    """``ae``/``oe``/``ue`` after a consonant read as ``ä``/``ö``/``ü`` (folded: a/o/u)."""
    return re.sub(r"(?<=[^aeiou\s])([aou])e", r"\1", text)


def loan_spellings(word: str) -> list[str]:
    """English/Latin spellings of one German loan word (lower-case, umlauts kept in ``word``)."""
    word = re.sub(r"ös(?:e[nrs]?)?$", "ous", word)  # perniziös → pernicious, infektiös → infectious
    base = word.replace("ä", "e").replace("ae", "e").replace("ö", "e").replace("ü", "u").replace("ß", "ss")
    base = fold(base)
    with_c = re.sub(r"k(?=[^h])|k$", "c", base.replace("kk", "cc"))
    with_c = re.sub(r"(?<![ck])z(?=[eiy])", "c", with_c)  # Karzinom → carcinoma, Ekzem → eczema
    out: list[str] = []
    for spelling in dict.fromkeys((with_c, base, de_stem(with_c))):
        out.append(spelling)
        for ending, replacements in _LOAN_ENDINGS:
            if spelling.endswith(ending) and len(spelling) > len(ending) + 2:
                out += [spelling[: -len(ending)] + r for r in replacements]
                break
    return list(dict.fromkeys(out))


def german_forms(surface: str) -> list[str]:
    """Inflection, umlaut and loan-word spellings of a German surface (the surface itself excluded)."""
    words = surface.lower().split()
    if not words or len(words) > 6:
        return []
    per_word: list[list[str]] = []
    for word in words:
        folded = fold(word)
        options = [folded, de_stem(folded), umlaut_folded(folded), *loan_spellings(word)]
        per_word.append(list(dict.fromkeys(o for o in options if o)))
    forms: list[str] = []
    for combo in itertools.islice(itertools.product(*per_word), MAX_FORMS * 4):
        form = " ".join(combo)
        if form != fold(surface) and form not in forms:
            forms.append(form)
        if len(forms) >= MAX_FORMS:
            break
    return forms


class GermanLexicon:
    """Known German word stems (from the vocabulary's German names) for splitting compounds."""

    def __init__(self, terms: Iterable[str], min_part: int = 4, stemmer: str = "simple") -> None:
        """``stemmer``: ``simple`` (``de_stem``, one ending) or ``snowball`` (German Snowball, which
        the linker uses)."""
        self.min_part = min_part
        self.stem: Callable[[str], str] = de_snowball if stemmer == "snowball" else de_stem
        self.parts: set[str] = set()
        for term in terms:
            for word in umlaut_folded(match_key(term)).split():
                if len(word) >= min_part and word.isalpha() and word not in DE_FUNCTION_WORDS:
                    self.parts.add(self.stem(word))

    def _known(self, part: str) -> bool:
        return len(part) >= self.min_part and (part in self.parts or self.stem(part) in self.parts)

    def _modifier(self, part: str) -> str | None:
        if self._known(part):
            return self.stem(part)
        for fuge in FUGEN:
            if part.endswith(fuge) and self._known(part[: -len(fuge)]):
                return self.stem(part[: -len(fuge)])
        return None

    def split(self, word: str, depth: int = 2) -> list[str]:
        """Stems of the parts of a compound (the longest known head first), or ``[stem(word)]``."""
        for i in range(self.min_part, len(word) - self.min_part + 1):
            head = word[i:]
            if not self._known(head):
                continue
            modifier = self._modifier(word[:i])
            if modifier is not None:
                parts = self.split(word[:i], depth - 1) if depth > 1 else []
                return [*(parts if len(parts) > 1 else [modifier]), self.stem(head)]
        return [self.stem(word)]

    def key(self, term: str) -> str:
        """Sorted part stems of a German term (function words dropped, compounds split)."""
        words = [w for w in umlaut_folded(match_key(term)).split() if w not in DE_FUNCTION_WORDS]
        parts = [p for w in words for p in (self.split(w) if w.isalpha() else [w])]
        return " ".join(sorted(parts))


def compound_key(names: Iterable[str], full: bool) -> GermanLexicon:
    """The compound lexicon of the vocabulary's German ``names``: Snowball stems when ``full``, else
    the one-ending ``de_stem``."""
    return GermanLexicon(names, stemmer="snowball" if full else "simple")


def de_key(word: str) -> str:
    """The key a German word or compound part is looked up by (folded, umlauts as vowels, stemmed)."""
    return de_stem(umlaut_folded(match_key(word).replace(" ", "")))


# general word-formation elements of German medical terms (disease heads, the neoplasm heads MeSH
# files cancers under, deficiency / failure / calculus, course and origin modifiers), with their
# English glosses, for glossing a compound part by part (``medgraph.link.compose``)
_NEOPLASMS = ("neoplasms", "cancer")
DE_MORPHEMES: dict[str, tuple[str, ...]] = {
    "krebs": _NEOPLASMS, "karzinom": ("carcinoma", *_NEOPLASMS), "tumor": ("neoplasms", "tumor"),
    "geschwulst": _NEOPLASMS, "mangel": ("deficiency",), "erkrankung": ("disease", "diseases"),
    "krankheit": ("disease", "diseases"), "leiden": ("disease", "disorder"), "storung": ("disorder", "disorders"),
    "entzundung": ("inflammation",), "stein": ("calculi", "stones"), "versagen": ("failure",),
    "insuffizienz": ("insufficiency", "failure"), "schwache": ("weakness", "insufficiency"),
    "blutung": ("hemorrhage",), "verletzung": ("injury", "injuries"), "syndrom": ("syndrome",),
    "zyste": ("cyst", "cysts"), "infarkt": ("infarction",), "vergiftung": ("poisoning",),
    "lahmung": ("paralysis",), "missbildung": ("abnormalities", "malformation"), "fehlbildung": ("abnormalities",),
    "angeboren": ("congenital",), "erblich": ("hereditary",), "gutartig": ("benign",), "bosartig": ("malignant",),
    "erworben": ("acquired",), "fortschreitend": ("progressive",), "wiederkehrend": ("recurrent",),
    "neugeboren": ("neonatal", "newborn"), "kind": ("child", "childhood"), "schwangerschaft": ("pregnancy",),
}
