"""Short-term memory: a follow-up question made standalone from the last turns of the session.

Input: the question, the session's recent ``Turn``s (oldest first; each with the MeSH entities
linked in it, as ``(MeSH ID, surface)`` in order of mention) and the question's language.
Output: a ``Rewrite`` (the standalone question, whether it changed, the method, and the MeSH IDs
brought in from history).

``RuleRewriter`` (offline) reads at most the last 5 turns and applies per-language tables:

- kind phrases: "this drug" / "dieses Medikament" / "这种药" -> the most recent drug; "this
  disease" / "diese Krankheit" / "该病" -> the most recent disease or symptom;
- possessives: "its side effects" -> "the side effects of metformin"; "seine Nebenwirkungen" ->
  "die Nebenwirkungen von Metformin"; "它的副作用" -> "二甲双胍的副作用";
- pronouns: "it" / "es" / "它", and German "davon", "damit", "dagegen" -> the most recent entity.
  Expletive uses stay ("Is it safe to take ibuprofen?", "Gibt es ...", "Ist es normal, dass ...");
- ellipsis: "What about in children?" / "Und bei Kindern?" / "那儿童呢？" -> the previous question
  with the new constraint; "What about ibuprofen?" -> the previous question about ibuprofen.

"Most recent" means the latest turn that mentions an entity of the matching kind; within that
turn the first such mention (a question's or answer's subject comes first). Question-framing
descriptors (Side Effects, Risk Factors, Therapeutics, ...) are never referents. The entity is
named as history wrote it in the question's language when it did (a German question gets the
German surface), else as last written. A question with no anaphora or ellipsis is returned as is.

``DSPyRewriter`` (model tier) runs a DSPy program over any DSPy LM and falls back to the rules
when the call fails or returns nothing. ``make_rewriter(cfg, lm)`` builds the configured tier.
"""

from __future__ import annotations

import gzip
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol

from medgraph.ontology.categories import category_from_trees
from medgraph.schemas import DISEASE, DRUG, SYMPTOM

if TYPE_CHECKING:
    from medgraph.config.models import RewriterConfig

log = logging.getLogger(__name__)

WINDOW = 5  # turns of history the rules read

# question-framing descriptors: what is asked, not what it is about (see medgraph.route.rules)
FRAMING_IDS = frozenset({"D064420", "D012307", "D013812", "D003933", "D006801"})


@dataclass(frozen=True)
class Turn:
    role: str  # "user" | "assistant"
    content: str
    entities: tuple[tuple[str, str], ...] = ()  # (MeSH ID, surface name as written in that turn), in order


@dataclass(frozen=True)
class Rewrite:
    question: str  # the standalone question
    changed: bool
    method: str  # "rules" | "dspy" | "none"
    resolved: tuple[str, ...] = ()  # MeSH IDs brought in from history


class Rewriter(Protocol):
    def rewrite(self, question: str, history: Sequence[Turn], language: str) -> Rewrite: ...


# --- the rule tables -----------------------------------------------------------------------

ANY = "any"  # a pronoun refers to an entity of any kind
KINDS: dict[str, frozenset[str]] = {DRUG: frozenset({DRUG}), DISEASE: frozenset({DISEASE, SYMPTOM})}


@dataclass(frozen=True)
class LanguageRules:
    """The anaphora and ellipsis patterns of one language (see the module docstring)."""

    kind_phrases: dict[str, str]  # entity kind -> pattern of a phrase that refers to one
    possessive: str  # group "det" (the possessive), group "noun" (what it owns)
    pronouns: dict[str, str]  # pattern -> replacement template ("{e}": the entity name)
    expletive: str  # a pronoun use that refers to nothing
    ellipsis_lead: str  # what opens an elliptical follow-up ("what about", "und", "那")
    ellipsis_tail: str  # what closes one ("呢")
    prepositions: str  # a fragment that starts with one is a constraint on the previous question
    # words that do not name an antecedent; two other words before a pronoun, or a title separator
    # ("Staging laparoscopy: is it useful?"), mean the question names its own antecedent
    function_words: frozenset[str] = frozenset()


