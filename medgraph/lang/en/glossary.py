"""The en pack's glossary section."""

from __future__ import annotations

from medgraph.lang.sections.glossary import GlossaryRules

GLOSSARY = GlossaryRules()
