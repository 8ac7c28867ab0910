"""Text folding helpers shared by the vocabulary, the gazetteer NER and the linker.

Inputs: raw strings in any language (EN/DE/ZH). Outputs:

- ``fold(text)``: case-, diacritic- and width-folded string (NFKC, casefold, accents stripped,
  ``ß`` → ``ss``, traditional Chinese characters → simplified, one character for one, so
  ``腫瘤`` and ``肿瘤`` share every key); length may change.
- ``match_key(term)``: the key a term is stored under in the gazetteer: folded, every non
  alphanumeric character turned into a space, a space between CJK and other alphanumerics
  (``2型糖尿病`` → ``2 型糖尿病``), spaces collapsed.
- ``norm_key(term)``: a looser key for the linker: ``match_key`` tokens with British spellings,
  plural endings and function words normalised, sorted (word-order insensitive).
- ``fold_for_scan(text)``: the folded text the gazetteer scans plus a map from folded positions
  back to original character offsets, so matches are reported on the original text.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import zhconv

_ASCII_SCAN = str.maketrans({chr(i): " " for i in range(128) if not chr(i).isalnum()})
_SPACES = re.compile(r"\s+")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
# translate table for scanning: ASCII plus every non-ASCII char seen so far that folds to exactly
# one non-CJK character (so the folded text keeps the original offsets)
_SCAN_TABLE: dict[int, str] = {i: (chr(i).lower() if chr(i).isalnum() else " ") for i in range(128)}
_NOT_ONE_TO_ONE: set[str] = set()
_FUNCTION_WORDS = frozenset(
    {"of", "the", "in", "and", "or", "with", "to", "by", "for", "a", "an", "nos", "due"}
)
_SPELLING = (
    (re.compile(r"our(s|ed|al)?\b"), r"or\1"),
    (re.compile(r"haem"), "hem"),
    (re.compile(r"aem"), "em"),
    (re.compile(r"\boe"), "e"),
    (re.compile(r"paed"), "ped"),
    (re.compile(r"ys(e|ed|ing)\b"), r"yz\1"),  # analyse(d) (not -yses: the plural of -ysis)
    (re.compile(r"isation"), "ization"),  # hospitalisation, immunisation
    (re.compile(r"is(ed|ing)\b"), r"iz\1"),  # randomised, sensitising
    (re.compile(r"oea"), "ea"),  # diarrhoea, dyspnoea, apnoea
    (re.compile(r"\bae"), "e"),  # aetiology
    (re.compile(r"(an|par)aes"), r"\1es"),  # anaesthesia, paraesthesia
    (re.compile(r"(?<=f)aec|(?<=gyn)aec|(?<=c)aes(?=ar)"), lambda m: m.group()[1:]),  # faeces, gynaecology, caesarean
    (re.compile(r"coel"), "cel"),  # coeliac
    (re.compile(r"foet"), "fet"),  # foetal
    (re.compile(r"sulph"), "sulf"),  # sulphate, sulphonamides
    (re.compile(r"aluminium"), "aluminum"),
    (re.compile(r"(?<=[a-z][bt])re(s?)\b"), r"er\1"),  # fibre, centre, litre
    (re.compile(r"\bageing\b"), "aging"),
    (re.compile(r"\bgrey\b"), "gray"),
    (re.compile(r"\bmould"), "mold"),
)

# American → British spellings of one word (``match_key`` spelling), for the gazetteer's British keys
# (``british_spelling``); ``_SPELLING`` above folds both to one key for the linker.
_BRITISH = (
    (re.compile(r"^hem(?!i|p)"), "haem"),  # hemorrhage, hematoma (not hemisphere, hemiplegia)
    (re.compile(r"(?<=[b-z])em(ia|ias|ic)$"), r"aem\1"),  # anemia, leukemia, hypoglycemic (not -aemia)
    (re.compile(r"^(edema|esophag|estr)"), r"o\1"),  # edema, esophagus, estrogen
    (re.compile(r"^fet(us|al|uses)$"), r"foet\1"),
    (re.compile(r"^celiac$"), "coeliac"),
    (re.compile(r"^ped(iatr|ophil)"), r"paed\1"),  # pediatrics
    (re.compile(r"^orthoped"), "orthopaed"),
    (re.compile(r"(an|par)esthe"), r"\1aesthe"),  # anesthesia, paresthesia
    (re.compile(r"^fec(es|al)$"), r"faec\1"),
    (re.compile(r"gynec"), "gynaec"),
    (re.compile(r"^cesarean$"), "caesarean"),
    (re.compile(r"sulf"), "sulph"),  # sulfate, sulfonamides
    (re.compile(r"^aluminum$"), "aluminium"),
    (re.compile(r"(?<=[a-z]{4})iz(e|ed|es|ing|ation|ations)$"), r"is\1"),  # hospitalization
    (re.compile(r"yz(e|ed|ing)$"), r"ys\1"),  # analyze, dialyzed
    (re.compile(r"(rrh|pn)ea$"), r"\1oea"),  # diarrhea, dyspnea
    (re.compile(r"^(fib|cent|lit|met|theat)er(s?)$"), r"\1re\2"),  # fiber, centers
    (re.compile(r"^(tum|col|behavi|lab|od|hum|vap|flav)or(s|ed|al)?$"), r"\1our\2"),  # tumor, behavioral
    (re.compile(r"^aging$"), "ageing"),
    (re.compile(r"^gray$"), "grey"),
    (re.compile(r"^mold(s|y)?$"), r"mould\1"),
)


@lru_cache(maxsize=1 << 17)
def _british_word(word: str) -> str:
    for pattern, repl in _BRITISH:
        word = pattern.sub(repl, word)
    return word


def british_spelling(key: str) -> str:
    """The British spelling of an ASCII ``match_key`` (``hemorrhagic stroke`` → ``haemorrhagic
    stroke``, ``hospitalization`` → ``hospitalisation``); ``key`` itself when no rule applies. Per
    word, cached: the gazetteer asks for every English key, and their words repeat."""
    if not key.isascii():
        return key
    return " ".join(_british_word(word) for word in key.split())


def is_cjk(ch: str) -> bool:
    """True for CJK ideographs, kana and hangul: scripts matched without word boundaries."""
    cp = ord(ch)
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x2A6DF
        or 0xF900 <= cp <= 0xFAFF
        or 0x3040 <= cp <= 0x30FF
        or 0xAC00 <= cp <= 0xD7AF
    )


def has_cjk(text: str) -> bool:
    return not text.isascii() and any(is_cjk(c) for c in text)


@lru_cache(maxsize=65536)
def simplified(ch: str) -> str:
    """The simplified form of one traditional Chinese character (itself when it has none)."""
    out = zhconv.convert(ch, "zh-hans")
    return out if len(out) == 1 else ch


@lru_cache(maxsize=65536)
def fold_char(ch: str) -> str:
    """Fold one character: NFKC (full-width → half-width), casefold, strip combining marks,
    traditional → simplified Chinese."""
    if ch.isascii():
        return ch.lower()
    folded = unicodedata.normalize("NFKC", ch).casefold()
    decomposed = unicodedata.normalize("NFKD", folded)
    out = "".join(c for c in decomposed if not unicodedata.combining(c))
    return simplified(out) if len(out) == 1 and is_cjk(out) else out


def fold(text: str) -> str:
    """Case, diacritic and width folding of a whole string (length may change)."""
    if text.isascii():
        return text.lower()
    return "".join(fold_char(c) for c in text)


def _scan_char(ch: str) -> str:
    return ch if ch.isalnum() else " "


def match_key(term: str) -> str:
    """Folded term with punctuation turned into spaces and whitespace collapsed."""
    folded = fold(term)
    if folded.isascii():
        folded = folded.translate(_ASCII_SCAN)
    else:
        folded = _split_scripts("".join(_scan_char(c) for c in folded))
    return _SPACES.sub(" ", folded).strip()


def _split_scripts(text: str) -> str:
    """Insert a space where CJK meets other alphanumerics (as ``fold_for_scan`` does)."""
    out: list[str] = []
    prev: bool | None = None
    for c in text:
        alnum = c.isalnum()
        cjk = alnum and is_cjk(c)
        if alnum and prev is not None and cjk != prev:
            out.append(" ")
        prev = cjk if alnum else None
        out.append(c)
    return "".join(out)


def singular(token: str) -> str:
    """Cheap English singular: ``diseases`` → ``disease``, ``therapies`` → ``therapy``."""
    if len(token) <= 3 or not token.isascii() or not token.isalpha():
        return token
    if token.endswith("ies") and len(token) > 4:
        return token[:-3] + "y"
    if token.endswith("sses"):
        return token[:-2]
    if token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


def plural(token: str) -> str:
    """Cheap English plural of a singular noun (used to add gazetteer variants)."""
    if token.endswith("y") and len(token) > 3 and token[-2] not in "aeiou":
        return token[:-1] + "ies"
    if token.endswith(("s", "x", "ch", "sh")):
        return token + "es"
    return token + "s"


@lru_cache(maxsize=200_000)
def norm_key(term: str, ordered: bool = False) -> str:
    """Word-order-, plural-, spelling- and punctuation-insensitive key of a term (``ordered``: word
    order kept, "body fat" is not "fat body")."""
    key = match_key(term)
    if key.isascii():
        for pattern, repl in _SPELLING:
            key = pattern.sub(repl, key)
    tokens = [singular(t) for t in key.split() if t not in _FUNCTION_WORDS]
    return " ".join(tokens if ordered else sorted(tokens)) if tokens else key


def _one_to_one(ch: str) -> bool:
    """Register ``ch`` in the scan table when it folds to one non-CJK character."""
    if ord(ch) in _SCAN_TABLE:
        return True
    if ch in _NOT_ONE_TO_ONE:
        return False
    folded = fold_char(ch)
    if len(folded) != 1 or is_cjk(folded):
        _NOT_ONE_TO_ONE.add(ch)
        return False
    _SCAN_TABLE[ord(ch)] = folded if folded.isalnum() else " "
    return True


def fold_for_scan(text: str) -> tuple[str, list[int] | None, list[int] | None]:
    """Fold ``text`` for gazetteer scanning.

    Returns ``(scan, starts, ends)``: ``scan`` starts and ends with a space, every non-alphanumeric
    character is a space and a space is inserted between CJK and other alphanumerics, so Latin
    keys padded with spaces only match on word boundaries. ``starts[i]`` / ``ends[i]`` give the
    original offsets of folded character ``i``; both are ``None`` when the map is the identity
    shifted by the leading space (plain ASCII text).
    """
    if text.isascii():
        return " " + text.lower().translate(_ASCII_SCAN) + " ", None, None
    if all(_one_to_one(c) for c in set(_NON_ASCII.findall(text))):
        return " " + text.translate(_SCAN_TABLE) + " ", None, None
    out: list[str] = [" "]
    starts: list[int] = [0]
    ends: list[int] = [0]
    prev_cjk: bool | None = None
    for i, ch in enumerate(text):
        folded = fold_char(ch)
        for fc in folded:
            alnum = fc.isalnum()
            cjk = alnum and is_cjk(fc)
            if alnum and prev_cjk is not None and cjk != prev_cjk:
                out.append(" ")
                starts.append(i)
                ends.append(i)
            prev_cjk = cjk if alnum else None
            out.append(fc if alnum else " ")
            starts.append(i)
            ends.append(i + 1)
    out.append(" ")
    starts.append(len(text))
    ends.append(len(text))
    return "".join(out), starts, ends
