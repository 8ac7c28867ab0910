"""``LanguagePack``: the one place that holds what is specific to one language."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from medgraph.lang.sections.answer import AnswerStrings
from medgraph.lang.sections.dialogue import PlanCues, RewriteCues, RouteCues
from medgraph.lang.sections.glossary import GlossaryRules
from medgraph.lang.sections.guard import GuardCues
from medgraph.lang.sections.lexicon import LexiconRules
from medgraph.lang.sections.synthesis import QuestionTemplates
from medgraph.lang.sections.text import TextRules


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: one object per registered pack
class LanguagePack:
    """Everything language-specific for one language.

    ``code``: the ISO 639-1 code used in configs, records and the API ("de"). ``record_codes``: other
    codes records use for it (PubMed's ISO 639-2 "ger", "deu"). ``ui``: the web interface's strings
    (keys of the pivot pack's ``ui``; a missing key falls back to the pivot's string).
    """

    code: str
    name: str  # in English ("German")
    native_name: str  # in the language itself, for the interface's language picker ("Deutsch")
    html_lang: str  # BCP 47 tag for <html lang> ("zh-Hans")
    text: TextRules
    answer: AnswerStrings
    guard: GuardCues
    rewrite: RewriteCues
    plan: PlanCues
    route: RouteCues
    lexicon: LexiconRules
    glossary: GlossaryRules
    record_codes: tuple[str, ...] = ()
    synthesis: QuestionTemplates = field(default_factory=QuestionTemplates)  # synthetic QA templates
    ui: Mapping[str, str] = field(default_factory=dict)

    @property
    def spaced(self) -> bool:
        """Whether words are separated by spaces (False for Chinese)."""
        return self.text.word_separator == " "
