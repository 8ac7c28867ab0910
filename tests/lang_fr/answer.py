"""The French test pack's answer section."""

from __future__ import annotations

from medgraph.lang.sections.answer import AnswerStrings

ANSWER = AnswerStrings(
    disclaimer="Cette réponse est générée à partir de la littérature indexée, à titre d'information uniquement, et "
               "ne constitue pas un avis médical. Consultez un professionnel de santé qualifié pour un diagnostic ou "
               "un traitement.",
    refusal="Je n'ai trouvé dans le corpus indexé aucune preuve qui réponde à cette question ; je ne ferai donc pas "
            "de supposition.",
    instructions="Tu réponds aux questions cliniques uniquement à partir des passages de preuves numérotés. Après "
                 "chaque phrase, cite le passage qui l'étaye sous la forme [N]. N'utilise aucune connaissance "
                 "extérieure. Si les passages ne répondent pas à la question, dis que les preuves sont insuffisantes. "
                 "Réponds en français.",
    evidence_label="Preuves",
    question_label="Question",
    answer_label="Réponse",
    lead="Preuves issues de sources {languages}{about} :",
    lead_about=" sur {names}",
    gap_with_entities="Les sources indexées mentionnent {entities}, mais ne disent rien sur {aspect}.",
    gap_without="Les sources indexées ne disent rien ici sur {aspect}.",
    list_separator=", ",
    conjunction_and=" et ",
    conjunction_or=" ou ",
    just_now="à l'instant",
    time_ago="il y a {count} {unit}",
    time_units={"year": ("an", "ans"), "month": ("mois", "mois"), "week": ("semaine", "semaines"),
                "day": ("jour", "jours"), "hour": ("heure", "heures"), "minute": ("minute", "minutes")},
    language_names={"en": "anglaises", "de": "allemandes", "zh": "chinoises", "fr": "françaises"},
    aspect_names={"adverse_effects": "les effets indésirables", "dosage": "la dose ou la concentration",
                  "contraindication": "les contre-indications", "cost": "le coût"},
    aspect_questions={
        "adverse_effects": r"effets? (?:secondaires?|indésirables?)|toxicit",
        "dosage": r"\bdoses?\b|posologie|quelle quantité",
        "contraindication": r"contre-indication",
        "cost": r"\bco[uû]ts?\b|\bprix\b|combien co[uû]te",
    },
    aspect_evidence={
        "adverse_effects": r"effets? (?:secondaires?|indésirables?)|toxicit|irritation|allergi|nausées?",
        "dosage": r"\bdoses?\b|posologie|par jour|quotidien",
        "contraindication": r"contre-indiqu|ne doit pas|à éviter|déconseillé",
        "cost": r"\bco[uû]ts?\b|\bprix\b",
    },
    range_words=r"à",
    amount_units=r"comprimés?|gélules?",
    question_kinds={
        "adverse": r"effets? (?:secondaires?|indésirables?)|complications?|\bsûr|dangereu",
        "dosage": r"\bdoses?\b|posologie|combien",
        "risk": r"\brisques?\b|probabilité",
        "procedure": r"\bcomment\b|étapes?|procédure",
        "timing": r"\bquand\b|combien de temps|à quelle fréquence|durée",
        "claim": r"^(?:est-ce que|peut-on|faut-il)\b",
        "population": r"\bqui\b|quels patients",
    },
    answer_kinds={
        "adverse": r"effets? (?:secondaires?|indésirables?)|complication|toléran",
        "dosage": r"\bdoses?\b|par jour|quotidien",
        "risk": r"risque|augment|rédui|diminu",
        "procedure": r"\bdoit\b|doivent|utiliser|effectuer",
        "timing": r"\bavant\b|\baprès\b|pendant|chaque|par jour",
        "claim": r"suggèrent|montrent|efficace|aucune différence",
        "population": r"patients|enfants|femmes|adultes",
    },
    finding_sections=r"résultats?|conclusions?|discussion|recommandations?",
    aim_sections=r"objectifs?|contexte|introduction|méthodes?",
    aim_sentences=r"^(?:cette étude vise|l'objectif de cette étude)|\bnous avons (?:évalué|étudié|comparé)",
    finding_sentences=r"suggèrent|montrent|significati|efficace|recommand",
    reference_sections=r"références|bibliographie|remerciements",
)
