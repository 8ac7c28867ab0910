"""The German pack's question templates for the synthetic QA factory."""

from __future__ import annotations

from medgraph.lang.sections.dialogue import cue
from medgraph.lang.sections.synthesis import QuestionTemplates

SYNTHESIS = QuestionTemplates(
    templates={
        "relation": ("Wie hängen {a} und {b} zusammen?", "Was ist über {a} im Zusammenhang mit {b} bekannt?",
                     "Was wurde zu {a} und {b} festgestellt?"),
        "finding": ("Was wurde über {a} festgestellt?", "Was berichten die Quellen über {a}?"),
        "recommendation": ("Was wird zu {a} empfohlen?", "Was sollte bei {a} getan werden?"),
        "adverse_effects": ("Welche Nebenwirkungen von {a} werden berichtet?", "Welche Nebenwirkungen hat {a}?"),
        "dosage": ("Welche Dosis von {a} wird verwendet?", "In welcher Dosis wird {a} gegeben?"),
        "false_premise": ("Warum verursacht {a} {b}?", "Wie führt {a} zu {b}?"),
    },
    recommends=cue(r"\bsollt\w*", r"\bsoll\b", r"\bempf(?:ohlen|iehlt)\w*", r"\bmüssen\b", r"\bmuss\b"),
    name_fallback=frozenset({"Drug"}),
)
