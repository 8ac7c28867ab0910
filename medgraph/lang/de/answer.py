"""The de pack's answer section."""

from __future__ import annotations

from medgraph.lang.sections.answer import AnswerStrings

ANSWER = AnswerStrings()
