"""Literature records and the interface every literature source implements.

Input: search terms (entity names, usually the English MeSH names and synonyms of the entities a
question's evidence lacks). Output: ``LiteratureRecord`` documents (title, text, language, where
they came from) that ``medgraph.literature.ingest.LiveIngestor`` turns into chunks of the live
stores. A source that cannot answer (unreachable, rate limited beyond its retries, malformed
reply) raises ``SourceError``; callers degrade gracefully by answering from what they have.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from medgraph.lang import PIVOT


class SourceError(RuntimeError):
    """A literature source is unavailable or answered something that could not be read."""


@dataclass(frozen=True)
class LiteratureRecord:
    """One document found by a literature source. ``doc_id`` is its document ID in the stores."""

    doc_id: str
    title: str
    text: str
    language: str = PIVOT  # the code of a registered language pack
    source: str = ""  # the source's name ("pubmed", "local")
    url: str = ""
    pmid: str | None = None
    year: int | None = None


class LiteratureSource(Protocol):
    name: str

    def search(self, terms: Sequence[str], max_results: int = 5, timeout_s: float = 10.0) -> list[LiteratureRecord]:
        """Up to ``max_results`` records about ``terms`` (any of them), best first, within ``timeout_s``."""
        ...


def clean_terms(terms: Sequence[str], max_terms: int = 20) -> list[str]:
    """Non-empty, stripped, case-insensitively distinct terms (at most ``max_terms``).

    Raises ``ValueError`` when none is left: a search needs something to search for.
    """
    seen: dict[str, str] = {}
    for term in terms:
        if not isinstance(term, str):
            raise ValueError(f"search terms must be strings, got {type(term).__name__}")
        text = " ".join(term.split())
        if text and text.casefold() not in seen:
            seen[text.casefold()] = text
    if not seen:
        raise ValueError("no search terms: give at least one non-empty entity name")
    return list(seen.values())[:max_terms]
