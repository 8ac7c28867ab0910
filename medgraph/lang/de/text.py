"""The German pack's text rules."""

from __future__ import annotations

from medgraph.lang.sections.text import TextRules

TEXT = TextRules(
    snowball="german",
    index_stopwords=frozenset(
        """der die das den dem des ein eine einer eines einem einen und oder aber ist sind war waren wird
        werden wurde wurden hat haben hatte mit von zu zum zur im in am an auf aus bei fur nach uber
        unter vor durch als auch nicht kein keine sich es er sie wir ihr ich du dass wie wenn so noch
        nur bis um""".split()),
    langid="de",
    tesseract="deu",
    paddle="de",
    mineru="latin",
)
