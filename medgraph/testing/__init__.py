"""Test doubles that the tests and the benchmarks share, importable without the tests tree.

- ``eutils``: a local NCBI E-utilities server (esearch, efetch) over real PubMed records, with
  injectable failures and delays, for gap completion without the network.
- ``openai_server``: a local OpenAI-compatible chat server (the wire format of a provider), for
  the ``openai`` tier.
- ``net.free_port``: a free TCP port on 127.0.0.1.

Only for what cannot run here (remote APIs); nothing in the product imports this package.
"""
