"""Language utilities below the vocabulary, NER and linking, which all use them.

- ``keys``: folding and match keys (case, accents, punctuation, CJK), plural / singular of an
  English head word, and the scan text with offsets back into the original.
- ``variants``: German morphology (Snowball stems, inflections, compounds) and spelling variants
  between German and English medical words.
- ``abbreviations``: in-document abbreviation definitions (Schwartz–Hearst) and the curated table
  of German clinical abbreviations.
- ``stopwords``: words that are MeSH terms but never entities.
"""
