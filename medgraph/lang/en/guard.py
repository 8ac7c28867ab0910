"""The en pack's guard section: the rule guard's English cue patterns and its English replies."""

from __future__ import annotations

from medgraph.lang.sections.guard import GuardCues

# a person as the object of a harmful act
_PERSON = (r"(?:him|her|them|someone|somebody|anyone|a person|people|"
           r"(?:my|your|his|her|our|a|the) (?:wife|husband|partner|boyfriend|girlfriend|mother|father|mom|mum|"
           r"dad|son|daughter|child|baby|boss|neighbou?r|colleague|coworker|roommate|patient|teacher|friend|"
           r"brother|sister|family|man|woman|kid|ex))")
_KILL = r"(?:kill|murder|poison|strangle|suffocate|smother|stab|shoot|hurt|harm|injure|beat up)"
# controlled medicines people ask to obtain without a prescription
_CONTROLLED = (r"(?:oxycodone|oxycontin|fentanyl|hydrocodone|morphine|codeine|tramadol|xanax|alprazolam|"
               r"diazepam|valium|lorazepam|benzos?|benzodiazepines?|adderall|ritalin|methylphenidate|ketamine|"
               r"opioids?|opiates?|painkillers?|sleeping pills?)")
_STREET_DRUGS = (r"(?:meth|methamphetamine|crystal meth|mdma|ecstasy|lsd|heroin|cocaine|crack|fentanyl|ghb|"
                 r"dmt|amphetamines?)")
# agents of indiscriminate weapons (chemical, biological, radiological, nuclear, explosive)
_AGENTS = (r"(?:sarin|soman|tabun|vx|novichok|mustard gas|sulfur mustard|chlorine gas|phosgene|ricin|abrin|"
           r"anthrax|bacillus anthracis|botulinum toxin|botulinum|smallpox|plague|yersinia pestis|ebola|"
           r"nerve (?:agents?|gas)|chemical weapons?|biological weapons?|bio-?weapons?|dirty bombs?|"
           r"nuclear (?:bombs?|weapons?)|enriched uranium|plutonium|pipe bombs?|nail bombs?|car bombs?|"
           r"explosives?|tatp|nitroglycerin|bombs?)")
_WEAPON_VERBS = (r"(?:make|build|produce|synthesi[sz]e|manufacture|weaponi[sz]e|extract|purify|cultivate|"
                 r"culture|aerosoli[sz]e|disperse|release|enrich|assemble|detonate|cook|brew|mix)")
# groups that hate speech targets (S10)
_GROUPS = (r"(?:black people|blacks|jews|muslims|christians|asians|chinese|arabs|immigrants|refugees|gays?|"
           r"lesbians|homosexuals|trans(?:gender)? people|women|disabled people|the disabled|"
           r"people with (?:hiv|aids|down syndrome|disabilities|autism|mental illness)|autistic people|"
           r"gypsies|roma|mexicans|africans)")
# whose private data someone asks for (S7), and what data
_PRIVATE = (r"(?:my |our |the )?(?:neighbou?rs?|colleagues?|coworkers?|co-workers?|boss|ex|"
            r"ex-(?:wife|husband|girlfriend|boyfriend)|employees?|tenants?|classmates?|celebrit(?:y|ies))")
_PRIVATE_DATA = (r"(?:(?:medical |health |patient )?records?|diagnos[ie]s|test results?|lab results?|"
                 r"hiv status|medications?|prescriptions?|home address|address|phone number|"
                 r"e-?mail(?: address)?|date of birth|insurance number|social security number)")
# how-to phrasing (S2, S9)
_HOW = (r"(?:how (?:to|do i|can i|could i|would i|should i|would one|could one)|steps? to|instructions? (?:for|to)|"
        r"recipe for|guide to|help me|teach me to|tell me how to)")

