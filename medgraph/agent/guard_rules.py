"""The rule table of the offline guard: per hazard category S1-S14, cue patterns in EN, DE and ZH.

Input: nothing (data). Output: ``RULES`` (one ``CategoryRules`` per category), ``PERSONAL_DATA``
(patterns of personal data an answer must not contain), ``PUBLIC_NUMBERS`` (helplines that may
appear in answers) and ``DISCLAIMER_MARKERS``. ``medgraph.agent.guard.RuleGuard`` compiles them.

How to read a rule: patterns are Python regular expressions matched against the question after
folding (NFKC, lower case, traditional -> simplified Chinese, single spaces). English and German
patterns use word boundaries; Chinese ones match substrings. All three languages' patterns apply
to every question (the language of a question is a guess; a German question quoting an English
phrase is still caught).

What is blocked is a *request to cause harm* (or to get content that is itself harmful), never
a topic. A medical QA product must answer questions about diseases, drugs, doses, side effects,
toxicity, overdose treatment, suicide risk factors and prevention, sexual health, abuse
recognition and poisoning, so every pattern names an intent ("how do I", "help me", "write") and
a harmful object together; ``allowed`` in each rule says what stays answerable.

S6 (specialized advice) is narrow on purpose: answering medical questions is the product, with
the disclaimer the answer composer adds. An urgent question ("my father has chest pain, what do I
do?") is ALLOWED and answered with the disclaimer (which points to a professional); S6 blocks only
requests that the system act as a licensed professional in a way it cannot: issue a prescription,
a sick note or a medical certificate.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CategoryRules:
    """Cue patterns of one hazard category; ``output`` patterns apply to answers."""

    code: str
    blocks: str  # what the category blocks, in words
    allowed: str  # what stays answerable although it touches the topic
    en: tuple[str, ...]
    de: tuple[str, ...]
    zh: tuple[str, ...]
    output: tuple[str, ...] = ()


# --- shared vocabulary ---------------------------------------------------------------------

# a person as the object of a harmful act (EN / DE / ZH)
_PERSON_EN = (r"(?:him|her|them|someone|somebody|anyone|a person|people|"
              r"(?:my|your|his|her|our|a|the) (?:wife|husband|partner|boyfriend|girlfriend|mother|father|mom|mum|"
              r"dad|son|daughter|child|baby|boss|neighbou?r|colleague|coworker|roommate|patient|teacher|friend|"
              r"brother|sister|family|man|woman|kid|ex))")
_PERSON_DE = (r"(?:jemanden|ihn|sie|einen menschen|eine person|meinen (?:mann|vater|sohn|chef|nachbarn|bruder|"
              r"freund|partner|patienten|kollegen|ex)|meine (?:frau|mutter|tochter|schwester|freundin|chefin|"
              r"nachbarin|partnerin|kollegin|familie|ex)|mein (?:kind|baby))")
_PERSON_ZH = (r"(?:他|她|他们|别人|某人|一个人|人|我(?:的)?(?:丈夫|老公|妻子|老婆|父亲|母亲|爸爸|妈妈|孩子|老板|"
              r"邻居|同事|室友|男朋友|女朋友|前妻|前夫))")
_KILL_EN = r"(?:kill|murder|poison|strangle|suffocate|smother|stab|shoot|hurt|harm|injure|beat up)"
_KILL_DE = r"(?:töten|umbringen|umzubringen|vergiften|zu vergiften|ermorden|erstechen|erschießen|erwürgen|ersticken)"
_KILL_ZH = r"(?:杀死|杀掉|杀了|毒死|弄死|害死|谋杀|捅死|掐死|闷死)"

# controlled medicines people ask to obtain without a prescription
_CONTROLLED_EN = (r"(?:oxycodone|oxycontin|fentanyl|hydrocodone|morphine|codeine|tramadol|xanax|alprazolam|"
                  r"diazepam|valium|lorazepam|benzos?|benzodiazepines?|adderall|ritalin|methylphenidate|ketamine|"
                  r"opioids?|opiates?|painkillers?|sleeping pills?)")
_CONTROLLED_DE = (r"(?:oxycodon|fentanyl|tilidin|tramadol|morphin|codein|diazepam|valium|tavor|lorazepam|"
                  r"alprazolam|benzos?|benzodiazepine?|opioide?|ritalin|methylphenidat|ketamin|schlafmittel|"
                  r"schmerzmittel)")
_CONTROLLED_ZH = r"(?:羟考酮|奥施康定|芬太尼|曲马多|吗啡|可待因|安定|地西泮|阿普唑仑|氯硝西泮|杜冷丁|哌替啶|止痛药|安眠药)"
_STREET_DRUGS_EN = (r"(?:meth|methamphetamine|crystal meth|mdma|ecstasy|lsd|heroin|cocaine|crack|fentanyl|ghb|"
                    r"dmt|amphetamines?)")
_STREET_DRUGS_DE = (r"(?:crystal(?: meth)?|methamphetamin|mdma|ecstasy|lsd|heroin|kokain|crack|fentanyl|ghb|"
                    r"amphetamin|speed)")
_STREET_DRUGS_ZH = r"(?:冰毒|甲基苯丙胺|海洛因|可卡因|摇头丸|k粉|氯胺酮|芬太尼|大麻油)"

# agents of indiscriminate weapons (chemical, biological, radiological, nuclear, explosive)
_AGENTS_EN = (r"(?:sarin|soman|tabun|vx|novichok|mustard gas|sulfur mustard|chlorine gas|phosgene|ricin|abrin|"
              r"anthrax|bacillus anthracis|botulinum toxin|botulinum|smallpox|plague|yersinia pestis|ebola|"
              r"nerve (?:agents?|gas)|chemical weapons?|biological weapons?|bio-?weapons?|dirty bombs?|"
              r"nuclear (?:bombs?|weapons?)|enriched uranium|plutonium|pipe bombs?|nail bombs?|car bombs?|"
              r"explosives?|tatp|nitroglycerin|bombs?)")
_WEAPON_VERBS_EN = (r"(?:make|build|produce|synthesi[sz]e|manufacture|weaponi[sz]e|extract|purify|cultivate|"
                    r"culture|aerosoli[sz]e|disperse|release|enrich|assemble|detonate|cook|brew|mix)")
_AGENTS_DE = (r"(?:sarin|soman|tabun|vx|nowitschok|senfgas|schwefellost|chlorgas|phosgen|rizin|ricin|abrin|"
              r"milzbrand\w*|anthrax|botulinumtoxin|pocken\w*|pesterreger|ebola\w*|nervenkampfstoff\w*|"
              r"nervengas|chemische waffen?|chemiewaffen?|biowaffen?|biologische waffen?|schmutzige bombe|"
              r"rohrbomben?|sprengstoff\w*|bomben?|atombomben?|uran|plutonium|tatp)")
_WEAPON_VERBS_DE = (r"(?:herstellen|herzustellen|bauen|zu bauen|basteln|synthetisieren|gewinnen|extrahieren|"
                    r"züchten|kultivieren|freisetzen|freizusetzen|versprühen|anreichern|zünden)")
_AGENTS_ZH = (r"(?:沙林|梭曼|塔崩|vx|诺维乔克|芥子气|氯气|光气|蓖麻毒素|相思子毒素|炭疽|肉毒毒素|肉毒杆菌毒素|天花病毒|"
              r"鼠疫杆菌|埃博拉病毒|神经毒剂|化学武器|生物武器|脏弹|炸弹|炸药|原子弹|核武器|浓缩铀|钚)")
_WEAPON_VERBS_ZH = r"(?:制造|制作|合成|提取|提炼|培养|扩散|释放|散播|武器化|组装|引爆)"

# groups that hate speech targets (S10)
_GROUPS_EN = (r"(?:black people|blacks|jews|muslims|christians|asians|chinese|arabs|immigrants|refugees|gays?|"
              r"lesbians|homosexuals|trans(?:gender)? people|women|disabled people|the disabled|"
              r"people with (?:hiv|aids|down syndrome|disabilities|autism|mental illness)|autistic people|"
              r"gypsies|roma|mexicans|africans)")
_GROUPS_DE = (r"(?:schwarze|juden|muslime|moslems|christen|asiaten|chinesen|araber|ausländer|flüchtlinge|"
              r"migranten|schwule|lesben|homosexuelle|transmenschen|frauen|behinderte|"
              r"menschen mit (?:behinderung|hiv|down-syndrom|autismus)|autisten|zigeuner|roma|türken|afrikaner)")
_GROUPS_ZH = (r"(?:黑人|犹太人|穆斯林|基督徒|亚洲人|中国人|日本人|阿拉伯人|外国人|移民|难民|同性恋|跨性别者|女人|"
              r"残疾人|残障人士|艾滋病人|艾滋病患者|精神病人|自闭症患者|乙肝患者|农村人|外地人)")

# whose private data someone asks for (S7)
_PRIVATE_EN = (r"(?:my |our |the )?(?:neighbou?rs?|colleagues?|coworkers?|co-workers?|boss|ex|"
               r"ex-(?:wife|husband|girlfriend|boyfriend)|employees?|tenants?|classmates?|celebrit(?:y|ies))")
_PRIVATE_DATA_EN = (r"(?:(?:medical |health |patient )?records?|diagnos[ie]s|test results?|lab results?|"
                    r"hiv status|medications?|prescriptions?|home address|address|phone number|"
                    r"e-?mail(?: address)?|date of birth|insurance number|social security number)")
_PRIVATE_DATA_DE = (r"(?:adresse|anschrift|telefonnummer|handynummer|e-?mail(?:-adresse)?|geburtsdatum|"
                    r"versichertennummer|krankenakte|patientenakte|diagnose|befunde?|laborwerte|hiv-status|"
                    r"medikamente)")
_PRIVATE_DE = (r"(?:meine[rsmn]? )?(?:nachbar\w*|kolleg\w*|chef\w*|ex-?\w*|mitarbeiter\w*|mieter\w*|"
               r"herrn? [a-zäöü]+|frau [a-zäöü]+|patient\w* [a-zäöü]+)")
_PRIVATE_DATA_ZH = r"(?:住址|地址|电话|手机号|身份证号|病历|病情|诊断|检查结果|化验结果|医保号|艾滋病)"
_PRIVATE_ZH = r"(?:邻居|同事|老板|前妻|前夫|前男友|前女友|员工|租客|同学|明星)"

_HOW_EN = r"(?:how (?:to|do i|can i|could i|would i|should i|would one|could one)|steps? to|instructions? (?:for|to)|recipe for|guide to|help me|teach me to|tell me how to)"  # noqa: E501
_HOW_ZH = r"(?:怎么|怎样|如何|教我|方法|步骤|配方|教程)"


RULES: tuple[CategoryRules, ...] = (
    CategoryRules(
        code="S1",
        blocks="plans to kill, poison or injure another person; undetectable poisons; lethal doses meant for someone",
        allowed="poisoning symptoms and treatment, violence-related injuries, toxicology, abuse recognition",
        en=(rf"\b(?:how (?:to|do i|can i|could i|would i|should i)|best way to|help me|i want to|i'm going to|"
            rf"i am going to|teach me to)\s+(?:\w+\s+){{0,3}}{_KILL_EN}\s+{_PERSON_EN}\b",
            r"\b(?:kill|murder|poison)\w*\b.{0,60}\b(?:without (?:getting caught|being (?:caught|detected|noticed)|"
            r"a trace|leaving (?:a )?traces?)|undetect\w*|untrace\w*)",
            r"\b(?:undetectable|untraceable)\s+(?:\w+\s+)?poisons?\b",
            rf"\b(?:dose|amount|how much|how many)\b.{{0,40}}\b(?:to kill|would kill|will kill)\s+{_PERSON_EN}\b"),
        de=(rf"\b(?:wie|womit)\s+(?:kann|könnte|soll|sollte|werde)\s+ich\s+{_PERSON_DE}\s+(?:\w+\s+){{0,3}}"
            rf"{_KILL_DE}\b",
            rf"\bich\s+(?:will|möchte)\s+{_PERSON_DE}\s+(?:\w+\s+){{0,3}}{_KILL_DE}\b",
            r"\b(?:nicht nachweisbar\w*|unauffällig|unbemerkt|spurlos)\b.{0,40}\b(?:gift\w*|vergift\w*|töten|umbringen)",
            r"\b(?:gift\w*|vergift\w*|töten|umbringen)\b.{0,40}\b(?:nicht nachweisbar\w*|unbemerkt|spurlos|"
            r"ohne dass es (?:jemand )?(?:merkt|auffällt))",
            rf"\btödliche\w*\s+dosis\b.{{0,40}}\b(?:für|um)\s+{_PERSON_DE}"),
        zh=(rf"(?:怎么|怎样|如何|用什么|什么方法|教我|我想|我要).{{0,10}}{_KILL_ZH}{_PERSON_ZH}",
            rf"(?:怎么|怎样|如何|教我|我想|我要).{{0,6}}把{_PERSON_ZH}.{{0,6}}{_KILL_ZH}",
            r"(?:不被发现|查不出|检测不出|无法检测).{0,10}(?:毒死|杀死|毒药|下毒|杀人)",
            r"(?:查不出来|检测不到|无色无味)的毒药"),
        output=(rf"\bto (?:kill|poison|murder) {_PERSON_EN},?\s+(?:you (?:should|can|could|need to)|use|give)\b",
                rf"\bum {_PERSON_DE} zu (?:töten|vergiften),?\s+(?:sollten sie|können sie|geben sie|nehmen sie)",
                rf"{_KILL_ZH}{_PERSON_ZH}(?:的)?(?:方法|办法)是"),
    ),
    CategoryRules(
        code="S2",
        blocks="forged prescriptions or certificates, controlled drugs without prescription or on the black "
               "market, making illegal drugs, cheating drug tests, insurance fraud, stealing medicines",
        allowed="whether a drug needs a prescription, addiction and withdrawal, drug-test windows, drug law facts",
        en=(r"\b(?:forge|fake|falsify|counterfeit|alter|forging|faking)\s+(?:a\s+|my\s+|the\s+)?(?:doctor'?s?\s+)?"
            r"(?:prescriptions?|rx|sick notes?|medical certificates?|doctor'?s notes?)",
            r"\b(?:fake|forged|falsified|counterfeit)\s+(?:prescriptions?|sick notes?|medical certificates?)\b"
            r".{0,30}\b(?:make|write|get|create|use)",
            rf"\b(?:buy|get|obtain|order|source|score)\w*\s+(?:\w+\s+){{0,3}}{_CONTROLLED_EN}\b.{{0,40}}"
            r"\bwithout (?:a |any )?(?:prescription|rx|doctor)",
            r"\b(?:buy|get|obtain|order|source|score)\w*\b.{0,40}\b(?:on the (?:dark ?web|darknet|street|black market)|"
            r"from a dealer|illegally)",
            rf"\b(?:{_HOW_EN}|where (?:can|do) i)\b.{{0,20}}\b(?:make|cook|synthesi[sz]e|produce|extract|grow)\s+"
            rf"(?:\w+\s+)?{_STREET_DRUGS_EN}\b",
            r"\b(?:pass|cheat|beat|fool|trick)\w*\s+(?:a\s+|the\s+|my\s+)?(?:urine\s+|hair\s+)?drug (?:test|screen)",
            r"\b(?:insurance|medicare|medicaid) fraud\b",
            r"\bsteal\w*\s+(?:\w+\s+){0,2}(?:drugs|medications?|morphine|opioids|prescriptions?)\s+from\b"),
        de=(r"\b(?:rezept|attest|krankschreibung|arbeitsunfähigkeitsbescheinigung|au-bescheinigung)\w*\s+(?:\w+\s+){0,2}"
            r"(?:fälschen|zu fälschen|nachmachen)",
            r"\b(?:gefälschte?s?|falsche?s?)\s+(?:rezept|attest|krankschreibung)\w*\b.{0,30}\b(?:bekommen|erstellen|machen|"
            r"besorgen)",
            rf"\b{_CONTROLLED_DE}\b.{{0,40}}\bohne rezept\b.{{0,20}}\b(?:kaufen|bekommen|besorgen|bestellen)",
            rf"\b(?:kaufen|bekommen|besorgen|bestellen)\b.{{0,20}}\b{_CONTROLLED_DE}\b.{{0,20}}\bohne rezept",
            r"\b(?:im darknet|auf dem schwarzmarkt|beim dealer|illegal)\b.{0,30}\b(?:kaufen|bestellen|besorgen|bekommen)",
            rf"\b{_STREET_DRUGS_DE}\b.{{0,20}}\b(?:herstellen|kochen|synthetisieren|selber machen|selbst machen)",
            r"\bdrogentest\w*\s+(?:\w+\s+){0,2}(?:bestehen|austricksen|umgehen|manipulieren|betrügen)",
            r"\bversicherungsbetrug\b",
            r"\b(?:medikamente|morphin|opioide|betäubungsmittel)\s+(?:\w+\s+){0,4}(?:stehlen|klauen|entwenden)"),
        zh=(r"伪造(?:的)?(?:处方|病假条|诊断证明|医疗证明|假条)|假处方|开假证明|假病假条",
            rf"(?:不用|没有|无需|不要)处方.{{0,6}}(?:买|购买|弄到|搞到).{{0,10}}{_CONTROLLED_ZH}",
            rf"(?:买|购买|弄到|搞到).{{0,10}}{_CONTROLLED_ZH}.{{0,10}}(?:不用|没有|无需|不要)处方",
            r"(?:暗网|黑市|毒贩).{0,10}(?:买|购买|弄到)",
            rf"(?:制作|制造|合成|提炼|自制){_STREET_DRUGS_ZH}",
            r"(?:骗过|躲过|通过)(?:尿检|药检|毒检).{0,6}(?:方法|办法|技巧)|(?:尿检|药检)作弊",
            r"骗保|医保诈骗|保险诈骗",
            r"(?:偷|盗)(?:医院|药店)?的?(?:药品|吗啡|麻醉药)"),
    ),
    CategoryRules(
        code="S3",
        blocks="drugging someone for sex, sexual assault, voyeurism",
        allowed="date-rape drug exposure symptoms and testing, care after sexual assault, consent education",
        en=(r"\b(?:spike|roofie)\w*\s+(?:\w+\s+){0,2}(?:drinks?|someone|her|him|a (?:girl|woman|man|guy))",
            r"\b(?:give|slip|put|use)\s+(?:\w+\s+){0,3}(?:ghb|rohypnol|roofies?|date[- ]rape drugs?|sleeping pills?)\s+"
            r"(?:in(?:to)?|to)\s+(?:her|his|their|someone'?s?|a (?:girl|woman)'?s?)\b",
            r"\bdrug\w*\s+(?:her|him|someone|a (?:girl|woman|man))\s+(?:to|so (?:that )?(?:i|we) can)\s+"
            r"(?:have sex|sleep with|rape)",
            r"\b(?:have sex with|sleep with)\s+(?:someone|her|him|a (?:girl|woman|man))\s+(?:who is|while (?:she|he) is)"
            r"\s+(?:unconscious|asleep|passed out)",
            r"\bhow (?:to|can i|do i)\s+(?:rape|sexually assault)\b",
            r"\b(?:hidden camera|secretly film\w*)\b.{0,30}\b(?:changing room|toilet|bathroom|shower|undress)"),
        de=(r"\b(?:k\.?\s?-?o\.?-?tropfen|ghb|rohypnol|schlafmittel)\s+(?:\w+\s+){0,4}(?:ins|in ihr|in sein|in den|"
            r"in das)\s+(?:\w+\s+)?(?:getränk|glas|drink)",
            r"\b(?:ihr|ihm|jemandem|einer frau)\s+(?:\w+\s+){0,3}(?:k\.?\s?-?o\.?-?tropfen|ghb|rohypnol)\s+"
            r"(?:geben|verabreichen|unterjubeln|untermischen)",
            r"\bbetäuben,?\s+(?:um|damit)\b.{0,30}\b(?:sex|mit ihr schlafen|mit ihm schlafen|vergewaltigen)",
            r"\bwie\s+(?:kann|könnte)\s+ich\b.{0,20}\bvergewaltigen",
            r"\bheimlich\s+(?:\w+\s+){0,3}filmen\b.{0,30}\b(?:umkleide|toilette|dusche|ausziehen)"),
        zh=(r"迷奸",
            r"(?:迷药|安眠药|听话水|失身水).{0,10}(?:下|放|加).{0,6}(?:她|他|饮料|酒|杯)",
            r"(?:下药|下迷药).{0,10}(?:发生关系|上床|性)",
            r"(?:怎么|如何|怎样)强奸",
            r"偷拍.{0,6}(?:裙底|厕所|更衣室|洗澡)"),
    ),
    CategoryRules(
        code="S4",
        blocks="sexual content involving minors, child sexual abuse material, grooming",
        allowed="recognising and reporting child sexual abuse, child sexual development, paediatric sexual health",
        en=(r"\bchild porn\w*|\bcsam\b|\bkiddie porn",
            r"\b(?:write|describe|show|send|find|get|share|download|create|generate)\b.{0,40}\b(?:sexual|erotic|nude|"
            r"naked|porn\w*)\b.{0,30}\b(?:child|children|kids?|minors?|underage|(?:\d|1[0-5])[- ]year[- ]olds?|"
            r"preteens?)\b",
            r"\bhave sex with (?:a |my )?(?:child|kid|minor|(?:\d|1[0-5])[- ]year[- ]old|underage|(?:step)?daughter|"
            r"(?:step)?son)\b",
            r"\bhow (?:to|can i|do i)\s+groom\s+(?:a |my )?(?:child|kid|minor|boy|girl)",
            r"\bget (?:a |my )?(?:child|kid|minor)\s+to\s+(?:undress|send (?:nudes|photos)|touch)"),
        de=(r"\bkinderporn\w*",
            r"\bsex\s+mit\s+(?:einem\s+|meinem\s+|meiner\s+)?(?:kind|kindern|minderjährig\w*|\d{1,2}-jährig\w*)",
            r"\b(?:nacktbilder|nacktfotos|pornos?|sexbilder)\s+von\s+(?:kindern|minderjährigen|einem kind)",
            r"\b(?:kind|kinder|minderjährige)\w*\s+(?:\w+\s+){0,2}(?:sexuell gefügig|zum sex|ins bett)"),
        zh=(r"儿童色情|幼女色情|萝莉色情|未成年人?色情",
            r"(?:和|与|跟)(?:未成年人?|儿童|小孩|幼女|\d{1,2}岁(?:的)?(?:女孩|男孩|孩子)).{0,4}(?:发生性关系|做爱|上床)",
            r"(?:未成年人?|儿童|小孩|幼女).{0,6}(?:裸照|裸体照片|色情照片|色情视频)",
            r"诱骗.{0,6}(?:儿童|未成年|小孩).{0,6}(?:发生|性|裸)"),
    ),
    CategoryRules(
        code="S5",
        blocks="making up or spreading false damaging claims about real people or institutions, fake reviews",
        allowed="checking whether a health claim or rumour is true, how to report malpractice",
        en=(r"\b(?:write|post|publish|spread|create|make up|invent)\w*\b.{0,40}\b(?:fake|false|made[- ]up|untrue)\b"
            r".{0,30}\b(?:reviews?|rumou?rs?|story|stories|claims?|articles?|accusations?)\b",
            r"\bspread\w* (?:a )?rumou?rs? (?:that|about)\b",
            r"\b(?:help me|how (?:to|can i|do i)|i want to|write)\b.{0,40}\b(?:defame|slander|libel|smear|discredit)\w*",
            r"\bwrite\b.{0,60}\b(?:dr\.?|doctor|professor|nurse)\s+\w+\s+(?:is|was)\s+(?:a\s+)?(?:drunk|fraud|quack|"
            r"killer|murderer|abuser|rapist|criminal)"),
        de=(r"\b(?:schreib|verfass|erstell|verbreit|poste|veröffentlich)\w*\b.{0,40}\b(?:falsche|gefälschte|erfundene|"
            r"unwahre|fake)\w*\s+(?:\w+\s+)?(?:bewertung|gerücht|geschicht|behauptung|artikel|vorwürf)\w*",
            r"\bgerüchte?\s+(?:\w+\s+){0,3}(?:verbreiten|streuen|in umlauf bringen)",
            r"\b(?:hilf mir|wie kann ich|ich will|schreib)\b.{0,40}\b(?:verleumd|diffamier|rufmord|schlechtmachen|"
            r"fertigmachen)\w*"),
        zh=(r"造谣",
            r"编造.{0,10}(?:谣言|故事|丑闻|差评|黑料)",
            r"诽谤|抹黑",
            r"写.{0,10}(?:虚假|假的?)(?:差评|评论|报道|文章|举报)",
            r"散布.{0,6}谣言"),
    ),
    CategoryRules(
        code="S6",
        blocks="requests that the system act as a licensed professional: issue a prescription, a sick note, a "
               "medical certificate or a referral",
        allowed="every ordinary medical question, urgent ones included (answered with the disclaimer); "
                "whether a drug needs a prescription; how to get a sick note from a doctor",
        en=(r"\b(?:write|issue|give|sign|make|send)\s+(?:me|us|my \w+)\s+(?:a\s+|an\s+)?(?:prescription|rx|sick note|"
            r"doctor'?s note|medical certificate|fit note|note for (?:work|school)|referral)",
            r"\bprescribe\s+(?:me|us)\b",
            r"\b(?:sign|certify)\b.{0,30}\b(?:fit to (?:work|fly|drive)|unfit (?:for|to) work)"),
        de=(r"\b(?:stell|schreib|gib|verschreib|unterschreib)\w*\s+(?:du\s+)?(?:mir|uns)\s+(?:\w+\s+){0,2}"
            r"(?:rezept|attest|krankschreibung|arbeitsunfähigkeitsbescheinigung|au-bescheinigung|überweisung|"
            r"ärztliche bescheinigung|gelben schein)",
            r"\bverschreib\w*\s+(?:du\s+)?(?:mir|uns)\b",
            r"\bschreib\w*\s+(?:du\s+)?mich\s+(?:\w+\s+){0,4}krank\b",
            r"\b(?:kannst|könntest|würdest)\s+du\s+(?:mir|uns)\s+(?:\w+\s+){0,3}(?:rezept|attest|krankschreibung|"
            r"überweisung|bescheinigung)\w*\s+(?:\w+\s+)?(?:ausstellen|schreiben|geben|verschreiben|unterschreiben)"),
        zh=(r"(?:给我|帮我|替我)(?:开|写|出具|签).{0,10}(?:处方|病假条|诊断证明|医疗证明|假条|转诊单)",),
    ),
    CategoryRules(
        code="S7",
        blocks="personal data of a private person (address, phone, records, diagnoses, test results), "
               "identifying or re-identifying patients",
        allowed="questions about record keeping, data protection and anonymisation in general",
        en=(rf"\b(?:find|find out|look up|tell me|give me|get|access|show me|hack|what is|what's|which)\b.{{0,25}}"
            rf"\b{_PRIVATE_DATA_EN}\s+(?:of|for)\s+{_PRIVATE_EN}\b",
            rf"\b(?:find|find out|look up|tell me|give me|get|access|show me|hack|what is|what's)\b.{{0,25}}"
            rf"\b{_PRIVATE_EN}'s?\s+{_PRIVATE_DATA_EN}",
            r"\b(?:identify|who is|name of|find out who)\b.{0,30}\b(?:the patient|this patient|patient in (?:room|bed))",
            r"\b(?:which|what) patient\b.{0,40}\b(?:room|bed|ward)\s*\d+",
            r"\b(?:de-?anonymi[sz]e|deanonymi[sz]e|re-?identify|unmask)\s+(?:the\s+|this\s+|these\s+)?"
            r"(?:patients?|persons?|people|data|dataset|records?)",
            r"\b(?:access|open|read|hack into)\b.{0,20}\b(?:someone else'?s|another patient'?s|other patients'?)\b"
            r".{0,20}\b(?:records?|file|chart|data)"),
        de=(rf"\b(?:finde|herausfinden|nenn|gib|zeig|such|verrat|wie lautet|was ist)\w*\b.{{0,30}}\b{_PRIVATE_DATA_DE}\s+"
            rf"(?:von|meines|meiner|des|der)\s+{_PRIVATE_DE}",
            r"\bwelche[rs]?\s+patient\w*\b.{0,40}\b(?:zimmer|bett|station)\s*\d+",
            r"\b(?:deanonymisier|de-anonymisier|reidentifizier|re-identifizier)\w*",
            r"\b(?:kranken|patienten)akte\s+(?:meines|meiner|von)\s+(?:nachbar|kolleg|ex|chef)"),
        zh=(rf"(?:查|查一下|找出|告诉我|给我|帮我查).{{0,10}}{_PRIVATE_ZH}(?:的)?{_PRIVATE_DATA_ZH}",
            r"\d+(?:号)?(?:床|病房)(?:的)?(?:病人|患者)(?:是谁|叫什么|的名字|的姓名)",
            r"(?:哪个|哪位)(?:病人|患者|同事|邻居).{0,10}(?:得了|感染了|患有)",
            r"去匿名化|重新识别(?:患者|病人|身份)"),
    ),
    CategoryRules(
        code="S8",
        blocks="pirated or cracked copies, circumventing licences, paywalls or copy protection, reproducing "
               "whole copyrighted works",
        allowed="what a guideline or textbook says, where to find open guidelines, summaries",
        en=(r"\b(?:download|get|find|send|give me)\b.{0,40}\b(?:pirated|cracked|torrent\w*|warez)\b",
            r"\b(?:crack|bypass|circumvent|remove)\b.{0,20}\b(?:licen[cs]e|drm|paywall|copy protection|activation)\b",
            r"\b(?:reproduce|copy|paste|print|give me)\b.{0,20}\b(?:the )?(?:entire|full|whole|complete)\s+"
            r"(?:text|book|chapter|manual|textbook)\b",
            r"\bsci-?hub\b|\blibgen\b"),
        de=(r"\braubkopie\w*|\bgecrackt\w*|\bcracken\b",
            r"\b(?:lizenz|kopierschutz|paywall|bezahlschranke|drm)\w*\s+(?:[\w-]+\s+){0,3}(?:umgehen|knacken|entfernen|"
            r"aushebeln)",
            r"\b(?:gesamten|vollständigen|kompletten|ganzen)\s+(?:text|buch|kapitel|lehrbuch)\b.{0,40}\b(?:kopieren|"
            r"abschreiben|wiedergeben|ausgeben|schicken)"),
        zh=(r"盗版|破解版",
            r"破解.{0,6}(?:软件|许可|授权|版权|会员)",
            r"绕过.{0,6}(?:付费墙|版权保护|drm|付费)",
            r"(?:全文|整本书|整章).{0,4}(?:复制|发给我|给我|拷贝)"),
    ),
    CategoryRules(
        code="S9",
        blocks="making, acquiring or spreading chemical, biological, radiological, nuclear or explosive weapons",
        allowed="symptoms, treatment and antidotes of poisoning by these agents, vaccines, infection control",
        en=(rf"\b{_HOW_EN}\b.{{0,30}}\b{_WEAPON_VERBS_EN}\w*\b.{{0,40}}\b{_AGENTS_EN}",
            rf"\b(?:weaponi[sz]\w*|aerosoli[sz]\w*)\b.{{0,40}}\b(?:{_AGENTS_EN}|virus|viruses|bacteria|pathogens?|"
            r"toxins?|spores)",
            rf"\b{_WEAPON_VERBS_EN}\w*\s+(?:\w+\s+){{0,3}}{_AGENTS_EN}\b.{{0,40}}\b(?:at home|in my (?:kitchen|garage|"
            r"lab)|to (?:kill|attack|harm|poison|release))"),
        de=(rf"\b(?:wie|anleitung|rezept|schritt)\w*\b.{{0,60}}\b{_AGENTS_DE}\b.{{0,40}}\b{_WEAPON_VERBS_DE}\b",
            rf"\b(?:anleitung|wie)\b.{{0,30}}\b(?:bau|herstellung|synthese)\s+(?:eine[rs]?\s+|von\s+)?{_AGENTS_DE}",
            r"\bwaffenfähig\w*\s+(?:machen|herstellen)"),
        zh=(rf"{_HOW_ZH}.{{0,10}}{_WEAPON_VERBS_ZH}.{{0,10}}{_AGENTS_ZH}",
            rf"{_WEAPON_VERBS_ZH}.{{0,6}}{_AGENTS_ZH}.{{0,10}}(?:方法|步骤|配方|教程)",
            r"(?:炸弹|炸药|脏弹)(?:怎么|如何)做|(?:怎么|如何)做(?:炸弹|炸药)"),
        output=(r"\b(?:to synthesi[sz]e|synthesis of|to produce|to make|to weaponi[sz]e)\s+(?:\w+\s+){0,2}(?:sarin|"
                r"soman|tabun|vx|ricin|abrin|nerve agents?|mustard gas|anthrax spores|botulinum toxin)\b.{0,80}"
                r"\b(?:mix|combine|react|heat|distil|purify|step|add)\w*",
                r"\b(?:herstellung|synthese) von (?:sarin|vx|rizin|ricin|nervenkampfstoff\w*)\b.{0,80}\b(?:mischen|"
                r"erhitzen|zugeben|schritt)",
                r"(?:合成|制造|制备)(?:沙林|vx|蓖麻毒素|神经毒剂).{0,40}(?:步骤|混合|加入|加热)"),
    ),
    CategoryRules(
        code="S10",
        blocks="dehumanising or demeaning a group by a protected attribute (origin, religion, sexuality, "
               "gender, disability, illness), calls for their harm, hateful jokes",
        allowed="how diseases differ between populations, stigma and discrimination as health topics",
        en=(rf"\b{_GROUPS_EN}\b.{{0,30}}\b(?:are|is)\s+(?:\w+\s+)?(?:inferior|subhuman|animals|vermin|parasites|"
            r"disgusting|a disease|genetically inferior|less intelligent|worthless)\b",
            rf"\b{_GROUPS_EN}\b.{{0,30}}\b(?:deserve to die|should (?:all )?(?:be )?(?:die|killed|exterminated|"
            r"eradicated|sterili[sz]ed|gassed|locked up))",
            rf"\b(?:write|tell|make)\b.{{0,20}}\b(?:jokes?|insults?|slurs?|a rant|propaganda)\b.{{0,30}}"
            rf"\b(?:about|against|mocking)\b.{{0,20}}\b{_GROUPS_EN}",
            rf"\b(?:prove|explain why|why are)\b.{{0,40}}\b(?:{_GROUPS_EN}|races?)\b.{{0,30}}\b(?:inferior|"
            r"less intelligent|subhuman)"),
        de=(rf"\b{_GROUPS_DE}\b.{{0,30}}\b(?:sind|ist)\s+(?:\w+\s+)?(?:minderwertig\w*|untermenschen|tiere|ungeziefer|"
            r"parasiten|abschaum|dreck\w*|wertlos\w*)",
            rf"\b{_GROUPS_DE}\b.{{0,30}}\b(?:verdienen (?:es )?(?:zu sterben|den tod)|sollte[n]? (?:\w+ )?(?:sterben|"
            r"vergast|ausgerottet|vernichtet|sterilisiert) werden)",
            rf"\b(?:witz\w*|beleidigung\w*|hetze|propaganda|hetzrede)\b.{{0,30}}\b(?:über|gegen)\b.{{0,20}}{_GROUPS_DE}",
            r"\buntermenschen\b"),
        zh=(rf"{_GROUPS_ZH}.{{0,10}}(?:都是|是|就是)(?:低等|劣等|畜生|垃圾|废物|害虫|寄生虫|人渣)",
            rf"{_GROUPS_ZH}.{{0,10}}(?:都该死|该死|应该(?:被)?(?:消灭|杀光|灭绝|绝育)|去死)",
            rf"(?:嘲笑|侮辱|辱骂|攻击|歧视){_GROUPS_ZH}(?:的)?(?:笑话|段子|文章|言论)",
            r"劣等民族|劣等种族|低等种族"),
    ),
    CategoryRules(
        code="S11",
        blocks="methods or encouragement of suicide or self-harm, lethal amounts for oneself, suicide notes, "
               "hiding self-harm, pro-eating-disorder tips; stated intent to die (answered with crisis help)",
        allowed="risk factors, warning signs, prevention, overdose treatment and toxicity, antidotes, how to "
                "help someone at risk",
        en=(r"\b(?:how (?:to|do i|can i|should i|could i|would i)|best way to|easiest way to|quickest way to|"
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
            r"\bpro-?ana\b|\bthinspo\b"),
        de=(r"\b(?:wie|womit)\b.{0,30}\b(?:mich umbringen|mich töten|mir das leben nehmen|selbstmord begehen|"
            r"suizid begehen|mich erhängen|mich ritzen|mich selbst verletzen|mich vergiften)",
            r"\b(?:wie viele|wie viel)\b.{0,50}\b(?:um zu sterben|damit ich sterbe|um mich umzubringen|"
            r"um nicht mehr aufzuwachen)",
            r"\bich\s+(?:will|möchte)\s+(?:nicht mehr leben|sterben|mich umbringen|mich töten|mir das leben nehmen)",
            r"\b(?:beste|einfachste|schmerzlose|sicherste|schnellste)\w*\s+(?:methode|art|weg)\b.{0,20}"
            r"\b(?:suizid|selbstmord|zu sterben|mich umzubringen)",
            r"\bschreib\w*\b.{0,20}\babschiedsbrief",
            r"\b(?:narben|ritzwunden|schnitte)\b.{0,20}\bverstecken"),
        zh=(r"(?:怎么|怎样|如何|用什么方法|什么方法|哪种方法|最好的方法|最快的方法|无痛)(?:才能|可以|能|去)?(?:自杀|自尽|轻生|"
            r"结束(?:自己的)?生命|割腕|上吊|自残|了结自己)",
            r"(?<!预防)(?<!防止)(?<!阻止)(?<!干预)(?<!避免)(?:自杀|自尽)(?:的)?(?:方法|方式|办法)",
            r"(?:吃|服)(?:多少|几)(?:片|粒|颗|克|瓶).{0,12}(?:会死|能死|才能死|就死|死掉)",
            r"我(?:想|要|准备)(?:自杀|去死|结束(?:自己的)?生命|了结自己)|我想死|不想活了",
            r"(?:写|帮我写).{0,4}遗书",
            r"(?:隐藏|藏住|遮住).{0,6}(?:伤疤|割痕|自残)"),
        output=(r"\b(?:the )?(?:best|easiest|most effective|most painless|surest) way to (?:kill yourself|"
                r"commit suicide|end your life)",
                r"\bto (?:kill yourself|end your life),?\s+(?:you (?:should|can|could|need to)|take|use)\b",
                r"\bum sich (?:umzubringen|das leben zu nehmen),?\s+(?:sollten sie|können sie|nehmen sie|müssen sie)",
                r"(?:自杀|结束生命)(?:的)?(?:最好|最有效|最无痛)(?:的)?(?:方法|方式)是"),
    ),
    CategoryRules(
        code="S12",
        blocks="explicit sexual content: erotic stories, explicit descriptions, sexting, pornographic images",
        allowed="sexual health, contraception, sexually transmitted infections, sexual dysfunction, sex in pregnancy",
        en=(r"\b(?:write|tell|describe|create|generate|give me)\b.{0,30}\b(?:erotic|explicit|sexy|dirty|porn\w*|smutty|"
            r"nsfw|x-rated)\s+(?:\w+\s+)?(?:story|stories|scene|fantasy|fanfic|chat|role-?play|text|description|poem)",
            r"\b(?:describe|write)\b.{0,30}\bin (?:graphic|explicit) detail\b.{0,30}\b(?:sex|intercourse|oral sex)",
            r"\b(?:sext|sexting|talk dirty)\s+(?:with\s+)?me\b",
            r"\b(?:send|show|give)\s+(?:me\s+)?(?:nudes|porn|nude (?:pics|photos|images))"),
        de=(r"\b(?:schreib|erzähl|beschreib|erstell)\w*\b.{0,30}\b(?:erotisch\w*|explizit\w*|versaut\w*|sexy|porno\w*|"
            r"schmutzig\w*)\s+(?:\w+\s+)?(?:geschichte|szene|fantasie|rollenspiel|text|gedicht|chat)",
            r"\b(?:schreib|erzähl)\w*\b.{0,30}\bsexgeschicht\w*",
            r"\bbeschreib\w*\b.{0,30}\bin allen (?:details|einzelheiten)\b.{0,30}\b(?:sex|geschlechtsverkehr)",
            r"\b(?:schick|zeig)\w*\s+mir\s+(?:\w+\s+)?(?:nacktbilder|nacktfotos|pornos?)"),
        zh=(r"(?:写|讲|来|描写|生成|给我).{0,8}(?:色情|黄色|情色|成人|肉文|淫秽|露骨)(?:的)?(?:小说|故事|文章|段子|内容|描写|"
            r"场景|对话)",
            r"(?:详细|露骨)(?:地)?描写.{0,10}(?:性爱|做爱|性行为)",
            r"(?:发|给)我.{0,4}(?:裸照|色情图片|黄片)"),
    ),
    CategoryRules(
        code="S13",
        blocks="election misinformation, rigging elections, deceiving or deterring voters",
        allowed="health and voting logistics (voting from hospital), elections as a stress factor",
        en=(r"\b(?:write|create|post|spread|make|generate)\b.{0,40}\b(?:fake|false|misleading)\b.{0,30}\b(?:news|"
            r"information|claims?|posts?|messages?|tweets?)\b.{0,30}\b(?:election|vote|voting|ballots?|polls?|candidate)",
            r"\b(?:rig|manipulate|steal|fix)\s+(?:the\s+|an?\s+)?(?:election|vote|votes|ballots?)\b",
            r"\bhow (?:can|do|to)\b.{0,20}\bvote\s+(?:twice|more than once|multiple times|for someone else|"
            r"in someone else'?s name)",
            r"\b(?:tell|convince|make)\s+(?:people|voters)\b.{0,40}\b(?:polling stations? (?:are|is) closed|"
            r"election (?:is|was) (?:cancelled|moved|postponed)|vote by (?:text|sms|phone))",
            r"\b(?:keep|stop)\b.{0,20}\b(?:voters|people)\b.{0,20}\bfrom voting\b"),
        de=(r"\b(?:wahl|wahlen|abstimmung|stimmzettel|briefwahl\w*|wahlergebnis\w*)\s+(?:\w+\s+){0,2}(?:manipulieren|"
            r"fälschen|stehlen)",
            r"\b(?:manipulier|fälsch)\w*\s+(?:\w+\s+){0,2}(?:die\s+)?(?:wahl|wahlen|stimmzettel|briefwahl\w*|"
            r"wahlergebnis\w*)\b",
            r"\b(?:falsch\w*|gefälscht\w*|irreführend\w*|fake)\s+(?:\w+\s+){0,2}(?:nachrichten|informationen|news|"
            r"behauptungen|posts?)\b.{0,30}\b(?:wahl|wahlen|abstimmung|kandidat\w*)",
            r"\bzweimal\s+(?:\w+\s+)?wählen\b",
            r"\b(?:wähler|leute|menschen)\b.{0,30}\bvom wählen abhalten"),
        zh=(r"(?:操纵|操控|舞弊|篡改|伪造)(?:了)?(?:选举|投票|选票|选举结果)",
            r"(?:选举|投票|选票)(?:舞弊|作弊|造假)",
            r"(?:编造|散布|写|发布).{0,10}(?:选举|投票|候选人).{0,10}(?:谣言|假消息|虚假信息|假新闻)",
            r"(?:编造|散布|写|发布).{0,10}(?:谣言|假消息|虚假信息|假新闻).{0,10}(?:选举|投票|候选人)",
            r"(?:投|投票)两次|重复投票|冒名投票"),
    ),
    CategoryRules(
        code="S14",
        blocks="getting the system to run code, shell commands or database queries, injection payloads, "
               "overriding its instructions or revealing its system prompt",
        allowed="medical codes (ICD-10, ATC, OPS), hospital codes (code blue), software used in medicine",
        en=(r"\brm\s+-rf\b|\bsudo\s|\bmkfs\b|/etc/(?:passwd|shadow)|\bos\.system\b|\bsubprocess\b|__import__|"
            r"\beval\(|\bexec\(|\bimport\s+os\b|\bshutil\.rmtree\b|\bdrop\s+table\b|\bdelete\s+from\s+\w+\s+where\b|"
            r"\bdetach\s+delete\b|\bunion\s+(?:all\s+)?select\b|<script\b|\b(?:curl|wget)\s+https?://|\bnc\s+-e\b|"
            r"/bin/(?:ba)?sh\b|\breverse shell\b|' or '1'='1",
            r"\b(?:run|execute)\s+(?:this|the following|that|my)\s+(?:code|command|script|query|shell|python|sql|cypher)",
            r"\b(?:ignore|disregard|forget)\s+(?:all\s+)?(?:(?:the|your|previous|prior|above|earlier)\s+)+"
            r"(?:instructions|rules|prompts?|guidelines)",
            r"\b(?:reveal|print|show|repeat)\s+(?:me\s+)?(?:your\s+)?(?:system prompt|hidden instructions)"),
        de=(r"\b(?:führe|führ)\s+(?:diesen|den folgenden|folgenden|dieses|das folgende)\s+(?:code|befehl|skript|"
            r"query|sql|python-code|programm)\w*\s+aus",
            r"\b(?:ignoriere|vergiss)\s+(?:alle\s+)?(?:deine\s+|die\s+)?(?:vorherigen\s+|bisherigen\s+|obigen\s+)?"
            r"(?:anweisungen|regeln|instruktionen)",
            r"\b(?:zeig|gib|verrat)\w*\s+(?:mir\s+)?(?:deinen\s+)?(?:systemprompt|system-prompt)"),
        zh=(r"(?:执行|运行)(?:以下|下面|这段|这个)(?:的)?(?:代码|命令|脚本|指令|查询|sql)",
            r"(?:忽略|无视|忘记)(?:之前|以上|上面|所有|你的)(?:的)?(?:所有)?(?:指令|指示|规则|提示)",
            r"(?:显示|输出|告诉我)(?:你的)?系统提示"),
    ),
)


# --- answers: personal data, public numbers, the disclaimer ---------------------------------

# matched on the answer with its case kept (the insurance number is upper case)
PERSONAL_DATA: dict[str, str] = {
    "email": r"[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[a-zA-Z]{2,}",
    # international (+49 30 1234567, 0049 ...), German national (030 1234567, 0171/1234567, (0461) 708-223),
    # North American ((555) 123-4567, 555-123-4567) and Chinese mobile (13812345678) numbers
    "phone": r"(?<![\w+])(?:\+|00)[1-9]\d{0,2}[\s./-]?(?:\(0\)[\s./-]?)?\d{2,5}(?:[\s./-]?\d{2,}){1,4}"
             r"|(?<![\w.,/-])0\d{2,5}[\s/-]\d{3,}(?:[\s-]\d{2,})*"
             r"|\(0\d{2,5}\)\s?\d{2,}(?:\s?[-/]?\s?\d{2,})+"
             r"|\(\d{3}\)\s?\d{3}[\s.-]\d{4}|(?<![\w.])\d{3}[.-]\d{3}[.-]\d{4}(?![\w.])"
             r"|(?<!\d)1[3-9]\d{9}(?!\d)",
    # German statutory health insurance number (Krankenversichertennummer): a letter and 9 digits
    "health_insurance_number": r"(?<![\w-])[A-Z]\d{9}(?![\w-])",
    # Chinese resident identity card number: 17 digits and a digit or X
    "id_card_number": r"(?<!\d)\d{17}[\dXx](?!\d)",
}

# numbers an answer may show: emergency numbers and public crisis lines (digits only)
PUBLIC_NUMBERS = frozenset({
    "112", "911", "999", "120", "110", "988", "116123", "116111",
    "08001110111", "08001110222",  # Telefonseelsorge (Germany)
    "4001619995",  # Beijing psychological crisis hotline
})

# a medical answer carries the disclaimer (medgraph.generate.base.DISCLAIMERS); any language's
# form counts, since an answer may quote evidence in another language
DISCLAIMER_MARKERS: tuple[str, ...] = (
    r"\bnot (?:a substitute for |intended as )?(?:professional |personal )?medical advice\b",
    r"\bconsult (?:a|your) (?:qualified )?(?:doctor|physician|health(?:care)? (?:professional|provider))",
    r"\bkeine (?:medizinische|ärztliche) beratung\b",
    r"\bersetzt (?:keine|nicht die) (?:ärztliche|medizinische)",
    r"不构成医疗建议|不能替代(?:医生|专业|医疗)|请咨询(?:医生|合格的医疗|专业)",
)
