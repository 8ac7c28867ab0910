"""Tables derived from a saved vocabulary, kept beside it for the next process.

Some tables take seconds to derive from the vocabulary and come out the same in every process that
loads it: the gazetteer's keys and automaton (``medgraph.extract.ner``), the compose step's English
glosses (``medgraph.link.compose``), the linker's character n-gram index (``medgraph.link.tfidf``).
A corpus build derives them in each extract actor, a Serve app in each analyzer replica.
``derived`` keeps each as ``<name>-<digest>.pkl`` in the vocabulary's directory: the first process
derives and saves it, the others read it back. The digest covers what the table is made of: the
vocabulary file (size and modification time) and its manifest (which names a derived vocabulary,
such as the linking dev split, apart), the settings the caller passes and the source files of the
code that derives it, so a change to any of them derives the table again. A vocabulary built in
memory has no directory and nothing is kept; a directory that cannot be written only logs; a torn
or foreign file is derived again. Deleting the files is always safe.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import pickle
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from medgraph.ontology.vocabulary import Vocabulary

log = logging.getLogger(__name__)
T = TypeVar("T")
FORMAT = 1
DIGEST_CHARS = 20
KEEP = 2  # files of one name kept (another setting, the previous vocabulary): ~100 MB each for the gazetteer


def lang_sources() -> list[Path]:
    """Every file of the built-in language packs (``medgraph/lang``): their rules and data."""
    from medgraph import lang

    root = Path(lang.__file__).parent
    return sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def table_file(vocab: Vocabulary, name: str, settings: object, sources: Iterable[str | Path]) -> Path | None:
    """Where ``name`` derived from ``vocab`` under ``settings`` (JSON-able) by the code in ``sources``
    is kept; None for a vocabulary built in memory."""
    if not vocab.directory:
        return None
    try:
        stat = (Path(vocab.directory) / "vocab.pkl").stat()
    except OSError:
        return None
    digest = hashlib.sha256(json.dumps({
        "format": FORMAT, "vocab": [stat.st_size, stat.st_mtime_ns], "manifest": vocab.manifest, "settings": settings,
    }, sort_keys=True, default=str).encode())
    for source in sources:
        path = Path(source)
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return Path(vocab.directory) / f"{name}-{digest.hexdigest()[:DIGEST_CHARS]}.pkl"


def read(path: Path) -> object | None:
    """The table saved at ``path``, or None (missing, torn, another format)."""
    try:
        with open(path, "rb") as fh:
            state = pickle.load(fh)  # noqa: S301 - our own file, beside our own vocabulary
    except FileNotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001 - a torn or foreign file: derive the table again
        log.warning("%s unreadable (%s): deriving it again", path, exc)
        return None
    if not (isinstance(state, tuple) and len(state) == 2 and state[0] == FORMAT):
        return None
    table: object = state[1]
    return table


def write(path: Path, name: str, table: object) -> None:
    """Save atomically (a temporary file per process, then a rename); keep the newest few of ``name``."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            pickle.dump((FORMAT, table), fh, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.replace(path)
        same = sorted(path.parent.glob(f"{name}-{'?' * DIGEST_CHARS}.pkl"), key=lambda p: p.stat().st_mtime,
                      reverse=True)
        for old in same[KEEP:]:
            old.unlink(missing_ok=True)
    except OSError as exc:  # a read-only vocabulary directory: every process derives its own
        log.info("%s not saved beside the vocabulary (%s)", path.name, exc)
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


def derived(vocab: Vocabulary, name: str, settings: object, sources: Iterable[str | Path],
            build: Callable[[], T]) -> tuple[T, bool]:
    """``build()``'s table, read from beside ``vocab`` when it was saved (see the module docstring);
    the table and whether it was read."""
    path = table_file(vocab, name, settings, sources)
    if path is not None:
        table = read(path)
        if table is not None:
            return table, True  # type: ignore[return-value]  # saved by build() under this digest
    table = build()
    if path is not None:
        write(path, name, table)
    return table, False
