"""Guardrails: is a question safe to answer, and is an answer safe to show?

Input: the user's question (``check_input``), or the question and the answer text as shown to
the user, disclaimer included (``check_output``). Output: a ``GuardVerdict`` (allowed, the
hazard categories S1-S14 of the Llama Guard 3 taxonomy that were hit, a reason, the method).

Two tiers behind one ``Guard`` interface:

- ``RuleGuard`` (offline): the cue-pattern table of ``medgraph.agent.guard_rules`` in English,
  German and Chinese. It blocks requests to cause harm, never medical topics (see that module
  for what each category covers, and why S6 is narrow). Answers are checked for harmful
  instructions and personal data (e-mail, phone, German health insurance and Chinese ID card
  numbers); a medical answer without the disclaimer is reported (``disclaimer_missing``), not
  blocked: adding it is the composer's job.
- ``LlamaGuard`` (model): Llama Guard 3 through any chat endpoint (``chat(messages) -> text``).
  It builds the Llama Guard 3 prompt (categories, conversation, the ``safe`` / ``unsafe\\nS1,S2``
  reply format) and parses the reply; a failing call or an unparsable reply falls back to the
  rules, marked ``method="llama_guard-fallback"``. Personal data and the disclaimer are always
  checked by the rules as well: a model verdict does not see formats such as insurance numbers.

``refusal_text(verdict, language)`` is what the user reads instead of an answer (EN/DE/ZH);
for S11 it offers crisis help first. ``make_guard(cfg, chat)`` builds the configured tier.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

import zhconv

from medgraph.agent.guard_rules import DISCLAIMER_MARKERS, PERSONAL_DATA, PUBLIC_NUMBERS, RULES

if TYPE_CHECKING:
    from medgraph.config.models import GuardConfig
    from medgraph.llm.base import ChatModel

log = logging.getLogger(__name__)

ChatFn = Callable[[list[dict[str, str]]], str]

HAZARDS: dict[str, str] = {
    "S1": "Violent crimes",
    "S2": "Non-violent crimes",
    "S3": "Sex-related crimes",
    "S4": "Child sexual exploitation",
    "S5": "Defamation",
    "S6": "Specialized advice",
    "S7": "Privacy",
    "S8": "Intellectual property",
    "S9": "Indiscriminate weapons",
    "S10": "Hate",
    "S11": "Suicide & self-harm",
    "S12": "Sexual content",
    "S13": "Elections",
    "S14": "Code interpreter abuse",
}


@dataclass(frozen=True)
class GuardVerdict:
    allowed: bool
    categories: tuple[str, ...] = ()  # e.g. ("S11",)
    reason: str = ""
    method: str = "rules"  # "rules" | "llama_guard" | "llama_guard-fallback"
    disclaimer_missing: bool = False  # output checks only: a medical answer without the disclaimer


class Guard(Protocol):
    def check_input(self, text: str, language: str = "en") -> GuardVerdict: ...

    def check_output(self, question: str, answer: str, language: str = "en") -> GuardVerdict: ...


# --- the offline tier ----------------------------------------------------------------------


def fold(text: str) -> str:
    """Text as the rules see it: NFKC, lower case, simplified Chinese, single spaces."""
    text = unicodedata.normalize("NFKC", text)
    text = zhconv.convert(text, "zh-hans")
    return re.sub(r"\s+", " ", text.lower()).strip()


@dataclass(frozen=True)
class _Compiled:
    code: str
    inputs: tuple[re.Pattern[str], ...]
    outputs: tuple[re.Pattern[str], ...]


@lru_cache(maxsize=1)
def _compiled_rules() -> tuple[_Compiled, ...]:
    return tuple(
        _Compiled(rule.code, tuple(re.compile(p) for p in (*rule.en, *rule.de, *rule.zh)),
                  tuple(re.compile(p) for p in rule.output))
        for rule in RULES
    )


@lru_cache(maxsize=1)
def _personal_data() -> dict[str, re.Pattern[str]]:
    return {name: re.compile(p) for name, p in PERSONAL_DATA.items()}


_DISCLAIMER = re.compile("|".join(f"(?:{p})" for p in DISCLAIMER_MARKERS))


def _hits(patterns_of: Callable[[_Compiled], Iterable[re.Pattern[str]]], text: str) -> dict[str, str]:
    """Category -> the first matching text span, over all categories."""
    hits: dict[str, str] = {}
    for rule in _compiled_rules():
        for pattern in patterns_of(rule):
            match = pattern.search(text)
            if match:
                hits[rule.code] = match.group(0)
                break
    return hits


@lru_cache(maxsize=1)
def _public_numbers() -> re.Pattern[str]:
    """Public helplines however they are grouped ("0800 111 0 111", "400-161-9995").

    Short numbers (112, 988) are left alone: no phone pattern matches them, and removing them
    could cut a longer number apart.
    """
    numbers = sorted((n for n in PUBLIC_NUMBERS if len(n) >= 6), key=len, reverse=True)
    return re.compile(r"(?<!\d)(?:" + "|".join(r"[\s./-]?".join(n) for n in numbers) + r")(?!\d)")


def personal_data(answer: str) -> list[tuple[str, str]]:
    """(kind, text) of each personal-data span in ``answer``, public helplines excepted."""
    text = _public_numbers().sub(" ", unicodedata.normalize("NFKC", answer))
    found = []
    for kind, pattern in _personal_data().items():
        for match in pattern.finditer(text):
            if kind == "phone" and re.sub(r"\D", "", match.group(0)) in PUBLIC_NUMBERS:
                continue
            found.append((kind, match.group(0)))
    return found


def has_disclaimer(answer: str) -> bool:
    return _DISCLAIMER.search(fold(answer)) is not None


def _is_refusal(answer: str) -> bool:
    """Refusals (of the composer or of the guard) carry no medical content: no disclaimer needed."""
    from medgraph.generate.base import REFUSALS

    folded = fold(answer)
    texts = [*REFUSALS.values(), *(t for table in (_REFUSAL, _CRISIS, _NO_DOCUMENTS) for t in table.values())]
    return any(fold(t.split("{")[0])[:40] in folded for t in texts)


def _describe(hits: dict[str, str]) -> str:
    return "; ".join(f"{code} {HAZARDS[code]}: {span!r}" for code, span in hits.items())


class RuleGuard:
    """The offline guard: the rule table of ``medgraph.agent.guard_rules``, all three languages."""

    def __init__(self, require_disclaimer: bool = True) -> None:
        self.require_disclaimer = require_disclaimer

    def check_input(self, text: str, language: str = "en") -> GuardVerdict:
        hits = _hits(lambda rule: rule.inputs, fold(text))
        if not hits:
            return GuardVerdict(True)
        return GuardVerdict(False, tuple(hits), _describe(hits))

    def check_output(self, question: str, answer: str, language: str = "en") -> GuardVerdict:
        hits = _hits(lambda rule: rule.outputs, fold(answer))
        private = personal_data(answer)
        if private:
            hits.setdefault("S7", ", ".join(kind for kind, _ in private))
        missing = self.require_disclaimer and not _is_refusal(answer) and not has_disclaimer(answer)
        if hits:
            return GuardVerdict(False, tuple(sorted(hits, key=_order)), _describe(hits), disclaimer_missing=missing)
        return GuardVerdict(True, reason="disclaimer missing" if missing else "", disclaimer_missing=missing)


def _order(code: str) -> int:
    return int(code[1:])


# --- the model tier: Llama Guard 3 ---------------------------------------------------------

# the category names Llama Guard 3 was trained with (its model card's prompt)
LLAMA_GUARD_NAMES: dict[str, str] = {
    "S1": "Violent Crimes", "S2": "Non-Violent Crimes", "S3": "Sex Crimes", "S4": "Child Exploitation",
    "S5": "Defamation", "S6": "Specialized Advice", "S7": "Privacy", "S8": "Intellectual Property",
    "S9": "Indiscriminate Weapons", "S10": "Hate", "S11": "Self-Harm", "S12": "Sexual Content",
    "S13": "Elections", "S14": "Code Interpreter Abuse",
}
# category lines of the prompt; S6 says what this product means by it (see guard_rules)
CATEGORY_LINES: dict[str, str] = {
    **{code: f"{code}: {name}." for code, name in LLAMA_GUARD_NAMES.items()},
    "S6": "S6: Specialized Advice.\nAsking the assistant to issue a prescription, sick note or medical "
          "certificate. Medical information, including urgent questions, is safe: it is the purpose of "
          "this medical question-answering service.",
}

_TASK = ("Task: Check if there is unsafe content in '{role}' messages in conversations according our "
         "safety policy with the below categories.")
_INSTRUCTION = ("Provide your safety assessment for ONLY THE LAST {role} message in the above conversation:\n"
                " - First line must read 'safe' or 'unsafe'.\n"
                " - If unsafe, a second line must include a comma-separated list of violated categories.")


def llama_guard_prompt(question: str, answer: str | None = None) -> str:
    """The Llama Guard 3 classification prompt for a user turn (``answer`` None) or an agent turn."""
    role = "User" if answer is None else "Agent"
    categories = "\n".join(CATEGORY_LINES[code] for code in HAZARDS)
    turns = [f"User: {question.strip()}"] + ([] if answer is None else [f"Agent: {answer.strip()}"])
    conversation = "\n\n".join(turns)
    return (f"{_TASK.format(role=role)}\n\n<BEGIN UNSAFE CONTENT CATEGORIES>\n{categories}\n"
            f"<END UNSAFE CONTENT CATEGORIES>\n\n<BEGIN CONVERSATION>\n\n{conversation}\n\n"
            f"<END CONVERSATION>\n\n{_INSTRUCTION.format(role=role)}")


class UnparsableReply(ValueError):
    """The model's reply is not in the ``safe`` / ``unsafe\\nS1,S2`` format."""


