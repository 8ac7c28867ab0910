"""The German pack's dialogue sections: rewrite, plan and route cues."""

from __future__ import annotations

import re

from medgraph.lang.sections.dialogue import PlanCues, RewriteCues, RouteCues, cue

REWRITE = RewriteCues(
    kind_phrases={
        "Drug": cue(r"\b(?:diese[mnrs]?|jene[mnrs]?|das gleiche|dasselbe)\s+(?:medikament|arzneimittel|mittel|präparat|"
                    r"wirkstoff|tablette|pille)\w*\b"),
        "Disease": cue(r"\b(?:diese[mnrs]?|jene[mnrs]?)\s+(?:krankheit|erkrankung|infektion|störung|leiden|syndrom)\w*\b"),
    },
    possessive=cue(r"\b(?P<det>seine|ihre|seiner|ihrer|seinen|ihren|seinem|ihrem|sein)\s+(?P<noun>[a-zäöüß][\w-]*)"),
    possessive_phrase="{article}{noun} von {name}",  # "seine Nebenwirkungen" -> "die Nebenwirkungen von Metformin"
    possessive_articles={"seine": "die ", "ihre": "die ", "seiner": "der ", "ihrer": "der ", "seinen": "den ",
                         "ihren": "den ", "seinem": "dem ", "ihrem": "dem "},
    capitalised_possessive_is_address=True,  # "Wie sind Ihre Werte?": the reader's, not the drug's
    pronouns=((cue(r"\bes\b"), "{e}"), (cue(r"\bdavon\b"), "von {e}"), (cue(r"\bdamit\b"), "mit {e}"),
              (cue(r"\bdagegen\b"), "gegen {e}"), (cue(r"\bdafür\b"), "für {e}")),
    expletive=cue(r"\bgibt es\b|\bes gibt\b|\bgeht es\b|\bes geht\b|\bes\b[^?]*\b(?:dass|ob|wenn)\b"
                  r"|\bes\b[^?]*,[^?]*(?:\bzu\b|\b\w+zu\w+en\b)"  # "..., X zu tun" / "..., einzubeziehen"
                  # "Kommt es zu ...", "Handelt es sich um ...", "Lohnt es sich": es names nothing
                  r"|\b(?:kommt|kam|käme|handelt|handelte|lohnt|lohnte|stimmt|liegt|hängt)\s+es\b"
                  r"|\bdafür\b[^?]*\bdass\b"),  # "dafür verantwortlich, dass ...": a correlate of the dass clause
    function_words=frozenset(
        "was wie wo wann warum weshalb welche welcher welches welchen welchem wer wen wem ist sind war waren sein "
        "wird werden hat haben hatte kann können konnte darf dürfen soll sollte sollen muss müssen möchte man ich "
        "du er sie wir ihr mir mich dir uns mein meine meinem meinen meiner der die das den dem des ein eine einen "
        "einem einer und oder aber auch noch denn doch schon bitte sehr lange viel viele oft wieviel bei mit von "
        "zu für in im auf an aus nach vor über unter ohne nicht kein keine nehmen einnehmen genommen geben gibt "
        "hilft helfen wirkt wirken brauche braucht machen macht absetzen täglich".split()),
    ellipsis_lead=cue(r"^(?:und|aber)\b(?:\s+(?:was ist|wie ist es|wie sieht es)(?:\s+denn)?(?:\s+mit)?)?"
                      r"|^(?:was ist|wie ist es|wie sieht es)(?:\s+denn)?\s+mit\b|^wie sieht es(?:\s+denn)?\b"),
    ellipsis_tail=cue(r"\s+aus$"),
    prepositions=cue(r"^(?:bei|in|im|während|für|mit|ohne|nach|vor|unter)\b"),
    constraint_preposition="bei",
    constraint_join="{question} {fragment}?",
)

