"""An oracle for fp4_formats built from ml_dtypes casts, independent of the reference.

Every rounding goes through ml_dtypes: E2M1 through ``float4_e2m1fn`` (which saturates
magnitudes above 6 and infinities to +-6, as the prompt asks, but turns NaN into -0, having
no NaN: the oracle puts NaN back), E4M3 through ``float8_e4m3fn`` (ties to even, subnormals;
it overflows to NaN above 464, so the oracle clamps to 448 first, which the prompt's
saturation allows) and the MX scale's power of two through ``float8_e8m0fnu``. Casts are
made from float64, which ml_dtypes rounds directly (no float32 step in between).

The arithmetic around the casts is float64, where every product below is exact and every
quotient is correctly rounded from exact float32 operands.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

F4 = ml_dtypes.float4_e2m1fn
E4 = ml_dtypes.float8_e4m3fn
E8 = ml_dtypes.float8_e8m0fnu


_CHECKED: list[bool] = []


def _self_check() -> None:
    """The ml_dtypes behaviours this oracle relies on (fails loudly if a release changes them)."""
    probe = np.array([0.25, 0.75, 2.5, 5.0, 7.0, np.inf, -np.inf, 2.5000000000000004])
    assert probe.astype(F4).astype(np.float64).tolist() == [0.0, 1.0, 2.0, 4.0, 6.0, 6.0, -6.0, 3.0], \
        "oracle assumption: ml_dtypes float4_e2m1fn rounds ties to even, saturates, casts float64 directly"
    probe = np.array([2.0**-10, 3 * 2.0**-10, 1.0625, 464.0, 2.0**-10 * (1 + 2.0**-40)])
    assert probe.astype(E4).astype(np.float64).tolist() == [0.0, 2.0**-8, 1.0, 448.0, 2.0**-9], \
        "oracle assumption: ml_dtypes float8_e4m3fn rounds ties to even with subnormals"
    assert np.array([2.0**-127, 2.0**127]).astype(E8).astype(np.float64).tolist() == [2.0**-127, 2.0**127], \
        "oracle assumption: ml_dtypes float8_e8m0fnu holds 2**-127 .. 2**127"
    _CHECKED.append(True)


def e2m1(v: np.ndarray) -> np.ndarray:
    """float64 -> the E2M1 value ml_dtypes rounds it to, NaN kept (float64)."""
    if not _CHECKED:
        _self_check()
    v = np.asarray(v, dtype=np.float64)
    out = v.astype(F4).astype(np.float64)
    out[np.isnan(v)] = np.nan
    return out


def e4m3(v: np.ndarray) -> np.ndarray:
    """float64 >= 0 -> the E4M3 value ml_dtypes rounds it to (saturated at 448)."""
    return np.minimum(np.asarray(v, dtype=np.float64), 448.0).astype(E4).astype(np.float64)


def blocks(x: np.ndarray, size: int) -> np.ndarray:
    n = x.shape[-1]
    pad = (-n) % size
    widths = [(0, 0)] * (x.ndim - 1) + [(0, pad)]
    b = np.pad(x.astype(np.float64), widths, mode="constant", constant_values=0.0)
    return b.reshape(x.shape[:-1] + (-1, size))


def unblock(b: np.ndarray, n: int) -> np.ndarray:
    return b.reshape(b.shape[:-2] + (-1,))[..., :n].astype(np.float32)


def pow2_floor(a: np.ndarray) -> np.ndarray:
    """2**floor(log2(a)) for finite a > 0 via E8M0 (nearest power of two, halved if above a)."""
    with np.errstate(over="ignore", invalid="ignore"):
        p = np.asarray(a, dtype=np.float64).astype(E8).astype(np.float64)
    return np.where(p > a, p / 2, p)


def mx_exponents(amax: np.ndarray) -> np.ndarray:
    """X = max(floor(log2 amax) - 2, -127); -127 for 0; NaN for a non-finite amax."""
    ok = np.isfinite(amax) & (amax > 0)
    p = pow2_floor(np.where(ok, amax, 1.0))
    x = np.maximum(np.log2(p) - 2, -127.0)      # log2 of a power of two is exact
    x = np.where(amax == 0, -127.0, x)
    return np.where(np.isfinite(amax), x, np.nan)


def mxfp4(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    b = blocks(x, 32)
    amax = np.abs(b).max(axis=-1)
    exp = mx_exponents(amax)
    scale = np.where(np.isnan(exp), np.nan, np.exp2(np.nan_to_num(exp)))
    # every finite scale is an E8M0 value
    fin = np.isfinite(scale)
    assert (scale[fin].astype(E8).astype(np.float64) == scale[fin]).all()
    q = e2m1(b / scale[..., None]) * scale[..., None]
    return unblock(q, x.shape[-1]), scale.astype(np.float32)


def tensor_scale(x: np.ndarray) -> float:
    fin = np.isfinite(x)
    amax = float(np.abs(x[fin]).max()) if fin.any() else 0.0
    return float(np.float32(amax / 2688.0)) if amax > 0 else 1.0


def nvfp4(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    s_t = tensor_scale(x)
    b = blocks(x, 16)
    amax = np.abs(b).max(axis=-1)
    bad = ~np.isfinite(amax)
    s_b = e4m3(np.where(bad, 0.0, amax) / (6.0 * s_t))
    step = s_b * s_t
    safe = np.where(step > 0, step, 1.0)[..., None]
    q = np.where(step[..., None] > 0, e2m1(b / safe), 0.0)
    deq = np.where(bad[..., None], np.nan, q * s_b[..., None] * s_t)
    return unblock(deq, x.shape[-1]), np.where(bad, np.nan, s_b).astype(np.float32), s_t


def relative_error(x: np.ndarray, fmt: str) -> float:
    q = (mxfp4(x) if fmt == "mxfp4" else nvfp4(x))[0].astype(np.float64)
    r = x.astype(np.float64)
    total = float(np.sum(r * r))
    return 0.0 if total == 0 else float(np.sqrt(np.sum((q - r) ** 2) / total))


def bits_per_weight(fmt: str, shape: tuple[int, ...]) -> float:
    size = 32 if fmt == "mxfp4" else 16
    rows = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
    n = rows * shape[-1]
    blocks_ = rows * -(-shape[-1] // size)
    return (4 * n + 8 * blocks_ + (32 if fmt == "nvfp4" else 0)) / n
