"""The per-chunk entity extraction call used by ingestion: gazetteer NER + abbreviations + linking.

Input: a ``Vocabulary``, ``NerConfig`` and ``LinkingConfig`` (built once per process or Ray
actor), then ``extract(text, language, context=None)`` per chunk; ``context`` is optional wider
text (e.g. the parent section) searched for abbreviation definitions.
Output: ``Mention`` records sorted by offset, each with ``mesh_id``, ``category``, ``method`` and
``score``. Gazetteer matches come first; every ``long form (SF)`` definition then links the long
form with the ``Linker`` (dictionary steps only: no TF-IDF, so extraction stays fast and precise) and (re)labels every occurrence of ``SF`` in the text with that ID
(``method="abbreviation"``), replacing gazetteer matches on those spans.
"""

from __future__ import annotations

from collections.abc import Sequence

from medgraph.config.models import LinkingConfig, NerConfig
from medgraph.extract.ner import GazetteerNER
from medgraph.link.abbreviations import Abbreviation, find_abbreviations
from medgraph.link.linker import Linker, LinkResult
from medgraph.ontology.vocabulary import Vocabulary
from medgraph.schemas import Mention

_DICTIONARY_METHODS = frozenset({"exact", "normalised"})


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

    def extract(self, text: str, language: str = "en", context: str | None = None) -> list[Mention]:
        """Linked mentions in ``text`` (offsets into ``text``)."""
        mentions = self.ner.find(text, language)
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

    def extract_many(self, texts: Sequence[str], languages: Sequence[str]) -> list[list[Mention]]:
        """``extract`` over a batch of chunks (one language per chunk)."""
        return [self.extract(t, lang) for t, lang in zip(texts, languages, strict=True)]
