"""The English language pack."""

from __future__ import annotations

from medgraph.lang.en.answer import ANSWER
from medgraph.lang.en.dialogue import PLAN, REWRITE, ROUTE
from medgraph.lang.en.glossary import GLOSSARY
from medgraph.lang.en.guard import GUARD
from medgraph.lang.en.lexicon import LEXICON
from medgraph.lang.en.synthesis import SYNTHESIS
from medgraph.lang.en.text import TEXT
from medgraph.lang.en.ui import UI
from medgraph.lang.pack import LanguagePack

PACK = LanguagePack(
    code="en",
    name="English",
    native_name="English",
    html_lang="en",
    record_codes=("eng",),
    text=TEXT,
    answer=ANSWER,
    guard=GUARD,
    rewrite=REWRITE,
    plan=PLAN,
    route=ROUTE,
    lexicon=LEXICON,
    glossary=GLOSSARY,
    synthesis=SYNTHESIS,
    ui=UI,
)
