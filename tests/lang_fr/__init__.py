"""A small French language pack, built only here, to prove a fourth language is one pack plus data.

Each section lives in its own module of this folder (``text``, ``answer``, ``guard``, ``dialogue``,
``lexicon``, ``glossary``, ``ui``) as the built-in packs' sections do; ``french_pack()`` assembles
them into a ``LanguagePack`` and ``registered()`` adds it to the registry for one test.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from medgraph import lang
from medgraph.lang import LanguagePack


def french_pack() -> LanguagePack:
    from tests.lang_fr.answer import ANSWER
    from tests.lang_fr.dialogue import PLAN, REWRITE, ROUTE
    from tests.lang_fr.glossary import GLOSSARY
    from tests.lang_fr.guard import GUARD
    from tests.lang_fr.lexicon import LEXICON
    from tests.lang_fr.text import TEXT
    from tests.lang_fr.ui import UI

    return LanguagePack(
        code="fr", name="French", native_name="Français", html_lang="fr", record_codes=("fre", "fra"),
        text=TEXT, answer=ANSWER, guard=GUARD, rewrite=REWRITE, plan=PLAN, route=ROUTE,
        lexicon=LEXICON, glossary=GLOSSARY, ui=UI,
    )


@contextmanager
def registered(pack: LanguagePack | None = None) -> Iterator[LanguagePack]:
    """The French pack (or ``pack``) registered for the duration of the block."""
    pack = pack or french_pack()
    lang.register(pack)
    try:
        yield pack
    finally:
        lang.unregister(pack.code)
