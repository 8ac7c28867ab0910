"""Cues of the conversation stages: follow-up rewriting, multi-hop planning, routing."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RewriteCues:
    pass


@dataclass(frozen=True)
class PlanCues:
    pass


@dataclass(frozen=True)
class RouteCues:
    pass