RULES: dict[str, LanguageRules] = {
    "en": LanguageRules(
        kind_phrases={
            DRUG: r"\b(?:this|that|the same|said)\s+(?:drug|medication|medicine|medicament|pill|tablet|substance)\b",
            DISEASE: r"\b(?:this|that|the same|said)\s+(?:disease|condition|illness|disorder|infection|syndrome)\b",
        },
        possessive=r"\b(?P<det>its)\s+(?P<noun>[a-z][\w-]*(?:\s+(?!(?:in|for|with|during|and|or|when|if|on|at|"
                   r"of|to|compared|versus|vs|be|is|are)\b)[a-z][\w-]*){0,2})",
        pronouns={r"\bit\b": "{e}"},
        expletive=r"\bit\s+(?:\w+\s+){0,3}?(?:that|if|whether|like)\b|\bit\s+(?:\w+\s+){0,3}?to\s+\w+\s+"
                  r"(?!(?:in|for|with|during|on|at|while|when|if|after|before|together|daily|again|long)\b)\w+"
                  # a diagnostic question: "Is it Crohn's disease?", "Could it be a thyroid disorder?"
                  r"|\b(?:is|could|might|can)\s+it\s+(?:be\s+)?(?:an?\s+)?[\w'-]+(?:\s+[\w'-]+){0,3}?\s+"
                  r"(?:disease|syndrome|disorder|infection|cancer|tumou?r|fever|deficiency|allergy)\b",
        ellipsis_lead=r"^(?:and\s+)?(?:what|how)\s+about\b|^and\b|^but\b",
        ellipsis_tail=r"$^",  # English ellipsis has no closing particle
        prepositions=r"^(?:in|for|during|with|without|after|before|among|under|at|on)\b",
        function_words=frozenset(
            "what which who whom whose when where why how is are was were be been do does did can could will would "
            "should shall may might must has have had i you he she we they me my your our their the a an and or but "
            "so then also still just really too very long much many often soon far old there here this that these "
            "those of in on at for with to from about by as if than please tell me take taking taken use using used "
            "stop stopping start starting give giving get getting happen happens work works need needed combine mix "
            "eat drink keep safe ok okay".split()),
    ),
    "de": LanguageRules(
        kind_phrases={
            DRUG: r"\b(?:diese[mnrs]?|jene[mnrs]?|das gleiche|dasselbe)\s+(?:medikament|arzneimittel|mittel|präparat|"
                  r"wirkstoff|tablette|pille)\w*\b",
            DISEASE: r"\b(?:diese[mnrs]?|jene[mnrs]?)\s+(?:krankheit|erkrankung|infektion|störung|leiden|syndrom)\w*\b",
        },
        possessive=r"\b(?P<det>seine|ihre|seiner|ihrer|seinen|ihren|seinem|ihrem|sein)\s+(?P<noun>[a-zäöüß][\w-]*)",
        pronouns={r"\bes\b": "{e}", r"\bdavon\b": "von {e}", r"\bdamit\b": "mit {e}", r"\bdagegen\b": "gegen {e}",
                  r"\bdafür\b": "für {e}"},
        expletive=r"\bgibt es\b|\bes gibt\b|\bgeht es\b|\bes geht\b|\bes\b[^?]*\b(?:dass|ob|wenn)\b"
                  r"|\bes\b[^?]*,[^?]*(?:\bzu\b|\b\w+zu\w+en\b)"  # "..., X zu tun" / "..., einzubeziehen"
                  # "Kommt es zu ...", "Handelt es sich um ...", "Lohnt es sich": es names nothing
                  r"|\b(?:kommt|kam|käme|handelt|handelte|lohnt|lohnte|stimmt|liegt|hängt)\s+es\b"
                  r"|\bdafür\b[^?]*\bdass\b",  # "dafür verantwortlich, dass ...": a correlate of the dass clause
        ellipsis_lead=r"^(?:und|aber)\b(?:\s+(?:was ist|wie ist es|wie sieht es)(?:\s+denn)?(?:\s+mit)?)?"
                      r"|^(?:was ist|wie ist es|wie sieht es)(?:\s+denn)?\s+mit\b|^wie sieht es(?:\s+denn)?\b",
        ellipsis_tail=r"\s+aus$",
        prepositions=r"^(?:bei|in|im|während|für|mit|ohne|nach|vor|unter)\b",
        function_words=frozenset(
            "was wie wo wann warum weshalb welche welcher welches welchen welchem wer wen wem ist sind war waren sein "
            "wird werden hat haben hatte kann können konnte darf dürfen soll sollte sollen muss müssen möchte man ich "
            "du er sie wir ihr mir mich dir uns mein meine meinem meinen meiner der die das den dem des ein eine einen "
            "einem einer und oder aber auch noch denn doch schon bitte sehr lange viel viele oft wieviel bei mit von "
            "zu für in im auf an aus nach vor über unter ohne nicht kein keine nehmen einnehmen genommen geben gibt "
            "hilft helfen wirkt wirken brauche braucht machen macht absetzen täglich".split()),
    ),
    "zh": LanguageRules(
        kind_phrases={
            DRUG: r"(?:这种|这个|该|此|这款|那种)(?:药物|药品|药)",
            DISEASE: r"(?:这种|这个|该|此|那种)(?:疾病|病症|病)",
        },
        possessive=r"(?P<det>它的)(?P<noun>)",
        pronouns={r"它": "{e}"},
        expletive=r"$^",
        ellipsis_lead=r"^(?:那么|那|还有|如果是|换成)",
        ellipsis_tail=r"(?:呢|怎么样|如何)$",
        prepositions=r"^(?:对于|对|在|如果是)",
        function_words=frozenset("那 那么 请问 所以 而且 还有 我 我们 想 知道 能 可以 会 是 吗 呢 的 ， , 。 ？".split()),
    ),
}

