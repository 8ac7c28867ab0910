"""The German pack's lexicon section: stop words, morphology hooks and composition rules."""

from __future__ import annotations

from medgraph.lang.de.abbreviations import TABLE
from medgraph.lang.de.morphology import (
    DE_FUNCTION_WORDS,
    DE_MORPHEMES,
    FUGEN,
    compound_key,
    de_key,
    german_forms,
    german_inflections,
    german_spellings,
    loan_spellings,
    noun_bases,
)
from medgraph.lang.sections.lexicon import ComposeRules, LexiconRules

# Everyday German words that are also MeSH terms (folded keys): never matched as entities in
# German text, and never the source or the result of a generated German form
STOP_DE = frozenset("art rat man die was hat war bad gut also fast not rest welt alter".split())

# German forms never generated: generic words that are also MeSH names (the gazetteer's English
# stop list covers the English spellings they come from), and false friends, whose German
# spelling means something else in a clinical letter (Ambulanz: outpatient clinic, not ambulance;
# Kultur: a microbial culture, not MeSH Culture; Plastik: a surgical repair; Projektion: an imaging
# projection, not the defence mechanism)
GERMAN_FORM_STOP = frozenset(
    "patienten patient therapie therapien diagnose diagnosen analyse analysen methode methoden studie "
    "studien kontrolle kontrollen gruppe gruppen rate raten risiko form formen art arten rat "
    "ambulanz ambulanzen kultur kulturen plastik plastiken projektion projektionen".split()
)

LEXICON = LexiconRules(
    stop_words=STOP_DE,
    function_words=DE_FUNCTION_WORDS,
    capitalised_nouns=True,
    forms=german_forms,
    fuzzy_forms=4,  # loan-word spellings of a German surface also searched by TF-IDF
    inflections=german_inflections,
    spellings=german_spellings,
    form_stop_words=GERMAN_FORM_STOP,
    vocabulary_name="german",
    compounds=compound_key,
    abbreviations=TABLE,
    base_forms=noun_bases,
    general_words=True,  # Ding's everyday nouns (Ratte → Rats)
    source_kinds=frozenset({"ding", "mesh_translation_xml"}),  # Ding's dictionary; ZB MED's German MeSH
    disease_endings=("itis", "ose", "om", "ie", "pathie", "ämie", "algie", "krankheit", "erkrankung", "syndrom",
                     "leiden", "störung", "insuffizienz", "infektion", "fieber", "krebs", "karzinom"),
    compose=ComposeRules(
        morphemes=DE_MORPHEMES,
        part_key=de_key,
        linking_elements=FUGEN,
        loan_spellings=loan_spellings,
        min_candidate=8,  # shorter German words are rarely compounds
        min_part=3,
    ),
)
