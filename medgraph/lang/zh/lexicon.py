"""The Chinese pack's lexicon section: spelling variants, dictionary-word matching and composition."""

from __future__ import annotations

import re

from medgraph.lang.sections.lexicon import ComposeRules, LexiconRules, WordMatching
from medgraph.lang.zh.morphology import CJK_RUN, ZH_ASIDE, ZH_DROPPED, ZH_MORPHEMES, chinese_forms, zh_key
from medgraph.lang.zh.segmentation import CHEMICAL_AFFIXES, CONTINUATIONS, WORD_TREES, word_bounds
from medgraph.text.keys import has_cjk

LEXICON = LexiconRules(
    script=has_cjk,  # a surface with Chinese characters gets Chinese morphology in text of any language
    forms=chinese_forms,
    dictionary_words=WordMatching(
        boundaries=word_bounds, trees=WORD_TREES, continuations=CONTINUATIONS, chemical_affixes=CHEMICAL_AFFIXES
    ),
    exact_join=True,  # CC-CEDICT has no subject labels: "element" must not join Elements by a normalised key
    source_kinds=frozenset({"cedict"}),
    conjunctions=re.compile(r"^(.+?)(?:以及|和|及|与|或|、)(.+)$"),  # 肾和输尿管结石
    disease_endings=("病", "症", "炎", "癌", "瘤", "综合征", "感染", "热", "中毒"),
    compose=ComposeRules(morphemes=ZH_MORPHEMES, part_key=zh_key, dropped=ZH_DROPPED, aside=ZH_ASIDE, run=CJK_RUN),
)
