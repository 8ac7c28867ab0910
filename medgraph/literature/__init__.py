"""Literature for evidence gaps: sources (PubMed E-utilities, a local directory), the gap triggers,
and on-the-fly ingestion into the live stores.

``make_sources(cfg)`` builds the sources of the ``gaps:`` config section, in order;
``fetch_first(sources, terms, ...)`` asks them in that order (the agent's fetch step).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from medgraph.literature.base import LiteratureRecord, LiteratureSource, SourceError
from medgraph.literature.gaps import Gap, find_gaps, search_terms

if TYPE_CHECKING:
    from medgraph.config import MedGraphConfig
    from medgraph.config.models import GapsConfig

__all__ = ["Gap", "LiteratureRecord", "LiteratureSource", "SourceError", "fetch_first", "find_gaps", "make_sources",
           "search_terms"]


def make_sources(cfg: MedGraphConfig | GapsConfig) -> list[LiteratureSource]:
    """The literature sources of ``gaps.sources`` (a whole config or its ``gaps`` section)."""
    from medgraph.config.models import GapsConfig

    gaps = cfg if isinstance(cfg, GapsConfig) else cfg.gaps
    sources: list[LiteratureSource] = []
    for spec in gaps.sources:
        if spec.kind == "pubmed":
            from medgraph.literature.pubmed import PubMedSource

            sources.append(PubMedSource(
                base_url=spec.base_url, api_key=os.environ.get(spec.api_key_env) or None, email=spec.email,
                tool=spec.tool, rate_per_s=spec.rate_per_s, retries=spec.retries, timeout_s=spec.timeout_s,
            ))
        else:
            from medgraph.literature.local import LocalDirectorySource

            sources.append(LocalDirectorySource(spec.path))
    return sources


async def fetch_first(sources: Sequence[LiteratureSource], terms: list[str], max_results: int,
                      time_budget_s: float) -> list[LiteratureRecord]:
    """The records of the first source (in config order) that has literature for ``terms``, each
    search within the time budget; a source that fails or runs late is skipped. All failed: a
    ``SourceError`` naming each."""
    errors = []
    for source in sources:
        try:
            records = await asyncio.wait_for(
                asyncio.to_thread(source.search, terms, max_results, time_budget_s), time_budget_s)
        except (SourceError, TimeoutError) as exc:  # the next source may have it
            errors.append(f"{source.name}: {str(exc) or 'timed out'}")
            continue
        if records:
            return list(records)
    if errors:
        raise SourceError("; ".join(errors))
    return []