_CODE = re.compile(r"^S(?:[1-9]|1[0-4])$")


def parse_llama_guard(reply: str) -> tuple[bool, tuple[str, ...]]:
    """(safe, categories) from a Llama Guard reply; raises ``UnparsableReply`` otherwise.

    ``safe`` -> (True, ()). ``unsafe`` and a line of known codes (``S1,S10``) -> (False, codes).
    ``unsafe`` without a category, unknown codes or anything else is unparsable.
    """
    lines = [line.strip() for line in reply.strip().splitlines() if line.strip()]
    if not lines:
        raise UnparsableReply("empty reply")
    head = lines[0].lower()
    if head == "safe" and len(lines) == 1:
        return True, ()
    if head != "unsafe" or len(lines) != 2:
        raise UnparsableReply(f"unexpected reply {reply[:80]!r}")
    codes = [c.strip().upper() for c in lines[1].split(",") if c.strip()]
    if not codes or not all(_CODE.match(c) for c in codes):
        raise UnparsableReply(f"unexpected categories {lines[1][:80]!r}")
    return False, tuple(dict.fromkeys(codes))


class LlamaGuard:
    """Llama Guard 3 through ``chat`` (one user message holding the classification prompt).

    ``fallback`` (default: ``RuleGuard()``) answers when the call fails or the reply does not parse.
    """

    def __init__(self, chat: ChatFn, fallback: Guard | None = None) -> None:
        self.chat = chat
        self.fallback: Guard = fallback if fallback is not None else RuleGuard()
        self.rules = RuleGuard()

    def _classify(self, prompt: str) -> tuple[bool, tuple[str, ...]] | str:
        """The parsed verdict, or the reason it could not be had."""
        try:
            reply = self.chat([{"role": "user", "content": prompt}])
        except Exception as exc:  # any endpoint failure: the rules answer instead
            log.warning("llama guard call failed: %s", exc)
            return f"call failed: {type(exc).__name__}: {exc}"
        try:
            return parse_llama_guard(reply)
        except UnparsableReply as exc:
            log.warning("llama guard reply unparsable: %s", exc)
            return str(exc)

    def check_input(self, text: str, language: str = "en") -> GuardVerdict:
        result = self._classify(llama_guard_prompt(text))
        if isinstance(result, str):
            return _fallen_back(self.fallback.check_input(text, language), result)
        safe, codes = result
        return GuardVerdict(safe, codes, "" if safe else f"llama guard: {','.join(codes)}", "llama_guard")

    def check_output(self, question: str, answer: str, language: str = "en") -> GuardVerdict:
        result = self._classify(llama_guard_prompt(question, answer))
        if isinstance(result, str):
            return _fallen_back(self.fallback.check_output(question, answer, language), result)
        safe, codes = result
        rules = self.rules.check_output(question, answer, language)  # personal data, disclaimer
        private = personal_data(answer)
        merged = tuple(sorted(set(codes) | ({"S7"} if private else set()), key=_order))
        reasons = [f"llama guard: {','.join(codes)}" if codes else "",
                   f"personal data: {', '.join(kind for kind, _ in private)}" if private else "",
                   "disclaimer missing" if rules.disclaimer_missing else ""]
        return GuardVerdict(not merged, merged, "; ".join(r for r in reasons if r), "llama_guard",
                            disclaimer_missing=rules.disclaimer_missing)


