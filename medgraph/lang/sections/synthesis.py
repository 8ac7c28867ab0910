"""Question templates of the synthetic QA factory (``medgraph.synthetic``), one set per language.

``templates``: kind of question → its wordings, ``{a}`` and ``{b}`` the entities' names in this
language (the factory picks one wording per item, by the item's ID). The kinds:

- ``relation``: two entities a finding sentence names together; ``finding``: one entity;
- ``recommendation``: a sentence that recommends (``recommends``, the chunk language's cue);
- ``adverse_effects`` / ``dosage``: a drug and a sentence stating that aspect of it — worded with
  the cues of ``medgraph.generate.aspects`` so the answer stage sees the aspect asked;
- ``false_premise``: two entities no passage names together ("Why does {a} cause {b}?"): refused.

``name_fallback``: entity categories whose English name stands in when the entity has no name in
this language (German writes most drug names as the English INN: Metformin). A pack with no
templates gets no synthetic questions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

KINDS = ("relation", "finding", "recommendation", "adverse_effects", "dosage", "false_premise")


@dataclass(frozen=True)
class QuestionTemplates:
    templates: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    recommends: re.Pattern[str] | None = None  # a sentence in this language that recommends
    name_fallback: frozenset[str] = frozenset()
