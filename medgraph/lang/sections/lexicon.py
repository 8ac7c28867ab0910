"""Linking rules: the morphology and stop words the NER, linker and vocabulary use per language."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LexiconRules:
    pass
