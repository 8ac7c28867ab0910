"""The de pack's answer section: the German answer texts and the German cues of sentence scoring."""

from __future__ import annotations

from medgraph.lang.sections.answer import AnswerStrings

ANSWER = AnswerStrings(
    disclaimer="Diese Antwort wurde aus der indexierten Literatur erzeugt, dient nur der Information und ist keine "
               "medizinische Beratung. Wenden Sie sich für Diagnose oder Behandlung an medizinisches Fachpersonal.",
    refusal="Ich habe im indexierten Korpus keine Belege gefunden, die diese Frage beantworten, und rate deshalb "
            "nicht.",
    instructions="Du beantwortest klinische Fragen ausschließlich mit den nummerierten Belegstellen. Zitiere nach "
                 "jedem Satz die stützende Stelle als [N]. Nutze kein Wissen außerhalb der Stellen. Wenn die Stellen "
                 "die Frage nicht beantworten, sage, dass die Belege nicht ausreichen. Antworte auf Deutsch.",
    evidence_label="Belege",
    question_label="Frage",
    answer_label="Antwort",
    lead="Belege aus {languages} Quellen{about}:",
    lead_about=" zu {names}",
    gap_with_entities="Die indexierten Quellen nennen {entities}, sagen aber nichts über {aspect}.",
    gap_without="Die indexierten Quellen sagen dazu nichts über {aspect}.",
    list_separator=", ",
    conjunction_and=" und ",
    conjunction_or=" oder ",
    just_now="gerade eben",
    time_ago="vor {count} {unit}",
    # plural in the dative ("vor 3 Tagen")
    time_units={"year": ("Jahr", "Jahren"), "month": ("Monat", "Monaten"), "week": ("Woche", "Wochen"),
                "day": ("Tag", "Tagen"), "hour": ("Stunde", "Stunden"), "minute": ("Minute", "Minuten")},
    language_names={"en": "englischsprachigen", "de": "deutschsprachigen", "zh": "chinesischsprachigen"},
    aspect_names={"adverse_effects": "Nebenwirkungen", "dosage": "Dosierung oder Konzentration",
                  "contraindication": "Gegenanzeigen", "cost": "Kosten"},
    aspect_questions={
        "adverse_effects": r"nebenwirkung|unerwünschte (?:wirkung|ereignis|arzneimittel)",
        # (not a Mehrdosenbehältnis: a kind of container)
        "dosage": r"\bdosis|dosierung|konzentration|wie ?viel .{0,40}(?:nehmen|geben|enthält|enthalten)",
        "contraindication": r"kontraindi|gegenanzeige",
        "cost": r"\bkosten|kostet|\bpreis",
    },
    aspect_evidence={
        "adverse_effects": r"nebenwirkung|unverträglich|reizung|allergi",
        "dosage": r"\bdosis|dosierung|konzentration|täglich",
        "contraindication": r"kontraindi|gegenanzeige|nicht (?:an|ver)wende|nicht empfohlen|vermeid",
        "cost": r"\bkosten|\bpreis",
    },
    range_words=r"bis",
    amount_units=r"Tabletten",
    question_kinds={
        "adverse": r"nebenwirkung|unerwünscht|komplikation|\bsicher|schädlich",
        "dosage": r"\bdosis|dosierung|wie ?viel",
        "risk": r"risiko|wahrscheinlich",
        "procedure": r"\bwie (?:sollte|soll|sollen|wird|werden|kann|können|muss|müssen)\b|verfahren|vorgehen",
        "timing": r"\bwann\b|wie (?:oft|lange|häufig)|häufigkeit",
        "claim": r"^(?:ist|sind|war|waren|hat|haben|kann|können|sollte|sollten|wird|werden|gibt|führt|hilft)\b",
        "population": r"\bwer\b|welche (?:patienten|personen|gruppen)",
    },
    answer_kinds={
        "adverse": r"nebenwirkung|komplikation|\bsicher|verträglich",
        "dosage": r"\bdosis|täglich",
        "risk": r"risiko|erhöh|verringer",
        "procedure": r"\bsollte|\bmüssen|\bsoll\b|verwend|durchgeführt",
        "timing": r"\bvor\b|\bnach\b|während|täglich|jährlich",
        "claim": r"deuten|zeigen|wirksam|kein(?:e|en)? (?:signifikant|unterschied)",
        "population": r"patient(?:inn)?en|personal|kinder|frauen",
    },
    finding_sections=r"ergebnis|schlussfolgerung|fazit|empfehlung|zusammenfassung",
    aim_sections=r"hintergrund|einleitung|fragestellung|\bziel|methode",
    aim_sentences=r"\bziel (?:dieser|der) (?:studie|arbeit)",
    finding_sentences=r"zeigt|ergab|signifikant|empfohlen|wirksam",
    reference_sections=r"literatur(?:verzeichnis)?|quellen(?:verzeichnis)?|danksagung|interessenkonflikt",
)