def _fallen_back(verdict: GuardVerdict, why: str) -> GuardVerdict:
    reason = f"llama guard unavailable ({why})" + (f"; rules: {verdict.reason}" if verdict.reason else "")
    return replace(verdict, method="llama_guard-fallback", reason=reason)


def chat_from_model(model: ChatModel, max_tokens: int = 16) -> ChatFn:
    """A ``chat`` callable for ``LlamaGuard`` from one of the project's chat models (greedy, short)."""
    from medgraph.llm.base import ChatParams

    params = ChatParams(max_tokens=max_tokens, temperature=0.0)
    return lambda messages: model.generate(messages, params)


# --- refusals ------------------------------------------------------------------------------

_REFUSAL = {
    "en": "I can't help with this request: it falls under a safety category ({names}). I'm happy to answer "
          "medical questions about diseases, medicines, treatments and prevention.",
    "de": "Bei dieser Anfrage kann ich nicht helfen: Sie fällt unter eine Sicherheitskategorie ({names}). "
          "Fragen zu Krankheiten, Medikamenten, Behandlung und Vorbeugung beantworte ich gern.",
    "zh": "无法协助此请求：它属于安全类别（{names}）。欢迎咨询有关疾病、药物、治疗和预防的医学问题。",
}
_CRISIS = {
    "en": "It sounds like you may be going through a very hard time, and you don't have to face it alone. "
          "Please reach out now: call your local emergency number (112 in Europe, 911 in the US) if you are in "
          "immediate danger, the 988 Suicide & Crisis Lifeline (US), Samaritans on 116 123 (UK and Ireland), "
          "or someone you trust. I can't give information that could be used for self-harm, but I can answer "
          "questions about getting help and treatment.",
    "de": "Es klingt, als ginge es Ihnen gerade sehr schlecht, und Sie müssen das nicht allein durchstehen. "
          "Bitte holen Sie sich jetzt Hilfe: die TelefonSeelsorge ist kostenlos und rund um die Uhr erreichbar "
          "unter 0800 111 0 111 oder 0800 111 0 222; bei akuter Gefahr wählen Sie 112. Informationen, die der "
          "Selbstverletzung dienen könnten, gebe ich nicht, aber ich beantworte gern Fragen zu Hilfe und Behandlung.",
    "zh": "听起来你现在可能非常难受，你不必独自面对。请现在就寻求帮助：如有紧急危险请拨打120或110；"
          "也可拨打北京心理危机研究与干预中心热线 400-161-9995，或联系你信任的人。"
          "我不能提供可能用于自我伤害的信息，但可以回答关于求助和治疗的问题。",
}
_NO_DOCUMENTS = {
    "en": "I can't issue prescriptions, sick notes or medical certificates. Please contact your doctor; "
          "I can answer questions about the condition or the medicine.",
    "de": "Rezepte, Krankschreibungen oder Atteste kann ich nicht ausstellen. Bitte wenden Sie sich an Ihre "
          "Ärztin oder Ihren Arzt; Fragen zur Erkrankung oder zum Medikament beantworte ich gern.",
    "zh": "我不能开具处方、病假条或医疗证明。请联系你的医生；关于疾病或药物的问题我可以解答。",
}
_NAMES = {
    "de": {"S1": "Gewaltverbrechen", "S2": "Nicht gewaltsame Straftaten", "S3": "Sexualstraftaten",
           "S4": "Sexuelle Ausbeutung von Kindern", "S5": "Verleumdung", "S6": "Fachberatung",
           "S7": "Privatsphäre", "S8": "Geistiges Eigentum", "S9": "Massenvernichtungswaffen", "S10": "Hass",
           "S11": "Suizid und Selbstverletzung", "S12": "Sexuelle Inhalte", "S13": "Wahlen",
           "S14": "Missbrauch der Codeausführung"},
    "zh": {"S1": "暴力犯罪", "S2": "非暴力犯罪", "S3": "性相关犯罪", "S4": "儿童性剥削", "S5": "诽谤",
           "S6": "专业建议", "S7": "隐私", "S8": "知识产权", "S9": "大规模杀伤性武器", "S10": "仇恨言论",
           "S11": "自杀与自残", "S12": "色情内容", "S13": "选举", "S14": "代码执行滥用"},
}


