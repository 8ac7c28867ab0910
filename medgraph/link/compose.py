"""Cross-lingual composition: a German or Chinese term the dictionary lacks, glossed part by part into
English and looked up among the English names.

Input: the ``Vocabulary`` (its German and Chinese names give every known part its English names) and
a surface string. Output: English candidate phrases, best first (``Composer.glosses``); the linker
looks each up among the English names (``Composer.lookup``: exact, then normalised, which ignores
word order; then with the neoplasm head MeSH uses), so a composition counts only when the whole
English phrase is a name.

How a surface is cut into parts:
- German: words (function words dropped, hyphens split); a word is a known name, a loan word whose
  English/Latin spelling is an English word of the vocabulary (``Endometrium``, ``essentielle`` →
  essential), a morpheme of the closed table below, or a compound of two or three such parts with
  linking ``s``/``n``/``en``/``es``/``e`` dropped (``Eisenmangelanämie`` → iron · deficiency · anemia,
  ``Schilddrüsenkrebs`` → thyroid · neoplasms).
- Chinese: a full segmentation of the string (bracketed asides such as ``(除外肾盂)`` removed) into
  Chinese names and morphemes, fewest parts first (``甲状腺恶性肿瘤`` → thyroid · neoplasms,
  ``急性肾衰竭`` → acute · renal failure); the adjectival ``性`` / ``的`` / ``型`` are dropped.
- A part's English glosses: the shortest distinct names of its descriptor, plus the adjective MeSH
  headings use where the English names attest it (``ovary`` → ovarian, ``colon`` → colonic).

The morpheme tables hold only general word-formation elements of medical terms (disease heads, the
neoplasm heads, deficiency / failure / calculus, course and origin modifiers), not names.

``Composer.dictionary_glosses`` is the fallback the linker tries next: parts the names and morphemes do
not know are glossed by the general dictionaries of the vocabulary's glossary
(``medgraph.ontology.glossary``: Ding, CC-CEDICT), each gloss kept only when all its words are words of
the English names (``手卫生`` → hand · hygiene → Hand Hygiene; ``Händedesinfektion`` → hand ·
disinfection). The whole English phrase must still be a name.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence

from medgraph.lang.de.morphology import DE_FUNCTION_WORDS, FUGEN, de_stem, loan_spellings, umlaut_folded
from medgraph.ontology.glossary import CHINESE_FUNCTION_WORDS, Glossary
from medgraph.ontology.vocabulary import MINED_PRECEDENCE, RANK_DICTIONARY, RANK_MINED, Vocabulary, is_acronym
from medgraph.text.keys import has_cjk, match_key, norm_key

MAX_GLOSSES = 4  # English terms kept per descriptor (shortest distinct first)
MAX_PHRASES = 48  # English candidate phrases per surface
MAX_ZH_PART = 12  # longest Chinese part tried by the segmenter
DICTIONARY_GLOSSES = 3  # general-dictionary glosses tried per part
# words that make a dictionary gloss a phrase, not a part of a name ("lead in", "all of", "or")
EN_GLUE = frozenset("a an the of in on at to for by with or and as all be is are from into out up off over "
                    "not no so such than this that it its one sb sth".split())
MIN_DE_PART = 3
# a composed phrase counts only against names, synonyms and forms mined from annotated text at least
# this often: rarer mined forms carry their corpus's reading ("nausea, vomiting" was annotated as
# postoperative nausea and vomiting, "systemic diseases" as systemic mastocytosis)
MIN_MINED_COUNT = 3

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
ZH_MORPHEMES: dict[str, tuple[str, ...]] = {
    "恶性肿瘤": _NEOPLASMS, "肿瘤": ("neoplasms", "tumor"), "癌": _NEOPLASMS, "癌症": _NEOPLASMS,
    "缺乏": ("deficiency",), "缺乏症": ("deficiency",), "病": ("disease", "diseases"), "疾病": ("disease", "diseases"),
    "障碍": ("disorder", "disorders"), "综合征": ("syndrome",), "衰竭": ("failure",), "功能不全": ("insufficiency",),
    "结石": ("calculi", "stones"), "损伤": ("injury", "injuries"), "出血": ("hemorrhage",),
    "梗死": ("infarction",), "梗塞": ("infarction",), "感染": ("infection", "infections"), "细胞": ("cell", "cells"),
    "失禁": ("incontinence",), "硬化": ("sclerosis",), "纤维化": ("fibrosis",), "狭窄": ("stenosis",),
    "囊肿": ("cyst", "cysts"), "疝": ("hernia",), "骨折": ("fracture", "fractures"), "中毒": ("poisoning",),
    "畸形": ("abnormalities", "malformation"), "急性": ("acute",), "慢性": ("chronic",), "先天性": ("congenital",),
    "遗传性": ("hereditary",), "原发性": ("primary",), "继发性": ("secondary",), "特发性": ("idiopathic",),
    "良性": ("benign",), "恶性": ("malignant",), "病毒性": ("viral",), "细菌性": ("bacterial",),
    "感染性": ("infectious",), "过敏性": ("allergic",), "自身免疫性": ("autoimmune",), "家族性": ("familial",),
    "获得性": ("acquired",), "复发性": ("recurrent",), "进行性": ("progressive",), "转移性": ("metastatic",),
    "多发性": ("multiple",), "弥漫性": ("diffuse",), "局限性": ("localized",), "全身性": ("systemic",),
    "系统性": ("systemic",), "间质性": ("interstitial",), "囊性": ("cystic",), "出血性": ("hemorrhagic",),
    "缺血性": ("ischemic",), "阻塞性": ("obstructive",), "化脓性": ("suppurative", "purulent"),
    "炎性": ("inflammatory",), "新生儿": ("neonatal", "newborn"), "妊娠期": ("gestational", "pregnancy"),
}
ZH_DROPPED = frozenset({"性", "的", "型"})
_ZH_ASIDE = re.compile(r"[(（\[［【][^)）\]］】]*[)）\]］】]")
# English adjectives of organ nouns as MeSH headings use them (kept only when attested)
_ADJECTIVE_ENDINGS = (("um", ("al",)), ("on", ("onic",)), ("as", ("atic",)), ("y", ("ian", "ial")),
                      ("a", ("al", "ar")), ("nx", ("ngeal",)), ("is", ("ic",)), ("e", ("al",)), ("", ("al", "ic")))


def de_key(word: str) -> str:
    """The key a German word or compound part is looked up by (folded, umlauts as vowels, stemmed)."""
    return de_stem(umlaut_folded(match_key(word).replace(" ", "")))


class Composer:
    """English glosses of German and Chinese terms, built from the vocabulary's names."""

    def __init__(self, vocab: Vocabulary) -> None:
        self.vocab = vocab
        self.english_words: set[str] = set()
        self._english: dict[str, list[str]] = {}  # MeSH ID -> English terms usable as glosses
        self._glosses: dict[str, tuple[str, ...]] = {}
        self.de: dict[str, list[str]] = {de_key(k): list(v) for k, v in DE_MORPHEMES.items()}
        self.zh: dict[str, list[str]] = {k: list(v) for k, v in ZH_MORPHEMES.items()}
        parts: list[tuple[dict[str, list[str]], str, str]] = []  # (table, key, MeSH ID), glossed below
        for surface, lang, mesh_id, rank, count in vocab.terms:  # one pass over the vocabulary
            if lang == "en":
                self.english_words.update(match_key(surface).split())
                if (rank < RANK_MINED or count >= MINED_PRECEDENCE) and not is_acronym(surface):
                    self._english.setdefault(mesh_id, []).append(surface)
            elif lang == "de" and len(surface.split()) == 1:
                parts.append((self.de, de_key(surface), mesh_id))
            elif lang == "zh" and rank != RANK_DICTIONARY:
                # not the general dictionary's Chinese words: as parts they tie with the morphemes
                # (感染 + 性疾病 "venereal disease" against 感染性 + 疾病 "infectious disease")
                parts.append((self.zh, match_key(surface).replace(" ", ""), mesh_id))
        for table, key, mesh_id in parts:  # the English terms of every ID are known now
            self._add(table, key, mesh_id)
        self._rare_only = self._rarely_mined_keys(vocab)

    def _add(self, table: dict[str, list[str]], key: str, mesh_id: str) -> None:
        if not key:
            return
        slot = table.setdefault(key, [])
        slot += [g for g in self.english_glosses(mesh_id) if g not in slot]

    def english_glosses(self, mesh_id: str) -> tuple[str, ...]:
        """The shortest distinct English terms of a descriptor, with their attested adjectives."""
        if mesh_id not in self._glosses:
            names = sorted(self._english.get(mesh_id, []), key=len)
            seen: set[str] = set()
            out: list[str] = []
            for name in names:
                key = norm_key(name)
                if key in seen or "," in name or len(name) < 3:
                    continue
                seen.add(key)
                out.append(match_key(name))
                if len(out) == MAX_GLOSSES:
                    break
            self._glosses[mesh_id] = self.with_adjectives(out)
        return self._glosses[mesh_id]

    def with_adjectives(self, glosses: Iterable[str]) -> tuple[str, ...]:
        glosses = tuple(glosses)
        return glosses + tuple(a for g in glosses if " " not in g for a in self.adjectives(g) if a not in glosses)

    def adjectives(self, noun: str) -> list[str]:
        """``ovary`` → ovarian, ``endometrium`` → endometrial: forms the English names use."""
        out = []
        for ending, replacements in _ADJECTIVE_ENDINGS:
            if noun.endswith(ending) and len(noun) > len(ending) + 2:
                stem = noun[: len(noun) - len(ending)]
                out += [stem + r for r in replacements if stem + r in self.english_words]
                if out:
                    break
        return out

    # --- German -------------------------------------------------------------------------------

    def _de_part(self, part: str) -> list[str]:
        if len(part) < MIN_DE_PART:
            return []
        found = list(self.de.get(de_key(part), ()))
        loans = [s for s in loan_spellings(part) if len(s) >= 4 and s in self.english_words and s not in found]
        return found + list(self.with_adjectives(loans))

    def _de_word(self, word: str, depth: int = 2) -> list[str]:
        """English options of one German word: the word itself, else its compound parts glossed."""
        whole = self._de_part(word)
        if whole or depth == 0:
            return whole
        for i in range(MIN_DE_PART, len(word) - MIN_DE_PART + 1):
            heads = self._de_part(word[i:])
            if not heads:
                continue
            lefts = self._de_modifier(word[:i]) or self._de_word(word[:i], depth - 1)
            if lefts:
                return [f"{a} {b}" for a, b in itertools.islice(itertools.product(lefts, heads), MAX_PHRASES)]
        return []

    def _de_modifier(self, left: str) -> list[str]:
        """The left part of a compound, as it is or without its linking element (Fuge)."""
        if found := self._de_part(left):
            return found
        for fuge in FUGEN:
            if left.endswith(fuge) and (found := self._de_part(left[: -len(fuge)])):
                return found
        return []

    def _de_hyphenated(self, word: str) -> list[str]:
        """``Vitamin-D-Mangel``: the pieces glossed one by one (letters and numbers kept as they are)."""
        pieces = [p for p in word.split("-") if p]
        options = [[p] if len(p) <= 2 and p.isalnum() else self._de_word(p) for p in pieces]
        if len(pieces) < 2 or any(not o for o in options):
            return []
        return [" ".join(c) for c in itertools.islice(itertools.product(*options), MAX_PHRASES)]

    def german(self, surface: str) -> list[str]:
        words = [w for w in surface.lower().split() if match_key(w) not in DE_FUNCTION_WORDS]
        options = [self._de_word(w) or ("-" in w and self._de_hyphenated(w)) or [] for w in words]
        return self._phrases(options, surface)

    # --- Chinese ------------------------------------------------------------------------------

    def segment(self, text: str) -> list[str] | None:
        """Fewest-parts cover of ``text`` by Chinese names and morphemes (dropped particles count)."""
        n = len(text)
        best: list[list[str] | None] = [None] * (n + 1)
        best[0] = []
        for end in range(1, n + 1):
            for start in range(max(0, end - MAX_ZH_PART), end):
                prev, part = best[start], text[start:end]
                if prev is None or not (part in self.zh or part in ZH_DROPPED):
                    continue
                if best[end] is None or len(prev) + 1 < len(best[end] or ()):
                    best[end] = [*prev, part]
        return best[n]

    def chinese(self, surface: str) -> list[str]:
        text = match_key(_ZH_ASIDE.sub("", surface)).replace(" ", "")
        parts = self.segment(text) if text else None
        if not parts:
            return []
        return self._phrases([self.zh[p] for p in parts if p not in ZH_DROPPED], surface)

    # --- both ---------------------------------------------------------------------------------

    def _phrases(self, options: list[list[str]], surface: str) -> list[str]:
        if len(options) < 1 or any(not o for o in options):
            return []
        phrases = (" ".join(combo) for combo in itertools.product(*options))
        out = [p for p in itertools.islice(phrases, MAX_PHRASES) if len(p.split()) >= 2]
        original = match_key(surface)
        return [p for p in dict.fromkeys(out) if p != original]

    @staticmethod
    def _rarely_mined_keys(vocab: Vocabulary) -> set[tuple[str, str]]:
        """(key, MeSH ID) pairs of the vocabulary's indices that only rarely mined forms support."""
        rare = [t for t in vocab.terms if t[1] == "en" and t[3] == RANK_MINED and t[4] < MIN_MINED_COUNT]
        ids = {t[2] for t in rare}
        trusted: dict[str, set[str]] = {}
        for surface, lang, mesh_id, rank, count in vocab.terms:
            if mesh_id in ids and lang == "en" and (rank < RANK_MINED or count >= MIN_MINED_COUNT):
                trusted.setdefault(mesh_id, set()).update((match_key(surface), norm_key(surface)))
        return {(key, t[2]) for t in rare for key in (match_key(t[0]), norm_key(t[0]))
                if key not in trusted.get(t[2], ())}

    def lookup(self, phrase: str) -> str | None:
        """The descriptor an English phrase names (exact, then normalised; rarely mined forms ignored)."""
        for key, index in ((match_key(phrase), self.vocab.exact_index), (norm_key(phrase), self.vocab.norm_index)):
            for mesh_id in index.get(key, ()):
                if (key, mesh_id) not in self._rare_only:
                    return mesh_id
        return None

    def glosses(self, surface: str, language: str) -> list[str]:
        """English candidate phrases for a German (``language="de"``) or Chinese surface."""
        if has_cjk(surface):
            return self.chinese(surface)
        return self.german(surface) if language == "de" else []

    # --- the general dictionaries, where the names and morphemes know no part -----------------

    def _dictionary_options(self, glosses: Sequence[str], first_only: bool = False) -> list[str]:
        """A part's dictionary glosses that can be part of an English name: every word a content word
        of the vocabulary's English names (no "lead in", "all of", "or"), at most
        ``DICTIONARY_GLOSSES`` (``first_only``: the main sense alone, for a single Chinese character,
        which has many)."""
        out = []
        for gloss in glosses[:1] if first_only else glosses:
            key = match_key(gloss)
            words = key.split()
            if words and all(w in self.english_words and w not in EN_GLUE for w in words) and key not in out:
                out.append(key)
        return out[:DICTIONARY_GLOSSES]

    def dictionary_glosses(self, surface: str, language: str, glossary: Glossary) -> list[str]:
        """English candidate phrases of a German or Chinese surface whose parts the glossary knows
        and the vocabulary's names do not (``Händedesinfektion`` → hand · disinfection, ``手卫生`` →
        hand · hygiene): each part by its names and morphemes where it has them, else by its general
        dictionary glosses. The linker tries these after ``glosses`` found nothing."""
        options: list[list[str]] = []
        parts = 0  # source parts glossed: a composition joins two or more (one word is a dictionary lookup)
        if has_cjk(surface):
            text = _ZH_ASIDE.sub("", surface)
            for segment, found in glossary.chinese(text):
                if segment in ZH_DROPPED or (not found and segment in CHINESE_FUNCTION_WORDS):
                    continue
                options.append(list(self.zh.get(segment, ())) or self._dictionary_options(found, len(segment) == 1))
                parts += 1
        elif language == "de":
            for word in surface.split():
                if match_key(word) in DE_FUNCTION_WORDS or word.lower() in DE_FUNCTION_WORDS:
                    return []  # "sowie Augentropfen", "für Allgemeinchirurgie": not one term
                own = self._de_word(word.lower())
                if own:
                    options.append(own)
                    parts += 1
                    continue
                if not word[:1].isupper():
                    return []  # an adjective the names do not know: its dictionary senses are no medical modifier
                groups = [self._dictionary_options(g) for g in glossary.german(word)]
                if not groups or any(not g for g in groups):
                    return []
                options.append([" ".join(c) for c in itertools.islice(itertools.product(*groups), MAX_PHRASES)])
                parts += len(groups)
        return self._phrases(options, surface) if parts >= 2 else []

