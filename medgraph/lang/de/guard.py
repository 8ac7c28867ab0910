"""The de pack's guard section."""

from __future__ import annotations

from medgraph.lang.sections.guard import GuardCues

GUARD = GuardCues()
