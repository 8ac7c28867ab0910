"""The English pack's glossary section: English is the pivot, glossed by no dictionary."""

from __future__ import annotations

from medgraph.lang.sections.glossary import GlossaryRules

# English words that only carry the question's form (no German or Chinese word stands for them)
EN_QUESTION_WORDS = frozenset(
    "a an the of in on at to for with by from and or is are was were be been do does did can could will would "
    "should shall may might must has have had what which who whom whose when where why how it its this that "
    "these those there any some not no".split()
)

GLOSSARY = GlossaryRules(question_words=EN_QUESTION_WORDS)
