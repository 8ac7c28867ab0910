"""The en pack's answer section: the English answer texts and the English cues of sentence scoring."""

from __future__ import annotations

from medgraph.lang.sections.answer import AnswerStrings

ANSWER = AnswerStrings(
    disclaimer="This answer is generated from the indexed literature for information only and is not medical "
               "advice. Consult a qualified health professional for diagnosis or treatment.",
    refusal="I could not find evidence in the indexed corpus that answers this question, so I will not guess.",
    instructions="You answer clinical questions using only the numbered evidence passages. After every "
                 "sentence, cite the passage that supports it as [N]. Do not use outside knowledge. If the "
                 "passages do not answer the question, say that the evidence is insufficient. Answer in English.",
    evidence_label="Evidence",
    question_label="Question",
    answer_label="Answer",
    lead="Evidence from {languages} sources{about}:",
    lead_about=" on {names}",
    gap_with_entities="The indexed sources mention {entities} but say nothing about {aspect}.",
    gap_without="The indexed sources say nothing about {aspect} here.",
    list_separator=", ",
    conjunction_and=" and ",
    conjunction_or=" or ",
    just_now="just now",
    time_ago="{count} {unit} ago",
    time_units={"year": ("year", "years"), "month": ("month", "months"), "week": ("week", "weeks"),
                "day": ("day", "days"), "hour": ("hour", "hours"), "minute": ("minute", "minutes")},
    language_names={"en": "English", "de": "German", "zh": "Chinese"},
    aspect_names={"adverse_effects": "adverse effects", "dosage": "dose or concentration",
                  "contraindication": "contraindications", "cost": "cost"},
    aspect_questions={
        "adverse_effects": r"side[- ]?effects?|adverse (?:effects?|events?|reactions?|drug)|harmful effects?|toxicit",
        # (not a multi-dose or single-dose vial: a kind of container)
        "dosage": r"(?<!multi-)(?<!single-)(?<!multi )\bdoses?\b|dosage|dosing|\bconcentration"
                  r"|how much .{0,40}\b(?:take|give|use|contain)",
        "contraindication": r"contraindicat",
        "cost": r"\bcosts?\b|\bprices?\b|how much does .{0,60}\bcost|expensive",
    },
    aspect_evidence={
        "adverse_effects": r"adverse|side[- ]?effects?|toxicit|irritat|dermatitis|allerg|hypersensitiv|intoleran"
                           r"|tolerat|nausea|vomit|diarrh|hypoglyc|\brash|dryness",
        "dosage": r"\bdoses?\b|dosage|concentration|per (?:day|kg)|\bdaily\b",
        "contraindication": r"contraindicat|should not|must not|not be used|\bavoid|not recommended",
        "cost": r"\bcosts?\b|\bprices?\b|dollars?|euros?|expens|economic|saving",
    },
    range_words=r"to",
    amount_units=r"units?|percent|teaspoons?|tablets?",
    question_kinds={
        "adverse": r"side[- ]?effects?|adverse|\bharms?\b|harmful|complications?|toxicit|\bsafe(ty)?\b",
        "dosage": r"\bdoses?\b|dosage|dosing|how much|how many (?:mg|grams|milligrams)",
        "risk": r"\brisks?\b|likelihood|\bchances?\b|\bassociated\b",
        "procedure": r"\bhow (?:should|do|to|can|is|are|does|must)\b|\bsteps?\b|procedure",
        "timing": r"\bwhen\b|how (?:often|long|soon|frequently)|frequency|duration",
        "claim": r"^(?:is|are|was|were|does|do|did|can|could|should|has|have|will|may)\b",
        "population": r"\bwho\b|\bwhich (?:patients|people|persons|staff|groups?)\b",
    },
    answer_kinds={
        "adverse": r"adverse|side[- ]?effect|toxicit|complication|hypoglyc|nausea|vomit|diarrh|bleed|haemorrh|hemorrh"
                   r"|\bharm|\bsafe|toleran|tolerat|discontinu",
        "dosage": r"\bdoses?\b|dosage|daily|per day|twice|once a",
        "risk": r"\brisks?\b|\bodds\b|hazard|\bOR\b|\bRR\b|\bHR\b|associated|increase|reduc|decreas|likel",
        "procedure": r"\bshould\b|\bmust\b|ensure|\buse\b|\bused\b|perform|follow|clean|disinfect|\bwear",
        "timing": r"\bbefore\b|\bafter\b|\bduring\b|daily|weekly|monthly|annual|\bevery\b|\beach\b|hours?\b|\bdays?\b"
                  r"|weeks?\b|months?\b|years?\b|at least|within",
        "claim": r"\b(?:suggest|indicat|conclu|support|associated with|effective|efficac|no (?:significant )?difference"
                 r"|did not|does not|was not|were not|may be|can be|appears? to|is a |are a |significant)",
        "population": r"patients|personnel|\bstaff|\bHCP\b|children|infants|women|\bmen\b|adults|elderly|workers"
                      r"|people",
    },
    finding_sections=r"result|finding|conclusion|discussion|interpretation|recommendation|summary",
    aim_sections=r"objective|\baims?\b|purpose|background|introduction|method|design|setting|participants"
                 r"|population|patients and|materials",
    aim_sentences=r"^(?:to (?:evaluate|assess|determine|investigate|examine|compare|describe|study|test|analy[sz]e"
                  r"|identify|explore|review)|we (?:aimed|sought|investigated|evaluated|assessed|examined|hypothesi"
                  r"|studied|compared|analy[sz]ed|conducted|performed|reviewed|retrospectively|prospectively)"
                  r"|the (?:aims?|purpose|objectives?|goal) of (?:this|the|our))|\bwas (?:conducted|performed|designed)"
                  r"|\bwere (?:enrolled|included|recruited|randomi[sz]ed|reviewed)",
    finding_sentences=r"\b(?:suggest|indicat|show(?:ed|s|n)?\b|demonstrat|conclu|found|associated with|significant"
                      r"|improv|reduc|increas|decreas|recommend|should|must|effective|no difference|did not)",
    reference_sections=r"references?|bibliography|source documents|further reading|acknowledge?ments?|contributors"
                       r"|conflicts? of interest|declarations? of interest|funding",
    citation_marks=r"\baccessed\s+\d|\bavailable (?:at|from)\s*:",
)