# how a constraint fragment joins the previous question
_ELLIPSIS_PREPOSITION = {"en": "in", "de": "bei", "zh": ""}
_CJK = re.compile(r"[\u3400-\u9fff]")
_END = re.compile(r"[\s?？.。!！]+$")


@lru_cache(maxsize=1)
def _package_categories() -> dict[str, str]:
    """MeSH ID -> coarse category from the tree numbers shipped with the package."""
    from medgraph.ontology.sources import PKG_DATA

    trees: dict[str, list[str]] = {}
    with gzip.open(PKG_DATA / "mesh_tree_numbers.tsv.gz", "rt", encoding="utf-8") as f:
        next(f, None)
        for line in f:
            mesh_id, _, tree = line.rstrip("\n").partition("\t")
            trees.setdefault(mesh_id, []).append(tree)
    return {mesh_id: category_from_trees(t) for mesh_id, t in trees.items()}


def package_category(mesh_id: str) -> str:
    return _package_categories().get(mesh_id, "")


def _language_of(text: str) -> str:
    from medgraph.ingest.text import detect_language

    return detect_language(text)


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_TITLE_BREAK = re.compile(r"[:;：；]|\s[-–—]{1,2}\s|--|[.!?。！？]\s*\S")
_WORD = re.compile(r"[\w'’-]+")


def _names_own_antecedent(question: str, match: re.Match[str], lang: str, deictic: bool = False) -> bool:
    """True when the pronoun likely refers to something the question itself names.

    A title before it ("Staging laparoscopy: is it useful?"), two or more content words before it
    ("Does a colonoscopy after diverticulitis affect its management?"), an acronym ("IT") or a
    contraction ("it's") mean the question stands alone. A ``deictic`` phrase ("this drug", "该药")
    points back more strongly: only a title or an earlier clause before it counts.
    """
    text, before = match.group(0), question[:match.start()]
    if deictic:
        return bool(_TITLE_BREAK.search(before) or (lang == "zh" and re.search(r"[，,]", before)))
    if text.isupper() and len(text) > 1 and not question.isupper():
        return True
    if lang == "en" and re.match(r"['’]s\b", question[match.end():]):
        return True
    if _TITLE_BREAK.search(before):
        return True
    function_words = RULES[lang].function_words
    if lang == "zh":
        rest = before
        for word in sorted(function_words, key=len, reverse=True):
            rest = rest.replace(word, "")
        return len(rest.strip()) >= 2
    return sum(w.lower() not in function_words for w in _WORD.findall(before)) >= 2


