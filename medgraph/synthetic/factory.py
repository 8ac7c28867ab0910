"""Synthetic multilingual QA from the built graph ("reverse RAG"), offline tier.

Input: chunks read back from the graph store with their linked mentions and entities (names in
every language), and how many chunks mention each entity. Output: ``SynthItem`` records, each
question in every requested language (twins share ``item_id``), in the format the answer benchmark
reads (``python -m medgraph.eval answers --dev FILE``; ``SynthItem.record``).

Answerable items (``chunk_items``, one per chunk at most): the chunk's best sentence that states
something (not a question, reference, list lead-in or aim; findings first) and names entities the
corpus mentions in few chunks (``max_chunk_share``: a question about "Humans" identifies no
passage). The kind follows the sentence: a drug and a sentence stating its adverse effects or a
dose → ``adverse_effects`` / ``dosage``; a sentence that recommends → ``recommendation``; two
entities → ``relation``; else ``finding`` (only for an entity at most ``finding_max_chunks`` chunks
name: "What was found about pregnancy?" has many right passages). Its gold is the chunk (document, page, section) and the
sentence. The question names each entity by its name in the asker's language
(``QuestionTemplates.name_fallback``: German drug names by the English INN); an item is kept only
when every language has names for it, so the set is balanced per language by construction.

Adversarial items (``adversarial_items``; gold: refuse): ``false_premise`` — two entities of the
corpus that no chunk names together (a drug, disease, organism or procedure and a disease or
symptom), asked why the first causes the second; ``absent_entity`` — a drug of
the vocabulary the corpus never mentions, asked for its adverse effects; ``unstated_aspect`` — a drug
the corpus mentions, none of whose chunks states an adverse effect, asked for them.

``finalise``: de-duplicated by question text, adversarial items capped at ``adversarial_share`` of
the set, split into dev / test by document (an adversarial item by its ID), every twin in its
item's split.

Questions come from the templates of the ``medgraph.lang`` packs (``QuestionTemplates``); with a
model tier (``writer``: ``medgraph.synthetic.writer.ModelQuestions``, a DSPy program on a
configured LLM tier) an answerable item's question is the model's where it wrote a usable one
(``method: model``). Adversarial items always come from the templates: their premise is the test.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from medgraph import lang
from medgraph.generate.aspects import addresses
from medgraph.generate.sentences import clean_sentence, is_question, is_reference, sentence_role
from medgraph.graph.cooccurrence import Connections
from medgraph.ingest.text import count_tokens, split_sentences
from medgraph.schemas import Chunk, Entity, Mention

# the model tier (``medgraph.synthetic.writer.ModelQuestions``): (kind, names, sentence, passage, language) -> question
Writer = Callable[[str, Sequence[str], str, str, str], "str | None"]
MIN_TOKENS = 6  # shorter sentences state too little to ask about
ASPECT_KINDS = ("adverse_effects", "dosage")
DRUG = "Drug"
# a false premise says a cause (a drug, disease, organism, procedure) brings about an effect (a disease, symptom)
CAUSES = frozenset({"Drug", "Disease", "LivingBeing", "Procedure"})
EFFECTS = frozenset({"Disease", "Symptom"})


def template_languages() -> tuple[str, ...]:
    """The registered languages whose packs have question templates."""
    return tuple(p.code for p in lang.packs() if p.synthesis.templates)


@dataclass(frozen=True)
class SynthSettings:
    # default: every registered language whose pack has question templates
    languages: tuple[str, ...] = field(default_factory=lambda: template_languages())
    max_chunk_share: float = 0.05  # an entity in more of the corpus's chunks identifies no passage
    min_chunks: int = 20  # ... unless the corpus is this small: then any entity is specific enough
    finding_max_chunks: int = 3  # a question about one entity only when so few chunks name it
    adversarial_share: float = 0.15  # of the final set
    test_share: float = 0.5  # documents whose items form the test split
    seed: int = 0


@dataclass(frozen=True)
class SynthItem:
    """One question in one language. ``item_id`` is shared by its twins in the other languages."""

    item_id: str
    language: str
    text: str
    kind: str
    answerable: bool
    entities: tuple[str, ...]
    doc_id: str = ""
    chunk_id: str = ""
    page: int | None = None
    section: str = ""
    answer: str = ""
    split: str = ""
    method: str = "template"  # or "model": written by the model tier (``medgraph.synthetic.writer``)

    @property
    def query_id(self) -> str:
        return f"{self.item_id}-{self.language}"

    def record(self) -> dict[str, Any]:
        """The answer benchmark's question format (``medgraph.eval.answers``) and the item's own fields."""
        rec: dict[str, Any] = {"query_id": self.query_id, "text": self.text, "language": self.language,
                               "answerable": self.answerable, "source": "synthetic", **asdict(self)}
        if self.answerable:
            rec["relevant_doc_ids"] = [self.doc_id]
            if self.page is not None:
                rec["pages"] = [self.page]
            if self.section:
                rec["section"] = self.section
        return rec


@dataclass
class ChunkFacts:
    """What the driver learns from one chunk besides its items: the aspects it states of which drugs."""

    chunk_id: str
    stated: dict[str, list[str]] = field(default_factory=dict)  # aspect -> MeSH IDs of the drugs it names


def entity_name(entity: Entity, language: str) -> str | None:
    """The entity's name for a question in ``language``: its first name there that is not inverted
    ("Diabetes Mellitus, Type 2" is read "Type 2 Diabetes Mellitus"); in English the preferred name
    first; the English name for a category the language's pack lets stand in; else None."""
    names = [entity.name, *entity.names.get(lang.PIVOT, [])] if language == lang.PIVOT else entity.names.get(language, [])
    if not names and lang.is_known(language) and entity.category in lang.get(language).synthesis.name_fallback:
        names = [entity.name]
    for name in names:
        if "," not in name:
            return name
    if names and names[0].count(",") == 1:
        head, modifier = (p.strip() for p in names[0].split(","))
        return f"{modifier} {head}"
    return None


