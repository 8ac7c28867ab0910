"""Language-aware spelling variants of German and Chinese surfaces, tried when the dictionary misses.

Input: a surface string (German or Chinese) and, for German compounds, a ``GermanLexicon`` built
from the vocabulary's German names. Output: candidate strings (``german_forms``,
``chinese_forms``) or a German index key (``GermanLexicon.key``) the linker looks up.

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

Chinese: leading course/onset modifiers (``急性``, ``慢性``, ``原发性``, …) dropped, the disease
heads ``病`` / ``症`` / ``疾病`` / ``综合征`` / ``综合症`` swapped or dropped (``抑郁症`` ↔ ``抑郁``), and
``癌`` / ``癌症`` / ``恶性肿瘤`` / ``肿瘤`` swapped (MeSH files cancers under "neoplasms").
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

from medgraph.extract.text import fold, match_key

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
_CN_MODIFIERS = ("急性", "慢性", "亚急性", "原发性", "继发性", "先天性", "获得性", "特发性", "复发性", "遗传性")
_CN_HEADS = ("综合征", "综合症", "疾病", "病", "症")
# the MeSH convention that files cancers under "neoplasms" (as the English variant step does)
_CN_NEOPLASM = ("恶性肿瘤", "癌症", "癌", "肿瘤")


def de_stem(word: str) -> str:
    """Strip one German inflection ending, keeping at least four letters."""
    for ending in _DE_ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 4:
            return word[: -len(ending)]
    return word


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


def chinese_forms(surface: str) -> list[str]:
    """The surface without a leading modifier and with its disease head swapped or dropped."""
    key = match_key(surface).replace(" ", "")
    stems = [key]
    for modifier in _CN_MODIFIERS:
        if key.startswith(modifier) and len(key) - len(modifier) >= 2:
            stems.append(key[len(modifier):])
    forms: list[str] = []
    for stem in stems:
        forms.append(stem)
        for head in _CN_NEOPLASM:
            if stem.endswith(head) and len(stem) - len(head) >= 1:
                core = stem[: -len(head)]
                forms += [core + h for h in _CN_NEOPLASM if h != head]
                break
        for head in _CN_HEADS:
            if stem.endswith(head) and len(stem) - len(head) >= 2:
                core = stem[: -len(head)]
                forms += [core, *(core + h for h in _CN_HEADS if h != head)]
                break
        else:
            forms += [stem + h for h in _CN_HEADS]
    return [f for f in dict.fromkeys(forms) if f != key]


class GermanLexicon:
    """Known German word stems (from the vocabulary's German names) for splitting compounds."""

    def __init__(self, terms: Iterable[str], min_part: int = 4) -> None:
        self.min_part = min_part
        self.parts: set[str] = set()
        for term in terms:
            for word in umlaut_folded(match_key(term)).split():
                if len(word) >= min_part and word.isalpha() and word not in DE_FUNCTION_WORDS:
                    self.parts.add(de_stem(word))

    def _known(self, part: str) -> bool:
        return len(part) >= self.min_part and (part in self.parts or de_stem(part) in self.parts)

    def _modifier(self, part: str) -> str | None:
        if self._known(part):
            return de_stem(part)
        for fuge in FUGEN:
            if part.endswith(fuge) and self._known(part[: -len(fuge)]):
                return de_stem(part[: -len(fuge)])
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
                return [*(parts if len(parts) > 1 else [modifier]), de_stem(head)]
        return [de_stem(word)]

    def key(self, term: str) -> str:
        """Sorted part stems of a German term (function words dropped, compounds split)."""
        words = [w for w in umlaut_folded(match_key(term)).split() if w not in DE_FUNCTION_WORDS]
        parts = [p for w in words for p in (self.split(w) if w.isalpha() else [w])]
        return " ".join(sorted(parts))
