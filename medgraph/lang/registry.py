"""The registry of language packs: built-ins, entry-point packs and packs registered at run time."""

from __future__ import annotations

import threading
from importlib import import_module, metadata

from medgraph.lang.pack import LanguagePack

# The language the ontology's preferred names and every dictionary gloss are written in (MeSH's
# English): questions in other languages are translated towards it, and it is the fallback pack.
PIVOT = "en"
BUILTIN = ("medgraph.lang.en", "medgraph.lang.de", "medgraph.lang.zh")
ENTRY_POINT_GROUP = "medgraph.languages"

_packs: dict[str, LanguagePack] = {}
_lock = threading.Lock()
_loaded = False


class UnknownLanguage(ValueError):
    """A language code no registered pack answers to."""

    def __init__(self, code: object) -> None:
        super().__init__(f"unknown language {code!r}: registered languages are {', '.join(codes())}")
        self.code = code


def _ensure_loaded() -> None:
    global _loaded
    if _loaded:
        return
    with _lock:
        if _loaded:
            return
        found: dict[str, LanguagePack] = {}
        for module in BUILTIN:
            pack = import_module(module).PACK
            found[pack.code] = pack
        for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
            pack = entry.load()
            if not isinstance(pack, LanguagePack):
                raise TypeError(f"entry point {entry.name!r} in {ENTRY_POINT_GROUP} is not a LanguagePack")
            found.setdefault(pack.code, pack)
        for code, pack in found.items():
            _packs.setdefault(code, pack)
        _loaded = True


def is_builtin(pack: LanguagePack) -> bool:
    """True for the packs shipped in ``medgraph/lang`` (the same objects, not a replacement)."""
    return any(import_module(module).PACK is pack for module in BUILTIN)


def register(pack: LanguagePack, *, replace: bool = False) -> None:
    """Add ``pack`` (e.g. a fourth language); ``replace`` swaps a pack of the same code."""
    _ensure_loaded()
    with _lock:
        if pack.code in _packs and not replace:
            raise ValueError(f"a pack for {pack.code!r} is already registered (pass replace=True)")
        _packs[pack.code] = pack


def unregister(code: str) -> None:
    """Remove the pack of ``code`` (the pivot pack cannot be removed)."""
    _ensure_loaded()
    if code == PIVOT:
        raise ValueError(f"the pivot language {PIVOT!r} cannot be unregistered")
    with _lock:
        _packs.pop(code, None)


def codes() -> tuple[str, ...]:
    """Codes of the registered packs, built-ins first, in registration order."""
    _ensure_loaded()
    return tuple(_packs)


def packs() -> tuple[LanguagePack, ...]:
    _ensure_loaded()
    return tuple(_packs.values())


def is_known(code: object) -> bool:
    _ensure_loaded()
    return isinstance(code, str) and code in _packs


def get(code: str) -> LanguagePack:
    """The pack of ``code``; ``UnknownLanguage`` (a ``ValueError``) when none is registered."""
    _ensure_loaded()
    try:
        return _packs[code]
    except (KeyError, TypeError):
        raise UnknownLanguage(code) from None


def pivot() -> LanguagePack:
    return get(PIVOT)


def get_or_pivot(code: str | None) -> LanguagePack:
    """The pack of ``code``, or the pivot pack when ``code`` is empty or unknown."""
    _ensure_loaded()
    return _packs.get(code or PIVOT) or _packs[PIVOT]


def by_record_code(code: str) -> str | None:
    """The pack code for a language code as records write it (ISO 639-1 or -2: "ger", "chi")."""
    code = (code or "").strip().lower()
    for pack in packs():
        if code == pack.code or code in pack.record_codes:
            return pack.code
    return None
