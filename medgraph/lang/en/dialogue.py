"""The English pack's dialogue sections: rewrite, plan and route cues."""

from __future__ import annotations

import re

from medgraph.lang.sections.dialogue import PlanCues, RewriteCues, RouteCues, cue

REWRITE = RewriteCues(
    kind_phrases={
        "Drug": cue(r"\b(?:this|that|the same|said)\s+(?:drug|medication|medicine|medicament|pill|tablet|substance)\b"),
        "Disease": cue(r"\b(?:this|that|the same|said)\s+(?:disease|condition|illness|disorder|infection|syndrome)\b"),
    },
    possessive=cue(r"\b(?P<det>its)\s+(?P<noun>[a-z][\w-]*(?:\s+(?!(?:in|for|with|during|and|or|when|if|on|at|"
                   r"of|to|compared|versus|vs|be|is|are)\b)[a-z][\w-]*){0,2})"),
    possessive_phrase="the {noun} of {name}",
    pronouns=((cue(r"\bit\b"), "{e}"),),
    expletive=cue(r"\bit\s+(?:\w+\s+){0,3}?(?:that|if|whether|like)\b|\bit\s+(?:\w+\s+){0,3}?to\s+\w+\s+"
                  r"(?!(?:in|for|with|during|on|at|while|when|if|after|before|together|daily|again|long)\b)\w+"
                  # a diagnostic question: "Is it Crohn's disease?", "Could it be a thyroid disorder?"
                  r"|\b(?:is|could|might|can)\s+it\s+(?:be\s+)?(?:an?\s+)?[\w'-]+(?:\s+[\w'-]+){0,3}?\s+"
                  r"(?:disease|syndrome|disorder|infection|cancer|tumou?r|fever|deficiency|allergy)\b"),
    contraction=re.compile(r"['’]s\b"),  # "it's": not the pronoun on its own
    function_words=frozenset(
        "what which who whom whose when where why how is are was were be been do does did can could will would "
        "should shall may might must has have had i you he she we they me my your our their the a an and or but "
        "so then also still just really too very long much many often soon far old there here this that these "
        "those of in on at for with to from about by as if than please tell me take taking taken use using used "
        "stop stopping start starting give giving get getting happen happens work works need needed combine mix "
        "eat drink keep safe ok okay".split()),
    ellipsis_lead=cue(r"^(?:and\s+)?(?:what|how)\s+about\b|^and\b|^but\b"),
    prepositions=cue(r"^(?:in|for|during|with|without|after|before|among|under|at|on)\b"),
    constraint_preposition="in",
    constraint_join="{question} {fragment}?",
)

_DET = r"(?:this|these|such an?|such)"
PLAN = PlanCues(
    # determiner + the noun it points back with ("this drug")
    reference=re.compile(rf"\b{_DET}\s+(?!is\b|was\b|study\b|trial\b|review\b|work\b)([A-Za-z][\w-]*)", re.I),
    # "that" and "the same" refer back only after a preposition or verb ("with that dye", "given the same
    # combination"; not "the drug that ...", "are they the same procedure?")
    reference_after_word=re.compile(
        r"\b(?:in|with|of|for|by|to|on|from|at|given|using|taking|receiving|about|after|under|than|into|among)\s+"
        r"((?:that|that same|the same)\s+(?!is\b|was\b|study\b|trial\b)[A-Za-z][\w-]*)", re.I),
    place=re.compile(r"\bthere(?=\s*[,.;:?!])", re.I),  # at the end of a clause ("... audited there?")
    place_reference="in #1",
    # "In the country where ..., which ...?"
    lead_clause=re.compile(
        r"^(?P<desc>(?:In|For|Among|At)\s+the\s+[\w -]{2,40}?\s+(?:where|that|which|whose|in which)\b.+?),\s+"
        r"(?P<ask>(?:what|which|how|who|did|does|do|was|were|is|are)\b.+)$", re.I),
    comparison=re.compile(r"\b(?:each|respectively|the former|the latter)\b", re.I),
    sides=re.compile(r",?\s+and\s+(?=(?:what|which|how|who|did|does|do|was|were|is|are|in|of|for|among)\b)", re.I),
    # "Which brain region is both a node of ... and a site where ...?"
    pair=re.compile(r"^(?P<head>(?:which|what)\b.+?)\s+both\s+(?P<a>.+?),?\s+and\s+(?:also\s+)?(?P<b>.+)$", re.I),
    abbreviations=(r"vs", r"e\.g", r"i\.e", r"cf", r"ca", r"Dr", r"Prof", r"etc"),
)

