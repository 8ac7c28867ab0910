"""The English pack's lexicon section: the entity stop words, conjunctions and disease endings."""

from __future__ import annotations

import re

from medgraph.lang.sections.lexicon import LexiconRules

# Common or generic words that are also MeSH terms (folded keys). They are never matched as
# words (only as case-exact acronyms, e.g. "ALL"): either they are ordinary English ("lead",
# "men", "cat") or so generic that they would become hub nodes of the graph ("drug", "patients").
# English words occur in text of every language, so these hold in every language's text.
STOP_EN = frozenset(
    """
lead men man women woman cat cats dog dogs can may will set aim age aged time role report reports
case cases control controls method methods study studies group groups result results use rate
rates level levels effect effects association model models data risk analysis trial trials area
areas form forms face hand hands arm back head light sound heat fall rest work play energy power
need needs goal goals growth health life death weight body weight recurrence mice mouse rat rats
human humans male female patient patients child children adult adults persons population
drug drugs placebo placebos protein proteins disease diseases syndrome syndromes disorder disorders
acid acids solution solutions salt salts water tablet tablets suspension suspensions enzyme enzymes
ligand ligands antibody antibodies antigen antigens hormone hormones lipid lipids agent agents
compound compounds substance substances chemical chemicals medication medications medicine
medicines therapy therapeutics treatment prevention diagnosis signs symptoms pressure temperature
animals animal cell cells tissue tissues blood serum plasma
""".split()
)

LEXICON = LexiconRules(
    stop_words=STOP_EN,
    conjunctions=re.compile(r"^(.+?)\s*(?:,|\band/or\b|\band\b|\bor\b|/)\s*(.+)$", re.IGNORECASE),
    disease_endings=("itis", "osis", "oma", "pathy", "emia", "algia", "syndrome", "disease", "disorder",
                     "infection", "fever", "cancer"),
)