def _names(entities: Sequence[Entity], languages: Sequence[str]) -> dict[str, tuple[str, ...]] | None:
    out = {}
    for language in languages:
        names = [entity_name(e, language) for e in entities]
        if any(n is None for n in names):
            return None
        out[language] = tuple(n for n in names if n)
    return out


def _pick(options: Sequence[str], key: str) -> str:
    return options[int(hashlib.sha1(key.encode()).hexdigest(), 16) % len(options)]


def _questions(item_id: str, kind: str, names: Mapping[str, tuple[str, ...]]) -> dict[str, str] | None:
    out = {}
    for language, entity_names in names.items():
        templates = lang.get(language).synthesis.templates.get(kind) if lang.is_known(language) else None
        if not templates:
            return None
        template = _pick(templates, item_id)
        out[language] = template.format(a=entity_names[0], b=entity_names[1] if len(entity_names) > 1 else "")
    return out


def _twins(base: SynthItem, questions: Mapping[str, str], written: Mapping[str, str] | None = None) -> list[SynthItem]:
    """One item per language: the template's question, or the model's where it wrote one (``written``)."""
    written = written or {}
    return [SynthItem(**{**asdict(base), "language": language, "text": written.get(language, text),
                         "method": "model" if language in written else "template"})
            for language, text in questions.items()]


def _sentences(chunk: Chunk) -> list[tuple[int, int, str]]:
    """(start, end, sentence) of the chunk's sentences, located in its text."""
    out, pos = [], 0
    for sentence in split_sentences(chunk.text):
        start = chunk.text.find(sentence, pos)
        if start < 0:
            continue
        pos = start + len(sentence)
        out.append((start, pos, sentence))
    return out


