"""Strings of the answer stage: disclaimers, refusals, prompt labels, aspect replies, memory.

Besides the texts the user reads, the section holds the cue fragments the extractive composer
scores sentences with (``medgraph.generate.sentences``) and the aspect cues of
``medgraph.generate.aspects``. A cue fragment is a regular expression (matched case-insensitively)
for this language's words; the consumer joins the fragments of every registered pack (evidence in
any language is scored), so a pack that leaves one empty simply adds no cue.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class AnswerStrings:
    """Placeholders: ``lead`` takes ``{languages}`` and ``{about}`` (``lead_about`` with ``{names}``, or
    empty); ``gap_with_entities`` ``{entities}`` and ``{aspect}``; ``gap_without`` ``{aspect}``;
    ``time_ago`` ``{count}`` and ``{unit}``.
    """

    disclaimer: str  # appended to every medical answer: information only, not medical advice
    refusal: str  # the reply when the indexed evidence does not answer the question
    instructions: str  # the grounded-answer system prompt, asking for an answer in this language
    evidence_label: str  # the prompt's heading of the numbered passages
    question_label: str
    answer_label: str
    lead: str  # an extractive answer's first line when its quotes are in other languages
    lead_about: str  # the lead's part naming the question's entities found
    gap_with_entities: str  # the sources name the entities but say nothing about the aspect
    gap_without: str  # the sources say nothing about the aspect
    list_separator: str  # between the items of a list (", "; "、")
    conjunction_and: str  # between the last items of a list, spaces included (" and "; "和")
    conjunction_or: str
    just_now: str  # an age under a minute
    time_ago: str  # an age of ``{count}`` whole ``{unit}``
    # unit (year, month, week, day, hour, minute) -> its (singular, plural) form in ``time_ago``
    time_units: Mapping[str, tuple[str, str]]
    # language code -> how the lead names passages in that language ("englischsprachigen"); missing: the code
    language_names: Mapping[str, str] = field(default_factory=dict)
    # aspect (adverse_effects, dosage, contraindication, cost) -> its name here; missing: the pivot's name
    aspect_names: Mapping[str, str] = field(default_factory=dict)
    # aspect -> cue fragment of a question asking for it
    aspect_questions: Mapping[str, str] = field(default_factory=dict)
    # aspect -> cue fragment of a sentence stating something of it
    aspect_evidence: Mapping[str, str] = field(default_factory=dict)
    range_words: str = ""  # fragment: the word between two numbers of a range ("to")
    amount_units: str = ""  # fragment: this language's unit words after an amount ("tablets?")
    # kind of answer (adverse, dosage, risk, procedure, timing, claim, population) -> question cue fragment
    question_kinds: Mapping[str, str] = field(default_factory=dict)
    # kind of answer -> cue fragment of a sentence giving that kind of answer
    answer_kinds: Mapping[str, str] = field(default_factory=dict)
    finding_sections: str = ""  # fragment: section labels of findings (Results, Conclusions)
    aim_sections: str = ""  # fragment: section labels of aims, background and methods
    aim_sentences: str = ""  # fragment: sentence cues of an aim or a method ("We aimed ...")
    finding_sentences: str = ""  # fragment: sentence cues of a finding ("... suggest ...")
    reference_sections: str = ""  # fragment: headings of reference lists and front matter, at a heading's start
    citation_marks: str = ""  # fragment: words that mark a bibliography entry ("accessed 3 May")
    closing_marks: str = ""  # sentence-final marks that no space follows ("。！？")
