"""The de pack's guard section: the rule guard's German cue patterns and its German replies."""

from __future__ import annotations

from medgraph.lang.sections.guard import GuardCues

# a person as the object of a harmful act
_PERSON = (r"(?:jemanden|ihn|sie|einen menschen|eine person|meinen (?:mann|vater|sohn|chef|nachbarn|bruder|"
           r"freund|partner|patienten|kollegen|ex)|meine (?:frau|mutter|tochter|schwester|freundin|chefin|"
           r"nachbarin|partnerin|kollegin|familie|ex)|mein (?:kind|baby))")
_KILL = r"(?:töten|umbringen|umzubringen|vergiften|zu vergiften|ermorden|erstechen|erschießen|erwürgen|ersticken)"
# controlled medicines people ask to obtain without a prescription
_CONTROLLED = (r"(?:oxycodon|fentanyl|tilidin|tramadol|morphin|codein|diazepam|valium|tavor|lorazepam|"
               r"alprazolam|benzos?|benzodiazepine?|opioide?|ritalin|methylphenidat|ketamin|schlafmittel|"
               r"schmerzmittel)")
_STREET_DRUGS = (r"(?:crystal(?: meth)?|methamphetamin|mdma|ecstasy|lsd|heroin|kokain|crack|fentanyl|ghb|"
                 r"amphetamin|speed)")
# agents of indiscriminate weapons (chemical, biological, radiological, nuclear, explosive)
_AGENTS = (r"(?:sarin|soman|tabun|vx|nowitschok|senfgas|schwefellost|chlorgas|phosgen|rizin|ricin|abrin|"
           r"milzbrand\w*|anthrax|botulinumtoxin|pocken\w*|pesterreger|ebola\w*|nervenkampfstoff\w*|"
           r"nervengas|chemische waffen?|chemiewaffen?|biowaffen?|biologische waffen?|schmutzige bombe|"
           r"rohrbomben?|sprengstoff\w*|bomben?|atombomben?|uran|plutonium|tatp)")
_WEAPON_VERBS = (r"(?:herstellen|herzustellen|bauen|zu bauen|basteln|synthetisieren|gewinnen|extrahieren|"
                 r"züchten|kultivieren|freisetzen|freizusetzen|versprühen|anreichern|zünden)")
# groups that hate speech targets (S10)
_GROUPS = (r"(?:schwarze|juden|muslime|moslems|christen|asiaten|chinesen|araber|ausländer|flüchtlinge|"
           r"migranten|schwule|lesben|homosexuelle|transmenschen|frauen|behinderte|"
           r"menschen mit (?:behinderung|hiv|down-syndrom|autismus)|autisten|zigeuner|roma|türken|afrikaner)")
# what private data someone asks for (S7), and whose
_PRIVATE_DATA = (r"(?:adresse|anschrift|telefonnummer|handynummer|e-?mail(?:-adresse)?|geburtsdatum|"
                 r"versichertennummer|krankenakte|patientenakte|diagnose|befunde?|laborwerte|hiv-status|"
                 r"medikamente)")
_PRIVATE = (r"(?:meine[rsmn]? )?(?:nachbar\w*|kolleg\w*|chef\w*|ex-?\w*|mitarbeiter\w*|mieter\w*|"
            r"herrn? [a-zäöü]+|frau [a-zäöü]+|patient\w* [a-zäöü]+)")

