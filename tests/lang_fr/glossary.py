"""The French test pack's glossary section: no bilingual dictionary (entity names are translated,
the other words kept as written), French function and question words, plural endings."""

from __future__ import annotations

from medgraph.lang.sections.glossary import GlossaryRules

GLOSSARY = GlossaryRules(
    # folded articles, prepositions, pronouns and conjunctions (elided forms too: l', d', qu')
    function_words=frozenset(
        "le la les l un une des du de d et ou au aux a en dans par pour sur avec sans chez ce cette ces "
        "se sa son ses leur leurs qui que qu quoi dont il elle ils elles on y".split()),
    # words that only carry the question's form (lower case, accents kept)
    question_words=frozenset(
        "est sont peut peuvent doit faut quel quelle quels quelles comment pourquoi quand combien "
        "ne pas plus très t".split()),  # t: the euphonic t of aggrave-t-il
    case_endings=("s", "x"),  # plurals: maladies → maladie, genoux → genou
)
