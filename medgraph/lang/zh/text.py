"""The Chinese pack's text rules."""

from __future__ import annotations

from medgraph.lang.sections.text import TextRules

CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs: extension A, unified, compatibility

TEXT = TextRules(
    snowball="english",  # the Latin-letter words of Chinese medical text are mostly English
    word_separator="",
    langid="zh",
    script=CJK,
    script_share=0.2,  # a mostly Chinese sentence naming a drug in Latin letters stays Chinese
    tesseract="chi_sim+eng",
    paddle="ch",
    mineru="ch",
)
