"""Language packs: everything language-specific for one language in one place.

A pack (``LanguagePack``) holds, for one language, its detection cues, tokenizer and stemmer,
stop words, OCR codes, answer and refusal strings, guard, rewrite, planning and routing cues,
linking morphology and interface strings. Modules outside ``medgraph.lang`` never name a language
code: they ask the registry for the pack of a text's language and read its sections.

The built-in packs are ``medgraph.lang.en``, ``medgraph.lang.de`` and ``medgraph.lang.zh``; another
package adds one by calling ``register`` or through the ``medgraph.languages`` entry point group
(an entry point that names a ``LanguagePack``). See docs/architecture.md, "How to add a language".
"""

from medgraph.lang.pack import LanguagePack
from medgraph.lang.registry import (
    PIVOT,
    UnknownLanguage,
    by_record_code,
    codes,
    get,
    get_or_pivot,
    is_builtin,
    is_known,
    packs,
    pivot,
    register,
    unregister,
)

__all__ = [
    "PIVOT", "LanguagePack", "UnknownLanguage", "by_record_code", "codes", "get", "get_or_pivot",
    "is_builtin", "is_known", "packs", "pivot", "register", "unregister",
]
