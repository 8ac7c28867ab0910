"""The Chinese language pack."""

from __future__ import annotations

from medgraph.lang.pack import LanguagePack
from medgraph.lang.zh.answer import ANSWER
from medgraph.lang.zh.dialogue import PLAN, REWRITE, ROUTE
from medgraph.lang.zh.glossary import GLOSSARY
from medgraph.lang.zh.guard import GUARD
from medgraph.lang.zh.lexicon import LEXICON
from medgraph.lang.zh.synthesis import SYNTHESIS
from medgraph.lang.zh.text import TEXT
from medgraph.lang.zh.ui import UI

PACK = LanguagePack(
    code="zh",
    name="Chinese",
    native_name="中文",
    html_lang="zh-Hans",
    record_codes=("chi", "zho"),
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
