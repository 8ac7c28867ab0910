"""Dense embedder: multilingual-e5-small with int8 matrix products through ONNX Runtime.

The same model file, tokeniser, windows and pooling as ``medgraph/embed/e5.py`` (this class
extends ``E5Embedder``); only the twelve encoder layers run elsewhere. At load they are written as
one ONNX graph in memory (nothing is written to disk, nothing is downloaded):

- every weight matrix is quantised to int8 per output column (symmetric) from the float32 weights
  ``E5Embedder`` dequantises from the file's 4-bit blocks, and multiplied through ONNX Runtime's
  integer kernels (MLAS: AVX-512 VNNI / AVX-VNNI / AMX where the CPU has them);
- activations are quantised to 8 bit on every call: with one scale per call
  (``DynamicQuantizeMatMul``), except the feed-forward output product, whose input (GELU outputs:
  mostly near zero, a few tokens and channels large) gets one scale per token (``MatMulInteger``
  over uint8 with zero point 128);
- attention runs as ONNX Runtime's ``MultiHeadAttention`` (float32); LayerNorm, GELU and the
  residual additions stay float32.

Each window runs as its own call, unpadded: without a padding mask ONNX Runtime takes its
flash-attention kernel; with a mask, attention over ~300-token abstracts cost more than all the
matrix products together. A 300-row product is large enough for the integer kernels.

The word-embedding lookup, the position and type embeddings and the first LayerNorm run in numpy
as in ``E5Embedder`` (the 250k-row table stays 4-bit, memory-mapped). Threads: as in
``E5Embedder``, ``threads`` worker threads each run whole batches, every ONNX Runtime call on one
intra-op thread (the session is shared; ``run`` is thread-safe and releases the GIL).

Speed and fidelity (``python benchmarks/embedders.py --only e5_dense e5_int8_dense``) and retrieval
quality against the float32 path: docs/retrieval.md ("Dense path").
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from medgraph.embed.base import EmbedderError, FloatArray
from medgraph.embed.e5 import E5Embedder
from medgraph.embed.e5_kernels import dequantise_q4_0

_OPSET = 18  # LayerNormalization (17), ReduceMax with its axes as an input (18)
_MS = "com.microsoft"  # ONNX Runtime's contrib operators: DynamicQuantizeMatMul, MultiHeadAttention, Gelu


def quantise_columns(weight: FloatArray) -> tuple[NDArray[np.int8], FloatArray]:
    """Symmetric int8 per output column of an ``(in, out)`` matrix: ``weight ~ q * scale``."""
    peak = np.abs(weight).max(axis=0)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(weight / scale), -127, 127).astype(np.int8)
    return q, scale


class E5Int8Embedder(E5Embedder):
    """multilingual-e5-small (int8 weights, 8-bit activations, ONNX Runtime kernels), batched."""

    name = "multilingual-e5-small-int8"
    # products whose activations get one scale per token (the rest: one per call). Cosine to the
    # float32 path over 24 PubMedQA abstracts: 0.9973 with none, 0.9993 with the feed-forward output
    # (fo), 0.9995 with fi as well at 8% less speed (docs/retrieval.md)
    row_parts: frozenset[str] = frozenset({"fo"})

    # ------------------------------------------------------------------ loading
    def _load_encoder(self) -> None:
        try:
            import onnxruntime as ort
        except ImportError as exc:  # pragma: no cover - core dependencies
            raise EmbedderError("embedder 'e5_int8' needs the packages onnxruntime and onnx") from exc
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1  # parallelism comes from the worker threads, one batch each
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        graph = self._graph().SerializeToString()
        try:
            self._session = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # an ONNX Runtime without the contrib kernels, or a broken build
            raise EmbedderError(f"e5_int8: ONNX Runtime could not load the encoder: {exc}") from exc
        self._layers = []  # the float32 path's layers are not built

    def _graph(self) -> Any:
        """The encoder layers as an ONNX model: input ``x`` ``(1, L, H)`` (embedded tokens of one
        window), output ``hidden`` ``(1, L, H)`` (last hidden states)."""
        try:
            from onnx import TensorProto, helper, numpy_helper
        except ImportError as exc:  # pragma: no cover - core dependencies
            raise EmbedderError("embedder 'e5_int8' needs the packages onnxruntime and onnx") from exc

        hidden, f32 = self._hidden, self._f32
        nodes: list[Any] = []
        inits: list[Any] = []

        def const(name: str, value: NDArray[Any]) -> str:
            inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
            return name

        def node(op: str, inputs: list[str], output: str, domain: str = "", **attrs: Any) -> str:
            nodes.append(helper.make_node(op, inputs, [output], name=output, domain=domain, **attrs))
            return output

        def per_token(x: str, w: str, scale: str, bias: str, t: str) -> str:
            """``x @ w`` with one symmetric 8-bit scale per row of ``x`` (uint8, zero point 128)."""
            peak = node("ReduceMax", [node("Abs", [x], t + ".abs"), "last_axis"], t + ".peak", keepdims=1)
            row_scale = node("Max", [node("Div", [peak, "q127"], t + ".rs0"), "tiny"], t + ".rs")
            xr = node("Add", [node("Round", [node("Div", [x, row_scale], t + ".xs")], t + ".xr0"), "f128"], t + ".xr")
            xq = node("Cast", [xr], t + ".xq", to=TensorProto.UINT8)
            acc = node("MatMulInteger", [xq, w, "u128"], t + ".acc")
            y = node("Mul", [node("Cast", [acc], t + ".accf", to=TensorProto.FLOAT), row_scale], t + ".y0")
            return node("Add", [node("Mul", [y, scale], t + ".y1"), bias], t)

        def linear(x: str, tensor: str, n_in: int) -> str:
            """``x @ W.T + b`` for the file's Q4_0 matrix ``tensor.w`` (``(out, in)``) and ``tensor.b``."""
            q, scale = quantise_columns(np.ascontiguousarray(dequantise_q4_0(self._q4(tensor + ".w", n_in)).T))
            w, s = const(tensor + ".w", q), const(tensor + ".s", scale)
            bias = const(tensor + ".b", f32(tensor + ".b"))
            if tensor.rsplit(".", 1)[-1] in self.row_parts:
                return per_token(x, w, s, bias, tensor)
            return node("DynamicQuantizeMatMul", [x, w, s, "", bias], tensor, domain=_MS)

        def add_norm(x: str, residual: str, name: str) -> str:
            return node(
                "LayerNormalization",
                [node("Add", [x, residual], name + ".res"), const(name + ".w", f32(name + ".w")), const(name + ".b", f32(name + ".b"))],
                name,
                axis=-1,
                epsilon=self._eps,
            )

        const("last_axis", np.array([-1], dtype=np.int64))
        const("q127", np.array(127.0, dtype=np.float32))
        const("tiny", np.array(1e-12, dtype=np.float32))
        const("f128", np.array(128.0, dtype=np.float32))
        const("u128", np.array(128, dtype=np.uint8))
        x = "x"
        for i in range(self._n_layers):
            p = f"l{i}."
            q, k, v = (linear(x, p + part, hidden) for part in ("q", "k", "v"))
            ctx = node("MultiHeadAttention", [q, k, v], p + "mha", domain=_MS, num_heads=self._heads)
            x = add_norm(x, linear(ctx, p + "ao", hidden), p + "aln")
            mid = node("Gelu", [linear(x, p + "fi", hidden)], p + "gelu", domain=_MS)
            x = add_norm(x, linear(mid, p + "fo", self._ffn), p + "oln")
        nodes.append(helper.make_node("Identity", [x], ["hidden"], name="hidden"))
        graph = helper.make_graph(
            nodes,
            "e5_small_int8",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "len", hidden])],
            [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, [1, "len", hidden])],
            inits,
        )
        return helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", _OPSET), helper.make_opsetid(_MS, 1)], ir_version=8
        )

    # ---------------------------------------------------------------- forward
    def _encode(self, x: FloatArray, valid: NDArray[np.bool_]) -> FloatArray:
        """Each window alone and unpadded (flash attention needs no mask); the padding rows of the
        result are zero (the pooling ignores them)."""
        n, length = valid.shape
        x3 = x.reshape(n, length, self._hidden)
        out = np.zeros_like(x3)
        for row, ln in enumerate(valid.sum(axis=1).tolist()):
            out[row, :ln] = self._session.run(["hidden"], {"x": x3[row : row + 1, :ln]})[0][0]
        return out
