"""The French test pack's text rules."""

from __future__ import annotations

from medgraph.lang.sections.text import TextRules

TEXT = TextRules(
    snowball="french",
    index_stopwords=frozenset(
        """le la les un une des du de et ou mais est sont etait ete a ont avec pour par dans sur au aux
        ce cette ces qui que quoi dont ne pas plus se il elle ils elles nous vous je tu en y""".split()),
    langid="fr",
    tesseract="fra",
    paddle="fr",
    mineru="latin",
)