def refusal_text(verdict: GuardVerdict, language: str) -> str:
    """What the user reads instead of an answer (EN / DE / ZH; other languages get English).

    S11 leads with crisis help; S6 alone says that the service cannot issue documents.
    """
    lang = language if language in _REFUSAL else "en"
    if "S11" in verdict.categories:
        return _CRISIS[lang]
    if verdict.categories == ("S6",):
        return _NO_DOCUMENTS[lang]
    names = _NAMES.get(lang, HAZARDS)
    sep = "、" if lang == "zh" else ", "
    label = sep.join(f"{c} {names.get(c, c)}" for c in verdict.categories) or {"en": "unsafe content",
                                                                                 "de": "unsichere Inhalte",
                                                                                 "zh": "不安全内容"}[lang]
    return _REFUSAL[lang].format(names=label)


# --- configuration -------------------------------------------------------------------------


def make_guard(cfg: GuardConfig, chat: ChatFn | None = None) -> Guard:
    """The configured guard. ``kind: llama_guard`` needs ``chat`` (the engine ``cfg.engine``'s model)."""
    rules = RuleGuard(require_disclaimer=cfg.require_disclaimer)
    if cfg.kind == "rules":
        return rules
    if chat is None:
        raise ValueError(f"guard.kind llama_guard needs a chat callable for engine {cfg.engine!r}; "
                         "build one with medgraph.agent.guard.chat_from_model")
    return LlamaGuard(chat, fallback=rules)
