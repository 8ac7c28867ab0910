"""Entity linking: surface forms → MeSH descriptor IDs, and the per-chunk extraction call.

Input: a ``Vocabulary`` plus ``NerConfig`` / ``LinkingConfig``. Output: ``LinkResult`` per surface
(``Linker``) or linked ``Mention`` lists per chunk (``EntityExtractor.extract``).
"""

from medgraph.link.extractor import EntityExtractor
from medgraph.link.linker import Linker, LinkResult

__all__ = ["EntityExtractor", "LinkResult", "Linker"]
