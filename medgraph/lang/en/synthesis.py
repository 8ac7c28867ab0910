"""The English pack's question templates for the synthetic QA factory."""

from __future__ import annotations

from medgraph.lang.sections.dialogue import cue
from medgraph.lang.sections.synthesis import QuestionTemplates

SYNTHESIS = QuestionTemplates(
    templates={
        "relation": ("How are {a} and {b} related?", "What is known about {a} in connection with {b}?",
                     "What was found about {a} and {b}?"),
        "finding": ("What was found about {a}?", "What do the sources report on {a}?"),
        "recommendation": ("What is recommended regarding {a}?", "What should be done about {a}?"),
        "adverse_effects": ("What adverse effects of {a} are reported?", "What side effects does {a} have?"),
        "dosage": ("What dose of {a} is used?", "Which dosage of {a} is given?"),
        "false_premise": ("Why does {a} cause {b}?", "How does {a} lead to {b}?"),
    },
    recommends=cue(r"\bshould\b", r"\brecommend\w*", r"\bmust\b", r"\badvised?\b"),
)
