"""The offline router: a transparent rule classifier over the question and its linked entities.

Input: a ``QueryAnalysis`` (question text, language, linked MeSH mentions with categories).
Output: a ``RouteDecision`` (tier, intent, E, I, and the entities, constraints and cue words that
decided it), so every routing decision can be explained.

- E counts distinct linked entities of clinical categories (drugs, diseases, symptoms,
  procedures, anatomy, genes) plus patient constraints: age, sex, renal function, hepatic
  function, pregnancy / lactation. A mention inside a constraint phrase ("renal impairment",
  "Schwangerschaft") counts once, as the constraint.
- I is the depth of the intent. Each intent has cue patterns in English, German and Chinese;
  each matching pattern is one vote. Constraints vote for CLINICAL_DECISION, two or more drugs
  for DRUG_INTERACTION. The most votes win; ties go to the deeper intent (routing up when in
  doubt costs compute, routing down costs answer quality); no votes means PATIENT_FAQ.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from medgraph.retrieve.types import QueryAnalysis
from medgraph.route.types import INTENT_DEPTH, Intent, RouteDecision, entity_score, tier_for

COUNTED_CATEGORIES = frozenset({"Disease", "Symptom", "Drug", "Gene", "Procedure", "Anatomy", "Physiology", ""})
# question-framing descriptors that say what is asked, not what it is about
FRAMING_IDS = frozenset({
    "D064420",  # Drug-Related Side Effects and Adverse Reactions ("side effects", "副作用")
    "D012307",  # Risk Factors
    "D013812",  # Therapeutics
    "D003933",  # Diagnosis
    "D006801",  # Humans
})


def _rx(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


def _langs(en: tuple[str, ...], de: tuple[str, ...], zh: tuple[str, ...]) -> dict[str, re.Pattern[str]]:
    return {"en": _rx(*en), "de": _rx(*de), "zh": _rx(*zh)}


# Cue patterns per language: English and German with word boundaries, Chinese as substrings.
# Patterns of the question's language apply (German "man" is not a man); Chinese ones always do.
CONSTRAINTS: dict[str, dict[str, re.Pattern[str]]] = {
    "age": _langs(
        en=(r"\b\d{1,3}[- ]?(?:years?|yrs?|months?|weeks?)[- ]?old\b", r"\baged?\s+\d{1,3}\b",
            r"\b(?:elderly|older (?:adults?|patients?|people)|geriatric|infants?|newborns?|neonat\w*|children|"
            r"child|paediatric|pediatric|adolescents?|teenagers?|toddlers?)\b"),
        de=(r"\b\d{1,3}[- ]?(?:jährig\w*|jahre alt\w*|monate alt\w*)", r"\b(?:kinder\w*|kind|säugling\w*|"
            r"neugeboren\w*|jugendlich\w*|ältere[nrm]?|senior\w*|betagt\w*|hochbetagt\w*)\b"),
        zh=(r"\d{1,3}\s*(?:岁|周岁|个月)", r"儿童|小儿|婴儿|婴幼儿|新生儿|老年|老人|青少年|幼儿"),
    ),
    "sex": _langs(
        en=(r"\b(?:woman|women|man|men|female|male|girl|boy|mother)\b",),
        de=(r"\b(?:frau|frauen|mann|männer|patientin\w*|weiblich\w*|männlich\w*|mädchen|junge)\b",),
        zh=(r"女性|男性|女士|妇女|女孩|男孩|男子|女子|女患者|男患者|岁女|岁男",),
    ),
    "renal": _langs(
        en=(r"\b(?:renal|kidneys?|nephropath\w*|ckd|egfr|creatinine clearance|dialysis|ha?emodialysis)\b",),
        de=(r"\b(?:niere\w*|dialyse\w*|kreatinin\w*|egfr)",),
        zh=(r"肾功能|肾衰|肾病|肾损|肾不全|透析|肾小球滤过率",),
    ),
    "hepatic": _langs(
        en=(r"\b(?:hepatic|liver|cirrhosis|child-pugh)\b",),
        de=(r"\b(?:leber\w*|hepatisch\w*|zirrhose\w*)",),
        zh=(r"肝功能|肝硬化|肝损|肝病|肝衰|肝不全",),
    ),
    "pregnancy": _langs(
        en=(r"\b(?:pregnan\w*|breast-?feeding|lactat\w*|nursing mothers?|trimester)\b",),
        de=(r"\b(?:schwanger\w*|stillzeit|stillend\w*|stillen)\b",),
        zh=(r"妊娠|怀孕|孕妇|孕期|孕早期|孕晚期|哺乳",),
    ),
}

INTENT_CUES: dict[Intent, dict[str, re.Pattern[str]]] = {
    Intent.PATIENT_FAQ: _langs(
        en=(r"\bwhat (?:is|are)\b", r"\bside[- ]effects?\b", r"\bsymptoms?\b", r"\bsigns? of\b", r"\bcan i\b",
            r"\bhow long\b", r"\bwhat causes\b", r"\bwhat does\b.*\bmean\b", r"\bis it normal\b"),
        de=(r"\bwas (?:ist|sind|bedeutet)\b", r"\bnebenwirkung\w*", r"\bsymptom\w*", r"\banzeichen\b",
            r"\b(?:darf|kann) ich\b", r"\bwie lange\b", r"\bwoher kommt\b"),
        zh=(r"是什么|什么是|副作用|症状|表现|多久|什么意思|为什么会|能不能吃|可以吃",),
    ),
    Intent.CLINICAL_DECISION: _langs(
        en=(r"\btreat(?:ed|ment|ing)?\b", r"\bmanag(?:e|ed|ement)\b", r"\bshould\b", r"\brecommend\w*",
            r"\bfirst[- ]line\b", r"\bdos(?:e|es|ing|age)\b", r"\badjust\w*", r"\bcontraindicat\w*",
            r"\bprecautions?\b", r"\bdiscontinu\w*", r"\bswitch\w*\b", r"\bwhich (?:drug|medication|antibiotic)\b"),
        de=(r"\bbehandl\w*", r"\btherapie\w*", r"\bempfehl\w*", r"\bempfiehlt\b", r"\bdosis\b", r"\bdosierung\w*",
            r"\banpass\w*", r"\bkontraindi\w*", r"\bvorsicht\w*", r"\babsetzen\b", r"\bumstell\w*",
            r"\bmittel der (?:ersten )?wahl\b", r"\bsollte\w*\b", r"\berhalten\b"),
        zh=(r"治疗|用药|剂量|调整|禁忌|注意|首选|应该|停药|换药|方案|处理",),
    ),
    Intent.DRUG_INTERACTION: _langs(
        en=(r"\binteract\w*", r"\btogether with\b", r"\bcombin\w*", r"\bplus\b", r"\bco-?administ\w*",
            r"\bconcomitant\w*", r"\bat the same time\b", r"\balong with\b", r"\btaken with\b",
            r"\b(?:reduce|increase|affect|potentiate|enhance|decrease|block)s?\b.{0,20}\b(?:effect|efficacy|levels?)\b"),
        de=(r"\bwechselwirkung\w*", r"\binteraktion\w*", r"\bzusammen mit\b", r"\bkombin\w*", r"\bgleichzeitig\b",
            r"\b(?:verstärk|abschwäch|schwäch|beeinfluss|verringer|erhöh|hemm)\w*\b.{0,30}\bwirkung\b"),
        zh=(r"相互作用|合用|联用|同时服用|同时使用|一起服用|一起吃|配伍|联合使用",
            r"(?:降低|增强|影响|减弱|升高).{0,8}(?:疗效|药效|作用|浓度)"),
    ),
    Intent.LITERATURE_MULTIHOP: _langs(
        en=(r"\bevidence\b", r"\bstud(?:y|ies)\b", r"\btrials?\b", r"\bmeta-?analys\w*", r"\bsystematic reviews?\b",
            r"\bmechanisms?\b", r"\bpathways?\b", r"\b(?:link|association|relationship|correlation) between\b",
            r"\bassociated with\b", r"\bliterature\b", r"\bcohorts?\b"),
        de=(r"\bevidenz\b", r"\bstudie\w*", r"\bmechanism\w*", r"\bzusammenhang\w*", r"\bassoziiert\w*",
            r"\bmetaanalyse\w*", r"\bliteratur\w*"),
        zh=(r"证据|研究|机制|关联|相关性|文献|荟萃分析|临床试验|之间的关系",),
    ),
    Intent.CROSS_CORPUS: _langs(
        en=(r"\bguidelines?\b.*\b(?:differ|disagree|agree|compare|comparison|consistent)\w*",
            r"\b(?:compare|comparing|differ\w*|agree)\b.*\bguidelines?\b",
            r"\bacross (?:guidelines|sources|countries)\b",
            r"\b(?:who|cdc|nice|esc|aha)\b.*\b(?:and|vs\.?|versus)\b.*\b(?:who|cdc|nice|esc|aha)\b",
            r"\beuropean and american\b", r"\bamerican and european\b", r"\binternational\w*\b"),
        de=(r"\bleitlinie\w*\b.*\b(?:unterscheid|übereinstimm|vergleich|widersprech)\w*",
            r"\b(?:unterscheid|übereinstimm|vergleich|widersprech|stimmen)\w*\b.*\bleitlinie\w*",
            r"\bdeutsche\w* und \w*amerikanische\w*\b", r"\binternational\w*\b"),
        zh=(r"不同指南|指南之间|各国|不同国家|不同来源|中外|国际",
            r"(?:中国|美国|欧洲).{0,6}(?:和|与).{0,6}指南", r"指南.{0,12}(?:不同|一致|差异|区别)"),
    ),
}


# Overview questions (the whole corpus in view: "main themes", "overview", "Überblick", "综述"):
# together with CROSS_CORPUS cues they switch on the community retrieval path (``wants_overview``).
OVERVIEW = _langs(
    en=(r"\b(?:main|key|major|common|recurring|central)\s+(?:themes?|topics?|findings?|areas?|issues?)\b",
        r"\boverview\b", r"\bsummar(?:y|ise|ize|ising|izing)\b", r"\blandscape\b",
        r"\bwhat (?:is|does) the (?:literature|corpus|evidence|research)\b",
        r"\bacross (?:the )?(?:corpus|literature|documents|studies|sources)\b", r"\bstate of (?:the )?research\b"),
    de=(r"\büberblick\w*", r"\bübersicht\w*", r"\bzusammenfass\w*", r"\bhauptthem\w*", r"\bforschungsstand\b",
        r"\bwichtigsten themen\b"),
    zh=(r"概述|综述|总结|概况|概览|主要主题|主要议题|主要发现|研究现状|总体来看",),
)

# A binary relation ("between A and B", "zwischen A und B", "A与B之间", "A和B同时服用") has two
# arguments even when the linker names only one of them: E counts at least two entities.
RELATION = _langs(
    en=(r"\bbetween\b.+\band\b",),
    de=(r"\bzwischen\b.+\bund\b",),
    zh=(r"(?:与|和|跟).{1,12}(?:之间|同时|一起|合用|联用)",),
)


# Drug names the vocabulary does not know still count as drugs when they carry a WHO INN stem
# (-pril, -statin, -grel, ... ; Chinese transliterations 普利, 他汀, 格雷 ...).
INN_STEMS = _langs(
    en=(r"\b[a-z]{3,}(?:mab|pril|olol|statin|sartan|prazole|conazole|mycin|micin|cillin|floxacin|cycline|parin|"
        r"xaban|gatran|grel|gliptin|gliflozin|glutide|dipine|azepam|azolam|tidine|setron|triptan|profen|coxib|"
        r"lukast|terol|sonide|navir|tinib|platin|rubicin|darone|oxetine|afil|semide|thiazide)\b",),
    de=(r"\b[a-zäöü]{3,}(?:mab|pril|olol|statin|sartan|prazol|conazol|mycin|micin|cillin|floxacin|cyclin|parin|"
        r"xaban|gatran|grel|gliptin|gliflozin|glutid|dipin|azepam|azolam|tidin|setron|triptan|profen|coxib|"
        r"lukast|terol|sonid|navir|tinib|platin|rubicin|daron|oxetin|afil|semid|thiazid)\b",),
    zh=(r"[^\s\W和与及跟同的是在用吃服会能可对从把被将给了有]{1,3}(?:普利|洛尔|他汀|沙坦|拉唑|康唑|霉素|西林|沙星|环素|肝素|沙班|加群|格雷|列汀|列净|鲁肽|地平|"
        r"西泮|唑仑|替丁|司琼|曲坦|洛芬|昔布|司特|特罗|奈德|那韦|替尼|铂|比星|碘酮|西汀|那非|塞米|噻嗪)",),
)


def _patterns(table: dict[str, re.Pattern[str]], language: str) -> list[re.Pattern[str]]:
    return [table.get(language, table["en"]), table["zh"]] if language != "zh" else [table["zh"]]


def find_constraints(text: str, language: str = "en") -> dict[str, list[tuple[int, int]]]:
    """Constraint kind → the character spans that matched it."""
    found: dict[str, list[tuple[int, int]]] = {}
    for kind, table in CONSTRAINTS.items():
        spans = [m.span() for p in _patterns(table, language) for m in p.finditer(text)]
        if spans:
            found[kind] = spans
    return found


def _overlaps(start: int, end: int, spans: Iterable[tuple[int, int]]) -> bool:
    return any(start < e and s < end for s, e in spans)


def counted_entities(analysis: QueryAnalysis, constraint_spans: list[tuple[int, int]]) -> dict[str, str]:
    """Entity key → category of the entities counted in E (see the module docstring).

    Keys are MeSH IDs, and ``inn:<name>`` for drug names found by their INN stem only.
    """
    out: dict[str, str] = {}
    linked: list[tuple[int, int]] = []
    for m in analysis.mentions:
        if not m.mesh_id or m.category not in COUNTED_CATEGORIES:
            continue  # unlinked, or "Other" (no tree number): the INN stems below may still name a drug
        linked.append((m.start, m.end))
        if m.mesh_id not in FRAMING_IDS and not _overlaps(m.start, m.end, constraint_spans):
            out.setdefault(m.mesh_id, m.category)
    for pattern in _patterns(INN_STEMS, analysis.language):
        for hit in pattern.finditer(analysis.text):
            if not _overlaps(*hit.span(), linked + constraint_spans):
                out.setdefault(f"inn:{hit.group(0).lower()}", "Drug")
    return out


def intent_votes(text: str, n_drugs: int, n_constraints: int, language: str = "en") -> dict[Intent, list[str]]:
    """Intent → the cue words (and structural cues) that voted for it."""
    votes: dict[Intent, list[str]] = {}
    for intent, table in INTENT_CUES.items():
        hits = [m.group(0).lower() for p in _patterns(table, language) for m in p.finditer(text)]
        if hits:
            votes[intent] = hits
    if n_constraints:
        votes.setdefault(Intent.CLINICAL_DECISION, []).append(f"<{n_constraints} constraint(s)>")
    if n_drugs >= 2:
        votes.setdefault(Intent.DRUG_INTERACTION, []).append(f"<{n_drugs} drugs>")
    return votes


def choose_intent(votes: dict[Intent, list[str]]) -> Intent:
    if not votes:
        return Intent.PATIENT_FAQ
    return max(votes, key=lambda i: (len(votes[i]), INTENT_DEPTH[i]))


def wants_overview(analysis: QueryAnalysis) -> bool:
    """True for overview and cross-corpus questions: those the community summaries serve."""
    tables = (OVERVIEW, INTENT_CUES[Intent.CROSS_CORPUS])
    return any(p.search(analysis.text) for t in tables for p in _patterns(t, analysis.language))

class RuleRouter:
    """Transparent complexity router (the offline tier). Thread-safe and stateless."""

    name = "rules"

    def __init__(self, small_max: int = 3, medium_max: int = 4) -> None:
        self.small_max, self.medium_max = small_max, medium_max

    def route(self, analysis: QueryAnalysis) -> RouteDecision:
        text = analysis.text
        constraints = find_constraints(text, analysis.language)
        spans = [s for v in constraints.values() for s in v]
        entities = counted_entities(analysis, spans)
        n_drugs = sum(1 for c in entities.values() if c == "Drug")
        votes = intent_votes(text, n_drugs, len(constraints), analysis.language)
        intent = choose_intent(votes)
        notes: tuple[str, ...] = ()
        n_entities = len(entities)
        if n_entities < 2 and any(p.search(text) for p in _patterns(RELATION, analysis.language)):
            n_entities, notes = 2, ("binary relation: at least two entities",)
        e, i = entity_score(n_entities, len(constraints)), INTENT_DEPTH[intent]
        return RouteDecision(
            tier=tier_for(e + i, self.small_max, self.medium_max), intent=intent, entity_score=e,
            intent_score=i, entities=tuple(entities), constraints=tuple(constraints),
            cues=tuple(votes.get(intent, ())), method=self.name, notes=notes,
        )
