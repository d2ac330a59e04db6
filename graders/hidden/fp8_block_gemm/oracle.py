"""An oracle for fp8_block_gemm, independent of the reference.

Quantization: E4M3 through ``ml_dtypes.float8_e4m3fn`` casts from float64 (ties to even,
subnormals; it overflows to NaN above 464, so magnitudes are clamped to 448 first). Scales:
``np.float32`` of the float64 quotient (one rounding of an exact-enough value). The GEMM:
per output element, ``math.fsum`` of float64 products (exact: the true sum fits in float64,
and fsum returns the correctly rounded sum), then every float32 step as ``np.float32`` of a
float64 operation on float32 operands (exact for * and +, so one rounding). Loops over
elements on purpose: slow, small and obviously the prompt's definition.
"""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np

E4 = ml_dtypes.float8_e4m3fn
T = 128


def e4m3(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float64)
    return np.clip(v, -448.0, 448.0).astype(E4).astype(np.float64)


def _check_ml_dtypes() -> None:
    probe = np.array([2.0**-10, 3 * 2.0**-10, 17.0, 19.0, 1.0625, 2.0**-10 * (1 + 2.0**-40)])
    assert e4m3(probe).tolist() == [0.0, 2.0**-8, 16.0, 20.0, 1.0, 2.0**-9], \
        "oracle assumption: ml_dtypes float8_e4m3fn rounds float64 ties to even with subnormals"


_check_ml_dtypes()


def quantize(x: np.ndarray, rows: int) -> tuple[np.ndarray, np.ndarray]:
    m, k = x.shape
    nb_r, nb_k = -(-m // rows), -(-k // T)
    scales = np.zeros((nb_r, nb_k), dtype=np.float32)
    q = np.zeros((m, k), dtype=np.float32)
    for i in range(nb_r):
        for j in range(nb_k):
            blk = x[i * rows:(i + 1) * rows, j * T:(j + 1) * T].astype(np.float64)
            amax = float(np.abs(blk).max())
            s = np.float32(amax / 448.0) if amax > 0 else np.float32(1.0)
            scales[i, j] = s
            q[i * rows:(i + 1) * rows, j * T:(j + 1) * T] = e4m3(blk / float(s))
    return q, scales


def _trunc(v: float, bits: int) -> float:
    if v == 0.0:
        return 0.0
    f, e = math.frexp(v)
    return math.ldexp(float(math.trunc(math.ldexp(f, bits))), e - bits)


def gemm(qa: np.ndarray, sa: np.ndarray, qw: np.ndarray, sw: np.ndarray,
         accum_bits: int | None = None) -> np.ndarray:
    m, k = qa.shape
    n = qw.shape[0]
    out = np.zeros((m, n), dtype=np.float32)
    a = qa.astype(np.float64)
    w = qw.astype(np.float64)
    for i in range(m):
        for j in range(n):
            acc = np.float32(0.0)
            for b in range(-(-k // T)):
                lo, hi = b * T, min(k, b * T + T)
                prods = a[i, lo:hi] * w[j, lo:hi]
                if accum_bits is None:
                    part = math.fsum(prods)
                else:
                    part = 0.0
                    for g in range(0, hi - lo, 32):
                        part = _trunc(part + math.fsum(prods[g:g + 32]), accum_bits)
                p = np.float32(part)
                t1 = np.float32(float(p) * float(sa[i, b]))
                t = np.float32(float(t1) * float(sw[j // T, b]))
                acc = np.float32(float(acc) + float(t))
            out[i, j] = acc
    return out


# bytes per block of ggml types, from the field lists of ggml-common.h (not a table of totals)
HALF = 2
GGML_FIELDS: dict[str, tuple[int, int]] = {
    "F32": (1, 4), "F16": (1, 2), "BF16": (1, 2),
    "Q4_0": (32, HALF + 32 // 2),
    "Q4_1": (32, 2 * HALF + 32 // 2),
    "Q5_0": (32, HALF + 4 + 32 // 2),
    "Q5_1": (32, 2 * HALF + 4 + 32 // 2),
    "Q8_0": (32, HALF + 32),
    "Q2_K": (256, 256 // 16 + 256 // 4 + 2 * HALF),
    "Q3_K": (256, 256 // 8 + 256 // 4 + 12 + HALF),
    "Q4_K": (256, 2 * HALF + 12 + 256 // 2),
    "Q5_K": (256, 2 * HALF + 12 + 256 // 8 + 256 // 2),
    "Q6_K": (256, 256 // 2 + 256 // 4 + 256 // 16 + HALF),
}


def bpw(tensors: dict[str, tuple[str, tuple[int, ...]]]) -> Fraction:
    bits = Fraction(0)
    count = 0
    for ty, shape in tensors.values():
        per, size = GGML_FIELDS[ty]
        elems = math.prod(shape)
        bits += Fraction(elems * size * 8, per)
        count += elems
    return bits / count


def more_bits(i: int, n: int) -> bool:
    eighth = n // 8
    if i < eighth or i >= (7 * n) // 8:
        return True
    return (i - eighth) % 3 == 2
