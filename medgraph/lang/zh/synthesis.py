"""The Chinese pack's question templates for the synthetic QA factory."""

from __future__ import annotations

import re

from medgraph.lang.sections.synthesis import QuestionTemplates

SYNTHESIS = QuestionTemplates(
    templates={
        "relation": ("{a}和{b}之间有什么关系？", "关于{a}与{b}，有哪些发现？"),
        "finding": ("关于{a}有什么发现？", "文献中关于{a}报告了什么？"),
        "recommendation": ("关于{a}有什么建议？", "对于{a}应该怎么做？"),
        "adverse_effects": ("{a}有哪些不良反应？", "{a}有什么副作用？"),
        "dosage": ("{a}的剂量是多少？", "{a}用多少剂量？"),
        "false_premise": ("为什么{a}会导致{b}？", "{a}是如何引起{b}的？"),
    },
    recommends=re.compile(r"应当|应该|建议|推荐|必须"),
)
