"""Text utilities below the vocabulary, NER and linking, which all use them (language-specific
rules live in the language packs, ``medgraph.lang``).

- ``keys``: folding and match keys (case, accents, punctuation, CJK), plural / singular of an
  English head word, and the scan text with offsets back into the original.
- ``abbreviations``: in-document abbreviation definitions (Schwartz–Hearst).
"""
