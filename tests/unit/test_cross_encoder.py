"""The cross-encoder reranker (model tier) on a tiny model built here from a config.

Nothing is downloaded: a WordPiece tokenizer is trained on a few medical sentences and a 2-layer
BERT sequence classifier (hidden size 32, one logit) with seeded random weights is saved into a
temporary directory. That proves loading, batching, truncation, calibration and device checks;
ranking quality of a real reranker cannot be measured here.

Tests that need torch/transformers/tokenizers (the ``ml`` extra) skip when those are missing; the
argument, path and import checks run without them.
"""

from __future__ import annotations

import math
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from medgraph.retrieve.cross_encoder import CrossEncoderReranker
from medgraph.retrieve.rerank_base import Reranker, RerankerError
from tests.helpers import require_module

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # belt and braces: loading is local_files_only anyway
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # later tests fork (Ray); no tokenizer pool

ML_REASON = "model tier not installed (pip install 'medgraph[ml]'): {} is not importable"
KEYWORDS = ["aspirin", "insulin", "warfarin", "metformin", "asthma", "malaria", "sepsis", "migraine"]
QUESTION = "does {} improve outcomes in adults ?"
RELEVANT = "in this cohort {} was given to patients and outcomes were recorded ."
IRRELEVANT = "in this cohort nothing was given to patients and outcomes were recorded ."
CORPUS = [
    "Aspirin reduces the risk of myocardial infarction in patients with coronary artery disease.",
    "Insulin therapy lowers blood glucose in type 2 diabetes mellitus.",
    "Warfarin prevents stroke in atrial fibrillation but increases the risk of bleeding.",
    "Metformin is the first line treatment of type 2 diabetes.",
    "Inhaled corticosteroids control asthma symptoms in children and adults.",
    "Malaria is transmitted by mosquitoes and treated with artemisinin combination therapy.",
    "Early antibiotics improve survival in sepsis and septic shock.",
    "Migraine attacks respond to triptans; prophylaxis reduces their frequency.",
    "The trial measured blood pressure, heart rate and renal function in elderly patients.",
    "Chronic kidney disease progression was slower in the treatment group than with placebo.",
    "Randomised controlled trials remain the reference standard for evaluating therapy.",
    "Adverse events, mortality and hospital admissions were recorded during follow up.",
    *(QUESTION.format(k) for k in KEYWORDS),
    *(RELEVANT.format(k) for k in KEYWORDS),
    IRRELEVANT,
]
MAX_POSITIONS = 128


# --- checks that need no torch ------------------------------------------------------------------

NO_TORCH_SCRIPT = """
import sys
sys.modules["torch"] = None  # any import of torch now raises ImportError
from medgraph.retrieve.cross_encoder import CrossEncoderReranker
from medgraph.retrieve.rerank_base import RerankerError
try:
    CrossEncoderReranker({path!r})
except RerankerError as exc:
    print("error:", exc)
"""


def test_module_imports_without_torch_and_building_names_the_extra(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    script = NO_TORCH_SCRIPT.format(path=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("error:")
    assert "medgraph[ml]" in out.stdout


def test_missing_model_directory_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "bge-reranker-v2-m3"
    with pytest.raises(RerankerError, match="model directory not found") as info:
        CrossEncoderReranker(str(missing))
    assert str(missing) in str(info.value)


def test_directory_without_a_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RerankerError, match="no config.json") as info:
        CrossEncoderReranker(str(tmp_path))
    assert str(tmp_path) in str(info.value)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"batch_size": 0}, "batch_size"), ({"temperature": 0.0}, "temperature"), ({"max_length": 2}, "max_length")],
)
def test_bad_arguments_are_rejected(tmp_path: Path, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        CrossEncoderReranker(str(tmp_path), **kwargs)


# --- the tiny model -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def torch() -> Iterator[Any]:
    """torch, with one intra-op thread while this module runs (fastest for a tiny model, and no
    OpenMP spinning on a busy 2-CPU host); skips the test when the ``ml`` extra is missing."""
    torch = require_module("torch", reason=ML_REASON.format("torch"))
    for name in ("transformers", "tokenizers"):
        require_module(name, reason=ML_REASON.format(name))
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield torch
    torch.set_num_threads(before)


def _train_tokenizer() -> Any:
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(CORPUS, trainers.WordPieceTrainer(vocab_size=400, special_tokens=specials))
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
    )
    tok.decoder = decoders.WordPiece()
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
        sep_token="[SEP]", mask_token="[MASK]", model_max_length=MAX_POSITIONS,
        model_input_names=["input_ids", "token_type_ids", "attention_mask"],  # BERT reads segment ids
    )