@dataclass(frozen=True)
class _Mention:
    mesh_id: str
    surface: str
    turn: int  # index in the window, oldest first


class RuleRewriter:
    """The offline rewriter; see the module docstring.

    ``category_of``: MeSH ID -> category (default: the package's MeSH tree numbers).
    ``find_entities``: links a turn that carries no entities (e.g. history sent by an API caller).
    """

    def __init__(self, window: int = WINDOW, category_of: Callable[[str], str] | None = None,
                 find_entities: Callable[[str], Sequence[tuple[str, str]]] | None = None) -> None:
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        self.window = window
        self.category_of = category_of or package_category
        self.find_entities = find_entities

    # -- public ---------------------------------------------------------------------------

    def rewrite(self, question: str, history: Sequence[Turn], language: str) -> Rewrite:
        if not question.strip():
            raise ValueError("empty question")
        turns = list(history)[-self.window:]
        lang = language if language in RULES else ("zh" if _CJK.search(question) else "en")
        if not turns:
            return Rewrite(question, False, "none")
        mentions = self._mentions(turns)
        text = self._ellipsis(question, turns, lang) or self._anaphora(question, mentions, turns, lang)
        if text is None or text == question:
            return Rewrite(question, False, "none")
        resolved = tuple(dict.fromkeys(
            m.mesh_id for m in mentions
            if m.surface.lower() in text.lower() and m.surface.lower() not in question.lower()))
        return Rewrite(text, True, "rules", resolved)

    # -- history --------------------------------------------------------------------------

    def _entities(self, turn: Turn) -> tuple[tuple[str, str], ...]:
        if turn.entities or self.find_entities is None:
            return turn.entities
        return tuple(self.find_entities(turn.content))

    def _mentions(self, turns: list[Turn]) -> list[_Mention]:
        return [_Mention(mesh_id, surface, i) for i, turn in enumerate(turns)
                for mesh_id, surface in self._entities(turn) if mesh_id and surface and mesh_id not in FRAMING_IDS]

    def _referent(self, mentions: list[_Mention], kind: str) -> _Mention | None:
        """The first mention of the matching kind in the latest turn that has one."""
        wanted = KINDS.get(kind)
        for turn in sorted({m.turn for m in mentions}, reverse=True):
            for m in mentions:
                if m.turn == turn and (wanted is None or self.category_of(m.mesh_id) in wanted):
                    return m
        return None

    def _name(self, referent: _Mention, mentions: list[_Mention], turns: list[Turn], lang: str) -> str:
        """The referent's surface in the question's language when history wrote it so."""
        same = [m for m in mentions if m.mesh_id == referent.mesh_id]
        for m in reversed(same):
            in_cjk = bool(_CJK.search(m.surface))
            if lang == "zh" and in_cjk:
                return m.surface
            if lang != "zh" and not in_cjk and _language_of(turns[m.turn].content) == lang:
                return m.surface
        return same[-1].surface

    # -- anaphora -------------------------------------------------------------------------

    def _anaphora(self, question: str, mentions: list[_Mention], turns: list[Turn], lang: str) -> str | None:
        rules = RULES[lang]
        for kind, pattern in rules.kind_phrases.items():
            match = _rx(pattern).search(question)
            if match and _names_own_antecedent(question, match, lang, deictic=True):
                return None
            if match:
                ref = self._referent(mentions, kind)
                return None if ref is None else self._substitute(question, match, self._name(ref, mentions, turns, lang),
                                                                 "{e}")
        match = _rx(rules.possessive).search(question)
        if match and _names_own_antecedent(question, match, lang):
            return None
        if match and not (lang == "de" and match.group("det")[0].isupper() and match.start() > 0):
            ref = self._referent(mentions, ANY)
            if ref is None:
                return None
            return self._possessive(question, match, self._name(ref, mentions, turns, lang), lang)
        if _rx(rules.expletive).search(question):
            return None
        for pattern, template in rules.pronouns.items():
            match = _rx(pattern).search(question)
            if match and _names_own_antecedent(question, match, lang):
                return None
            if match:
                ref = self._referent(mentions, ANY)
                return None if ref is None else self._substitute(question, match, self._name(ref, mentions, turns, lang),
                                                                 template)
        return None

    @staticmethod
    def _substitute(question: str, match: re.Match[str], name: str, template: str) -> str | None:
        if name.lower() in question.lower():  # the question already names it
            return None
        return question[:match.start()] + template.format(e=name) + question[match.end():]

    @staticmethod
    def _possessive(question: str, match: re.Match[str], name: str, lang: str) -> str | None:
        if name.lower() in question.lower():
            return None
        noun = match.group("noun")
        if lang == "en":
            phrase = f"the {noun} of {name}"
        elif lang == "de":
            article = {"seine": "die", "ihre": "die", "seiner": "der", "ihrer": "der", "seinen": "den",
                       "ihren": "den", "seinem": "dem", "ihrem": "dem"}.get(match.group("det").lower(), "")
            phrase = f"{article} {noun} von {name}".strip()
        else:
            phrase = f"{name}的"
        return question[:match.start()] + phrase + question[match.end():]

    # -- ellipsis -------------------------------------------------------------------------

    def _ellipsis(self, question: str, turns: list[Turn], lang: str) -> str | None:
        rules = RULES[lang]
        body = _END.sub("", question.strip())
        lead = _rx(rules.ellipsis_lead).search(body)
        tail = _rx(rules.ellipsis_tail).search(body)
        if not lead and not tail:
            return None
        fragment = body[lead.end() if lead else 0: tail.start() if tail else len(body)].strip(" ,，")
        if not fragment or (lang != "zh" and len(fragment.split()) > 5) or (lang == "zh" and len(fragment) > 12):
            return None
        previous = self._previous_question(turns, lang)
        if previous is None:
            return None
        prev_text, prev_turn = previous
        if self._is_constraint(fragment, lang):
            return self._join(prev_text, fragment, lang)
        return self._swap_focus(prev_text, prev_turn, fragment)

    def _previous_question(self, turns: list[Turn], lang: str) -> tuple[str, Turn] | None:
        """The last user turn, itself made standalone against the turns before it."""
        for i in range(len(turns) - 1, -1, -1):
            if turns[i].role == "user":
                earlier = self.rewrite(turns[i].content, turns[:i], lang) if i else None
                text = earlier.question if earlier is not None else turns[i].content
                return text, turns[i]
        return None

    def _is_constraint(self, fragment: str, lang: str) -> bool:
        from medgraph.route.rules import CONSTRAINTS

        if _rx(RULES[lang].prepositions).search(fragment):
            return True
        return any(table[lang].search(fragment) for table in CONSTRAINTS.values())

    @staticmethod
    def _join(previous: str, fragment: str, lang: str) -> str:
        prev = _END.sub("", previous.strip())
        if lang == "zh":
            fragment = re.sub(r"^(?:对于|对)", "", fragment)
            return f"对于{fragment}，{prev}？"
        if not _rx(RULES[lang].prepositions).search(fragment):
            fragment = f"{_ELLIPSIS_PREPOSITION[lang]} {fragment}"
        return f"{prev} {fragment}?"

    def _swap_focus(self, previous: str, prev_turn: Turn, fragment: str) -> str | None:
        """The previous question with its focus entity replaced by the fragment ("What about X?")."""
        for mesh_id, surface in self._entities(prev_turn):
            if mesh_id in FRAMING_IDS:
                continue
            match = re.search(re.escape(surface), previous, re.IGNORECASE)
            if match:
                return previous[:match.start()] + fragment + previous[match.end():]
        return None


