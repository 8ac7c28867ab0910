#!/usr/bin/env bash
# GPU runs of MedGraph's model tiers: prints one JSON object (docs/benchmarks.md, "GPU runs").
#   MEDGRAPH_MODELS=/path/to/models benchmarks/gpu/run.sh [--parts ...] [--check] [--help]
# Weight subfolders: llm/ gliner/ ner-en/ ner-de/ bge-m3/ sapbert-xlmr/ reranker/ (nothing is downloaded).
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON="${PYTHON:-}"
if [[ -z "$PYTHON" ]]; then
  if [[ -x .venv/bin/python ]]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
exec "$PYTHON" -m benchmarks.gpu.run "$@"
