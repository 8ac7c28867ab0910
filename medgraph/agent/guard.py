"""Guardrails: is a question safe to answer, and is an answer safe to show?

Input: the user's question (``check_input``), or the question and the answer text as shown to
the user, disclaimer included (``check_output``). Output: a ``GuardVerdict`` (allowed, the
hazard categories S1-S14 of the Llama Guard 3 taxonomy that were hit, a reason, the method).

Two tiers behind one ``Guard`` interface:

- ``RuleGuard`` (offline): the categories of ``medgraph.agent.guard_rules`` with the cue patterns
  of every registered language pack (``GuardCues``). It blocks requests to cause harm, never
  medical topics (see that module for what each category covers, and why S6 is narrow). Answers
  are checked for harmful instructions and personal data (e-mail, phone, and the identifier
  formats the packs add: a German health insurance number, a Chinese ID card number); a medical
  answer without the disclaimer (any pack's) is reported (``disclaimer_missing``), not blocked:
  adding it is the composer's job.
- ``LlamaGuard`` (model): Llama Guard 3 through any chat endpoint (``chat(messages) -> text``).
  It builds the Llama Guard 3 prompt (categories, conversation, the ``safe`` / ``unsafe\\nS1,S2``
  reply format) and parses the reply; a failing call or an unparsable reply falls back to the
  rules, marked ``method="llama_guard-fallback"``. Personal data and the disclaimer are always
  checked by the rules as well: a model verdict does not see formats such as insurance numbers.

``refusal_text(verdict, language)`` is what the user reads instead of an answer, in the pack of
``language`` (the pivot pack's for an unknown one); for S11 it offers crisis help first.
``make_guard(cfg, chat)`` builds the configured tier.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

from medgraph import lang
from medgraph.agent.guard_rules import PERSONAL_DATA, PUBLIC_NUMBERS, RULES
from medgraph.generate.base import refusal as no_evidence_refusal
from medgraph.lang import LanguagePack

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
    def check_input(self, text: str, language: str = lang.PIVOT) -> GuardVerdict: ...

    def check_output(self, question: str, answer: str, language: str = lang.PIVOT) -> GuardVerdict: ...


# --- the offline tier ----------------------------------------------------------------------


def _packs() -> tuple[LanguagePack, ...]:
    """The registered packs: the key of every table below that is built from them."""
    return lang.packs()


@lru_cache(maxsize=8)
def _folds(packs: tuple[LanguagePack, ...]) -> tuple[Callable[[str], str], ...]:
    return tuple(pack.guard.fold for pack in packs if pack.guard.fold is not None)


def fold(text: str) -> str:
    """Text as the rules see it: NFKC, each pack's fold (simplified Chinese), lower case, single spaces."""
    text = unicodedata.normalize("NFKC", text)
    for fold_pack in _folds(_packs()):
        text = fold_pack(text)
    return re.sub(r"\s+", " ", text.lower()).strip()


@dataclass(frozen=True)
class _Compiled:
    code: str
    inputs: tuple[re.Pattern[str], ...]
    outputs: tuple[re.Pattern[str], ...]


@lru_cache(maxsize=8)
def _compiled_rules(packs: tuple[LanguagePack, ...]) -> tuple[_Compiled, ...]:
    """Per category: its neutral patterns, then each pack's, in registration order."""
    return tuple(
        _Compiled(rule.code, tuple(re.compile(p) for p in rule.inputs(packs)),
                  tuple(re.compile(p) for p in rule.outputs(packs)))
        for rule in RULES
    )


