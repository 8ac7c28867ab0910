"""The zh pack's answer section: the Chinese answer texts and the Chinese cues of sentence scoring."""

from __future__ import annotations

from medgraph.lang.sections.answer import AnswerStrings

ANSWER = AnswerStrings(
    disclaimer="本回答根据已索引的文献生成，仅供参考，不构成医疗建议。诊断或治疗请咨询合格的医疗专业人员。",
    refusal="在已索引的语料中没有找到能够回答该问题的证据，因此不作推测。",
    instructions="你只能根据编号的证据段落回答临床问题。每句话后用 [N] 标注支持它的段落。不要使用段落以外的知识。"
                 "如果段落无法回答问题，请说明证据不足。请用中文回答。",
    evidence_label="证据",
    question_label="问题",
    answer_label="回答",
    lead="以下是{languages}文献中{about}证据：",
    lead_about="关于{names}的",
    gap_with_entities="已索引的文献提到了{entities}，但没有关于{aspect}的内容。",
    gap_without="已索引的文献中没有关于{aspect}的内容。",
    list_separator="、",
    conjunction_and="和",
    conjunction_or="或",
    just_now="刚刚",
    time_ago="{count}{unit}前",
    time_units={"year": ("年", "年"), "month": ("个月", "个月"), "week": ("周", "周"), "day": ("天", "天"),
                "hour": ("小时", "小时"), "minute": ("分钟", "分钟")},
    language_names={"en": "英文", "de": "德文", "zh": "中文"},
    aspect_names={"adverse_effects": "不良反应", "dosage": "剂量或浓度", "contraindication": "禁忌", "cost": "费用"},
    aspect_questions={
        "adverse_effects": r"副作用|不良反应|毒副",
        # (not a 多剂量药瓶: a kind of container)
        "dosage": r"(?<![多单])剂量|用量|浓度|含量",
        "contraindication": r"禁忌",
        "cost": r"费用|成本|价格|多少钱",
    },
    aspect_evidence={
        "adverse_effects": r"副作用|不良反应|刺激|过敏",
        "dosage": r"剂量|用量|浓度|每日|每天",
        "contraindication": r"禁忌|不宜|避免|不应|不得",
        "cost": r"费用|成本|价格|\d\s?元",
    },
    range_words=r"至",
    amount_units=r"毫克|克|毫升|升|单位|片",
    question_kinds={
        "adverse": r"副作用|不良反应|并发症|安全|危害",
        "dosage": r"剂量|用量|多少",
        "risk": r"风险|危险|可能性",
        "procedure": r"如何|怎样|怎么|方法|步骤",
        "timing": r"何时|什么时候|多久|多长时间|频率|多常|多少次",
        "claim": r"是否|吗[？?]?$",
        "population": r"谁|哪些人|哪类人|哪些患者",
    },
    answer_kinds={
        "adverse": r"不良|副作用|并发症|安全|耐受|出血",
        "dosage": r"剂量|每日|每天|毫克|克",
        "risk": r"风险|增加|降低|相关",
        "procedure": r"应|须|使用|进行|采用",
        "timing": r"每|之前|之后|期间|小时|天|周|年",
        "claim": r"表明|提示|有效|无显著|相关",
        "population": r"患者|人员|儿童|妇女|老年|人群",
    },
    finding_sections=r"结果|结论|建议|讨论",
    aim_sections=r"目的|背景|方法|对象|资料",
    aim_sentences=r"本研究(?:旨在|目的)|^目的",
    finding_sentences=r"表明|显示|提示|显著|有效|建议|应",
    reference_sections=r"参考文献|引用文献|致谢",
    closing_marks="。！？",
)
