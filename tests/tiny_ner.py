"""Tiny NER models for the cascade tests, built in a directory (random weights, nothing downloaded).

``save_tiny_token_model``: a 1-layer BERT token classifier with a WordPiece tokenizer; with
``force`` its classifier weights are zeroed and its bias makes that tag win on every piece, so its
output is known exactly. ``save_tiny_gliner``: a GLiNER span model on a 1-layer BERT backbone.
Both need the ``ml-test`` extra (torch, transformers, gliner).
"""

from __future__ import annotations

from pathlib import Path

TAGS = ("O", "B-Disease", "I-Disease", "B-Chemical", "I-Chemical")
_WORDS = (
    "patients with type 2 diabetes mellitus were treated with and aspirin for fever the of in a "
    "mit und der die bei wurde behandelt fieber ( ) , . - 糖 尿 病 患 者"
).split()


def _save_tokenizer(path: Path) -> None:
    """A BERT-style WordPiece tokenizer over a fixed vocabulary ("metformin" is two pieces)."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    pieces = ["##" + c for c in "abcdefghijklmnopqrstuvwxyzäöüß"] + list(
        "abcdefghijklmnopqrstuvwxyz0123456789äöüß"
    )
    vocab = list(
        dict.fromkeys(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *_WORDS, "met", "##formin", *pieces])
    )
    tok = Tokenizer(models.WordPiece({w: i for i, w in enumerate(vocab)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True, handle_chinese_chars=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab.index("[CLS]")), ("[SEP]", vocab.index("[SEP]"))],
    )
    tok.decoder = decoders.WordPiece()
    path.mkdir(parents=True, exist_ok=True)
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=128,
    ).save_pretrained(str(path))


def _bert_config(path: Path, **kw: object) -> object:
    from transformers import BertConfig

    vocab_size = len((path / "vocab.txt").read_text(encoding="utf-8").split())
    return BertConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        **kw,
    )


def save_tiny_token_model(path: Path, force: str | None = None) -> Path:
    """A token-classification model directory with the tags of ``TAGS``; ``force``: a tag that always wins."""
    import torch
    from transformers import BertForTokenClassification

    _save_tokenizer(path)
    torch.manual_seed(0)
    config = _bert_config(path, id2label=dict(enumerate(TAGS)), label2id={t: i for i, t in enumerate(TAGS)})
    model = BertForTokenClassification(config)  # type: ignore[arg-type]
    if force is not None:
        with torch.no_grad():
            model.classifier.weight.zero_()
            model.classifier.bias.fill_(0.0)
            model.classifier.bias[TAGS.index(force)] = 10.0
    model.save_pretrained(str(path))
    return path


def save_tiny_gliner(path: Path) -> Path:
    """A GLiNER directory (gliner_config.json, weights, tokenizer) on a tiny BERT backbone in ``path/backbone``."""
    import torch
    from gliner import GLiNER, GLiNERConfig
    from transformers import BertModel

    backbone = path / "backbone"
    _save_tokenizer(backbone)
    torch.manual_seed(0)
    BertModel(_bert_config(backbone)).save_pretrained(str(backbone))  # type: ignore[arg-type]
    config = GLiNERConfig(
        model_name=str(backbone), hidden_size=32, max_width=6, max_len=128, dropout=0.0, max_types=10
    )
    model = GLiNER.from_config(config, backbone_from_pretrained=True, local_files_only=True)
    model.save_pretrained(str(path / "gliner"))
    return path / "gliner"
