"""Compiling the DSPy programs with GEPA: metrics that return a score and a diagnosis.

- ``medgraph.optimise.gepa``: scoring a program on examples, GEPA's compile (student and reflection
  models apart), and the record saved beside a compiled program (config hash, data, scores).
- ``medgraph.optimise.router``: the router program (intent, tier, standalone rewrite of the
  question) on the labelled router questions; the metric names a misclassified intent or tier.
- ``medgraph.optimise.generator``: the generator program (``medgraph.generate.program``) on
  questions with gold passages among their retrieved evidence; the metric names a missing,
  wrong or unresolvable citation and an answer to a question the passages do not answer.

``python -m medgraph.eval optimise`` runs them (docs/optimise.md).
"""
