"""Reference solution for the fp4_formats kata: MXFP4 and NVFP4 quantize-dequantize.

Both formats store E2M1 elements; they differ in the scale. MXFP4 gives every 32 elements a
power-of-two scale 2**X with X = floor(log2(amax)) - 2 (the OCP MX rule: the block maximum
lands in [4, 8) and anything above 6 saturates). NVFP4 gives every 16 elements an E4M3 scale
amax / 6 measured in units of one float32 per-tensor scale amax_tensor / (6 * 448).

Every quotient and product is done in float64, where it is exact or correctly rounded for
float32 inputs, so each value is rounded exactly once: to E2M1, to E4M3 or to float32.
"""

from __future__ import annotations

import numpy as np

MX_BLOCK = 32
NV_BLOCK = 16
E2M1_MAX = 6.0
E4M3_MAX = 448.0
E8M0_MIN_EXP = -127
_BLOCK = {"mxfp4": MX_BLOCK, "nvfp4": NV_BLOCK}


def _check(x: object) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype != np.float32:
        raise ValueError(f"x must be a float32 array, got dtype {a.dtype}")
    if a.ndim < 1 or a.size == 0:
        raise ValueError(f"x must be a non-empty array with at least one axis, got shape {a.shape}")
    return a


def _round_e2m1(v: np.ndarray) -> np.ndarray:
    """float64 in, float64 out: nearest E2M1 value, ties to even, saturating at +-6."""
    a = np.minimum(np.abs(v), E2M1_MAX)          # saturates inf too; NaN stays NaN
    # E2M1 is 0.5 * {0..4} below 2, then {2, 3, 4, 6}: quantum 0.5 below 2, 1 up to 4, 2 above
    step = np.where(a < 2.0, 0.5, np.where(a < 4.0, 1.0, 2.0))
    q = np.round(a / step) * step                # np.round: ties to even on the integer count
    out: np.ndarray = np.copysign(q, v)
    return out


def _blocks(x: np.ndarray, size: int) -> np.ndarray:
    """(..., n) -> (..., ceil(n / size), size) float64, the tail padded with zeros."""
    n = x.shape[-1]
    nb = -(-n // size)
    padded = np.zeros(x.shape[:-1] + (nb * size,), dtype=np.float64)
    padded[..., :n] = x
    return padded.reshape(x.shape[:-1] + (nb, size))


def _unblock(b: np.ndarray, n: int) -> np.ndarray:
    out: np.ndarray = b.reshape(b.shape[:-2] + (-1,))[..., :n].astype(np.float32)
    return out


def _round_e4m3(v: np.ndarray) -> np.ndarray:
    """Nearest E4M3 value (ties to even, subnormals from 2**-9, saturating at 448); v >= 0."""
    v = np.minimum(v, E4M3_MAX)
    _, e = np.frexp(np.maximum(v, 2.0**-6))      # exponent of the normal range, floored at 2**-6
    quantum = np.ldexp(1.0, e - 1 - 3)           # 3 mantissa bits
    out: np.ndarray = np.round(v / quantum) * quantum
    return out


def round_e2m1(x: np.ndarray) -> np.ndarray:
    """Each element rounded to the nearest E2M1 value (see the kata stub)."""
    a = _check(x)
    return _round_e2m1(a.astype(np.float64)).astype(np.float32)


def mxfp4(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """MXFP4 quantize-dequantize and the per-block scales (see the kata stub)."""
    a = _check(x)
    b = _blocks(a, MX_BLOCK)
    amax = np.abs(b).max(axis=-1)
    bad = ~np.isfinite(amax)
    _, e = np.frexp(np.where(bad, 0.0, amax))    # amax = m * 2**e, m in [0.5, 1): floor(log2) = e - 1
    exp = np.where(amax > 0, e - 1 - 2, E8M0_MIN_EXP)
    exp = np.maximum(exp, E8M0_MIN_EXP)
    scale = np.where(bad, np.nan, np.ldexp(1.0, exp))
    q = _round_e2m1(b / scale[..., None])
    return _unblock(q * scale[..., None], a.shape[-1]), scale.astype(np.float32)


def nvfp4(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """NVFP4 quantize-dequantize, the per-block E4M3 scales and the tensor scale (see the stub)."""
    a = _check(x)
    b = _blocks(a, NV_BLOCK)
    finite = np.isfinite(a)
    amax_t = float(np.abs(a[finite]).max()) if finite.any() else 0.0
    s_t = float(np.float32(amax_t / (E2M1_MAX * E4M3_MAX))) if amax_t > 0 else 1.0
    amax = np.abs(b).max(axis=-1)
    bad = ~np.isfinite(amax)
    s_b = _round_e4m3(np.where(bad, 0.0, amax) / (E2M1_MAX * s_t))
    step = s_b * s_t                             # exact: 4 bits times 24 bits
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(step[..., None] > 0, _round_e2m1(b / step[..., None]), 0.0)
    deq = np.where(bad[..., None], np.nan, q * step[..., None])
    s_b = np.where(bad, np.nan, s_b)
    return _unblock(deq, a.shape[-1]), s_b.astype(np.float32), s_t


def bits_per_weight(fmt: str, shape: tuple[int, ...]) -> float:
    """Storage bits per element of a tensor of ``shape`` in ``fmt`` (see the kata stub)."""
    if fmt not in _BLOCK:
        raise ValueError(f"fmt must be 'mxfp4' or 'nvfp4', got {fmt!r}")
    dims = tuple(shape)
    if len(dims) == 0 or any(not isinstance(d, (int, np.integer)) or isinstance(d, bool) or d < 1
                             for d in dims):
        raise ValueError(f"shape must be a non-empty tuple of positive ints, got {shape!r}")
    rows = int(np.prod(dims[:-1], dtype=np.int64))
    blocks = rows * -(-int(dims[-1]) // _BLOCK[fmt])
    n = rows * int(dims[-1])
    bits = 4 * n + 8 * blocks + (32 if fmt == "nvfp4" else 0)
    return bits / n


def relative_error(x: np.ndarray, fmt: str) -> float:
    """sqrt(sum((q - x)**2) / sum(x**2)) after a round trip through ``fmt`` (see the stub)."""
    if fmt not in _BLOCK:
        raise ValueError(f"fmt must be 'mxfp4' or 'nvfp4', got {fmt!r}")
    a = _check(x)
    if not np.isfinite(a).all():
        raise ValueError("relative_error needs finite inputs")
    q = mxfp4(a)[0] if fmt == "mxfp4" else nvfp4(a)[0]
    ref = a.astype(np.float64)
    total = float(np.sum(ref * ref))
    if total == 0.0:
        return 0.0
    return float(np.sqrt(np.sum((q.astype(np.float64) - ref) ** 2) / total))
