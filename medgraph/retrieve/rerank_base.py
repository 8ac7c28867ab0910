"""The passage-scoring interface shared by reranker backends.

Input: a question and the passages to judge (plain text, any language the backend reads).
Output: one calibrated relevance per passage, in [0, 1], in the order of the passages. A score
near 1 means "this passage answers or directly supports the question"; scores from one backend
are comparable across questions, so callers may threshold them (e.g. refuse to answer when no
passage reaches ``answer.min_relevance``).

Backends: the model tier's ``CrossEncoderReranker`` (``medgraph.retrieve.cross_encoder``).
``medgraph.retrieve.rerank.PassageReranker`` adapts any ``Reranker`` to the candidate-level
reranking the query path uses.

This module imports nothing heavy: it is safe to import without torch.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


class RerankerError(RuntimeError):
    """A reranker cannot be built (missing model, missing extra, bad device) or cannot score."""


@runtime_checkable
class Reranker(Protocol):
    """Scores (question, passage) pairs with a calibrated relevance in [0, 1]."""

    name: str

    def score(self, question: str, passages: list[str]) -> list[float]:
        """One relevance in [0, 1] per passage, in the order of ``passages``."""
        ...