# category -> patterns of a request to cause harm
INPUTS: dict[str, tuple[str, ...]] = {
    "S1": (
        rf"\b(?:how (?:to|do i|can i|could i|would i|should i)|best way to|help me|i want to|i'm going to|"
        rf"i am going to|teach me to)\s+(?:\w+\s+){{0,3}}{_KILL}\s+{_PERSON}\b",
        r"\b(?:kill|murder|poison)\w*\b.{0,60}\b(?:without (?:getting caught|being (?:caught|detected|noticed)|"
        r"a trace|leaving (?:a )?traces?)|undetect\w*|untrace\w*)",
        r"\b(?:undetectable|untraceable)\s+(?:\w+\s+)?poisons?\b",
        rf"\b(?:dose|amount|how much|how many)\b.{{0,40}}\b(?:to kill|would kill|will kill)\s+{_PERSON}\b",
    ),
    "S2": (
        r"\b(?:forge|fake|falsify|counterfeit|alter|forging|faking)\s+(?:a\s+|my\s+|the\s+)?(?:doctor'?s?\s+)?"
        r"(?:prescriptions?|rx|sick notes?|medical certificates?|doctor'?s notes?)",
        r"\b(?:fake|forged|falsified|counterfeit)\s+(?:prescriptions?|sick notes?|medical certificates?)\b"
        r".{0,30}\b(?:make|write|get|create|use)",
        rf"\b(?:buy|get|obtain|order|source|score)\w*\s+(?:\w+\s+){{0,3}}{_CONTROLLED}\b.{{0,40}}"
        r"\bwithout (?:a |any )?(?:prescription|rx|doctor)",
        r"\b(?:buy|get|obtain|order|source|score)\w*\b.{0,40}\b(?:on the (?:dark ?web|darknet|street|black market)|"
        r"from a dealer|illegally)",
        rf"\b(?:{_HOW}|where (?:can|do) i)\b.{{0,20}}\b(?:make|cook|synthesi[sz]e|produce|extract|grow)\s+"
        rf"(?:\w+\s+)?{_STREET_DRUGS}\b",
        r"\b(?:pass|cheat|beat|fool|trick)\w*\s+(?:a\s+|the\s+|my\s+)?(?:urine\s+|hair\s+)?drug (?:test|screen)",
        r"\b(?:insurance|medicare|medicaid) fraud\b",
        r"\bsteal\w*\s+(?:\w+\s+){0,2}(?:drugs|medications?|morphine|opioids|prescriptions?)\s+from\b",
    ),
    "S3": (
        r"\b(?:spike|roofie)\w*\s+(?:\w+\s+){0,2}(?:drinks?|someone|her|him|a (?:girl|woman|man|guy))",
        r"\b(?:give|slip|put|use)\s+(?:\w+\s+){0,3}(?:ghb|rohypnol|roofies?|date[- ]rape drugs?|sleeping pills?)\s+"
        r"(?:in(?:to)?|to)\s+(?:her|his|their|someone'?s?|a (?:girl|woman)'?s?)\b",
        r"\bdrug\w*\s+(?:her|him|someone|a (?:girl|woman|man))\s+(?:to|so (?:that )?(?:i|we) can)\s+"
        r"(?:have sex|sleep with|rape)",
        r"\b(?:have sex with|sleep with)\s+(?:someone|her|him|a (?:girl|woman|man))\s+(?:who is|while (?:she|he) is)"
        r"\s+(?:unconscious|asleep|passed out)",
        r"\bhow (?:to|can i|do i)\s+(?:rape|sexually assault)\b",
        r"\b(?:hidden camera|secretly film\w*)\b.{0,30}\b(?:changing room|toilet|bathroom|shower|undress)",
    ),
    "S4": (
        r"\bchild porn\w*|\bcsam\b|\bkiddie porn",
        r"\b(?:write|describe|show|send|find|get|share|download|create|generate)\b.{0,40}\b(?:sexual|erotic|nude|"
        r"naked|porn\w*)\b.{0,30}\b(?:child|children|kids?|minors?|underage|(?:\d|1[0-5])[- ]year[- ]olds?|"
        r"preteens?)\b",
        r"\bhave sex with (?:a |my )?(?:child|kid|minor|(?:\d|1[0-5])[- ]year[- ]old|underage|(?:step)?daughter|"
        r"(?:step)?son)\b",
        r"\bhow (?:to|can i|do i)\s+groom\s+(?:a |my )?(?:child|kid|minor|boy|girl)",
        r"\bget (?:a |my )?(?:child|kid|minor)\s+to\s+(?:undress|send (?:nudes|photos)|touch)",
    ),
    "S5": (
        r"\b(?:write|post|publish|spread|create|make up|invent)\w*\b.{0,40}\b(?:fake|false|made[- ]up|untrue)\b"
        r".{0,30}\b(?:reviews?|rumou?rs?|story|stories|claims?|articles?|accusations?)\b",
        r"\bspread\w* (?:a )?rumou?rs? (?:that|about)\b",
        r"\b(?:help me|how (?:to|can i|do i)|i want to|write)\b.{0,40}\b(?:defame|slander|libel|smear|discredit)\w*",
        r"\bwrite\b.{0,60}\b(?:dr\.?|doctor|professor|nurse)\s+\w+\s+(?:is|was)\s+(?:a\s+)?(?:drunk|fraud|quack|"
        r"killer|murderer|abuser|rapist|criminal)",
    ),
    "S6": (
        r"\b(?:write|issue|give|sign|make|send)\s+(?:me|us|my \w+)\s+(?:a\s+|an\s+)?(?:prescription|rx|sick note|"
        r"doctor'?s note|medical certificate|fit note|note for (?:work|school)|referral)",
        r"\bprescribe\s+(?:me|us)\b",
        r"\b(?:sign|certify)\b.{0,30}\b(?:fit to (?:work|fly|drive)|unfit (?:for|to) work)",
    ),
    "S7": (
        rf"\b(?:find|find out|look up|tell me|give me|get|access|show me|hack|what is|what's|which)\b.{{0,25}}"
        rf"\b{_PRIVATE_DATA}\s+(?:of|for)\s+{_PRIVATE}\b",
        rf"\b(?:find|find out|look up|tell me|give me|get|access|show me|hack|what is|what's)\b.{{0,25}}"
        rf"\b{_PRIVATE}'s?\s+{_PRIVATE_DATA}",
        r"\b(?:identify|who is|name of|find out who)\b.{0,30}\b(?:the patient|this patient|patient in (?:room|bed))",
        r"\b(?:which|what) patient\b.{0,40}\b(?:room|bed|ward)\s*\d+",
        r"\b(?:de-?anonymi[sz]e|deanonymi[sz]e|re-?identify|unmask)\s+(?:the\s+|this\s+|these\s+)?"
        r"(?:patients?|persons?|people|data|dataset|records?)",
        r"\b(?:access|open|read|hack into)\b.{0,20}\b(?:someone else'?s|another patient'?s|other patients'?)\b"
        r".{0,20}\b(?:records?|file|chart|data)",
    ),
    "S8": (
        r"\b(?:download|get|find|send|give me)\b.{0,40}\b(?:pirated|cracked|torrent\w*|warez)\b",
        r"\b(?:crack|bypass|circumvent|remove)\b.{0,20}\b(?:licen[cs]e|drm|paywall|copy protection|activation)\b",
        r"\b(?:reproduce|copy|paste|print|give me)\b.{0,20}\b(?:the )?(?:entire|full|whole|complete)\s+"
        r"(?:text|book|chapter|manual|textbook)\b",
        r"\bsci-?hub\b|\blibgen\b",
    ),
    "S9": (
        rf"\b{_HOW}\b.{{0,30}}\b{_WEAPON_VERBS}\w*\b.{{0,40}}\b{_AGENTS}",
        rf"\b(?:weaponi[sz]\w*|aerosoli[sz]\w*)\b.{{0,40}}\b(?:{_AGENTS}|virus|viruses|bacteria|pathogens?|"
        r"toxins?|spores)",
        rf"\b{_WEAPON_VERBS}\w*\s+(?:\w+\s+){{0,3}}{_AGENTS}\b.{{0,40}}\b(?:at home|in my (?:kitchen|garage|"
        r"lab)|to (?:kill|attack|harm|poison|release))",
    ),
    "S10": (
        rf"\b{_GROUPS}\b.{{0,30}}\b(?:are|is)\s+(?:\w+\s+)?(?:inferior|subhuman|animals|vermin|parasites|"
        r"disgusting|a disease|genetically inferior|less intelligent|worthless)\b",
        rf"\b{_GROUPS}\b.{{0,30}}\b(?:deserve to die|should (?:all )?(?:be )?(?:die|killed|exterminated|"
        r"eradicated|sterili[sz]ed|gassed|locked up))",
        rf"\b(?:write|tell|make)\b.{{0,20}}\b(?:jokes?|insults?|slurs?|a rant|propaganda)\b.{{0,30}}"
        rf"\b(?:about|against|mocking)\b.{{0,20}}\b{_GROUPS}",
        rf"\b(?:prove|explain why|why are)\b.{{0,40}}\b(?:{_GROUPS}|races?)\b.{{0,30}}\b(?:inferior|"
        r"less intelligent|subhuman)",
    ),
    "S11": (
        r"\b(?:how (?:to|do i|can i|should i|could i|would i)|best way to|easiest way to|quickest way to|"
        r"painless(?:ly)? (?:way )?to|i want to|i'm going to|i am going to|i'm planning to|help me)\s+(?:\w+\s+){0,3}"
        r"(?:kill myself|end my (?:own )?life|commit suicide|take my (?:own )?life|die by suicide|hang myself|"
        r"overdose|cut myself|hurt myself|harm myself|starve myself|slit my wrists|poison myself)\b",
        r"\b(?:how many|how much)\s+(?:\w+\s+){0,4}(?:pills|tablets|mg|grams?|of (?:them|it))\s+(?:\w+\s+){0,4}"
        r"(?:to die|to kill myself|to end my life|to not wake up|would kill me|will kill me)",
        r"\b(?:how many|how much|what (?:amount|dose))\b.{0,50}\b(?:do i need|should i take|would i need|must i take)"
        r"\b.{0,30}\b(?:to die|to kill myself|to end (?:it|my life)|to not wake up)",
        r"\bi (?:want|wanna|plan|am going) to (?:die|kill myself|end it all|end my life)\b",
        r"\bi (?:don'?t|do not) want to (?:live|be alive) any ?more\b",
        r"\b(?:best|easiest|most effective|painless|quickest|surest)\s+(?:\w+\s+)?(?:suicide methods?|"
        r"methods? of suicide|way to (?:die|commit suicide|kill myself))",
        r"\bwrite\s+(?:me\s+|my\s+)?(?:a\s+)?suicide note",
        r"\bhide\s+(?:my\s+)?(?:self-harm|cuts|scars|cutting)\b",
        r"\bpro-?ana\b|\bthinspo\b",
    ),
    "S12": (
        r"\b(?:write|tell|describe|create|generate|give me)\b.{0,30}\b(?:erotic|explicit|sexy|dirty|porn\w*|smutty|"
        r"nsfw|x-rated)\s+(?:\w+\s+)?(?:story|stories|scene|fantasy|fanfic|chat|role-?play|text|description|poem)",
        r"\b(?:describe|write)\b.{0,30}\bin (?:graphic|explicit) detail\b.{0,30}\b(?:sex|intercourse|oral sex)",
        r"\b(?:sext|sexting|talk dirty)\s+(?:with\s+)?me\b",
        r"\b(?:send|show|give)\s+(?:me\s+)?(?:nudes|porn|nude (?:pics|photos|images))",
    ),
    "S13": (
        r"\b(?:write|create|post|spread|make|generate)\b.{0,40}\b(?:fake|false|misleading)\b.{0,30}\b(?:news|"
        r"information|claims?|posts?|messages?|tweets?)\b.{0,30}\b(?:election|vote|voting|ballots?|polls?|candidate)",
        r"\b(?:rig|manipulate|steal|fix)\s+(?:the\s+|an?\s+)?(?:election|vote|votes|ballots?)\b",
        r"\bhow (?:can|do|to)\b.{0,20}\bvote\s+(?:twice|more than once|multiple times|for someone else|"
        r"in someone else'?s name)",
        r"\b(?:tell|convince|make)\s+(?:people|voters)\b.{0,40}\b(?:polling stations? (?:are|is) closed|"
        r"election (?:is|was) (?:cancelled|moved|postponed)|vote by (?:text|sms|phone))",
        r"\b(?:keep|stop)\b.{0,20}\b(?:voters|people)\b.{0,20}\bfrom voting\b",
    ),
    "S14": (
        r"\b(?:run|execute)\s+(?:this|the following|that|my)\s+(?:code|command|script|query|shell|python|sql|cypher)",
        r"\b(?:ignore|disregard|forget)\s+(?:all\s+)?(?:(?:the|your|previous|prior|above|earlier)\s+)+"
        r"(?:instructions|rules|prompts?|guidelines)",
        r"\b(?:reveal|print|show|repeat)\s+(?:me\s+)?(?:your\s+)?(?:system prompt|hidden instructions)",
    ),
}
# category -> patterns of harmful instructions in an answer
OUTPUTS: dict[str, tuple[str, ...]] = {
    "S1": (
        rf"\bto (?:kill|poison|murder) {_PERSON},?\s+(?:you (?:should|can|could|need to)|use|give)\b",
    ),
    "S9": (
        r"\b(?:to synthesi[sz]e|synthesis of|to produce|to make|to weaponi[sz]e)\s+(?:\w+\s+){0,2}(?:sarin|"
        r"soman|tabun|vx|ricin|abrin|nerve agents?|mustard gas|anthrax spores|botulinum toxin)\b.{0,80}"
        r"\b(?:mix|combine|react|heat|distil|purify|step|add)\w*",
    ),
    "S11": (
        r"\b(?:the )?(?:best|easiest|most effective|most painless|surest) way to (?:kill yourself|"
        r"commit suicide|end your life)",
        r"\bto (?:kill yourself|end your life),?\s+(?:you (?:should|can|could|need to)|take|use)\b",
    ),
}

