"""Chinese spelling variants of a surface, tried when the dictionary misses.

Chinese: leading course/onset modifiers (``急性``, ``慢性``, ``原发性``, …) dropped, the disease
heads ``病`` / ``症`` / ``疾病`` / ``综合征`` / ``综合症`` swapped or dropped (``抑郁症`` ↔ ``抑郁``), and
``癌`` / ``癌症`` / ``恶性肿瘤`` / ``肿瘤`` swapped (MeSH files cancers under "neoplasms").

For glossing a term part by part (``medgraph.link.compose``): ``ZH_MORPHEMES`` (general
word-formation elements with their English glosses), ``ZH_DROPPED`` (adjectival particles),
``zh_key`` (the key a name or part is looked up by), ``ZH_ASIDE`` (bracketed asides) and ``CJK_RUN``
(the runs of Chinese characters the extractor segments). The Chinese pack's lexicon section
(``medgraph.lang.zh.lexicon``) names these hooks.
"""

from __future__ import annotations

import re

from medgraph.text.keys import match_key

_CN_MODIFIERS = ("急性", "慢性", "亚急性", "原发性", "继发性", "先天性", "获得性", "特发性", "复发性", "遗传性")
_CN_HEADS = ("综合征", "综合症", "疾病", "病", "症")
_CN_NEOPLASM = ("恶性肿瘤", "癌症", "癌", "肿瘤")


def chinese_forms(surface: str) -> list[str]:
    """The surface without a leading modifier and with its disease head swapped or dropped."""
    key = match_key(surface).replace(" ", "")
    stems = [key]
    for modifier in _CN_MODIFIERS:
        if key.startswith(modifier) and len(key) - len(modifier) >= 2:
            stems.append(key[len(modifier):])
    forms: list[str] = []
    for stem in stems:
        forms.append(stem)
        for head in _CN_NEOPLASM:
            if stem.endswith(head) and len(stem) - len(head) >= 1:
                core = stem[: -len(head)]
                forms += [core + h for h in _CN_NEOPLASM if h != head]
                break
        for head in _CN_HEADS:
            if stem.endswith(head) and len(stem) - len(head) >= 2:
                core = stem[: -len(head)]
                forms += [core, *(core + h for h in _CN_HEADS if h != head)]
                break
        else:
            forms += [stem + h for h in _CN_HEADS]
    return [f for f in dict.fromkeys(forms) if f != key]


def zh_key(text: str) -> str:
    """The key a Chinese name or part is looked up by (``match_key`` without spaces)."""
    return match_key(text).replace(" ", "")


# general word-formation elements of Chinese medical terms (disease heads, the neoplasm heads MeSH
# files cancers under, deficiency / failure / calculus, course, origin and extent modifiers), with
# their English glosses, for glossing a term part by part (``medgraph.link.compose``)
_NEOPLASMS = ("neoplasms", "cancer")
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
ZH_DROPPED = frozenset({"性", "的", "型"})  # adjectival particles a segmentation skips
ZH_ASIDE = re.compile(r"[(（\[［【][^)）\]］】]*[)）\]］】]")  # bracketed asides: (除外肾盂)
CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