def chunk_items(chunk: Chunk, mentions: Sequence[Mention], entities: Mapping[str, Entity],
                chunk_counts: Mapping[str, int], n_chunks: int, settings: SynthSettings,
                writer: Writer | None = None) -> tuple[list[SynthItem], ChunkFacts]:
    """The answerable item of one chunk (its twins in every language; none when no sentence fits)
    and the aspects the chunk states of the drugs it names. ``writer``: the model tier; where it
    writes no usable question the template's stands."""
    facts = ChunkFacts(chunk.chunk_id)
    drugs = sorted({m.mesh_id for m in mentions if m.mesh_id and entities.get(m.mesh_id)
                    and entities[m.mesh_id].category == DRUG})
    for aspect in ASPECT_KINDS:
        if drugs and addresses(chunk.text, aspect):
            facts.stated[aspect] = drugs
    if is_reference("", chunk.section_path):
        return [], facts
    limit = max(1, int(settings.max_chunk_share * n_chunks)) if n_chunks >= settings.min_chunks else n_chunks
    best: tuple[tuple[int, int, float], str, list[str]] | None = None
    for start, end, raw in _sentences(chunk):
        sentence = clean_sentence(raw)
        if (not sentence or is_question(sentence) or is_reference(sentence, chunk.section_path)
                or count_tokens(sentence) < MIN_TOKENS):
            continue
        role = sentence_role(sentence, chunk.section_path)
        if role < 0:
            continue
        ids = list(dict.fromkeys(m.mesh_id for m in mentions if m.mesh_id and start <= m.start and m.end <= end
                                 and m.mesh_id in entities and chunk_counts.get(m.mesh_id, 0) <= limit))
        if not ids:
            continue
        ids.sort(key=lambda i: (chunk_counts.get(i, 0), i))  # the most specific first
        rank = (role, min(len(ids), 2), -sum(chunk_counts.get(i, 0) for i in ids[:2]) / min(len(ids), 2))
        if best is None or rank > best[0]:
            best = (rank, sentence, ids)
    if best is None:
        return [], facts
    _, sentence, ids = best
    kind, chosen = _kind(sentence, chunk.language, [entities[i] for i in ids])
    names = _names(chosen, settings.languages)
    if names is None and kind != "finding" and len(chosen) > 1:  # the second entity has no names: ask about one
        kind, chosen = "finding", chosen[:1]
        names = _names(chosen, settings.languages)
    if names is None or (kind == "finding" and chunk_counts.get(chosen[0].mesh_id, 0) > settings.finding_max_chunks):
        return [], facts
    item_id = "syn-" + hashlib.sha1(f"{chunk.chunk_id}|{kind}|{'|'.join(e.mesh_id for e in chosen)}".encode()).hexdigest()[:12]
    questions = _questions(item_id, kind, names)
    if questions is None:
        return [], facts
    base = SynthItem(item_id, "", "", kind, True, tuple(e.mesh_id for e in chosen), chunk.doc_id, chunk.chunk_id,
                     chunk.page, chunk.section_path[-1] if chunk.section_path else "", sentence)
    written = {}
    for language in questions if writer is not None else ():
        text = writer(kind, names[language], sentence, chunk.text, language)  # type: ignore[misc]
        if text:
            written[language] = text
    return _twins(base, questions, written), facts


def _kind(sentence: str, language: str, specific: Sequence[Entity]) -> tuple[str, list[Entity]]:
    """The kind of question a sentence answers, and the entities it asks about (most specific first)."""
    for aspect in ASPECT_KINDS:
        drug = next((e for e in specific if e.category == DRUG), None)
        if drug is not None and addresses(sentence, aspect):
            return aspect, [drug]
    recommends = lang.get_or_pivot(language).synthesis.recommends
    if recommends is not None and recommends.search(sentence):
        return "recommendation", list(specific[:1])
    if len(specific) >= 2:
        return "relation", list(specific[:2])
    return "finding", list(specific[:1])


