"""Glossary rules: the bilingual dictionary and word splitting that translate a question."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GlossaryRules:
    pass