# --- the model tier: a DSPy program --------------------------------------------------------


def _program(reasoning: bool = False) -> Any:
    import dspy

    class StandaloneQuestion(dspy.Signature):  # type: ignore[misc]
        """Rewrite the follow-up question of a medical conversation as a standalone question in the
        same language. Replace pronouns and phrases such as "this drug" with the entity they refer to,
        and complete an elliptical follow-up ("And in children?") from the previous question. If the
        question is already standalone, return it unchanged."""

        history: str = dspy.InputField(desc="the last turns, oldest first, one per line: 'user: ...' / 'assistant: ...'")
        question: str = dspy.InputField(desc="the follow-up question")
        language: str = dspy.InputField(desc="the question's language: en, de or zh")
        standalone_question: str = dspy.OutputField(desc="the standalone question, in the question's language")

    return (dspy.ChainOfThought if reasoning else dspy.Predict)(StandaloneQuestion)


def format_history(turns: Sequence[Turn], chars: int = 400) -> str:
    """One line per turn, each cut to ``chars`` characters (answers can be long)."""
    return "\n".join(f"{t.role}: {' '.join(t.content.split())[:chars]}" for t in turns)


class DSPyRewriter:
    """The model tier: a DSPy program over ``lm`` (any DSPy LM, e.g. ``medgraph.llm.dspy_bridge.chat_lm``).

    Falls back to ``fallback`` (default: ``RuleRewriter``) when the call fails or returns no text.
    """

    def __init__(self, lm: Any, window: int = WINDOW, fallback: Rewriter | None = None,
                 reasoning: bool = False) -> None:
        self.lm, self.window = lm, window
        self.fallback: Rewriter = fallback if fallback is not None else RuleRewriter(window)
        self.program = _program(reasoning)

    def rewrite(self, question: str, history: Sequence[Turn], language: str) -> Rewrite:
        import dspy

        if not question.strip():
            raise ValueError("empty question")
        turns = list(history)[-self.window:]
        if not turns:
            return Rewrite(question, False, "none")
        try:
            with dspy.context(lm=self.lm):
                out = self.program(history=format_history(turns), question=question, language=language)
            text = " ".join(str(out.standalone_question).split())
        except Exception as exc:  # noqa: BLE001 - the rules stand in for a failed call
            log.warning("dspy rewriter failed (%s); using the rules", exc)
            return self.fallback.rewrite(question, history, language)
        if not text:
            log.warning("dspy rewriter returned no question; using the rules")
            return self.fallback.rewrite(question, history, language)
        if text == " ".join(question.split()):
            return Rewrite(question, False, "dspy")
        resolved = tuple(dict.fromkeys(
            mesh_id for turn in turns for mesh_id, surface in turn.entities
            if mesh_id not in FRAMING_IDS and surface.lower() in text.lower()
            and surface.lower() not in question.lower()))
        return Rewrite(text, True, "dspy", resolved)


def make_rewriter(cfg: RewriterConfig, lm: Any = None,
                  find_entities: Callable[[str], Sequence[tuple[str, str]]] | None = None) -> Rewriter:
    """The configured rewriter. ``kind: dspy`` needs ``lm``, a DSPy LM over ``cfg.engine``;
    ``find_entities`` links earlier turns that carry no entities (``RuleRewriter``)."""
    rules = RuleRewriter(cfg.window, find_entities=find_entities)
    if cfg.kind == "rules":
        return rules
    if lm is None:
        raise ValueError(f"memory.rewriter.kind dspy needs a DSPy LM for engine {cfg.engine!r} "
                         "(medgraph.llm.dspy_bridge.chat_lm over the engine's chat model)")
    return DSPyRewriter(lm, cfg.window, fallback=rules)
