"""Benchmarks. Run ``python -m medgraph.eval <command> --help`` (commands in ``__main__``).

Input: benchmark files (e.g. PubTator). Output: JSON metrics on stdout.
"""
