"""Words that are also MeSH terms but must not be matched as entities (folded keys), per language."""

from __future__ import annotations

# Common or generic words that are also MeSH terms (folded keys). They are never matched as
# words (only as case-exact acronyms, e.g. "ALL"): either they are ordinary English ("lead",
# "men", "cat") or so generic that they would become hub nodes of the graph ("drug", "patients").
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
STOP_DE = frozenset("art rat man die was hat war bad gut also fast not rest welt alter".split())