def adversarial_items(connections: Connections, entities: Mapping[str, Entity],
                      vocabulary: Iterable[Entity], facts: Sequence[ChunkFacts], count: int,
                      settings: SynthSettings, pair_entities: int = 300) -> list[SynthItem]:
    """About ``count`` items (each in every language) that the corpus cannot answer, the three kinds
    in turn (see the module docstring); fewer when the corpus offers fewer candidates.
    ``connections``: the corpus's co-occurrences; ``entities``: every entity of the corpus;
    false-premise pairs are drawn among ``pair_entities`` of them (their pairs: ~45k)."""
    rng = random.Random(settings.seed)
    named = [i for i in sorted(entities) if _names([entities[i]], settings.languages) is not None]
    sample = sorted(rng.sample(named, pair_entities)) if len(named) > pair_entities else named
    pairs = [(a, b) for a in sample for b in sample if a != b and entities[a].category in CAUSES
             and entities[b].category in EFFECTS and not connections.both(a, b, 1)]
    rng.shuffle(pairs)
    stated = {i for f in facts for i in f.stated.get("adverse_effects", [])}
    unstated = [i for i in named if entities[i].category == DRUG and i not in stated]
    rng.shuffle(unstated)
    absent = sorted((e for e in vocabulary if e.category == DRUG and e.mesh_id not in entities
                     and _names([e], settings.languages) is not None), key=lambda e: e.mesh_id)
    rng.shuffle(absent)
    sources: dict[str, list[tuple[str, list[Entity]]]] = {
        "false_premise": [("false_premise", [entities[a], entities[b]]) for a, b in pairs],
        "absent_entity": [("adverse_effects", [e]) for e in absent],
        "unstated_aspect": [("adverse_effects", [entities[i]]) for i in unstated],
    }
    out: list[SynthItem] = []
    cursors = dict.fromkeys(sources, 0)
    while len(out) // max(1, len(settings.languages)) < count and any(cursors[k] < len(v) for k, v in sources.items()):
        for kind, options in sources.items():
            if cursors[kind] >= len(options) or len(out) // max(1, len(settings.languages)) >= count:
                continue
            template_kind, chosen = options[cursors[kind]]
            cursors[kind] += 1
            names = _names(chosen, settings.languages)
            if names is None:
                continue
            item_id = "adv-" + hashlib.sha1(f"{kind}|{'|'.join(e.mesh_id for e in chosen)}".encode()).hexdigest()[:12]
            questions = _questions(item_id, template_kind, names)
            if questions:
                out += _twins(SynthItem(item_id, "", "", kind, False, tuple(e.mesh_id for e in chosen)), questions)
    return out


def _split_of(key: str, test_share: float) -> str:
    return "test" if int(hashlib.sha1(key.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < test_share else "dev"


_SPACE = re.compile(r"\s+")


def finalise(answerable: Sequence[SynthItem], adversarial: Sequence[SynthItem], settings: SynthSettings) -> list[SynthItem]:
    """De-duplicated (an item whose question repeats an earlier item's in any language is dropped,
    twins and all), adversarial items capped at ``adversarial_share`` of the set, every item given
    its split (by document; an adversarial item by its ID)."""
    seen: set[str] = set()
    by_item: dict[str, list[SynthItem]] = {}
    for item in [*answerable, *adversarial]:
        by_item.setdefault(item.item_id, []).append(item)
    kept: dict[str, list[SynthItem]] = {}
    for item_id, twins in by_item.items():
        keys = {_SPACE.sub(" ", t.text.casefold()).strip() for t in twins}
        if keys & seen:
            continue
        seen |= keys
        kept[item_id] = twins
    n_answerable = sum(1 for twins in kept.values() if twins[0].answerable)
    cap = int(settings.adversarial_share * n_answerable / (1 - settings.adversarial_share)) if settings.adversarial_share < 1 else len(kept)
    out: list[SynthItem] = []
    n_adversarial = 0
    for item_id, twins in kept.items():
        if not twins[0].answerable:
            if n_adversarial >= cap:
                continue
            n_adversarial += 1
        split = _split_of(twins[0].doc_id or item_id, settings.test_share)
        out += [SynthItem(**{**asdict(t), "split": split}) for t in twins]
    return out


def summary(items: Sequence[SynthItem]) -> dict[str, Any]:
    """Counts per split, language and kind; the adversarial share."""
    out: dict[str, Any] = {"items": len({i.item_id for i in items}), "questions": len(items)}
    for split in ("dev", "test"):
        part = [i for i in items if i.split == split]
        out[split] = {
            "questions": len(part),
            "by_language": {code: sum(1 for i in part if i.language == code) for code in sorted({i.language for i in items})},
            "by_kind": {kind: sum(1 for i in part if i.kind == kind) for kind in sorted({i.kind for i in items})},
            "documents": len({i.doc_id for i in part if i.doc_id}),
            "by_method": {m: sum(1 for i in part if i.method == m) for m in sorted({i.method for i in items})},
        }
    out["adversarial_share"] = round(sum(1 for i in items if not i.answerable) / len(items), 4) if items else 0.0
    return out
