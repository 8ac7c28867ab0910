"""``gc_paused()``: pause Python's cyclic garbage collector while a bulk read builds many objects.

Reading a whole store into memory (the embedded graph store's incidence, the local vector index from
its collection) creates millions of short-lived tuples and records; each allocation burst triggers
collections that rescan all of them, which cost ~0.8 s of a 4 s incidence read and 9 of 22 s of a
160k-point index load (docs/scale.md). Restores the collector's previous state (nested and
concurrent uses leave it enabled if it was).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