def _random_model(torch: Any, vocab_size: int, num_labels: int = 1) -> Any:
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=MAX_POSITIONS, num_labels=num_labels,
        initializer_range=0.2,  # wider than BERT's 0.02 so random scores differ visibly between passages
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,  # the toy training converges for any seed
    )
    return BertForSequenceClassification(config)


def _save(path: Path, tokenizer: Any, model: Any) -> Path:
    tokenizer.save_pretrained(str(path))
    model.save_pretrained(str(path))
    return path


@pytest.fixture(scope="module")
def tokenizer(torch: Any) -> Any:
    return _train_tokenizer()


@pytest.fixture(scope="module")
def model_dir(torch: Any, tokenizer: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    model = _random_model(torch, len(tokenizer))
    return _save(tmp_path_factory.mktemp("tiny-reranker"), tokenizer, model)


@pytest.fixture(scope="module")
def reranker(model_dir: Path) -> CrossEncoderReranker:
    return CrossEncoderReranker(str(model_dir), batch_size=4)


def _passages() -> list[str]:
    """Passages of very different lengths, so sorting by length reorders them."""
    out = [sentence * (1 + (i * 7) % 5) for i, sentence in enumerate(CORPUS[:11])]
    out.insert(3, "asthma")
    return out


# --- loading and scoring ------------------------------------------------------------------------


def test_loads_from_a_local_directory(reranker: CrossEncoderReranker, model_dir: Path) -> None:
    assert isinstance(reranker, Reranker)
    assert reranker.name == f"cross-encoder:{model_dir.name}"
    assert str(reranker.device) == "cpu"
    assert reranker.max_length == MAX_POSITIONS  # 512 requested, capped to the model's limit
    assert not reranker.model.training


def test_scores_are_in_the_unit_interval_one_per_passage(reranker: CrossEncoderReranker) -> None:
    passages = _passages()
    scores = reranker.score(QUESTION.format("aspirin"), passages)
    assert len(scores) == len(passages)
    assert all(isinstance(s, float) and 0.0 < s < 1.0 for s in scores)
    assert reranker.score("anything", []) == []


def test_order_is_preserved_under_batching(model_dir: Path, reranker: CrossEncoderReranker) -> None:
    question, passages = QUESTION.format("sepsis"), _passages()
    one_by_one = CrossEncoderReranker(str(model_dir), batch_size=1).score(question, passages)
    batched = reranker.score(question, passages)  # batch_size 4 < 12 passages, sorted by length
    assert max(one_by_one) - min(one_by_one) > 1e-3  # scores differ, so a permutation would show
    assert batched == pytest.approx(one_by_one, abs=1e-5)
    reversed_scores = reranker.score(question, passages[::-1])
    assert reversed_scores[::-1] == pytest.approx(one_by_one, abs=1e-5)


def test_score_is_sigmoid_of_the_logit_over_temperature(
    torch: Any, tokenizer: Any, model_dir: Path, reranker: CrossEncoderReranker
) -> None:
    question, passages = QUESTION.format("malaria"), _passages()[:5]
    with torch.inference_mode():
        enc = tokenizer([question] * len(passages), passages, padding=True, return_tensors="pt")
        logits = reranker.model(**enc).logits.view(-1).tolist()
    hot = CrossEncoderReranker(str(model_dir), temperature=2.5)
    for logit, t1, t25 in zip(logits, reranker.score(question, passages), hot.score(question, passages), strict=True):
        assert t1 == pytest.approx(1 / (1 + math.exp(-logit)), abs=1e-5)
        assert t25 == pytest.approx(1 / (1 + math.exp(-logit / 2.5)), abs=1e-5)


def test_a_very_long_passage_is_truncated(model_dir: Path, reranker: CrossEncoderReranker) -> None:
    question, head = QUESTION.format("insulin"), RELEVANT.format("insulin")
    filler = " blood pressure was recorded in elderly patients"
    very_long, long_enough = head + filler * 2000, head + filler * 20  # ~14,000 words vs ~160
    short = CrossEncoderReranker(str(model_dir), max_length=32)
    s_very_long, s_long_enough = short.score(question, [very_long, long_enough])
    assert 0.0 < s_very_long < 1.0
    assert s_very_long == pytest.approx(s_long_enough, abs=1e-6)  # both cut to the same 32 tokens
    # at the default length (capped to the model's 128 positions) it still scores, no index error
    assert 0.0 < reranker.score(question, [very_long])[0] < 1.0


# --- devices and model shape --------------------------------------------------------------------


def test_cuda_without_cuda_is_a_clear_error(torch: Any, model_dir: Path) -> None:
    if torch.cuda.is_available():
        pytest.skip("CUDA is available on this machine")  # skip-ok: the error path exists only without CUDA
    for device in ("cuda", "cuda:0"):
        with pytest.raises(RerankerError, match="CUDA is not available"):
            CrossEncoderReranker(str(model_dir), device=device)


def test_unknown_device_is_a_clear_error(torch: Any, model_dir: Path) -> None:
    with pytest.raises(RerankerError, match="unknown reranker device 'tpu'"):
        CrossEncoderReranker(str(model_dir), device="tpu")


def test_a_model_with_two_labels_is_rejected(torch: Any, tokenizer: Any, tmp_path: Path) -> None:
    path = _save(tmp_path / "two-labels", tokenizer, _random_model(torch, len(tokenizer), num_labels=2))
    with pytest.raises(RerankerError, match="num_labels=2"):
        CrossEncoderReranker(str(path))


# --- the head is wired to the logits ------------------------------------------------------------


def _train_keyword_relevance(torch: Any, tokenizer: Any, model: Any, steps: int = 50) -> None:
    """Teach the model that a passage naming the question's keyword is relevant."""
    rng = random.Random(0)
    optimiser = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(steps):
        keywords = [rng.choice(KEYWORDS) for _ in range(16)]
        labels = [float(rng.random() < 0.5) for _ in keywords]
        passages = [RELEVANT.format(k) if y else IRRELEVANT for k, y in zip(keywords, labels, strict=True)]
        enc = tokenizer([QUESTION.format(k) for k in keywords], passages, padding=True, return_tensors="pt")
        logits = model(**enc).logits.view(-1)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, torch.tensor(labels))
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    model.eval()


