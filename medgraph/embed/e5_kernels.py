"""The numerical kernels of the e5 embedder: Q4_0 dequantisation, the exact (erf) GELU and
LayerNorm, in place on float32 numpy arrays (``medgraph/embed/e5.py`` runs the encoder with them)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from medgraph.embed.base import FloatArray

# erf(z) ~ 1 - t * poly(t) * exp(-z^2), t = 1 / (1 + p z), |error| <= 1.5e-7 (Abramowitz & Stegun
# 7.1.26). Used for the exact (erf) GELU: scipy's erf is not vectorised and would dominate the run.
_ERF_P = np.float32(0.3275911 / np.sqrt(2.0))  # applied to |x|, i.e. z = |x| / sqrt(2)
_ERF_A = tuple(
    np.float32(0.5 * c) for c in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
)
_GELU_ROWS = 16  # rows per elementwise chunk, so the temporaries stay in cache


def dequantise_q4_0(blocks: NDArray[Any]) -> FloatArray:
    """Q4_0 blocks of shape ``(rows, nb)`` to float32 weights of shape ``(rows, nb * 32)``.

    Block layout: an fp16 scale ``d`` and 16 bytes, byte ``j`` holding weight ``j`` in its low
    nibble and weight ``j + 16`` in its high nibble; a weight is ``(nibble - 8) * d``.
    """
    qs = blocks["qs"]
    vals = np.concatenate([qs & 0x0F, qs >> 4], axis=-1).astype(np.float32)
    vals -= 8.0
    vals *= blocks["d"].astype(np.float32)[..., None]
    out: FloatArray = vals.reshape(blocks.shape[0], -1)
    return out


def gelu(x: FloatArray) -> FloatArray:
    """Exact (erf) GELU, in place, in cache-sized row chunks."""
    for start in range(0, x.shape[0], _GELU_ROWS):
        v = x[start : start + _GELU_ROWS]
        ax = np.abs(v)
        t = ax * _ERF_P
        t += 1.0
        np.reciprocal(t, out=t)
        poly = t * _ERF_A[4]
        for coeff in _ERF_A[3::-1]:
            poly += coeff
            poly *= t
        e = np.square(v)
        e *= np.float32(-0.5)
        np.exp(e, out=e)
        poly *= e
        poly *= ax  # |x| * (1 - Phi(|x|))
        np.maximum(v, 0.0, out=v)
        v -= poly  # max(x, 0) - |x| * (1 - Phi(|x|)) == x * Phi(x) for either sign of x
    return x


def layer_norm(x: FloatArray, weight: FloatArray, bias: FloatArray, eps: float) -> FloatArray:
    """LayerNorm over the last axis of a 2-D array, in place."""
    x -= x.mean(axis=1, keepdims=True)
    var = np.einsum("ij,ij->i", x, x)
    var /= x.shape[1]
    var += eps
    x *= (1.0 / np.sqrt(var, dtype=np.float32))[:, None]
    x *= weight
    x += bias
    return x