_DET = r"(?:dies(?:e[mnrs]?)?|derselben?|dieselben?|dasselbe|demselben|denselben|desselben|jene[mnrs]?)"
PLAN = PlanCues(
    # determiner + the noun it points back with ("dieses Medikament"); case-sensitive: nouns are capitalised
    reference=re.compile(rf"\b{_DET}\s+(?!ist\b|war\b|Studie\b)([A-Za-zÄÖÜäöüß][\w-]*)"),
    place=re.compile(r"\bdort\b"),
    place_reference="in #1",
    # "In dem Land, in dem ...: Welche ...?"
    lead_clause=re.compile(r"^(?P<desc>.{20,}?)[:;]\s+(?P<ask>[A-ZÄÖÜ].+)$"),
    comparison=re.compile(r"\b(?:jeweils|bzw\.|beziehungsweise|Ersteren|Letzteren|ersteren|letzteren)"),
    sides=re.compile(r",?\s+(?:und|bzw\.)\s+(?=(?:was|welche[mnrs]?|wie|wer|war|waren|ist|sind|in|bei|für|unter)\b)",
                     re.I),
    # "Welche Hirnregion ist sowohl ein Knotenpunkt ... als auch ein Ort ...?"
    pair=re.compile(r"^(?P<head>(?:welche[mnrs]?|was)\b.+?)\s+sowohl\s+(?P<a>.+?),?\s+als auch\s+(?P<b>.+)$", re.I),
    abbreviations=(r"bzw", r"z\.\s?B", r"ca", r"Dr", r"Prof", r"Abb", r"vgl"),
)

# German cues use word boundaries
ROUTE = RouteCues(
    constraints={
        "age": cue(r"\b\d{1,3}[- ]?(?:jährig\w*|jahre alt\w*|monate alt\w*)", r"\b(?:kinder\w*|kind|säugling\w*|"
                   r"neugeboren\w*|jugendlich\w*|ältere[nrm]?|senior\w*|betagt\w*|hochbetagt\w*)\b"),
        "sex": cue(r"\b(?:frau|frauen|mann|männer|patientin\w*|weiblich\w*|männlich\w*|mädchen|junge)\b"),
        "renal": cue(r"\b(?:niere\w*|dialyse\w*|kreatinin\w*|egfr)"),
        "hepatic": cue(r"\b(?:leber\w*|hepatisch\w*|zirrhose\w*)"),
        "pregnancy": cue(r"\b(?:schwanger\w*|stillzeit|stillend\w*|stillen)\b"),
    },
    intents={
        "PATIENT_FAQ": cue(
            r"\bwas (?:ist|sind|bedeutet)\b", r"\bnebenwirkung\w*", r"\bsymptom\w*", r"\banzeichen\b",
            r"\b(?:darf|kann) ich\b", r"\bwie lange\b", r"\bwoher kommt\b"),
        "CLINICAL_DECISION": cue(
            r"\bbehandl\w*", r"\btherapie\w*", r"\bempfehl\w*", r"\bempfiehlt\b", r"\bdosis\b", r"\bdosierung\w*",
            r"\banpass\w*", r"\bkontraindi\w*", r"\bvorsicht\w*", r"\babsetzen\b", r"\bumstell\w*",
            r"\bmittel der (?:ersten )?wahl\b", r"\bsollte\w*\b", r"\berhalten\b"),
        "DRUG_INTERACTION": cue(
            r"\bwechselwirkung\w*", r"\binteraktion\w*", r"\bzusammen mit\b", r"\bkombin\w*", r"\bgleichzeitig\b",
            r"\b(?:verstärk|abschwäch|schwäch|beeinfluss|verringer|erhöh|hemm)\w*\b.{0,30}\bwirkung\b"),
        "LITERATURE_MULTIHOP": cue(
            r"\bevidenz\b", r"\bstudie\w*", r"\bmechanism\w*", r"\bzusammenhang\w*", r"\bassoziiert\w*",
            r"\bmetaanalyse\w*", r"\bliteratur\w*"),
        "CROSS_CORPUS": cue(
            r"\bleitlinie\w*\b.*\b(?:unterscheid|übereinstimm|vergleich|widersprech)\w*",
            r"\b(?:unterscheid|übereinstimm|vergleich|widersprech|stimmen)\w*\b.*\bleitlinie\w*",
            r"\bdeutsche\w* und \w*amerikanische\w*\b", r"\binternational\w*\b"),
    },
    overview=cue(r"\büberblick\w*", r"\bübersicht\w*", r"\bzusammenfass\w*", r"\bhauptthem\w*", r"\bforschungsstand\b",
                 r"\bwichtigsten themen\b"),
    relation=cue(r"\bzwischen\b.+\bund\b"),
    inn_stems=cue(
        r"\b[a-zäöü]{3,}(?:mab|pril|olol|statin|sartan|prazol|conazol|mycin|micin|cillin|floxacin|cyclin|parin|"
        r"xaban|gatran|grel|gliptin|gliflozin|glutid|dipin|azepam|azolam|tidin|setron|triptan|profen|coxib|"
        r"lukast|terol|sonid|navir|tinib|platin|rubicin|daron|oxetin|afil|semid|thiazid)\b"),
)
