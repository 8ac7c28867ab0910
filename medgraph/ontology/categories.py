"""Coarse entity categories derived from MeSH tree numbers.

Input: the tree numbers of one descriptor (e.g. ``["C14.280.647.500", "C14.907.585.500"]``).
Output: one category string.

Rules (first that applies wins):

- ``Symptom``: any tree in C23.888 (Signs and Symptoms), even when the descriptor also sits
  elsewhere in C (e.g. Pain is also under C10.597 Neurologic Manifestations).
- ``Disease``: any other tree in C (Diseases) or in F03 (Mental Disorders).
- ``Drug``: any tree in D (Chemicals and Drugs; proteins and enzymes included).
- ``Gene``: any tree in G05.360.340 (Genes). MeSH files gene *products* under D12.776 (Proteins),
  which stay ``Drug`` (chemical): the benchmarks and the graph treat them as chemicals.
- ``Procedure``: E (Analytical, Diagnostic and Therapeutic Techniques and Equipment).
- ``Anatomy``: A. ``Physiology``: G (Phenomena and Processes). ``LivingBeing``: B (Organisms).
- ``Other``: anything else (F01/F02/F04, H, I, J, K, L, M, N, V, Z) or no tree number.
"""

from __future__ import annotations

from collections.abc import Iterable

from medgraph.schemas import (  # the names, shared with the config and every stage
    ANATOMY,
    DISEASE,
    DRUG,
    GENE,
    LIVING_BEING,
    OTHER,
    PHYSIOLOGY,
    PROCEDURE,
    SYMPTOM,
)

_BY_LETTER = (
    ("D", DRUG),
    ("G05.360.340", GENE),
    ("E", PROCEDURE),
    ("A", ANATOMY),
    ("G", PHYSIOLOGY),
    ("B", LIVING_BEING),
)


def category_from_trees(tree_numbers: Iterable[str]) -> str:
    """Category of a descriptor from its tree numbers (see module docstring)."""
    trees = [t.strip() for t in tree_numbers if t.strip()]
    if any(t.startswith("C23.888") for t in trees):
        return SYMPTOM
    if any(t.startswith(("C", "F03")) for t in trees):
        return DISEASE
    if any(t.startswith("G05.360.340") for t in trees):
        return GENE
    for prefix, category in _BY_LETTER:
        if any(t.startswith(prefix) for t in trees):
            return category
    return OTHER