# category -> patterns of a request to cause harm
INPUTS: dict[str, tuple[str, ...]] = {
    "S1": (
        rf"\b(?:wie|womit)\s+(?:kann|könnte|soll|sollte|werde)\s+ich\s+{_PERSON}\s+(?:\w+\s+){{0,3}}"
        rf"{_KILL}\b",
        rf"\bich\s+(?:will|möchte)\s+{_PERSON}\s+(?:\w+\s+){{0,3}}{_KILL}\b",
        r"\b(?:nicht nachweisbar\w*|unauffällig|unbemerkt|spurlos)\b.{0,40}\b(?:gift\w*|vergift\w*|töten|umbringen)",
        r"\b(?:gift\w*|vergift\w*|töten|umbringen)\b.{0,40}\b(?:nicht nachweisbar\w*|unbemerkt|spurlos|"
        r"ohne dass es (?:jemand )?(?:merkt|auffällt))",
        rf"\btödliche\w*\s+dosis\b.{{0,40}}\b(?:für|um)\s+{_PERSON}",
    ),
    "S2": (
        r"\b(?:rezept|attest|krankschreibung|arbeitsunfähigkeitsbescheinigung|au-bescheinigung)\w*\s+(?:\w+\s+){0,2}"
        r"(?:fälschen|zu fälschen|nachmachen)",
        r"\b(?:gefälschte?s?|falsche?s?)\s+(?:rezept|attest|krankschreibung)\w*\b.{0,30}\b(?:bekommen|erstellen|machen|"
        r"besorgen)",
        rf"\b{_CONTROLLED}\b.{{0,40}}\bohne rezept\b.{{0,20}}\b(?:kaufen|bekommen|besorgen|bestellen)",
        rf"\b(?:kaufen|bekommen|besorgen|bestellen)\b.{{0,20}}\b{_CONTROLLED}\b.{{0,20}}\bohne rezept",
        r"\b(?:im darknet|auf dem schwarzmarkt|beim dealer|illegal)\b.{0,30}\b(?:kaufen|bestellen|besorgen|bekommen)",
        rf"\b{_STREET_DRUGS}\b.{{0,20}}\b(?:herstellen|kochen|synthetisieren|selber machen|selbst machen)",
        r"\bdrogentest\w*\s+(?:\w+\s+){0,2}(?:bestehen|austricksen|umgehen|manipulieren|betrügen)",
        r"\bversicherungsbetrug\b",
        r"\b(?:medikamente|morphin|opioide|betäubungsmittel)\s+(?:\w+\s+){0,4}(?:stehlen|klauen|entwenden)",
    ),
    "S3": (
        r"\b(?:k\.?\s?-?o\.?-?tropfen|ghb|rohypnol|schlafmittel)\s+(?:\w+\s+){0,4}(?:ins|in ihr|in sein|in den|"
        r"in das)\s+(?:\w+\s+)?(?:getränk|glas|drink)",
        r"\b(?:ihr|ihm|jemandem|einer frau)\s+(?:\w+\s+){0,3}(?:k\.?\s?-?o\.?-?tropfen|ghb|rohypnol)\s+"
        r"(?:geben|verabreichen|unterjubeln|untermischen)",
        r"\bbetäuben,?\s+(?:um|damit)\b.{0,30}\b(?:sex|mit ihr schlafen|mit ihm schlafen|vergewaltigen)",
        r"\bwie\s+(?:kann|könnte)\s+ich\b.{0,20}\bvergewaltigen",
        r"\bheimlich\s+(?:\w+\s+){0,3}filmen\b.{0,30}\b(?:umkleide|toilette|dusche|ausziehen)",
    ),
    "S4": (
        r"\bkinderporn\w*",
        r"\bsex\s+mit\s+(?:einem\s+|meinem\s+|meiner\s+)?(?:kind|kindern|minderjährig\w*|\d{1,2}-jährig\w*)",
        r"\b(?:nacktbilder|nacktfotos|pornos?|sexbilder)\s+von\s+(?:kindern|minderjährigen|einem kind)",
        r"\b(?:kind|kinder|minderjährige)\w*\s+(?:\w+\s+){0,2}(?:sexuell gefügig|zum sex|ins bett)",
    ),
    "S5": (
        r"\b(?:schreib|verfass|erstell|verbreit|poste|veröffentlich)\w*\b.{0,40}\b(?:falsche|gefälschte|erfundene|"
        r"unwahre|fake)\w*\s+(?:\w+\s+)?(?:bewertung|gerücht|geschicht|behauptung|artikel|vorwürf)\w*",
        r"\bgerüchte?\s+(?:\w+\s+){0,3}(?:verbreiten|streuen|in umlauf bringen)",
        r"\b(?:hilf mir|wie kann ich|ich will|schreib)\b.{0,40}\b(?:verleumd|diffamier|rufmord|schlechtmachen|"
        r"fertigmachen)\w*",
    ),
    "S6": (
        r"\b(?:stell|schreib|gib|verschreib|unterschreib)\w*\s+(?:du\s+)?(?:mir|uns)\s+(?:\w+\s+){0,2}"
        r"(?:rezept|attest|krankschreibung|arbeitsunfähigkeitsbescheinigung|au-bescheinigung|überweisung|"
        r"ärztliche bescheinigung|gelben schein)",
        r"\bverschreib\w*\s+(?:du\s+)?(?:mir|uns)\b",
        r"\bschreib\w*\s+(?:du\s+)?mich\s+(?:\w+\s+){0,4}krank\b",
        r"\b(?:kannst|könntest|würdest)\s+du\s+(?:mir|uns)\s+(?:\w+\s+){0,3}(?:rezept|attest|krankschreibung|"
        r"überweisung|bescheinigung)\w*\s+(?:\w+\s+)?(?:ausstellen|schreiben|geben|verschreiben|unterschreiben)",
    ),
    "S7": (
        rf"\b(?:finde|herausfinden|nenn|gib|zeig|such|verrat|wie lautet|was ist)\w*\b.{{0,30}}\b{_PRIVATE_DATA}\s+"
        rf"(?:von|meines|meiner|des|der)\s+{_PRIVATE}",
        r"\bwelche[rs]?\s+patient\w*\b.{0,40}\b(?:zimmer|bett|station)\s*\d+",
        r"\b(?:deanonymisier|de-anonymisier|reidentifizier|re-identifizier)\w*",
        r"\b(?:kranken|patienten)akte\s+(?:meines|meiner|von)\s+(?:nachbar|kolleg|ex|chef)",
    ),
    "S8": (
        r"\braubkopie\w*|\bgecrackt\w*|\bcracken\b",
        r"\b(?:lizenz|kopierschutz|paywall|bezahlschranke|drm)\w*\s+(?:[\w-]+\s+){0,3}(?:umgehen|knacken|entfernen|"
        r"aushebeln)",
        r"\b(?:gesamten|vollständigen|kompletten|ganzen)\s+(?:text|buch|kapitel|lehrbuch)\b.{0,40}\b(?:kopieren|"
        r"abschreiben|wiedergeben|ausgeben|schicken)",
    ),
    "S9": (
        rf"\b(?:wie|anleitung|rezept|schritt)\w*\b.{{0,60}}\b{_AGENTS}\b.{{0,40}}\b{_WEAPON_VERBS}\b",
        rf"\b(?:anleitung|wie)\b.{{0,30}}\b(?:bau|herstellung|synthese)\s+(?:eine[rs]?\s+|von\s+)?{_AGENTS}",
        r"\bwaffenfähig\w*\s+(?:machen|herstellen)",
    ),
    "S10": (
        rf"\b{_GROUPS}\b.{{0,30}}\b(?:sind|ist)\s+(?:\w+\s+)?(?:minderwertig\w*|untermenschen|tiere|ungeziefer|"
        r"parasiten|abschaum|dreck\w*|wertlos\w*)",
        rf"\b{_GROUPS}\b.{{0,30}}\b(?:verdienen (?:es )?(?:zu sterben|den tod)|sollte[n]? (?:\w+ )?(?:sterben|"
        r"vergast|ausgerottet|vernichtet|sterilisiert) werden)",
        rf"\b(?:witz\w*|beleidigung\w*|hetze|propaganda|hetzrede)\b.{{0,30}}\b(?:über|gegen)\b.{{0,20}}{_GROUPS}",
        r"\buntermenschen\b",
    ),
    "S11": (
        r"\b(?:wie|womit)\b.{0,30}\b(?:mich umbringen|mich töten|mir das leben nehmen|selbstmord begehen|"
        r"suizid begehen|mich erhängen|mich ritzen|mich selbst verletzen|mich vergiften)",
        r"\b(?:wie viele|wie viel)\b.{0,50}\b(?:um zu sterben|damit ich sterbe|um mich umzubringen|"
        r"um nicht mehr aufzuwachen)",
        r"\bich\s+(?:will|möchte)\s+(?:nicht mehr leben|sterben|mich umbringen|mich töten|mir das leben nehmen)",
        r"\b(?:beste|einfachste|schmerzlose|sicherste|schnellste)\w*\s+(?:methode|art|weg)\b.{0,20}"
        r"\b(?:suizid|selbstmord|zu sterben|mich umzubringen)",
        r"\bschreib\w*\b.{0,20}\babschiedsbrief",
        r"\b(?:narben|ritzwunden|schnitte)\b.{0,20}\bverstecken",
    ),
    "S12": (
        r"\b(?:schreib|erzähl|beschreib|erstell)\w*\b.{0,30}\b(?:erotisch\w*|explizit\w*|versaut\w*|sexy|porno\w*|"
        r"schmutzig\w*)\s+(?:\w+\s+)?(?:geschichte|szene|fantasie|rollenspiel|text|gedicht|chat)",
        r"\b(?:schreib|erzähl)\w*\b.{0,30}\bsexgeschicht\w*",
        r"\bbeschreib\w*\b.{0,30}\bin allen (?:details|einzelheiten)\b.{0,30}\b(?:sex|geschlechtsverkehr)",
        r"\b(?:schick|zeig)\w*\s+mir\s+(?:\w+\s+)?(?:nacktbilder|nacktfotos|pornos?)",
    ),
    "S13": (
        r"\b(?:wahl|wahlen|abstimmung|stimmzettel|briefwahl\w*|wahlergebnis\w*)\s+(?:\w+\s+){0,2}(?:manipulieren|"
        r"fälschen|stehlen)",
        r"\b(?:manipulier|fälsch)\w*\s+(?:\w+\s+){0,2}(?:die\s+)?(?:wahl|wahlen|stimmzettel|briefwahl\w*|"
        r"wahlergebnis\w*)\b",
        r"\b(?:falsch\w*|gefälscht\w*|irreführend\w*|fake)\s+(?:\w+\s+){0,2}(?:nachrichten|informationen|news|"
        r"behauptungen|posts?)\b.{0,30}\b(?:wahl|wahlen|abstimmung|kandidat\w*)",
        r"\bzweimal\s+(?:\w+\s+)?wählen\b",
        r"\b(?:wähler|leute|menschen)\b.{0,30}\bvom wählen abhalten",
    ),
    "S14": (
        r"\b(?:führe|führ)\s+(?:diesen|den folgenden|folgenden|dieses|das folgende)\s+(?:code|befehl|skript|"
        r"query|sql|python-code|programm)\w*\s+aus",
        r"\b(?:ignoriere|vergiss)\s+(?:alle\s+)?(?:deine\s+|die\s+)?(?:vorherigen\s+|bisherigen\s+|obigen\s+)?"
        r"(?:anweisungen|regeln|instruktionen)",
        r"\b(?:zeig|gib|verrat)\w*\s+(?:mir\s+)?(?:deinen\s+)?(?:systemprompt|system-prompt)",
    ),
}
# category -> patterns of harmful instructions in an answer
OUTPUTS: dict[str, tuple[str, ...]] = {
    "S1": (
        rf"\bum {_PERSON} zu (?:töten|vergiften),?\s+(?:sollten sie|können sie|geben sie|nehmen sie)",
    ),
    "S9": (
        r"\b(?:herstellung|synthese) von (?:sarin|vx|rizin|ricin|nervenkampfstoff\w*)\b.{0,80}\b(?:mischen|"
        r"erhitzen|zugeben|schritt)",
    ),
    "S11": (
        r"\bum sich (?:umzubringen|das leben zu nehmen),?\s+(?:sollten sie|können sie|nehmen sie|müssen sie)",
    ),
}