@lru_cache(maxsize=8)
def _personal_data(packs: tuple[LanguagePack, ...]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """(kind, pattern): e-mail and phone, then each pack's identifier formats."""
    kinds = [*PERSONAL_DATA.items(), *(item for pack in packs for item in pack.guard.personal_data.items())]
    return tuple((kind, re.compile(p)) for kind, p in kinds)


@lru_cache(maxsize=8)
def _disclaimer(packs: tuple[LanguagePack, ...]) -> re.Pattern[str]:
    markers = [p for pack in packs for p in pack.guard.disclaimer_markers]
    return re.compile("|".join(f"(?:{p})" for p in markers) if markers else "(?!)")


def _hits(patterns_of: Callable[[_Compiled], Iterable[re.Pattern[str]]], text: str) -> dict[str, str]:
    """Category -> the first matching text span, over all categories."""
    hits: dict[str, str] = {}
    for rule in _compiled_rules(_packs()):
        for pattern in patterns_of(rule):
            match = pattern.search(text)
            if match:
                hits[rule.code] = match.group(0)
                break
    return hits


@lru_cache(maxsize=8)
def _public_numbers(packs: tuple[LanguagePack, ...]) -> tuple[frozenset[str], re.Pattern[str]]:
    """The public numbers (emergency numbers and each pack's helplines), and a pattern finding them
    however they are grouped ("0800 111 0 111", "400-161-9995").

    Short numbers (112, 988) are left alone by the pattern: no phone pattern matches them, and
    removing them could cut a longer number apart.
    """
    public = PUBLIC_NUMBERS.union(*(pack.guard.helplines for pack in packs))
    numbers = sorted((n for n in public if len(n) >= 6), key=len, reverse=True)
    return public, re.compile(r"(?<!\d)(?:" + "|".join(r"[\s./-]?".join(n) for n in numbers) + r")(?!\d)")


def personal_data(answer: str) -> list[tuple[str, str]]:
    """(kind, text) of each personal-data span in ``answer``, public helplines excepted."""
    packs = _packs()
    public, grouped = _public_numbers(packs)
    text = grouped.sub(" ", unicodedata.normalize("NFKC", answer))
    found = []
    for kind, pattern in _personal_data(packs):
        for match in pattern.finditer(text):
            if kind == "phone" and re.sub(r"\D", "", match.group(0)) in public:
                continue
            found.append((kind, match.group(0)))
    return found


def has_disclaimer(answer: str) -> bool:
    return _disclaimer(_packs()).search(fold(answer)) is not None


@lru_cache(maxsize=8)
def _refusal_openings(packs: tuple[LanguagePack, ...]) -> tuple[str, ...]:
    """The folded start of every refusal of every pack: the composer's and the guard's."""
    texts = [t for pack in packs
             for t in (no_evidence_refusal(pack.code), pack.guard.refusal, pack.guard.crisis, pack.guard.no_documents)]
    return tuple(fold(t.split("{")[0])[:40] for t in texts)


def _is_refusal(answer: str) -> bool:
    """Refusals (of the composer or of the guard) carry no medical content: no disclaimer needed."""
    folded = fold(answer)
    return any(opening in folded for opening in _refusal_openings(_packs()))


def _describe(hits: dict[str, str]) -> str:
    return "; ".join(f"{code} {HAZARDS[code]}: {span!r}" for code, span in hits.items())


class RuleGuard:
    """The offline guard: the rule table of ``medgraph.agent.guard_rules``, every registered pack's cues."""

    def __init__(self, require_disclaimer: bool = True) -> None:
        self.require_disclaimer = require_disclaimer

    def check_input(self, text: str, language: str = lang.PIVOT) -> GuardVerdict:
        hits = _hits(lambda rule: rule.inputs, fold(text))
        if not hits:
            return GuardVerdict(True)
        return GuardVerdict(False, tuple(hits), _describe(hits))

    def check_output(self, question: str, answer: str, language: str = lang.PIVOT) -> GuardVerdict:
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

    def check_input(self, text: str, language: str = lang.PIVOT) -> GuardVerdict:
        result = self._classify(llama_guard_prompt(text))
        if isinstance(result, str):
            return _fallen_back(self.fallback.check_input(text, language), result)
        safe, codes = result
        return GuardVerdict(safe, codes, "" if safe else f"llama guard: {','.join(codes)}", "llama_guard")

    def check_output(self, question: str, answer: str, language: str = lang.PIVOT) -> GuardVerdict:
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


def refusal_text(verdict: GuardVerdict, language: str) -> str:
    """What the user reads instead of an answer, in the pack of ``language`` (unknown: the pivot's).

    S11 leads with crisis help; S6 alone says that the service cannot issue documents.
    """
    pack = lang.get_or_pivot(language)
    cues = pack.guard
    if "S11" in verdict.categories:
        return cues.crisis
    if verdict.categories == ("S6",):
        return cues.no_documents
    label = pack.answer.list_separator.join(f"{c} {cues.category_names.get(c, HAZARDS.get(c, c))}"
                                            for c in verdict.categories) or cues.unsafe_content
    return cues.refusal.format(names=label)


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
