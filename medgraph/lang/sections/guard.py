"""Guard cues and messages: the rule guard's patterns and its refusals, per language."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GuardCues:
    pass
