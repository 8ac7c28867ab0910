"""Strings of the answer stage: disclaimers, refusals, prompt labels, aspect replies, memory."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AnswerStrings:
    pass
