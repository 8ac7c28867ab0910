"""The English pack's text rules."""

from __future__ import annotations

from medgraph.lang.sections.text import TextRules

TEXT = TextRules(
    snowball="english",
    index_stopwords=frozenset(
        """a an and are as at be been but by for from had has have he her his if in into is it its of
        on or our she than that the their them then there these they this those to was we were what
        when which while who will with would you not no can may also after before between during
        about over under such both each other more most all any some only very""".split()),
    langid="en",
    tesseract="eng",
    paddle="en",
    mineru="en",
)