# English cues use word boundaries
ROUTE = RouteCues(
    constraints={
        "age": cue(r"\b\d{1,3}[- ]?(?:years?|yrs?|months?|weeks?)[- ]?old\b", r"\baged?\s+\d{1,3}\b",
                   r"\b(?:elderly|older (?:adults?|patients?|people)|geriatric|infants?|newborns?|neonat\w*|children|"
                   r"child|paediatric|pediatric|adolescents?|teenagers?|toddlers?)\b"),
        "sex": cue(r"\b(?:woman|women|man|men|female|male|girl|boy|mother)\b"),
        "renal": cue(r"\b(?:renal|kidneys?|nephropath\w*|ckd|egfr|creatinine clearance|dialysis|ha?emodialysis)\b"),
        "hepatic": cue(r"\b(?:hepatic|liver|cirrhosis|child-pugh)\b"),
        "pregnancy": cue(r"\b(?:pregnan\w*|breast-?feeding|lactat\w*|nursing mothers?|trimester)\b"),
    },
    intents={
        "PATIENT_FAQ": cue(
            r"\bwhat (?:is|are)\b", r"\bside[- ]effects?\b", r"\bsymptoms?\b", r"\bsigns? of\b", r"\bcan i\b",
            r"\bhow long\b", r"\bwhat causes\b", r"\bwhat does\b.*\bmean\b", r"\bis it normal\b"),
        "CLINICAL_DECISION": cue(
            r"\btreat(?:ed|ment|ing)?\b", r"\bmanag(?:e|ed|ement)\b", r"\bshould\b", r"\brecommend\w*",
            r"\bfirst[- ]line\b", r"\bdos(?:e|es|ing|age)\b", r"\badjust\w*", r"\bcontraindicat\w*",
            r"\bprecautions?\b", r"\bdiscontinu\w*", r"\bswitch\w*\b", r"\bwhich (?:drug|medication|antibiotic)\b"),
        "DRUG_INTERACTION": cue(
            r"\binteract\w*", r"\btogether with\b", r"\bcombin\w*", r"\bplus\b", r"\bco-?administ\w*",
            r"\bconcomitant\w*", r"\bat the same time\b", r"\balong with\b", r"\btaken with\b",
            r"\b(?:reduce|increase|affect|potentiate|enhance|decrease|block)s?\b.{0,20}\b(?:effect|efficacy|levels?)\b"),
        "LITERATURE_MULTIHOP": cue(
            r"\bevidence\b", r"\bstud(?:y|ies)\b", r"\btrials?\b", r"\bmeta-?analys\w*", r"\bsystematic reviews?\b",
            r"\bmechanisms?\b", r"\bpathways?\b", r"\b(?:link|association|relationship|correlation) between\b",
            r"\bassociated with\b", r"\bliterature\b", r"\bcohorts?\b"),
        "CROSS_CORPUS": cue(
            r"\bguidelines?\b.*\b(?:differ|disagree|agree|compare|comparison|consistent)\w*",
            r"\b(?:compare|comparing|differ\w*|agree)\b.*\bguidelines?\b",
            r"\bacross (?:guidelines|sources|countries)\b",
            r"\b(?:who|cdc|nice|esc|aha)\b.*\b(?:and|vs\.?|versus)\b.*\b(?:who|cdc|nice|esc|aha)\b",
            r"\beuropean and american\b", r"\bamerican and european\b", r"\binternational\w*\b"),
    },
    overview=cue(
        r"\b(?:main|key|major|common|recurring|central)\s+(?:themes?|topics?|findings?|areas?|issues?)\b",
        r"\boverview\b", r"\bsummar(?:y|ise|ize|ising|izing)\b", r"\blandscape\b",
        r"\bwhat (?:is|does) the (?:literature|corpus|evidence|research)\b",
        r"\bacross (?:the )?(?:corpus|literature|documents|studies|sources)\b", r"\bstate of (?:the )?research\b"),
    relation=cue(r"\bbetween\b.+\band\b"),
    inn_stems=cue(
        r"\b[a-z]{3,}(?:mab|pril|olol|statin|sartan|prazole|conazole|mycin|micin|cillin|floxacin|cycline|parin|"
        r"xaban|gatran|grel|gliptin|gliflozin|glutide|dipine|azepam|azolam|tidine|setron|triptan|profen|coxib|"
        r"lukast|terol|sonide|navir|tinib|platin|rubicin|darone|oxetine|afil|semide|thiazide)\b"),
)
