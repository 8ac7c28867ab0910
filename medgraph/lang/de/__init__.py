"""The German language pack."""

from __future__ import annotations

from medgraph.lang.de.answer import ANSWER
from medgraph.lang.de.dialogue import PLAN, REWRITE, ROUTE
from medgraph.lang.de.glossary import GLOSSARY
from medgraph.lang.de.guard import GUARD
from medgraph.lang.de.lexicon import LEXICON
from medgraph.lang.de.synthesis import SYNTHESIS
from medgraph.lang.de.text import TEXT
from medgraph.lang.de.ui import UI
from medgraph.lang.pack import LanguagePack

PACK = LanguagePack(
    code="de",
    name="German",
    native_name="Deutsch",
    html_lang="de",
    record_codes=("ger", "deu"),
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
