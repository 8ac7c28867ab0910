"""The model passes of cascade NER on tiny models built here (random weights, nothing downloaded).

A token classifier whose bias makes one tag win shows the real forward pass, the offsets and the
word-piece aggregation exactly; the raw-logits step is replaced to check the first-piece rule and
the windows of a long text; the tiny GLiNER runs end to end and must return well-formed spans. They
need the ``ml-test`` extra (torch, transformers, gliner) and fail without it under CI.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from medgraph.config.models import LinkingConfig, NerConfig
from medgraph.extract.cascade import CascadeNER
from medgraph.extract.spans import NerModelError
from tests.helpers import require_module
from tests.tiny_ner import TAGS, save_tiny_gliner, save_tiny_token_model

for _name in ("torch", "transformers", "gliner"):
    require_module(_name)

from medgraph.extract.gliner_ner import GlinerNER  # noqa: E402
from medgraph.extract.token_ner import TokenClassifierNER  # noqa: E402

TEXT = "Patients with type 2 diabetes mellitus were treated with metformin."


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("ner-models")
    return {
        "begin": save_tiny_token_model(root / "begin", force="B-Disease"),
        "inside": save_tiny_token_model(root / "inside", force="I-Chemical"),
        "gliner": save_tiny_gliner(root / "gliner"),
    }


def test_a_forced_begin_tag_makes_every_word_a_span_with_its_offsets(models: dict[str, Path]) -> None:
    ner = TokenClassifierNER({"en": str(models["begin"])})
    [spans] = ner.predict([TEXT], ["en"])
    words = [w.strip(".") for w in TEXT.split()] + ["."]
    assert [TEXT[s.start : s.end] for s in spans] == words  # "metformin" is two pieces, one word
    assert {s.label for s in spans} == {"Disease"} and all(
        s.score > 0.99 and s.source == "token" for s in spans
    )


def test_a_forced_inside_tag_joins_contiguous_words_and_languages_without_a_model_get_nothing(
    models: dict[str, Path],
) -> None:
    ner = TokenClassifierNER({"en": str(models["inside"]), "de": str(models["inside"])}, batch_size=2)
    texts = ["Fieber und Diabetes", TEXT, "aspirin", "糖尿病患者"]
    out = ner.predict(texts, ["de", "en", "en", "zh"])
    assert [[(t[s.start : s.end], s.label) for s in spans] for t, spans in zip(texts, out, strict=True)] == [
        [("Fieber und Diabetes", "Chemical")],
        [(TEXT, "Chemical")],
        [("aspirin", "Chemical")],
        [],
    ]


def test_first_piece_rule_and_long_texts_in_windows(
    models: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The logits step is replaced: B-Chemical on the first piece of "metformin" (its second piece
    says O, as an untrained piece would), and a text long enough for several windows."""
    ner = TokenClassifierNER({"en": str(models["begin"])}, max_length=16)
    tokenizer = ner.models["en"].tokenizer

    def logits(lm: Any, enc: dict[str, Any]) -> np.ndarray:
        ids = enc["input_ids"].numpy()
        out = np.zeros((*ids.shape, len(TAGS)), dtype=np.float32)
        out[..., TAGS.index("O")] = 5.0
        for w, row in enumerate(ids):
            for i, piece in enumerate(tokenizer.convert_ids_to_tokens(row.tolist())):
                if piece == "met":
                    out[w, i, TAGS.index("B-Chemical")] = 10.0
        return out

    monkeypatch.setattr(ner, "logits", logits)
    text = " ".join(["Patients with fever were treated with metformin ."] * 6)
    [spans] = ner.predict([text], ["en"])
    starts = [i for i in range(len(text)) if text.startswith("metformin", i)]
    assert [(s.start, s.end, s.label) for s in spans] == [
        (i, i + len("metformin"), "Chemical") for i in starts
    ]
    assert len(tokenizer(text)["input_ids"]) > 3 * 16  # it really took several windows
    long_text = " ".join(["Patients with fever were treated with metformin ."] * 20)  # > 128 positions
    default = TokenClassifierNER({"en": str(models["begin"])})  # max_length 256, but the model takes 128
    assert len(default.predict([long_text], ["en"])[0]) == len(long_text.split())


def test_gliner_runs_end_to_end_with_offsets_into_the_text(models: dict[str, Path]) -> None:
    labels = ["disease", "drug"]
    ner = GlinerNER(str(models["gliner"]), labels, threshold=0.01, batch_size=2)
    texts = [TEXT, "", "Aspirin for fever.", "Fieber und Diabetes mellitus"]
    out = ner.predict(texts)
    assert len(out) == 4 and out[1] == []
    assert sum(len(spans) for spans in out) > 0  # random weights give random, but some, spans at 0.01
    for text, spans in zip(texts, out, strict=True):
        for s in spans:
            assert (
                0 <= s.start < s.end <= len(text) and text[s.start : s.end].strip() == text[s.start : s.end]
            )
            assert s.label in labels and 0.01 <= s.score <= 1.0 and s.source == "gliner"
    assert ner.predict([texts[2]]) == [out[2]]  # a text's spans do not depend on its batch


def test_the_cascade_loads_both_passes_from_config(models: dict[str, Path]) -> None:
    cfg = NerConfig(
        kind="cascade",
        gliner_model_path=str(models["gliner"]),
        gliner_threshold=0.01,
        token_model_paths={"en": str(models["begin"])},
    )
    cascade = CascadeNER(cfg)
    [spans] = cascade.predict([TEXT], ["en"])
    assert {s.source for s in spans} == {"gliner", "token"}
    assert all(TEXT[s.start : s.end].strip(".") == TEXT[s.start : s.end] for s in spans)  # trimmed


def test_missing_weights_and_devices_are_clear_errors(tmp_path: Path, models: dict[str, Path]) -> None:
    missing = tmp_path / "no-such-model"
    with pytest.raises(NerModelError, match=f"no gliner_config.json in {missing}"):
        GlinerNER(str(missing), ["disease"])
    with pytest.raises(NerModelError, match=f"token NER model for 'de'.*no config.json in {missing}"):
        TokenClassifierNER({"en": str(models["begin"]), "de": str(missing)})
    from medgraph.link import EntityExtractor
    from medgraph.ontology.vocabulary import Vocabulary

    cfg = NerConfig(kind="cascade", token_model_paths={"zh": str(missing)})
    with pytest.raises(NerModelError, match=str(missing)):
        EntityExtractor(Vocabulary(entities={}, terms=[]), cfg, LinkingConfig())
    import torch

    if not torch.cuda.is_available():
        with pytest.raises(NerModelError, match="CUDA is not available"):
            TokenClassifierNER({"en": str(models["begin"])}, device="cuda")
