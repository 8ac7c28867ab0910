"""The French test pack's lexicon section: entity stop words and function words, no morphology hooks."""

from __future__ import annotations

from medgraph.lang.sections.lexicon import LexiconRules

LEXICON = LexiconRules(
    # everyday French words that are also (English) MeSH terms: "pain" is bread, "rage" is rabies,
    # "nature" a kind ("de nature inflammatoire"), "art" as in "l'état de l'art"
    stop_words=frozenset({"pain", "rage", "nature", "art"}),
    function_words=frozenset("le la les un une des du de et ou au aux en par pour avec sans".split()),
    disease_endings=("ite", "ose", "pathie", "émie", "algie", "syndrome", "maladie"),
)
