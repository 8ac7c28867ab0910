"""Errors shared by the store backends (vector store and graph store).

Input: failures raised by a backend client (connection refused, timeout, lock held, schema clash).
Output: one of the exceptions below, with a message that says what to check.
"""

from __future__ import annotations


class StoreError(RuntimeError):
    """Base class of every store failure that callers may want to handle."""


class StoreUnavailable(StoreError):
    """The store cannot be reached: server down or unreachable, or an embedded store held elsewhere.

    Raised quickly (short timeouts) so that a batch job or a Serve replica can fail fast, retry or
    report the outage instead of hanging.
    """


class StoreSchemaMismatch(StoreError):
    """The existing store was created with a different layout (for example another vector size)."""
