"""The French test pack's dialogue sections: a few rewrite, plan and route cues."""

from __future__ import annotations

import re

from medgraph.lang.sections.dialogue import PlanCues, RewriteCues, RouteCues, cue

_LETTER = "a-zàâæçéèêëîïôœùûüÿ"

REWRITE = RewriteCues(
    kind_phrases={
        "Drug": cue(r"\b(?:ce|cet|cette|ce même|ledit)\s+(?:médicament|traitement|remède|comprimé|produit)\b"),
        "Disease": cue(r"\b(?:cette|ce|cet|ladite)\s+(?:maladie|affection|infection|pathologie|syndrome)\b"),
    },
    # "ses effets secondaires" -> "les effets secondaires de la metformine"
    possessive=cue(rf"\b(?P<det>ses|son|sa)\s+(?P<noun>[{_LETTER}][\w-]*"
                   rf"(?:\s+(?!(?:de|du|des|pour|chez|avec|pendant|et|ou|si|en|à|est|sont)\b)[{_LETTER}][\w-]*)?)"),
    possessive_phrase="{article}{noun} de {name}",
    possessive_articles={"ses": "les ", "son": "le ", "sa": "la "},
    # "Puis-je le prendre ?" -> "Puis-je prendre la metformine ?"
    pronouns=((cue(r"\ble prendre\b"), "prendre {e}"), (cue(r"\bla prendre\b"), "prendre {e}"),
              (cue(r"\bavec lui\b"), "avec {e}"), (cue(r"\bavec elle\b"), "avec {e}")),
    function_words=frozenset(
        "que quoi qui quel quelle quels quelles comment pourquoi quand où est sont était peut peux puis-je dois "
        "doit faut faut-il il elle je tu nous vous on le la les un une des du de et ou mais aussi encore très "
        "combien avec pour dans sur en à au aux ce cette ces mon ma mes prendre".split()),
    ellipsis_lead=cue(r"^(?:et\s+)?qu['’]en est-il\b(?:\s+(?:de|des|du))?|^et\b|^mais\b"),
    prepositions=cue(r"^(?:chez|pendant|pour|avec|sans|après|avant|en|dans)\b"),
    constraint_preposition="chez",
    constraint_join="{question} {fragment} ?",  # French sets a space before the question mark
)

PLAN = PlanCues(
    # "ce médicament" -> "#1"; not "ce qui", "ce que", "cette étude"
    reference=re.compile(rf"\b(?:ce|cet|cette|ces)\s+(?!qui\b|que\b|qu['’]|étude\b|essai\b)([{_LETTER}][\w-]*)", re.I),
    # "avec le même colorant" -> "avec #1"
    reference_after_word=re.compile(
        rf"\b(?:avec|de|pour|par|sous|chez|après|contre)\s+((?:le même|la même|les mêmes)\s+[{_LETTER}][\w-]*)", re.I),
    place=re.compile(r"\blà-bas\b", re.I),
    place_reference="dans #1",
    lead_clause=re.compile(
        r"^(?P<desc>(?:Dans|Pour|Chez|Parmi)\s+(?:le|la|les|l['’])\s*[\w -]{2,40}?\s+(?:où|qui|que|dont)\b.+?),\s+"
        r"(?P<ask>(?:quel|quelle|quels|quelles|comment|combien|qui|que)\b.+)$", re.I),
    comparison=re.compile(r"\b(?:respectivement|chacun|chacune|le premier|le second|la première|la seconde)\b", re.I),
    sides=re.compile(r",?\s+et\s+(?=(?:quel|quelle|quels|quelles|comment|combien|qui|dans|chez|pour|parmi)\b)", re.I),
    abbreviations=(r"p\.\s?ex", r"env", r"cf"),
)

ROUTE = RouteCues(
    constraints={
        "age": cue(r"\b\d{1,3}\s?ans\b", r"\b(?:enfants?|nourrissons?|nouveau-nés?|adolescents?|personnes? âgées?|bébés?)\b"),
        "sex": cue(r"\b(?:femmes?|hommes?|fille|garçon|patiente)\b"),
        "renal": cue(r"\b(?:reins?|rénal\w*|dialys\w*|créatinine)\b"),
        "hepatic": cue(r"\b(?:foie|hépatique\w*|cirrhose\w*)\b"),
        "pregnancy": cue(r"\b(?:grossesse|enceinte\w*|allaitement|allaitante\w*)\b"),
    },
    intents={
        "PATIENT_FAQ": cue(r"\bqu['’]est-ce que\b", r"\beffets? (?:secondaires|indésirables)\b", r"\bsymptômes?\b",
                           r"\bpuis-je\b", r"\bcombien de temps\b"),
        "CLINICAL_DECISION": cue(r"\btrait(?:er|ement)\w*", r"\bposologie\b", r"\bdos(?:e|es|age)\b",
                                 r"\bcontre-indiqu\w*", r"\brecommand\w*", r"\bfaut-il\b", r"\bpremière intention\b"),
        "DRUG_INTERACTION": cue(r"\binteractions?\b", r"\bassoci(?:er|ation)\w*", r"\ben même temps que\b"),
        "LITERATURE_MULTIHOP": cue(r"\bpreuves?\b", r"\bétudes?\b", r"\bessais?\b", r"\bméta-?analyses?\b",
                                   r"\bmécanismes?\b", r"\blien entre\b"),
        "CROSS_CORPUS": cue(r"\brecommandations\b.*\b(?:diffèrent|divergent|concordent|compar\w*)",
                            r"\b(?:compar\w*|diffèrent|divergent)\b.*\brecommandations\b",
                            r"\beuropéennes et américaines\b", r"\binternationa\w*\b"),
    },
    overview=cue(r"\bvue d['’]ensemble\b", r"\bsynthèse\b", r"\bprincipaux thèmes\b", r"\bétat de la recherche\b"),
    relation=cue(r"\bentre\b.+\bet\b"),
    inn_stems=cue(rf"\b[{_LETTER}]{{3,}}(?:mab|pril|olol|statine|sartan|prazole|mycine|cilline|floxacine|xaban|gliptine|"
                  r"profène|coxib)\b"),
)
