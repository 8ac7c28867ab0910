"""The per-chunk entity extraction call used by ingestion: gazetteer NER + abbreviations + linking.

Input: a ``Vocabulary``, ``NerConfig`` and ``LinkingConfig`` (built once per process or Ray
actor), then ``extract(text, language, context=None)`` per chunk; ``context`` is optional wider
text (e.g. the parent section) searched for abbreviation definitions.
Output: ``Mention`` records sorted by offset, each with ``mesh_id``, ``category``, ``method`` and
``score``. Gazetteer matches come first; every ``long form (SF)`` definition then links the long
form with the ``Linker`` (dictionary steps only: no TF-IDF, so extraction stays fast and precise) and (re)labels every occurrence of ``SF`` in the text with that ID
(``method="abbreviation"``), replacing gazetteer matches on those spans.

Second stage (``ner.compose_candidates``): spans the gazetteer cannot see in a language whose pack
has composition rules (``lexicon.compose``), kept only when the linker's compose step links them (a
whole English name, so this stays precise). Text in a spaced language (German): words of at least
``ComposeRules.min_candidate`` letters that no mention covers (``Schilddrüsenkrebs``; where nouns are
capitalised, capitalised words only) and an adjective with the noun after it (``chronische
Nierenerkrankung``, which then replaces the noun's own mention). Text written in an unspaced pack's
script (Chinese characters, in text of any other language too): runs of two or three adjacent
pieces, each a gazetteer mention, a word-formation morpheme or a word of the glossary's
segmentation (``甲状腺`` + ``恶性肿瘤`` → Thyroid Neoplasms, replacing the piece mentions; ``手`` +
``卫生`` → Hand Hygiene), starting and ending on a word boundary of that segmentation, and not on a
dropped particle (not ``性肝病`` of 脂肪|性|肝病: the 性 belongs to the word before it).

Model tier (``ner.kind: cascade``): after the two dictionary stages, GLiNER and the per-language
token-classification model run over the whole batch (``extract_many``; ``extract`` is a batch of
one) and their spans are merged in by ``medgraph.extract.cascade`` (kept only when the linker links
them to a descriptor of an agreeing category); abbreviation definitions are applied last.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from medgraph import lang
from medgraph.config.models import LinkingConfig, NerConfig
from medgraph.extract.ner import GazetteerNER
from medgraph.lang import LanguagePack
from medgraph.lang.sections.lexicon import ComposeRules
from medgraph.link.compose import script_pack
from medgraph.link.linker import Linker, LinkResult
from medgraph.ontology.vocabulary import Vocabulary
from medgraph.schemas import Mention
from medgraph.text.abbreviations import Abbreviation, find_abbreviations

if TYPE_CHECKING:
    from medgraph.extract.cascade import CascadeNER

_DICTIONARY_METHODS = frozenset({"exact", "normalised"})
_WORD = re.compile(r"[^\W\d_][\w-]*[^\W\d_]")


def _overlaps(m: Mention, start: int, end: int) -> bool:
    return m.start < end and start < m.end


class EntityExtractor:
    """NER + linking in one call; build once, call per chunk."""

    def __init__(
        self, vocab: Vocabulary, ner_cfg: NerConfig | None = None, link_cfg: LinkingConfig | None = None
    ) -> None:
        self.vocab = vocab
        self.ner = GazetteerNER(vocab, ner_cfg)
        self.linker = Linker(vocab, link_cfg)
        # the general dictionaries in the compose candidates (linking.dictionary_compose): true, or only
        # in the copy question analysis uses ("queries")
        self.dictionary_compose = self.linker.cfg.dictionary_compose is True
        self.cascade: CascadeNER | None = None
        if self.ner.cfg.kind == "cascade":
            from medgraph.extract.cascade import CascadeNER  # the model passes load here (torch, gliner)

            self.cascade = CascadeNER(self.ner.cfg)

    def for_queries(self) -> EntityExtractor:
        """This extractor as question analysis uses it (``GazetteerNER.for_queries``): a copy sharing
        the linker and models when its gazetteer differs for questions, else itself."""
        ner = self.ner.for_queries()
        dictionary = bool(self.linker.cfg.dictionary_compose)
        if ner is self.ner and dictionary == self.dictionary_compose:
            return self
        twin = copy.copy(self)
        twin.ner = ner
        twin.dictionary_compose = dictionary
        return twin

    @staticmethod
    def _short_form_spans(text: str, short: str) -> list[tuple[int, int]]:
        """Case-sensitive, word-bounded occurrences of ``short`` (str.find: no regex compiles)."""
        spans = []
        i = text.find(short)
        while i >= 0:
            j = i + len(short)
            if (i == 0 or not text[i - 1].isalnum()) and (j == len(text) or not text[j].isalnum()):
                spans.append((i, j))
            i = text.find(short, j)
        return spans

    def _apply(
        self, text: str, mentions: list[Mention], abbr: Abbreviation, res: LinkResult, local: bool
    ) -> list[Mention]:
        added: list[Mention] = []
        if local and res.mesh_id and res.method in _DICTIONARY_METHODS:
            added.append(
                Mention(
                    abbr.long_start,
                    abbr.long_end,
                    abbr.long,
                    res.mesh_id,
                    res.category,
                    res.method,
                    res.score,
                )
            )
        for start, end in self._short_form_spans(text, abbr.short):
            if res.mesh_id:
                added.append(
                    Mention(start, end, text[start:end], res.mesh_id, res.category, "abbreviation", res.score)
                )
            else:  # defined as something we cannot link: the dictionary reading is wrong here
                added.append(Mention(start, end, text[start:end]))
        kept = [m for m in mentions if not any(_overlaps(m, a.start, a.end) for a in added)]
        return kept + [a for a in added if a.mesh_id]

    def _composed(self, text: str, start: int, end: int, language: str) -> Mention | None:
        res = self.linker.compose(text[start:end], language, dictionary=self.dictionary_compose)
        if res is None or res.mesh_id is None:
            return None
        return Mention(start, end, text[start:end], res.mesh_id, res.category, res.method, res.score)

    def _word_candidates(
        self, text: str, mentions: list[Mention], pack: LanguagePack, rules: ComposeRules
    ) -> list[Mention]:
        """Compound and adjective + noun candidates of a spaced language (German)."""
        words = list(_WORD.finditer(text))
        capitalised = pack.lexicon.capitalised_nouns
        function_words = pack.lexicon.function_words
        found: list[Mention] = []
        for i, word in enumerate(words):
            noun = word.group()
            if (capitalised and not noun[0].isupper()) or any(_overlaps(f, word.start(), word.end()) for f in found):
                continue
            prev = words[i - 1] if i else None
            adjective = (prev is not None and (not capitalised or prev.group()[0].islower())
                         and prev.group().lower() not in function_words)
            if prev is not None and adjective and text[prev.end() : word.start()] == " ":
                pair = self._composed(text, prev.start(), word.end(), pack.code)  # chronische Nierenerkrankung
                if pair is not None:
                    found.append(pair)
                    continue
            if len(noun) >= rules.min_candidate and not any(_overlaps(m, word.start(), word.end()) for m in mentions):
                single = self._composed(text, word.start(), word.end(), pack.code)
                if single is not None:
                    found.append(single)
        return found

    def _segment_candidates(
        self, text: str, mentions: list[Mention], pack: LanguagePack, rules: ComposeRules
    ) -> list[Mention]:
        """Runs of adjacent pieces in an unspaced script (Chinese)."""
        script = pack.lexicon.script
        if rules.run is None or script is None:
            return []
        pieces = sorted({(m.start, m.end) for m in mentions if m.surface and script(m.surface[0])})
        glossary = self.vocab.glossary if self.dictionary_compose else None
        for run in rules.run.finditer(text):
            chunk = run.group()
            for morpheme in rules.morphemes:
                i = chunk.find(morpheme)
                while i >= 0:
                    pieces.append((run.start() + i, run.start() + i + len(morpheme)))
                    i = chunk.find(morpheme, i + 1)
            if glossary is not None and glossary.languages():  # the dictionary's words (手 · 卫生)
                pos = run.start()
                for word, glosses in glossary.segments(chunk, pack.code):
                    if glosses:
                        pieces.append((pos, pos + len(word)))
                    pos += len(word)
        by_start: dict[int, list[int]] = {}
        for start, end in pieces:
            by_start.setdefault(start, []).append(end)
        spans: set[tuple[int, int]] = set()
        for start, end in pieces:
            ends = [end]
            for _ in range(2):  # two or three pieces
                nxt = [e2 for e in ends for s2 in (e, e + 1) if s2 == e or text[e:s2] in rules.dropped
                       for e2 in by_start.get(s2, ())]
                spans.update((start, e) for e in nxt)
                ends = nxt
        if glossary is not None and glossary.languages():  # a span must not start or end inside a word
            bounds = glossary.boundaries(text, pack.code)
            spans = {(a, b) for a, b in spans if a in bounds and b in bounds and text[a] not in rules.dropped}
        found: list[Mention] = []
        for start, end in sorted(spans, key=lambda se: (se[0] - se[1], se[0])):  # longest first
            if not any(_overlaps(f, start, end) for f in found):
                hit = self._composed(text, start, end, pack.code)
                if hit is not None:
                    found.append(hit)
        return found

    def _second_stage(self, text: str, mentions: list[Mention], language: str) -> list[Mention]:
        """Compose candidates (see the module docstring) replacing the mentions they cover: those of
        the text's language when it is a spaced language with composition rules, else those of the
        unspaced pack whose script the text is written in."""
        pack = lang.get_or_pivot(language)
        rules = pack.lexicon.compose
        if rules is not None and pack.spaced:
            found = self._word_candidates(text, mentions, pack, rules)
        else:
            script = script_pack(text)
            rules = script.lexicon.compose if script is not None else None
            if script is None or rules is None or script.spaced:
                return mentions
            found = self._segment_candidates(text, mentions, script, rules)
        kept = [m for m in mentions if not any(_overlaps(m, f.start, f.end) for f in found)]
        return sorted(kept + found, key=lambda m: (m.start, m.end))

    def _dictionary(self, text: str, language: str) -> list[Mention]:
        """Gazetteer mentions, then the compose candidates (second stage)."""
        mentions = self.ner.find(text, language)
        if self.ner.cfg.compose_candidates and self.linker.cfg.compose:
            mentions = self._second_stage(text, mentions, language)
        return mentions

    def _abbreviations(self, text: str, mentions: list[Mention], language: str, context: str | None) -> list[Mention]:
        """Every ``long form (SF)`` definition relabels the occurrences of ``SF`` (module docstring)."""
        if not self.linker.cfg.abbreviations or "(" not in (context or text):
            return mentions
        local = context is None or context == text
        seen: set[str] = set()
        for abbr in find_abbreviations(context or text):
            if abbr.short in seen or (not local and abbr.short not in text):
                continue
            seen.add(abbr.short)
            res = self.linker.link(abbr.long, language, fuzzy=False)
            mentions = self._apply(text, mentions, abbr, res, local)
        return sorted(mentions, key=lambda m: (m.start, m.end))

    def extract(self, text: str, language: str = lang.PIVOT, context: str | None = None) -> list[Mention]:
        """Linked mentions in ``text`` (offsets into ``text``)."""
        return self.extract_many([text], [language], [context])[0]

    def extract_many(
        self, texts: Sequence[str], languages: Sequence[str], contexts: Sequence[str | None] | None = None
    ) -> list[list[Mention]]:
        """``extract`` over a batch of chunks (one language per chunk): the model passes of the
        cascade run once over the whole batch."""
        ctx = list(contexts) if contexts is not None else [None] * len(texts)
        found = [self._dictionary(t, lang) for t, lang in zip(texts, languages, strict=True)]
        if self.cascade is not None:
            found = self.cascade.merge_many(texts, languages, found, self.linker)
        return [self._abbreviations(t, m, lang, c) for t, m, lang, c in zip(texts, found, languages, ctx, strict=True)]