REFUSAL = ("Bei dieser Anfrage kann ich nicht helfen: Sie fällt unter eine Sicherheitskategorie ({names}). "
           "Fragen zu Krankheiten, Medikamenten, Behandlung und Vorbeugung beantworte ich gern.")
CRISIS = ("Es klingt, als ginge es Ihnen gerade sehr schlecht, und Sie müssen das nicht allein durchstehen. "
          "Bitte holen Sie sich jetzt Hilfe: die TelefonSeelsorge ist kostenlos und rund um die Uhr erreichbar "
          "unter 0800 111 0 111 oder 0800 111 0 222; bei akuter Gefahr wählen Sie 112. Informationen, die der "
          "Selbstverletzung dienen könnten, gebe ich nicht, aber ich beantworte gern Fragen zu Hilfe und Behandlung.")
NO_DOCUMENTS = ("Rezepte, Krankschreibungen oder Atteste kann ich nicht ausstellen. Bitte wenden Sie sich an Ihre "
                "Ärztin oder Ihren Arzt; Fragen zur Erkrankung oder zum Medikament beantworte ich gern.")
CATEGORY_NAMES = {
    "S1": "Gewaltverbrechen", "S2": "Nicht gewaltsame Straftaten", "S3": "Sexualstraftaten",
    "S4": "Sexuelle Ausbeutung von Kindern", "S5": "Verleumdung", "S6": "Fachberatung",
    "S7": "Privatsphäre", "S8": "Geistiges Eigentum", "S9": "Massenvernichtungswaffen", "S10": "Hass",
    "S11": "Suizid und Selbstverletzung", "S12": "Sexuelle Inhalte", "S13": "Wahlen",
    "S14": "Missbrauch der Codeausführung",
}

GUARD = GuardCues(
    refusal=REFUSAL,
    crisis=CRISIS,
    no_documents=NO_DOCUMENTS,
    unsafe_content="unsichere Inhalte",
    category_names=CATEGORY_NAMES,
    inputs=INPUTS,
    outputs=OUTPUTS,
    # the disclaimer of medgraph.lang.de.answer
    disclaimer_markers=(
        r"\bkeine (?:medizinische|ärztliche) beratung\b",
        r"\bersetzt (?:keine|nicht die) (?:ärztliche|medizinische)",
    ),
    # statutory health insurance number (Krankenversichertennummer): a letter and 9 digits (matched with case)
    personal_data={"health_insurance_number": r"(?<![\w-])[A-Z]\d{9}(?![\w-])"},
    helplines=frozenset({"110", "08001110111", "08001110222"}),  # police; TelefonSeelsorge
)
