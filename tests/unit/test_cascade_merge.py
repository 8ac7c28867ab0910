"""Cascade NER without models: tag decoding, word-piece aggregation, and the merge rules.

The model passes are replaced by fakes returning chosen spans, so every rule of
``medgraph.extract.cascade`` is checked on known input with the real gazetteer and linker over a
small vocabulary (categories from the real MeSH tree numbers).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from medgraph.config.models import LinkingConfig, NerConfig, VocabularyConfig, VocabularySource
from medgraph.extract.cascade import CascadeNER
from medgraph.extract.spans import ModelSpan, decode_tags, resolve_overlaps, split_tag, trim
from medgraph.link import EntityExtractor
from medgraph.ontology.build import build_vocabulary
from medgraph.ontology.vocabulary import Vocabulary

ROWS = [
    ("D003924", "en", "diabetes mellitus, type 2"),
    ("D003920", "en", "diabetes mellitus"),
    ("D008687", "en", "metformin"),
    ("D001241", "en", "aspirin"),
    ("D005334", "en", "fever"),
    ("D001943", "en", "breast neoplasms"),
    ("D001943", "en", "breast cancer"),
    ("D006973", "en", "hypertension"),
    ("D006973", "en", "high blood pressure"),
]


@pytest.fixture(scope="module")
def vocab(tmp_path_factory: pytest.TempPathFactory) -> Vocabulary:
    path = tmp_path_factory.mktemp("vocab") / "terms.tsv"
    path.write_text(
        "mesh_id\tlang\tterm\tsource\n" + "".join(f"{m}\t{lang}\t{t}\tx_name\n" for m, lang, t in ROWS),
        encoding="utf-8",
    )
    return build_vocabulary(
        VocabularyConfig(
            sources=[
                VocabularySource(kind="multilingual_terms", path=str(path)),
                VocabularySource(kind="mesh_tree", path="pkg:mesh_tree_numbers.tsv.gz"),
            ]
        )
    )


# --- tags and word pieces --------------------------------------------------------------------


def test_split_tag_reads_bio_bioes_and_io_tags() -> None:
    assert split_tag("B-Disease") == ("B", "Disease") and split_tag("I_Chemical") == ("I", "Chemical")
    assert split_tag("S-dis") == ("S", "dis") and split_tag("O") == ("O", "")
    assert split_tag("Disease") == ("I", "Disease")  # IO scheme: a bare type continues a span
    assert split_tag("COVID-19") == ("I", "COVID-19")  # a dash inside a type is not a prefix


def _probs(tags: list[str], id2label: dict[int, str], p: float = 0.9) -> np.ndarray:
    label2id = {v: k for k, v in id2label.items()}
    out = np.full((len(tags), len(id2label)), (1 - p) / (len(id2label) - 1), dtype=np.float32)
    for i, tag in enumerate(tags):
        out[i, label2id[tag]] = p
    return out


BIO = dict(enumerate(["O", "B-Chemical", "I-Chemical", "B-Disease", "I-Disease"]))


def test_a_word_takes_the_tag_of_its_first_piece_and_spans_all_its_pieces() -> None:
    text = "Metformin for diabetes mellitus."
    # [CLS] Met ##formin for diabetes mellitus . [SEP]: the second piece says O (it carries no label in training)
    offsets = [(0, 0), (0, 3), (3, 9), (10, 13), (14, 22), (23, 31), (31, 32), (0, 0)]
    word_ids = [None, 0, 0, 1, 2, 3, 4, None]
    tags = ["O", "B-Chemical", "O", "O", "B-Disease", "I-Disease", "O", "O"]
    spans = decode_tags(text, offsets, word_ids, _probs(tags, BIO), BIO)
    assert [(text[s.start : s.end], s.label) for s in spans] == [
        ("Metformin", "Chemical"),
        ("diabetes mellitus", "Disease"),
    ]
    assert all(s.source == "token" and s.score == pytest.approx(0.9) for s in spans)


def test_spans_break_at_a_new_begin_a_type_change_and_punctuation() -> None:
    text = "fever, aspirin metformin"
    offsets = [(0, 5), (5, 6), (7, 14), (15, 24)]
    spans = decode_tags(
        text, offsets, [0, 1, 2, 3], _probs(["I-Disease", "I-Disease", "I-Chemical", "B-Chemical"], BIO), BIO
    )
    # "," is tagged inside the disease, but a lenient I- after it opens nothing new: one span "fever,"
    assert [text[s.start : s.end] for s in spans] == ["fever,", "aspirin", "metformin"]
    text = "fever. Aspirin"
    spans = decode_tags(text, [(0, 5), (7, 14)], [0, 1], _probs(["I-Disease", "I-Disease"], BIO), BIO)
    assert [text[s.start : s.end] for s in spans] == ["fever", "Aspirin"]  # more than a space between them


def test_bioes_and_io_schemes() -> None:
    bioes = dict(enumerate(["O", "B-dis", "I-dis", "E-dis", "S-dis"]))
    text = "acute renal failure fever"
    offsets, ids = [(0, 5), (6, 11), (12, 19), (20, 25)], [0, 1, 2, 3]
    spans = decode_tags(text, offsets, ids, _probs(["B-dis", "I-dis", "E-dis", "S-dis"], bioes), bioes)
    assert [text[s.start : s.end] for s in spans] == ["acute renal failure", "fever"]
    io = dict(enumerate(["O", "Disease", "Chemical"]))
    spans = decode_tags(text, offsets, ids, _probs(["Disease", "Disease", "O", "Chemical"], io), io)
    assert [(text[s.start : s.end], s.label) for s in spans] == [
        ("acute renal", "Disease"),
        ("fever", "Chemical"),
    ]


def test_overlaps_keep_the_longer_then_the_surer_span_and_trim_drops_punctuation() -> None:
    a, b, c = (
        ModelSpan(0, 10, "x", 0.6, "token"),
        ModelSpan(5, 8, "x", 0.99, "gliner"),
        ModelSpan(12, 15, "x", 0.5, "token"),
    )
    d = ModelSpan(12, 15, "y", 0.7, "gliner")
    assert resolve_overlaps([b, c, a, d]) == [a, d]
    assert trim("(fever), x", ModelSpan(0, 8, "x", 0.5, "token")) == ModelSpan(1, 6, "x", 0.5, "token")
    assert trim("...", ModelSpan(0, 3, "x", 0.5, "token")) is None


# --- merge rules ---------------------------------------------------------------------------------


class FakePass:
    """Returns the spans given for each text (by its exact text); counts its calls."""

    def __init__(self, spans: dict[str, list[tuple[str, str, float]]], source: str) -> None:
        self.spans, self.source, self.calls = spans, source, 0

    def _spans(self, text: str) -> list[ModelSpan]:
        out = []
        for surface, label, score in self.spans.get(text, []):
            start = text.index(surface)
            out.append(ModelSpan(start, start + len(surface), label, score, self.source))
        return out

    def predict(self, texts: Sequence[str], languages: Sequence[str] | None = None) -> list[list[ModelSpan]]:
        self.calls += 1
        return [self._spans(t) for t in texts]


def _extractor(
    vocab: Vocabulary, gliner: FakePass | None = None, token: FakePass | None = None, **cfg: object
) -> EntityExtractor:
    paths: dict[str, object] = (
        {"gliner_model_path": "/unused"} if gliner else {"token_model_paths": {"en": "/unused"}}
    )
    ner = NerConfig(kind="cascade", **paths, **cfg)  # type: ignore[arg-type]
    extractor = EntityExtractor(vocab, ner.model_copy(update={"kind": "gazetteer"}), LinkingConfig())
    extractor.cascade = CascadeNER(ner, gliner=gliner, token=token)
    return extractor


def _found(extractor: EntityExtractor, text: str, lang: str = "en") -> list[tuple[str, str | None, str]]:
    mentions = extractor.extract(text, lang)
    assert all(text[m.start : m.end] == m.surface for m in mentions)
    return [(m.surface, m.mesh_id, m.method) for m in mentions]


def test_a_model_only_span_is_kept_when_it_links_to_an_agreeing_category(vocab: Vocabulary) -> None:
    text = "Raised blood pressure and high blood pressure was seen."
    gliner = FakePass({text: [("high blood pressure", "disease", 0.9)]}, "gliner")
    # rule 1: a span equal to a gazetteer mention adds nothing
    assert _found(_extractor(vocab, gliner), text) == [("high blood pressure", "D006973", "exact")]
    text = "She had hypertensions."  # plural: the gazetteer has no variant for it, the linker normalises it
    gliner = FakePass({text: [("hypertensions", "disease", 0.9)]}, "gliner")
    assert _found(_extractor(vocab, gliner, plural_variants=False), text) == [
        ("hypertensions", "D006973", "gliner+normalised")
    ]


def test_a_model_only_span_that_does_not_link_or_disagrees_is_dropped(vocab: Vocabulary) -> None:
    text = "Zorbulent syndrome with hypertensions."
    gliner = FakePass(
        {text: [("Zorbulent syndrome", "disease", 0.95), ("hypertensions", "drug", 0.95)]}, "gliner"
    )
    extractor = _extractor(vocab, gliner, plural_variants=False)
    assert _found(extractor, text) == []  # no link; a "drug" linked to a disease
    assert extractor.cascade is not None and extractor.cascade.stats["linked"] == 1
    assert extractor.cascade.stats["kept"] == 0


def test_gazetteer_links_stand_unless_a_longer_span_links_to_another_descriptor(vocab: Vocabulary) -> None:
    text = "Type 2 diabetes mellitus and metastatic breast cancer, diabetes mellitus."
    # "Type 2 ..." contains "diabetes mellitus" and links to type 2: it replaces it; "metastatic breast
    # cancer" links to Breast Neoplasms like its part: the part stays; "diabetes" is inside a mention
    spans = [
        ("Type 2 diabetes mellitus", "disease", 0.9),
        ("metastatic breast cancer", "disease", 0.9),
        ("diabetes", "disease", 0.9),
    ]
    gliner = FakePass({text: spans}, "gliner")
    token = FakePass({text: [("cancer, diabetes", "Disease", 0.9)]}, "token")  # crosses two mentions: nothing
    found = _found(_extractor(vocab, gliner, token), text)
    assert found == [
        ("Type 2 diabetes mellitus", "D003924", "gliner+normalised"),
        ("breast cancer", "D001943", "exact"),
        ("diabetes mellitus", "D003920", "exact"),
    ]


def test_thresholds_and_unmapped_labels(vocab: Vocabulary) -> None:
    text = "She had hypertensions and fevers."
    gliner = FakePass({text: [("hypertensions", "disease", 0.4)]}, "gliner")  # under gliner_threshold 0.5
    token = FakePass({text: [("fevers", "temperature", 0.99)]}, "token")  # tag type not in token_labels
    assert _found(_extractor(vocab, gliner, token, plural_variants=False), text) == []
    token = FakePass({text: [("fevers", "sym", 0.99)]}, "token")  # CMeEE-style code: Symptom or Disease
    found = _found(_extractor(vocab, None, token, plural_variants=False, token_threshold=0.95), text)
    assert found == [("fevers", "D005334", "token+normalised")]


def test_overlapping_model_spans_keep_the_longer_linked_one(vocab: Vocabulary) -> None:
    text = "Treated for type 2 diabetes mellitus."
    gliner = FakePass({text: [("type 2 diabetes mellitus", "disease", 0.6)]}, "gliner")
    token = FakePass({text: [("2 diabetes mellitus", "Disease", 0.99)]}, "token")  # does not link
    found = _found(_extractor(vocab, gliner, token), text)
    assert found == [("type 2 diabetes mellitus", "D003924", "gliner+normalised")]


def test_extract_many_runs_each_model_pass_once_per_batch(vocab: Vocabulary) -> None:
    texts = ["She had hypertensions.", "Fieber und Diabetes.", "糖尿病患者", "metformin"]
    gliner = FakePass({texts[0]: [("hypertensions", "disease", 0.9)]}, "gliner")
    token = FakePass({}, "token")
    extractor = _extractor(vocab, gliner, token, plural_variants=False)
    batched = extractor.extract_many(texts, ["en", "de", "zh", "en"])
    assert gliner.calls == 1 and token.calls == 1
    assert batched == [
        extractor.extract(t, lang) for t, lang in zip(texts, ["en", "de", "zh", "en"], strict=True)
    ]
    assert [m.surface for m in batched[0]] == ["hypertensions"] and [m.surface for m in batched[3]] == [
        "metformin"
    ]


def test_abbreviation_definitions_still_win_over_model_spans(vocab: Vocabulary) -> None:
    text = "Patients with hypertensions (HTN) were followed; HTN improved."
    gliner = FakePass({text: [("HTN", "drug", 0.9)]}, "gliner")
    found = _found(_extractor(vocab, gliner, plural_variants=False), text)
    assert ("HTN", "D006973", "abbreviation") in found


def test_the_cascade_needs_a_model_path(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="gliner_model_path or ner.token_model_paths"):
        NerConfig(kind="cascade")
    with pytest.raises(ValueError, match="one of"):
        NerConfig(gliner_labels={"disease": ("Illness",)})
    assert NerConfig().kind == "gazetteer"  # the default stays the offline tier


def test_the_commented_cascade_example_of_the_cluster_config_is_valid() -> None:
    """Uncommenting the ``ner:`` model-tier lines and the GPU extract pool of configs/cluster.yaml
    gives a config that loads (the example stays in step with ``NerConfig``)."""
    import re

    import yaml

    from medgraph.config.models import PipelineConfig

    lines = (Path(__file__).resolve().parents[2] / "configs" / "cluster.yaml").read_text().splitlines()
    start = lines.index("ner:")
    setting = re.compile(r"^  # [a-z_]+: ")  # a commented setting, not prose
    block = ["ner:"] + [
        line.replace("  # ", "  ", 1) for line in lines[start + 1 : start + 20] if setting.match(line)
    ]
    ner = NerConfig(**yaml.safe_load("\n".join(block))["ner"] | {"kind": "cascade"})
    assert ner.device == "cuda" and set(ner.token_model_paths) == {"en", "de", "zh"}
    assert ner.gliner_model_path and ner.gliner_languages == ("en", "de")
    gpu = next(line for line in lines if line.startswith("  # extract:") and "num_gpus" in line)
    pool = yaml.safe_load(gpu.replace("  # extract:", "extract:", 1).split("#")[0])["extract"]
    assert PipelineConfig(extract=pool).extract.num_gpus == 0.25


def test_query_analysis_links_the_cascades_spans(vocab: Vocabulary) -> None:
    """Questions go through the same extractor as chunks: a span only the model finds becomes one of
    the question's entities (its PPR seeds and translations)."""
    from medgraph.retrieve.query import QueryAnalyzer

    question = "Do hypertensions need treatment?"
    gliner = FakePass({question: [("hypertensions", "disease", 0.9)]}, "gliner")
    plain = QueryAnalyzer(EntityExtractor(vocab, NerConfig(plural_variants=False), LinkingConfig()), 0)
    cascade = QueryAnalyzer(_extractor(vocab, gliner, plural_variants=False), 0)
    assert "D006973" not in plain.analyze(question, "en").entity_ids  # the dictionary alone misses it
    assert "D006973" in cascade.analyze(question, "en").entity_ids
