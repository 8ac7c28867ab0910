"""Chinese word boundaries for matching dictionary words in running text.

Chinese has no spaces, so a dictionary word also matches inside longer words (``网膜`` inside
``大网膜``, ``尼龙`` inside ``甲泼尼龙``). The gazetteer keeps such a match only when it starts and
ends where jieba's segmentation puts word boundaries (``word_bounds``), when it is not directly
followed by a bound head or suffix (``CONTINUATIONS``), and, for a chemical or drug word, when no
character of Chinese chemical nomenclature stands next to it (``CHEMICAL_AFFIXES``).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

# Chinese dictionary words the gazetteer matches: anatomy, organisms, diseases, chemicals and drugs
# (the linker reads every joined word, for spans it is given: 医院 → Hospitals)
WORD_TREES = ("A", "B", "C", "D")
# Chinese compounds are right-headed: a word directly followed by one of these bound heads or
# suffixes is the modifier of a longer term (卵黄囊瘤 yolk sac tumour, 上皮样 epithelioid, 胆红素血症
# bilirubinaemia, 血小板减少 thrombocytopenia, 毛果芸香碱 pilocarpine, an alkaloid named after its plant)
CONTINUATIONS = (*"菌瘤炎癌病症素酶物剂疹性率囊样碱", "血症", "减少", "增多", "因子")
# Chinese chemical names are built from a parent name with substituent and salt characters around
# it (去甲肾上腺素 norepinephrine, 甲泼尼龙 methylprednisolone, 普鲁卡因胺 procainamide, 乳酸钠), and
# a letter or digit after a name completes it (维生素A, 补体C3): a chemical word next to one of
# these is part of a longer name
CHEMICAL_AFFIXES = frozenset("甲乙丙丁戊己基异去脱氧氢氯氟溴碘羟氨胺硝磺酰酯醇醛酮酸钠钾钙镁铋磷泼")
_segmenter_lock = threading.Lock()
_segmenter: Any = None


def word_bounds(text: str) -> set[int]:
    """The offsets where a word of ``text`` starts or ends, by jieba's segmentation."""
    global _segmenter
    if _segmenter is None:
        with _segmenter_lock:
            if _segmenter is None:
                import jieba

                jieba.setLogLevel(logging.WARNING)
                tokenizer = jieba.Tokenizer()
                tokenizer.initialize()
                _segmenter = tokenizer
    bounds = {0, len(text)}
    for _word, start, end in _segmenter.tokenize(text):
        bounds.update((start, end))
    return bounds
