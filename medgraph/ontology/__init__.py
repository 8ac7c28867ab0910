"""MeSH vocabulary: sources → ``Vocabulary`` (entities with EN/DE/ZH names, lookup indices).

Input: ``VocabularyConfig`` sources (NLM XML, TSVs, shipped ``pkg:`` files, training PubTator).
Output: ``Vocabulary`` (``build_vocabulary``, ``Vocabulary.save`` / ``Vocabulary.load``).
"""

from medgraph.ontology.build import build_summary, build_vocabulary, default_sources, load_or_build
from medgraph.ontology.categories import category_from_trees
from medgraph.ontology.vocabulary import Vocabulary

__all__ = [
    "Vocabulary",
    "build_summary",
    "build_vocabulary",
    "category_from_trees",
    "default_sources",
    "load_or_build",
]