@pytest.fixture(scope="module")
def trained_dir(torch: Any, tokenizer: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    model = _random_model(torch, len(tokenizer))  # same seed as ``model_dir``: only training differs
    _train_keyword_relevance(torch, tokenizer, model)
    return _save(tmp_path_factory.mktemp("trained-reranker"), tokenizer, model)


def test_trained_head_ranks_the_keyword_passage_first(trained_dir: Path, reranker: CrossEncoderReranker) -> None:
    trained = CrossEncoderReranker(str(trained_dir), batch_size=3)
    for keyword in KEYWORDS:
        question = QUESTION.format(keyword)
        passages = [IRRELEVANT, RELEVANT.format(keyword)]
        irrelevant, relevant = trained.score(question, passages)
        assert relevant > 0.5 > irrelevant and relevant - irrelevant > 0.8, (keyword, relevant, irrelevant)
        before = reranker.score(question, passages)  # the same weights before training: no such preference
        assert abs(before[1] - before[0]) < 0.1


def test_config_selects_the_cross_encoder_for_candidate_reranking(trained_dir: Path) -> None:
    from medgraph.config.models import RerankConfig
    from medgraph.retrieve.rerank import make_reranker
    from medgraph.retrieve.types import Candidate
    from medgraph.schemas import Chunk

    def candidate(chunk_id: str, parent_text: str, score: float) -> Candidate:
        chunk = Chunk(chunk_id, "doc", 0, parent_text[:20], [], "p-" + chunk_id, parent_text, 10, "en")
        return Candidate(chunk_id=chunk_id, score=score, chunk=chunk)

    cfg = RerankConfig(kind="cross_encoder", model_path=str(trained_dir), batch_size=2)
    reranker = make_reranker(cfg)
    assert reranker.name == f"cross-encoder:{trained_dir.name}"
    fused = [candidate("c1", IRRELEVANT, 0.9), candidate("c2", RELEVANT.format("warfarin"), 0.1)]
    ranked = reranker.rerank(QUESTION.format("warfarin"), fused)
    assert [c.chunk_id for c in ranked] == ["c2", "c1"]  # the parent text, not the fused score, decides
    assert ranked[0].relevance > 0.5 > ranked[1].relevance
