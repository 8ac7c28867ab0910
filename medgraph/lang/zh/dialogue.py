"""The zh pack's dialogue sections: rewrite, plan and route cues."""

from __future__ import annotations

from medgraph.lang.sections.dialogue import PlanCues, RewriteCues, RouteCues

REWRITE = RewriteCues()
PLAN = PlanCues()
ROUTE = RouteCues()
