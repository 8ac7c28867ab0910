"""Cross-lingual composition: a term the dictionary lacks, in a language whose pack has composition
rules (``LanguagePack.lexicon.compose``: German, Chinese), glossed part by part into English and
looked up among the English names.

Input: the ``Vocabulary`` (its names in each composing language give every known part its English
names) and a surface string. Output: English candidate phrases, best first (``Composer.glosses``);
the linker looks each up among the English names (``Composer.lookup``: exact, then normalised, which
ignores word order; then with the neoplasm head MeSH uses), so a composition counts only when the
whole English phrase is a name.

Which pack's rules read a surface (``surface_pack``): the pack of the script it is written in
(``lexicon.script``: Chinese characters, in text of any language), else the pack of the text's
language unless that pack reads its own script only.

How a surface is cut into parts:
- a spaced language (German): words (the pack's function words dropped, hyphens split); a word is a
  known name, a loan word whose English/Latin spelling is an English word of the vocabulary
  (``Endometrium``, ``essentielle`` → essential), a morpheme of the pack's closed table, or a compound
  of two or three such parts with the pack's linking elements dropped (``Eisenmangelanämie`` → iron ·
  deficiency · anemia, ``Schilddrüsenkrebs`` → thyroid · neoplasms).
- an unspaced language (Chinese): a full segmentation of the string (bracketed asides such as
  ``(除外肾盂)`` removed) into names and morphemes, fewest parts first (``甲状腺恶性肿瘤`` → thyroid ·
  neoplasms, ``急性肾衰竭`` → acute · renal failure); the pack's particles (``性`` / ``的`` / ``型``)
  are dropped.
- A part's English glosses: the shortest distinct names of its descriptor, plus the adjective MeSH
  headings use where the English names attest it (``ovary`` → ovarian, ``colon`` → colonic).

The morpheme tables (``ComposeRules.morphemes``) hold only general word-formation elements of medical
terms (disease heads, the neoplasm heads, deficiency / failure / calculus, course and origin
modifiers), not names.

``Composer.dictionary_glosses`` is the fallback the linker tries next: parts the names and morphemes do
not know are glossed by the general dictionaries of the vocabulary's glossary
(``medgraph.ontology.glossary``: Ding, CC-CEDICT), each gloss kept only when all its words are words of
the English names (``手卫生`` → hand · hygiene → Hand Hygiene; ``Händedesinfektion`` → hand ·
disinfection). The whole English phrase must still be a name.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from pathlib import Path

from medgraph import lang
from medgraph.lang import LanguagePack
from medgraph.lang.sections.lexicon import ComposeRules
from medgraph.ontology import vocabulary as vocabulary_module
from medgraph.ontology.derived import derived, lang_sources
from medgraph.ontology.glossary import Glossary
from medgraph.ontology.vocabulary import MINED_PRECEDENCE, RANK_DICTIONARY, RANK_MINED, Vocabulary, is_acronym
from medgraph.text import keys as keys_module
from medgraph.text.keys import match_key, norm_key

MAX_GLOSSES = 4  # English terms kept per descriptor (shortest distinct first)
MAX_PHRASES = 48  # English candidate phrases per surface
MAX_SEGMENT_PART = 12  # longest part tried by the segmenter (unspaced languages)
DICTIONARY_GLOSSES = 3  # general-dictionary glosses tried per part
# words that make a dictionary gloss a phrase, not a part of a name ("lead in", "all of", "or")
EN_GLUE = frozenset("a an the of in on at to for by with or and as all be is are from into out up off over "
                    "not no so such than this that it its one sb sth".split())
# a composed phrase counts only against names, synonyms and forms mined from annotated text at least
# this often: rarer mined forms carry their corpus's reading ("nausea, vomiting" was annotated as
# postoperative nausea and vomiting, "systemic diseases" as systemic mastocytosis)
MIN_MINED_COUNT = 3

# English adjectives of organ nouns as MeSH headings use them (kept only when attested)
_ADJECTIVE_ENDINGS = (("um", ("al",)), ("on", ("onic",)), ("as", ("atic",)), ("y", ("ian", "ial")),
                      ("a", ("al", "ar")), ("nx", ("ngeal",)), ("is", ("ic",)), ("e", ("al",)), ("", ("al", "ic")))


def script_pack(text: str) -> LanguagePack | None:
    """The pack whose own script ``text`` is written in (``lexicon.script``: Chinese characters)."""
    for pack in lang.packs():
        script = pack.lexicon.script
        if script is not None and script(text):
            return pack
    return None


def surface_pack(surface: str, language: str) -> LanguagePack | None:
    """The pack whose morphology reads ``surface`` in text of ``language``: the pack of the script the
    surface is written in, else the language's own pack unless that pack reads its own script only."""
    pack = script_pack(surface)
    if pack is not None:
        return pack
    pack = lang.get_or_pivot(language)
    return None if pack.lexicon.script is not None else pack


