"""Contract tests: one behaviour, checked against every backend of a store protocol."""
