"""Ray job entry points and Ray Data stage adapters (``python -m jobs.<name>``)."""
