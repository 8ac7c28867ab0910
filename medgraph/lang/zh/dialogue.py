"""The Chinese pack's dialogue sections: rewrite, plan and route cues."""

from __future__ import annotations

import re

from medgraph.lang.sections.dialogue import PlanCues, RewriteCues, RouteCues, cue

REWRITE = RewriteCues(
    kind_phrases={
        "Drug": cue(r"(?:这种|这个|该|此|这款|那种)(?:药物|药品|药)"),
        "Disease": cue(r"(?:这种|这个|该|此|那种)(?:疾病|病症|病)"),
    },
    possessive=cue(r"(?P<det>它的)(?P<noun>)"),
    possessive_phrase="{name}的",  # "它的副作用" -> "二甲双胍的副作用"
    pronouns=((cue(r"它"), "{e}"),),
    clause_break=re.compile(r"[，,]"),  # "患者对甲硝唑过敏，不能使用该药物": the earlier clause names it
    function_words=frozenset("那 那么 请问 所以 而且 还有 我 我们 想 知道 能 可以 会 是 吗 呢 的 ， , 。 ？".split()),
    ellipsis_lead=cue(r"^(?:那么|那|还有|如果是|换成)"),
    ellipsis_tail=cue(r"(?:呢|怎么样|如何)$"),
    prepositions=cue(r"^(?:对于|对|在|如果是)"),
    constraint_strip=re.compile(r"^(?:对于|对)"),
    constraint_join="对于{fragment}，{question}？",  # "那儿童呢？" -> "对于儿童，<previous question>？"
)

PLAN = PlanCues(
    # a pointing determiner ("该药物" -> "#1药物"); not 应该, 因此, 如此, 彼此, ...
    reference=re.compile(r"(?:(?<!应)该|这(?=第)|这种|这一|这类|此种|(?<![因如彼从由据为])此|上述|同一|同种|这些)"),
    place=re.compile(r"(?:当地|那里|该地)"),
    place_reference="#1",
    lead_clause=re.compile(r"^(?P<desc>.{8,}?)[：；]\s*(?P<ask>.+)$"),  # "在…的国家：…？"
    comparison=re.compile(r"(?:分别|各自|前者|后者)"),
    sides=re.compile(r"[，,]\s*(?:以及|而|和)?(?=(?:在|对|其|另一|后者|第二))"),
    # "哪种维生素既能……，又能……？"
    pair=re.compile(r"^(?P<head>.*?(?:哪|什么).*?)既(?P<a>.+?)[，,]?\s*又(?P<b>.+)$"),
)

# Chinese cues match substrings; they only match Chinese text, so they apply to questions in any language
ROUTE = RouteCues(
    constraints={
        "age": cue(r"\d{1,3}\s*(?:岁|周岁|个月)", r"儿童|小儿|婴儿|婴幼儿|新生儿|老年|老人|青少年|幼儿"),
        "sex": cue(r"女性|男性|女士|妇女|女孩|男孩|男子|女子|女患者|男患者|岁女|岁男"),
        "renal": cue(r"肾功能|肾衰|肾病|肾损|肾不全|透析|肾小球滤过率"),
        "hepatic": cue(r"肝功能|肝硬化|肝损|肝病|肝衰|肝不全"),
        "pregnancy": cue(r"妊娠|怀孕|孕妇|孕期|孕早期|孕晚期|哺乳"),
    },
    intents={
        "PATIENT_FAQ": cue(r"是什么|什么是|副作用|症状|表现|多久|什么意思|为什么会|能不能吃|可以吃"),
        "CLINICAL_DECISION": cue(r"治疗|用药|剂量|调整|禁忌|注意|首选|应该|停药|换药|方案|处理"),
        "DRUG_INTERACTION": cue(r"相互作用|合用|联用|同时服用|同时使用|一起服用|一起吃|配伍|联合使用",
                                r"(?:降低|增强|影响|减弱|升高).{0,8}(?:疗效|药效|作用|浓度)"),
        "LITERATURE_MULTIHOP": cue(r"证据|研究|机制|关联|相关性|文献|荟萃分析|临床试验|之间的关系"),
        "CROSS_CORPUS": cue(r"不同指南|指南之间|各国|不同国家|不同来源|中外|国际",
                            r"(?:中国|美国|欧洲).{0,6}(?:和|与).{0,6}指南", r"指南.{0,12}(?:不同|一致|差异|区别)"),
    },
    overview=cue(r"概述|综述|总结|概况|概览|主要主题|主要议题|主要发现|研究现状|总体来看"),
    relation=cue(r"(?:与|和|跟).{1,12}(?:之间|同时|一起|合用|联用)"),  # "A与B之间", "A和B同时服用"
    inn_stems=cue(
        r"[^\s\W和与及跟同的是在用吃服会能可对从把被将给了有]{1,3}(?:普利|洛尔|他汀|沙坦|拉唑|康唑|霉素|西林|沙星|环素|肝素|沙班|加群|格雷|列汀|列净|鲁肽|地平|"
        r"西泮|唑仑|替丁|司琼|曲坦|洛芬|昔布|司特|特罗|奈德|那韦|替尼|铂|比星|碘酮|西汀|那非|塞米|噻嗪)"),
    script_specific=True,
)