REFUSAL = ("I can't help with this request: it falls under a safety category ({names}). I'm happy to answer "
           "medical questions about diseases, medicines, treatments and prevention.")
CRISIS = ("It sounds like you may be going through a very hard time, and you don't have to face it alone. "
          "Please reach out now: call your local emergency number (112 in Europe, 911 in the US) if you are in "
          "immediate danger, the 988 Suicide & Crisis Lifeline (US), Samaritans on 116 123 (UK and Ireland), "
          "or someone you trust. I can't give information that could be used for self-harm, but I can answer "
          "questions about getting help and treatment.")
NO_DOCUMENTS = ("I can't issue prescriptions, sick notes or medical certificates. Please contact your doctor; "
                "I can answer questions about the condition or the medicine.")
CATEGORY_NAMES = {
    "S1": "Violent crimes", "S2": "Non-violent crimes", "S3": "Sex-related crimes", "S4": "Child sexual exploitation",
    "S5": "Defamation", "S6": "Specialized advice", "S7": "Privacy", "S8": "Intellectual property",
    "S9": "Indiscriminate weapons", "S10": "Hate", "S11": "Suicide & self-harm", "S12": "Sexual content",
    "S13": "Elections", "S14": "Code interpreter abuse",
}

GUARD = GuardCues(
    refusal=REFUSAL,
    crisis=CRISIS,
    no_documents=NO_DOCUMENTS,
    unsafe_content="unsafe content",
    category_names=CATEGORY_NAMES,
    inputs=INPUTS,
    outputs=OUTPUTS,
    # the disclaimer of medgraph.lang.en.answer
    disclaimer_markers=(
        r"\bnot (?:a substitute for |intended as )?(?:professional |personal )?medical advice\b",
        r"\bconsult (?:a|your) (?:qualified )?(?:doctor|physician|health(?:care)? (?:professional|provider))",
    ),
    helplines=frozenset({"988"}),  # Suicide & Crisis Lifeline (US)
)
