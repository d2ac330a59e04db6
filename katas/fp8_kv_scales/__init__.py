"""fp8_kv_scales: quantize a KV cache to FP8 E4M3 with per-tensor and per-head scales.

Fill in every function. The prompt is katas/fp8_kv_scales/README.md; run the public tests
with ``nox -s kata -- fp8_kv_scales``.

The format is OCP FP8 E4M3 in its "E4M3FN" variant: 1 sign bit, 4 exponent bits (bias 7),
3 mantissa bits; largest finite value 448, smallest normal 2^-6, subnormals down to 2^-9,
no infinities, NaN only as S.1111.111 (codes 0x7F and 0xFF).

Shapes: a cache tensor is ``(T, H, D)``: tokens, KV heads, head dimension. A ``scale`` is a
positive finite float (per tensor) or a 1-D array of ``H`` positive finite floats (per
head: ``scale[h]`` applies to every ``x[..., h, :]``; x must then have shape ``(..., H, D)``).
Every function is pure: it never modifies its arguments. Bad input raises ValueError.
"""

from __future__ import annotations

import numpy as np

_PROMPT = "see katas/fp8_kv_scales/README.md"

#: The largest finite E4M3 (E4M3FN) value: 0b0.1111.110 = 1.75 * 2^8.
E4M3_MAX = 448.0


def encode_e4m3(x: np.ndarray) -> np.ndarray:
    """The E4M3 codes of ``x``: a ``uint8`` array of the same shape.

    ``x``: a real numeric array (float16/32/64 or integer; a Python number is a 0-d array).
    Each value is rounded once, from its exact value, to the nearest E4M3 value, ties to
    the even code (mantissa bit 0 clear); subnormals are used, never flushed. A finite
    value beyond 448 in magnitude, and ``+-inf``, saturates to ``+-448`` (0x7E, 0xFE). NaN
    encodes to a NaN code (0x7F or 0xFF; either is accepted). Otherwise the sign bit is the
    input's sign bit, also for a result of zero (``-0.0`` and ``-1e-9`` give 0x80).

    Raises ValueError for a non-numeric, boolean or complex array.
    """
    raise NotImplementedError(f"encode_e4m3 ({_PROMPT})")


def decode_e4m3(codes: np.ndarray) -> np.ndarray:
    """The values of E4M3 ``codes`` as a ``float32`` array of the same shape.

    ``codes``: an integer array (any integer dtype) with every entry in ``[0, 255]``.
    0x7F and 0xFF decode to NaN; 0x80 decodes to ``-0.0``.

    Raises ValueError for a non-integer (or boolean) array or a value outside ``[0, 255]``.
    """
    raise NotImplementedError(f"decode_e4m3 ({_PROMPT})")


def quantize(x: np.ndarray, scale: float | np.ndarray) -> np.ndarray:
    """``encode_e4m3(x / scale)``, the division done in float64: ``uint8`` codes.

    ``scale`` is a positive finite float (per tensor) or a 1-D array of ``H`` of them (per
    head, for ``x`` of shape ``(..., H, D)``: ``x[..., h, :]`` is divided by ``scale[h]``).

    Raises ValueError for a scale that is not finite and > 0, a per-head scale whose length
    is not ``x.shape[-2]`` (or an ``x`` with fewer than 2 dimensions), a scale with more
    than one dimension, or an ``x`` that ``encode_e4m3`` refuses.
    """
    raise NotImplementedError(f"quantize ({_PROMPT})")


def dequantize(codes: np.ndarray, scale: float | np.ndarray) -> np.ndarray:
    """``float64(decode_e4m3(codes)) * scale``: a ``float64`` array of the codes' shape.

    ``scale`` as in ``quantize`` (per head along axis -2). The product is one float64
    multiplication per entry.

    Raises ValueError as ``decode_e4m3`` does and for a bad scale (as ``quantize``).
    """
    raise NotImplementedError(f"dequantize ({_PROMPT})")


def clip_fraction(x: np.ndarray, scale: float | np.ndarray) -> float:
    """The fraction of the entries of ``x`` that clip: ``|x| / scale > 448`` in float64.

    ``scale`` as in ``quantize``. An empty ``x`` gives 0.0; NaN entries never count as
    clipped, ``+-inf`` entries always do.

    Raises ValueError as ``quantize`` does.
    """
    raise NotImplementedError(f"clip_fraction ({_PROMPT})")


def calibrate_scale(samples: np.ndarray, per_head: bool = False,
                    margin: float = 1.0) -> float | np.ndarray:
    """The scale an amax rule picks from sample activations: ``amax * margin / 448``.

    ``amax`` is the largest ``|sample|``: over the whole array (``per_head=False``; returns a
    Python float), or, with ``per_head=True`` for samples of shape ``(..., H, D)``, over
    every axis except axis -2 (returns a ``(H,)`` float64 array). Computed in float64 in
    that order: ``(amax * margin) / 448``. A tensor (or head) whose amax is 0 gets scale
    1.0.

    Raises ValueError for empty samples, samples holding NaN or ``+-inf``, a margin that is
    not finite and > 0, or ``per_head=True`` with fewer than 2 dimensions.
    """
    raise NotImplementedError(f"calibrate_scale ({_PROMPT})")


def attention_error(q: np.ndarray, k: np.ndarray, v: np.ndarray,
                    scale_k: float | np.ndarray, scale_v: float | np.ndarray) -> np.ndarray:
    """Per-head relative error of one decode step's attention over the FP8 cache: ``(H,)``.

    ``q``: ``(H, D)``, one query per KV head. ``k``, ``v``: ``(T, H, D)``, ``T >= 1``.
    Exact: ``o[h] = softmax(q[h] @ k[:, h].T / sqrt(D)) @ v[:, h]`` with every step in
    float64. Quantized: the same float64 computation with ``k`` replaced by
    ``dequantize(quantize(k, scale_k), scale_k)`` and ``v`` likewise with ``scale_v``.
    Returns ``||o_quantized[h] - o[h]||_2 / ||o[h]||_2`` per head (just the numerator when
    ``o[h]`` is all zeros).

    Raises ValueError for shapes that do not match, ``T == 0``, non-finite q, k or v, or a
    bad scale (as ``quantize``).
    """
    raise NotImplementedError(f"attention_error ({_PROMPT})")
