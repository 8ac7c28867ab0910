"""Short-term memory: a follow-up question made standalone from the last turns of the session.

Input: the question, the session's recent ``Turn``s (oldest first; each with the MeSH entities
linked in it, as ``(MeSH ID, surface)`` in order of mention) and the question's language.
Output: a ``Rewrite`` (the standalone question, whether it changed, the method, and the MeSH IDs
brought in from history).

``RuleRewriter`` (offline) reads at most the last 5 turns and applies the cues of the question's
language pack (its ``rewrite`` section, ``medgraph.lang.sections.dialogue.RewriteCues``):

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
A question in a language no pack knows is read with the pack whose script it is written in (its
``text.script``), else with the pivot pack.

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

from medgraph import lang
from medgraph.lang import LanguagePack
from medgraph.lang.sections.dialogue import listing
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


# --- the rule tables: each language pack's ``rewrite`` section (medgraph.lang.sections.dialogue) ---

ANY = "any"  # a pronoun refers to an entity of any kind
KINDS: dict[str, frozenset[str]] = {DRUG: frozenset({DRUG}), DISEASE: frozenset({DISEASE, SYMPTOM})}

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


@lru_cache(maxsize=16)
def _script_class(script: str) -> re.Pattern[str]:
    return re.compile(f"[{script}]")


def _script(pack: LanguagePack) -> re.Pattern[str] | None:
    """One character of the pack's own script (``text.script``), when its script identifies it."""
    return _script_class(pack.text.script) if pack.text.script else None


def _script_pack(text: str) -> LanguagePack | None:
    """The first registered pack whose own script occurs in ``text``."""
    for pack in lang.packs():
        script = _script(pack)
        if script is not None and script.search(text):
            return pack
    return None


def _pack_for(language: str, question: str) -> LanguagePack:
    """The pack of ``language``; for an unknown one, the pack whose script the question is written
    in, else the pivot pack."""
    if lang.is_known(language):
        return lang.get(language)
    return _script_pack(question) or lang.pivot()


_TITLE_BREAK = re.compile(r"[:;：；]|\s[-–—]{1,2}\s|--|[.!?。！？]\s*\S")
_WORD = re.compile(r"[\w'’-]+")


