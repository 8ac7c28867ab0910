"""Named-entity recognition: text → ``Mention`` spans (offline tier: multilingual MeSH gazetteer).

Input: chunk text and its language. Output: ``Mention`` records with offsets into that text.
``GazetteerNER`` lives in ``medgraph.extract.ner``; folding helpers in ``medgraph.text.keys``.
For NER + linking in one call use ``medgraph.link.EntityExtractor``.
"""
