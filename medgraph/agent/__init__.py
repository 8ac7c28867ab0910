"""The question-answering agent: guardrails, short-term memory and the LangGraph state machine.

- ``medgraph.agent.guard``: hazard checks (S1-S14) of questions and answers, rules or Llama Guard.
- ``medgraph.agent.rewrite``: follow-up questions made standalone from the last turns.
- ``medgraph.agent.graph``: the graph that runs a question from input guard to persisted memory.

Import the submodules directly; this package imports nothing so that importing one stays cheap.
"""