def _names_own_antecedent(question: str, match: re.Match[str], pack: LanguagePack, deictic: bool = False) -> bool:
    """True when the pronoun likely refers to something the question itself names.

    A title before it ("Staging laparoscopy: is it useful?"), two or more content words before it
    ("Does a colonoscopy after diverticulitis affect its management?"; in a language written
    without spaces, two characters that are no function words), an acronym ("IT") or a
    contraction ("it's") mean the question stands alone. A ``deictic`` phrase ("this drug", "该药")
    points back more strongly: only a title or an earlier clause (the pack's ``clause_break``)
    before it counts.
    """
    cues = pack.rewrite
    text, before = match.group(0), question[:match.start()]
    if deictic:
        return bool(_TITLE_BREAK.search(before) or (cues.clause_break is not None and cues.clause_break.search(before)))
    if text.isupper() and len(text) > 1 and not question.isupper():
        return True
    if cues.contraction is not None and cues.contraction.match(question[match.end():]):
        return True
    if _TITLE_BREAK.search(before):
        return True
    function_words = cues.function_words
    if not pack.spaced:
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
        pack = _pack_for(language, question)
        if not turns:
            return Rewrite(question, False, "none")
        mentions = self._mentions(turns)
        text = self._ellipsis(question, turns, pack) or self._anaphora(question, mentions, turns, pack)
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

    def _name(self, referent: _Mention, mentions: list[_Mention], turns: list[Turn], pack: LanguagePack) -> str:
        """The referent's surface in the question's language when history wrote it so: in the pack's
        own script, or (a pack without one) in no pack's script, in a turn of the question's language."""
        same = [m for m in mentions if m.mesh_id == referent.mesh_id]
        own = _script(pack)
        for m in reversed(same):
            if own is not None and own.search(m.surface):
                return m.surface
            if own is None and _script_pack(m.surface) is None and _language_of(turns[m.turn].content) == pack.code:
                return m.surface
        return same[-1].surface

    # -- anaphora -------------------------------------------------------------------------

    def _anaphora(self, question: str, mentions: list[_Mention], turns: list[Turn], pack: LanguagePack) -> str | None:
        cues = pack.rewrite
        for kind, pattern in cues.kind_phrases.items():
            match = pattern.search(question)
            if match and _names_own_antecedent(question, match, pack, deictic=True):
                return None
            if match:
                ref = self._referent(mentions, kind)
                return None if ref is None else self._substitute(question, match, self._name(ref, mentions, turns, pack),
                                                                 "{e}")
        match = cues.possessive.search(question) if cues.possessive is not None else None
        if match and _names_own_antecedent(question, match, pack):
            return None
        if match and not (cues.capitalised_possessive_is_address and match.group("det")[0].isupper()
                          and match.start() > 0):
            ref = self._referent(mentions, ANY)
            if ref is None:
                return None
            return self._possessive(question, match, self._name(ref, mentions, turns, pack), pack)
        if cues.expletive is not None and cues.expletive.search(question):
            return None
        for pattern, template in cues.pronouns:
            match = pattern.search(question)
            if match and _names_own_antecedent(question, match, pack):
                return None
            if match:
                ref = self._referent(mentions, ANY)
                return None if ref is None else self._substitute(question, match, self._name(ref, mentions, turns, pack),
                                                                 template)
        return None

    @staticmethod
    def _substitute(question: str, match: re.Match[str], name: str, template: str) -> str | None:
        if name.lower() in question.lower():  # the question already names it
            return None
        return question[:match.start()] + template.format(e=name) + question[match.end():]

    @staticmethod
    def _possessive(question: str, match: re.Match[str], name: str, pack: LanguagePack) -> str | None:
        if name.lower() in question.lower():
            return None
        cues = pack.rewrite
        article = cues.possessive_articles.get(match.group("det").lower(), "")
        phrase = cues.possessive_phrase.format(article=article, noun=match.group("noun"), name=name)
        return question[:match.start()] + phrase + question[match.end():]

    # -- ellipsis -------------------------------------------------------------------------

    def _ellipsis(self, question: str, turns: list[Turn], pack: LanguagePack) -> str | None:
        cues = pack.rewrite
        body = _END.sub("", question.strip())
        lead = cues.ellipsis_lead.search(body) if cues.ellipsis_lead is not None else None
        tail = cues.ellipsis_tail.search(body) if cues.ellipsis_tail is not None else None
        if not lead and not tail:
            return None
        fragment = body[lead.end() if lead else 0: tail.start() if tail else len(body)].strip(" ,，")
        # at most five words (or twelve characters in a language written without spaces)
        if not fragment or (len(fragment.split()) > 5 if pack.spaced else len(fragment) > 12):
            return None
        previous = self._previous_question(turns, pack)
        if previous is None:
            return None
        prev_text, prev_turn = previous
        if self._is_constraint(fragment, pack):
            return self._join(prev_text, fragment, pack)
        return self._swap_focus(prev_text, prev_turn, fragment)

    def _previous_question(self, turns: list[Turn], pack: LanguagePack) -> tuple[str, Turn] | None:
        """The last user turn, itself made standalone against the turns before it."""
        for i in range(len(turns) - 1, -1, -1):
            if turns[i].role == "user":
                earlier = self.rewrite(turns[i].content, turns[:i], pack.code) if i else None
                text = earlier.question if earlier is not None else turns[i].content
                return text, turns[i]
        return None

    @staticmethod
    def _is_constraint(fragment: str, pack: LanguagePack) -> bool:
        """A fragment that opens with a preposition or names a patient constraint (the route cues)."""
        prepositions = pack.rewrite.prepositions
        if prepositions is not None and prepositions.search(fragment):
            return True
        return any(pattern.search(fragment) for pattern in pack.route.constraints.values())

    @staticmethod
    def _join(previous: str, fragment: str, pack: LanguagePack) -> str:
        cues = pack.rewrite
        prev = _END.sub("", previous.strip())
        if cues.constraint_strip is not None:
            fragment = cues.constraint_strip.sub("", fragment)
        if cues.constraint_preposition and not (cues.prepositions is not None and cues.prepositions.search(fragment)):
            fragment = f"{cues.constraint_preposition}{pack.text.word_separator}{fragment}"
        return cues.constraint_join.format(question=prev, fragment=fragment)

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
        language: str = dspy.InputField(desc=f"the question's language: {listing(lang.codes())}")
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