class Composer:
    """English glosses of terms in the composing languages, built from the vocabulary's names
    (~2-4 s for the full vocabulary: ``for_vocabulary`` keeps them beside a saved one)."""

    _STATE = ("english_words", "_english", "_glosses", "tables", "_rare_only")  # all but the vocabulary

    @classmethod
    def for_vocabulary(cls, vocab: Vocabulary) -> Composer:
        """The composer of ``vocab``, its tables read from beside the saved vocabulary when a process
        kept them there (``medgraph.ontology.derived``), as long as every pack with composition
        rules is a built-in one (their files are in the digest); else built here."""
        composing = [p for p in lang.packs() if p.lexicon.compose is not None]
        if not all(lang.is_builtin(p) for p in composing):
            return cls(vocab)
        sources: list[str | Path] = [__file__, keys_module.__file__, vocabulary_module.__file__, *lang_sources()]
        state, _ = derived(vocab, "composer", sorted(p.code for p in composing), sources, lambda: cls(vocab).state())
        composer = cls.__new__(cls)
        composer.vocab = vocab
        for name in cls._STATE:
            setattr(composer, name, state[name])
        return composer

    def state(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in self._STATE}

    def __init__(self, vocab: Vocabulary) -> None:
        self.vocab = vocab
        self.english_words: set[str] = set()
        self._english: dict[str, list[str]] = {}  # MeSH ID -> English terms usable as glosses
        self._glosses: dict[str, tuple[str, ...]] = {}
        # language -> part key -> English glosses: the pack's morphemes, then its names (below)
        self.tables: dict[str, dict[str, list[str]]] = {}
        composing: dict[str, tuple[ComposeRules, bool]] = {}  # language -> (rules, spaced)
        for pack in lang.packs():
            rules = pack.lexicon.compose
            if rules is not None and pack.code != lang.PIVOT:
                self.tables[pack.code] = {rules.part_key(k): list(v) for k, v in rules.morphemes.items()}
                composing[pack.code] = (rules, pack.spaced)
        parts: list[tuple[dict[str, list[str]], str, str]] = []  # (table, key, MeSH ID), glossed below
        for surface, language, mesh_id, rank, count in vocab.terms:  # one pass over the vocabulary
            if language == lang.PIVOT:
                self.english_words.update(match_key(surface).split())
                if (rank < RANK_MINED or count >= MINED_PRECEDENCE) and not is_acronym(surface):
                    self._english.setdefault(mesh_id, []).append(surface)
                continue
            found = composing.get(language)
            if found is None:
                continue
            rules, spaced = found
            # a spaced language: one-word names (compounds are built from words); an unspaced one:
            # every name but the general dictionary's words, which as parts tie with the morphemes
            # (感染 + 性疾病 "venereal disease" against 感染性 + 疾病 "infectious disease")
            if (len(surface.split()) == 1) if spaced else (rank != RANK_DICTIONARY):
                parts.append((self.tables[language], rules.part_key(surface), mesh_id))
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

    # --- spaced languages: words and compounds ------------------------------------------------

    def _part(self, part: str, language: str, rules: ComposeRules) -> list[str]:
        if len(part) < rules.min_part:
            return []
        found = list(self.tables[language].get(rules.part_key(part), ()))
        if rules.loan_spellings is None:
            return found
        loans = [s for s in rules.loan_spellings(part) if len(s) >= 4 and s in self.english_words and s not in found]
        return found + list(self.with_adjectives(loans))

    def _word(self, word: str, language: str, rules: ComposeRules, depth: int = 2) -> list[str]:
        """English options of one word: the word itself, else its compound parts glossed."""
        whole = self._part(word, language, rules)
        if whole or depth == 0:
            return whole
        for i in range(rules.min_part, len(word) - rules.min_part + 1):
            heads = self._part(word[i:], language, rules)
            if not heads:
                continue
            lefts = self._modifier(word[:i], language, rules) or self._word(word[:i], language, rules, depth - 1)
            if lefts:
                return [f"{a} {b}" for a, b in itertools.islice(itertools.product(lefts, heads), MAX_PHRASES)]
        return []

    def _modifier(self, left: str, language: str, rules: ComposeRules) -> list[str]:
        """The left part of a compound, as it is or without its linking element (German Fuge)."""
        if found := self._part(left, language, rules):
            return found
        for element in rules.linking_elements:
            if left.endswith(element) and (found := self._part(left[: -len(element)], language, rules)):
                return found
        return []

    def _hyphenated(self, word: str, language: str, rules: ComposeRules) -> list[str]:
        """``Vitamin-D-Mangel``: the pieces glossed one by one (letters and numbers kept as they are)."""
        pieces = [p for p in word.split("-") if p]
        options = [[p] if len(p) <= 2 and p.isalnum() else self._word(p, language, rules) for p in pieces]
        if len(pieces) < 2 or any(not o for o in options):
            return []
        return [" ".join(c) for c in itertools.islice(itertools.product(*options), MAX_PHRASES)]

    def _words(self, surface: str, pack: LanguagePack, rules: ComposeRules) -> list[str]:
        function_words = pack.lexicon.function_words
        words = [w for w in surface.lower().split() if match_key(w) not in function_words]
        options = [self._word(w, pack.code, rules) or ("-" in w and self._hyphenated(w, pack.code, rules)) or []
                   for w in words]
        return self._phrases(options, surface)

    # --- unspaced languages: segmentation -----------------------------------------------------

    def segment(self, text: str, language: str | None = None) -> list[str] | None:
        """Fewest-parts cover of ``text`` by names and morphemes of ``language`` (default: the
        language of the script ``text`` is written in; dropped particles count)."""
        pack = lang.get(language) if language else script_pack(text)
        rules = pack.lexicon.compose if pack is not None else None
        if pack is None or rules is None or pack.code not in self.tables:
            return None
        table = self.tables[pack.code]
        n = len(text)
        best: list[list[str] | None] = [None] * (n + 1)
        best[0] = []
        for end in range(1, n + 1):
            for start in range(max(0, end - MAX_SEGMENT_PART), end):
                prev, part = best[start], text[start:end]
                if prev is None or not (part in table or part in rules.dropped):
                    continue
                if best[end] is None or len(prev) + 1 < len(best[end] or ()):
                    best[end] = [*prev, part]
        return best[n]

    def _segmented(self, surface: str, pack: LanguagePack, rules: ComposeRules) -> list[str]:
        text = rules.part_key(rules.aside.sub("", surface) if rules.aside else surface)
        parts = self.segment(text, pack.code) if text else None
        if not parts:
            return []
        table = self.tables[pack.code]
        return self._phrases([table[p] for p in parts if p not in rules.dropped], surface)

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
        rare = [t for t in vocab.terms if t[1] == lang.PIVOT and t[3] == RANK_MINED and t[4] < MIN_MINED_COUNT]
        ids = {t[2] for t in rare}
        trusted: dict[str, set[str]] = {}
        for surface, language, mesh_id, rank, count in vocab.terms:
            if mesh_id in ids and language == lang.PIVOT and (rank < RANK_MINED or count >= MIN_MINED_COUNT):
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
        """English candidate phrases for a surface in text of ``language`` (``surface_pack``: German
        text, or Chinese characters in any text); none where no pack composes it."""
        pack = surface_pack(surface, language)
        rules = pack.lexicon.compose if pack is not None else None
        if pack is None or rules is None or pack.code not in self.tables:
            return []
        return self._words(surface, pack, rules) if pack.spaced else self._segmented(surface, pack, rules)

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
        """English candidate phrases of a surface whose parts the glossary knows and the vocabulary's
        names do not (``Händedesinfektion`` → hand · disinfection, ``手卫生`` → hand · hygiene): each
        part by its names and morphemes where it has them, else by its general dictionary glosses.
        The linker tries these after ``glosses`` found nothing."""
        pack = surface_pack(surface, language)
        rules = pack.lexicon.compose if pack is not None else None
        if pack is None or rules is None or pack.code not in self.tables:
            return []
        table = self.tables[pack.code]
        options: list[list[str]] = []
        parts = 0  # source parts glossed: a composition joins two or more (one word is a dictionary lookup)
        if not pack.spaced:
            text = rules.aside.sub("", surface) if rules.aside else surface
            for segment, found in glossary.segments(text, pack.code):
                if segment in rules.dropped or (not found and segment in pack.glossary.function_words):
                    continue
                options.append(list(table.get(segment, ())) or self._dictionary_options(found, len(segment) == 1))
                parts += 1
        else:
            function_words = pack.lexicon.function_words
            for word in surface.split():
                if match_key(word) in function_words or word.lower() in function_words:
                    return []  # "sowie Augentropfen", "für Allgemeinchirurgie": not one term
                own = self._word(word.lower(), pack.code, rules)
                if own:
                    options.append(own)
                    parts += 1
                    continue
                if pack.lexicon.capitalised_nouns and not word[:1].isupper():
                    return []  # an adjective the names do not know: its dictionary senses are no medical modifier
                groups = [self._dictionary_options(g) for g in glossary.glosses(word, pack.code)]
                if not groups or any(not g for g in groups):
                    return []
                options.append([" ".join(c) for c in itertools.islice(itertools.product(*groups), MAX_PHRASES)])
                parts += len(groups)
        return self._phrases(options, surface) if parts >= 2 else []
