"""Guard cues and messages: the rule guard's patterns and its refusals, per language.

The rule guard (``medgraph.agent.guard.RuleGuard``) applies the patterns of every registered pack to
every question and answer (the language of a question is a guess; a German question quoting an
English phrase is still caught), after folding the text: NFKC, each pack's ``fold``, lower case,
single spaces. Patterns are Python regular expressions; those of a spaced language use word
boundaries, Chinese ones match substrings. What a pattern names is a *request to cause harm* (an
intent and a harmful object together), never a medical topic: see ``medgraph.agent.guard_rules``
for what each hazard category (S1-S14) blocks and what stays answerable.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class GuardCues:
    """``refusal``: the reply to a blocked request, with ``{names}`` for the categories hit (joined by
    the answer section's ``list_separator``); ``crisis``: the reply to a self-harm request or a stated
    intent to die (crisis help first); ``no_documents``: the reply to a request for a prescription, sick
    note or certificate (S6 alone); ``unsafe_content``: ``{names}`` when no category is named.
    """

    refusal: str
    crisis: str
    no_documents: str
    unsafe_content: str
    # hazard code ("S9") -> its name in this language in a refusal; a missing one: the taxonomy's English name
    category_names: Mapping[str, str] = field(default_factory=dict)
    # hazard code -> patterns of a request in this language that falls under it (matched on folded questions)
    inputs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # hazard code -> patterns of harmful instructions in an answer in this language (folded answers)
    outputs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # patterns that find this language's medical disclaimer in a folded answer (any pack's form counts)
    disclaimer_markers: tuple[str, ...] = ()
    # kind -> pattern of a personal identifier format an answer must not show (an insurance number)
    personal_data: Mapping[str, str] = field(default_factory=dict)
    # public numbers (digits only) an answer may show: the helplines and emergency numbers of ``crisis``
    helplines: frozenset[str] = frozenset()
    # a rewrite of any text before the patterns read it (traditional -> simplified Chinese); None: none
    fold: Callable[[str], str] | None = None
