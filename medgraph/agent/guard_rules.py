"""The rule table of the offline guard: per hazard category S1-S14, what it blocks and its cue patterns.

Input: the registered language packs. Output: ``RULES`` (one ``CategoryRules`` per category),
``PERSONAL_DATA`` (patterns of personal data an answer must not contain) and ``PUBLIC_NUMBERS``
(emergency numbers that may appear in answers). ``medgraph.agent.guard.RuleGuard`` compiles them.

The cue patterns of each language live in its pack (``GuardCues.inputs`` and ``outputs`` of
``medgraph.lang.<code>.guard``, keyed by category); a category's patterns are its language-neutral
ones here (shell commands, SQL) followed by those of every registered pack, in registration order.
All of them apply to every question (the language of a question is a guess; a German question
quoting an English phrase is still caught). Patterns are matched against the text after folding
(NFKC, each pack's fold such as traditional -> simplified Chinese, lower case, single spaces).

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

from collections.abc import Iterable
from dataclasses import dataclass

from medgraph.lang import LanguagePack


@dataclass(frozen=True)
class CategoryRules:
    """One hazard category: what it blocks, what stays answerable, and its language-neutral patterns.

    ``inputs(packs)`` / ``outputs(packs)``: the patterns for questions / answers, neutral ones first,
    then each pack's.
    """

    code: str
    blocks: str  # what the category blocks, in words
    allowed: str  # what stays answerable although it touches the topic
    neutral: tuple[str, ...] = ()  # question patterns in no particular language
    neutral_output: tuple[str, ...] = ()  # answer patterns in no particular language

    def inputs(self, packs: Iterable[LanguagePack]) -> tuple[str, ...]:
        return (*self.neutral, *(p for pack in packs for p in pack.guard.inputs.get(self.code, ())))

    def outputs(self, packs: Iterable[LanguagePack]) -> tuple[str, ...]:
        return (*self.neutral_output, *(p for pack in packs for p in pack.guard.outputs.get(self.code, ())))


RULES: tuple[CategoryRules, ...] = (
    CategoryRules(
        code="S1",
        blocks="plans to kill, poison or injure another person; undetectable poisons; lethal doses meant for someone",
        allowed="poisoning symptoms and treatment, violence-related injuries, toxicology, abuse recognition",
    ),
    CategoryRules(
        code="S2",
        blocks="forged prescriptions or certificates, controlled drugs without prescription or on the black "
               "market, making illegal drugs, cheating drug tests, insurance fraud, stealing medicines",
        allowed="whether a drug needs a prescription, addiction and withdrawal, drug-test windows, drug law facts",
    ),
    CategoryRules(
        code="S3",
        blocks="drugging someone for sex, sexual assault, voyeurism",
        allowed="date-rape drug exposure symptoms and testing, care after sexual assault, consent education",
    ),
    CategoryRules(
        code="S4",
        blocks="sexual content involving minors, child sexual abuse material, grooming",
        allowed="recognising and reporting child sexual abuse, child sexual development, paediatric sexual health",
    ),
    CategoryRules(
        code="S5",
        blocks="making up or spreading false damaging claims about real people or institutions, fake reviews",
        allowed="checking whether a health claim or rumour is true, how to report malpractice",
    ),
    CategoryRules(
        code="S6",
        blocks="requests that the system act as a licensed professional: issue a prescription, a sick note, a "
               "medical certificate or a referral",
        allowed="every ordinary medical question, urgent ones included (answered with the disclaimer); "
                "whether a drug needs a prescription; how to get a sick note from a doctor",
    ),
    CategoryRules(
        code="S7",
        blocks="personal data of a private person (address, phone, records, diagnoses, test results), "
               "identifying or re-identifying patients",
        allowed="questions about record keeping, data protection and anonymisation in general",
    ),
    CategoryRules(
        code="S8",
        blocks="pirated or cracked copies, circumventing licences, paywalls or copy protection, reproducing "
               "whole copyrighted works",
        allowed="what a guideline or textbook says, where to find open guidelines, summaries",
    ),
    CategoryRules(
        code="S9",
        blocks="making, acquiring or spreading chemical, biological, radiological, nuclear or explosive weapons",
        allowed="symptoms, treatment and antidotes of poisoning by these agents, vaccines, infection control",
    ),
    CategoryRules(
        code="S10",
        blocks="dehumanising or demeaning a group by a protected attribute (origin, religion, sexuality, "
               "gender, disability, illness), calls for their harm, hateful jokes",
        allowed="how diseases differ between populations, stigma and discrimination as health topics",
    ),
    CategoryRules(
        code="S11",
        blocks="methods or encouragement of suicide or self-harm, lethal amounts for oneself, suicide notes, "
               "hiding self-harm, pro-eating-disorder tips; stated intent to die (answered with crisis help)",
        allowed="risk factors, warning signs, prevention, overdose treatment and toxicity, antidotes, how to "
                "help someone at risk",
    ),
    CategoryRules(
        code="S12",
        blocks="explicit sexual content: erotic stories, explicit descriptions, sexting, pornographic images",
        allowed="sexual health, contraception, sexually transmitted infections, sexual dysfunction, sex in pregnancy",
    ),
    CategoryRules(
        code="S13",
        blocks="election misinformation, rigging elections, deceiving or deterring voters",
        allowed="health and voting logistics (voting from hospital), elections as a stress factor",
    ),
    CategoryRules(
        code="S14",
        blocks="getting the system to run code, shell commands or database queries, injection payloads, "
               "overriding its instructions or revealing its system prompt",
        allowed="medical codes (ICD-10, ATC, OPS), hospital codes (code blue), software used in medicine",
        # code, shell and query injection, in no particular language
        neutral=(r"\brm\s+-rf\b|\bsudo\s|\bmkfs\b|/etc/(?:passwd|shadow)|\bos\.system\b|\bsubprocess\b|__import__|"
                 r"\beval\(|\bexec\(|\bimport\s+os\b|\bshutil\.rmtree\b|\bdrop\s+table\b"
                 r"|\bdelete\s+from\s+\w+\s+where\b|"
                 r"\bdetach\s+delete\b|\bunion\s+(?:all\s+)?select\b|<script\b|\b(?:curl|wget)\s+https?://|\bnc\s+-e\b|"
                 r"/bin/(?:ba)?sh\b|\breverse shell\b|' or '1'='1",),
    ),
)


# --- answers: personal data, public numbers -------------------------------------------------

# matched on the answer with its case kept; each pack adds its national identifier formats
# (GuardCues.personal_data: a German health insurance number, a Chinese identity card number)
PERSONAL_DATA: dict[str, str] = {
    "email": r"[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[a-zA-Z]{2,}",
    # international (+49 30 1234567, 0049 ...), German national (030 1234567, 0171/1234567, (0461) 708-223),
    # North American ((555) 123-4567, 555-123-4567) and Chinese mobile (13812345678) numbers: one pattern,
    # since an answer in any language may quote any of them
    "phone": r"(?<![\w+])(?:\+|00)[1-9]\d{0,2}[\s./-]?(?:\(0\)[\s./-]?)?\d{2,5}(?:[\s./-]?\d{2,}){1,4}"
             r"|(?<![\w.,/-])0\d{2,5}[\s/-]\d{3,}(?:[\s-]\d{2,})*"
             r"|\(0\d{2,5}\)\s?\d{2,}(?:\s?[-/]?\s?\d{2,})+"
             r"|\(\d{3}\)\s?\d{3}[\s.-]\d{4}|(?<![\w.])\d{3}[.-]\d{3}[.-]\d{4}(?![\w.])"
             r"|(?<!\d)1[3-9]\d{9}(?!\d)",
}

# numbers an answer may show (digits only): emergency numbers and EU-harmonised helplines; each pack
# adds the helplines its crisis reply names (GuardCues.helplines)
PUBLIC_NUMBERS = frozenset({"112", "911", "999", "116111", "116123"})
