"""Synthetic multilingual QA built from the indexed graph (``factory``: the offline tier).

The corpus job ``python -m jobs.synthesise`` runs it over a built store on Ray Data.
"""
