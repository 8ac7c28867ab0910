"""Query translation by ontology term substitution (offline tier of cross-lingual retrieval).

Input: a ``QueryAnalysis`` (question text, language, linked mentions with character offsets) and
a target language. Output: the question with every linked mention replaced by the names of its
MeSH entity in the target language (up to ``names_per_entity``: the preferred name first, then
synonyms, inverted forms such as "Infarction, Myocardial" skipped), or ``None`` when no mention
has a name in that language.

    "Welche Behandlung nach Herzinfarkt?" --en--> "Welche Behandlung nach Myocardial Infarction?"
    "心肌梗死后如何治疗"                  --en--> "Myocardial Infarction"

The words around the entities stay untranslated: the target-language search matches on the
entity names, and the multilingual dense path carries the rest of the meaning. Chinese words
around the entities are dropped from an English or German translation (they cannot match
Latin-script text and would only dilute term-overlap scores); Latin words stay in a Chinese one
(drug names are often written in Latin letters there). A model tier
(an LLM translator behind the same ``translate`` signature) can replace this class.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from medgraph.retrieve.types import QueryAnalysis
from medgraph.schemas import Entity, Mention

_CJK_RUN = re.compile("[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]+")


class OntologyTranslator:
    name = "ontology"

    def __init__(self, entity_lookup: Callable[[str], Entity | None], names_per_entity: int = 2) -> None:
        self.entity_lookup = entity_lookup
        self.names_per_entity = names_per_entity

    def names(self, mesh_id: str, language: str) -> list[str]:
        """The entity's names in ``language`` (English: the preferred name first), inverted forms skipped."""
        entity = self.entity_lookup(mesh_id)
        if entity is None:
            return []
        names = list(entity.names.get(language, []))
        if language == "en" and entity.name:
            names = [entity.name, *names]
        out: list[str] = []
        for name in names:
            if "," not in name and name not in out:
                out.append(name)
        return out[: self.names_per_entity]

    def translate(self, analysis: QueryAnalysis, target: str) -> str | None:
        if target == analysis.language:
            return None
        text, pieces, last, changed = analysis.text, [], 0, False
        for m in _non_overlapping(analysis.mentions):
            names = self.names(m.mesh_id, target) if m.mesh_id else []
            if not names:
                continue
            pieces.append(self._residue(text[last : m.start], target))
            pieces.append(" " + " ".join(names) + " ")
            last, changed = m.end, True
        if not changed:
            return None
        pieces.append(self._residue(text[last:], target))
        return " ".join("".join(pieces).split())

    @staticmethod
    def _residue(text: str, target: str) -> str:
        return text if target == "zh" else _CJK_RUN.sub(" ", text)


def _non_overlapping(mentions: tuple[Mention, ...]) -> list[Mention]:
    """Linked mentions by start offset; of two overlapping ones the longer wins."""
    chosen: list[Mention] = []
    for m in sorted(mentions, key=lambda m: (m.start, -(m.end - m.start))):
        if m.mesh_id and (not chosen or m.start >= chosen[-1].end):
            chosen.append(m)
    return chosen
