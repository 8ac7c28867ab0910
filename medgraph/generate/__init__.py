"""Answer generation behind one ``Generator`` interface (``base``); the offline tier is the
extractive composer (``extractive``). ``make_generator`` picks the configured tier."""

from __future__ import annotations

from medgraph.config.models import AnswerConfig
from medgraph.generate.base import Answer, Citation, Generator, disclaimer, refusal


def make_generator(cfg: AnswerConfig) -> Generator:
    if cfg.kind == "extractive":
        from medgraph.generate.extractive import ExtractiveComposer

        return ExtractiveComposer(cfg)
    raise ValueError(f"unknown answer.kind {cfg.kind!r}")


__all__ = ["Answer", "Citation", "Generator", "disclaimer", "make_generator", "refusal"]
