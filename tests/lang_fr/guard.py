"""The French test pack's guard section: a few French cues per category and the French replies."""

from __future__ import annotations

from medgraph.lang.sections.guard import GuardCues

# a person as the object of a harmful act
_PERSON = r"(?:quelqu'un|une personne|(?:mon|ma) (?:mari|femme|père|mère|fils|fille|patron|voisine?|collègue|enfant))"
_KILL = r"(?:tuer|empoisonner|assassiner|étrangler|poignarder)"

INPUTS: dict[str, tuple[str, ...]] = {
    "S1": (
        rf"\b(?:comment|je veux|aide-moi à)\s+(?:\w+\s+){{0,3}}{_KILL}\s+{_PERSON}",
        r"\bpoisons? (?:indétectables?|introuvables?)",
    ),
    "S6": (
        r"\b(?:fais|faites|rédige|rédigez|donne|donnez|prescris|prescrivez)[-\s]?(?:moi|nous)\s+(?:une?\s+)?"
        r"(?:ordonnance|arrêt de travail|certificat médical)",
    ),
    "S9": (
        r"\bcomment\b.{0,30}\b(?:fabriquer|produire|synthétiser)\b.{0,30}\b(?:sarin|ricin|bombes?|explosifs?|"
        r"armes? chimiques?)",
    ),
    "S11": (
        r"\b(?:comment|je veux|je vais)\s+(?:\w+\s+){0,3}(?:me suicider|me tuer|mettre fin à mes jours|en finir)",
        r"\bje (?:veux|vais) mourir\b",
    ),
    "S14": (
        r"\b(?:ignore|ignorez|oublie|oubliez)\s+(?:toutes\s+)?(?:les\s+|tes\s+|vos\s+)?(?:instructions|consignes|"
        r"règles)",
        r"\b(?:révèle|affiche|montre)[-\s]?(?:moi\s+)?(?:ton|votre|le) prompt système",
    ),
}
OUTPUTS: dict[str, tuple[str, ...]] = {
    "S11": (r"\bpour vous suicider,?\s+(?:prenez|vous pouvez|il faut)",),
}

GUARD = GuardCues(
    refusal="Je ne peux pas répondre à cette demande : elle relève d'une catégorie de sécurité ({names}). Je "
            "réponds volontiers aux questions médicales sur les maladies, les médicaments, les traitements et la "
            "prévention.",
    crisis="Vous semblez traverser un moment très difficile, et vous n'avez pas à l'affronter seul. Demandez de "
           "l'aide maintenant : appelez le 3114, le numéro national de prévention du suicide (gratuit, 24 h/24), ou "
           "le 15 ou le 112 en cas de danger immédiat, ou parlez à une personne de confiance. Je ne donne pas "
           "d'informations qui pourraient servir à se faire du mal, mais je réponds volontiers aux questions sur "
           "l'aide et les traitements.",
    no_documents="Je ne peux pas délivrer d'ordonnance, d'arrêt de travail ni de certificat médical. Adressez-vous "
                 "à votre médecin ; je réponds volontiers aux questions sur la maladie ou le médicament.",
    unsafe_content="contenu dangereux",
    category_names={
        "S1": "Crimes violents", "S2": "Crimes non violents", "S3": "Crimes à caractère sexuel",
        "S4": "Exploitation sexuelle des enfants", "S5": "Diffamation", "S6": "Conseils spécialisés",
        "S7": "Vie privée", "S8": "Propriété intellectuelle", "S9": "Armes de destruction massive", "S10": "Haine",
        "S11": "Suicide et automutilation", "S12": "Contenu sexuel", "S13": "Élections",
        "S14": "Abus de l'exécution de code",
    },
    inputs=INPUTS,
    outputs=OUTPUTS,
    disclaimer_markers=(r"\bne constitue pas un avis médical\b", r"\bconsultez un professionnel de santé\b"),
    personal_data={
        # national phone numbers (01 23 45 67 89) and the social security number (NIR: 15 digits)
        "phone": r"(?<![\w+])0[1-9](?:[ .]\d{2}){4}(?!\d)",
        "social_security_number": r"(?<!\d)[12] ?\d{2} ?(?:0[1-9]|1[0-2]) ?(?:\d{2}|2[AB]) ?\d{3} ?\d{3} ?\d{2}(?!\d)",
    },
    helplines=frozenset({"15", "3114"}),  # SAMU; national suicide prevention line
)
