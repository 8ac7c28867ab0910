"""GPU runs of the model tiers: ``benchmarks/gpu/run.sh`` (``python -m benchmarks.gpu.run``)."""
