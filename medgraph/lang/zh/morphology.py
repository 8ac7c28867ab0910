"""Chinese spelling variants of a surface, tried when the dictionary misses.

Chinese: leading course/onset modifiers (``急性``, ``慢性``, ``原发性``, …) dropped, the disease
heads ``病`` / ``症`` / ``疾病`` / ``综合征`` / ``综合症`` swapped or dropped (``抑郁症`` ↔ ``抑郁``), and
``癌`` / ``癌症`` / ``恶性肿瘤`` / ``肿瘤`` swapped (MeSH files cancers under "neoplasms").
"""

from __future__ import annotations

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
