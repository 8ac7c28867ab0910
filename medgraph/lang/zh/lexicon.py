"""The zh pack's lexicon section."""

from __future__ import annotations

from medgraph.lang.sections.lexicon import LexiconRules

LEXICON = LexiconRules()
