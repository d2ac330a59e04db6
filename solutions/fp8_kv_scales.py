"""Reference solution for the fp8_kv_scales kata: E4M3 (OCP "E4M3FN") KV-cache quantization.

Encoding works on magnitudes in float64: saturate to 448, find the spacing of the grid at
that magnitude (2^(e-3) in the binade [2^e, 2^(e+1)), and 2^-9 below 2^-6, where the
subnormals keep the spacing of the lowest binade), round to a multiple of it half to even
(``np.rint``; dividing by a power of two is exact), then pack sign, biased exponent and
mantissa. Decoding is a 256-entry table. Every division and product is float64, so one
rounding, the E4M3 one, decides every code.
"""

from __future__ import annotations

import numpy as np

E4M3_MAX = 448.0
_BIAS = 7
_MIN_NORMAL_EXP = -6          # 2^-6 is the smallest normal
_MANTISSA_BITS = 3
_NAN_CODE = 0x7F


def _decode_table() -> np.ndarray:
    codes = np.arange(256)
    exp = (codes >> 3) & 0xF
    man = (codes & 0x7).astype(np.float64)
    mag = np.where(exp == 0, np.ldexp(man, _MIN_NORMAL_EXP - _MANTISSA_BITS),
                   np.ldexp(1.0 + man / 8.0, exp - _BIAS))
    mag[(codes & 0x7F) == _NAN_CODE] = np.nan
    table: np.ndarray = np.where(codes & 0x80, -mag, mag).astype(np.float32)
    return table


_TABLE = _decode_table()


def _real(name: str, x: object) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype.kind not in "fiu":
        raise ValueError(f"{name} must be a real numeric array, got dtype {arr.dtype}")
    with np.errstate(invalid="ignore"):       # a signalling NaN stays a NaN
        return arr.astype(np.float64)


def encode_e4m3(x: np.ndarray) -> np.ndarray:
    """E4M3 codes (uint8, same shape) of x, round to nearest even, saturating (see the stub)."""
    v = _real("x", x)
    sign = np.signbit(v).astype(np.uint8) << 7
    nan = np.isnan(v)
    a = np.minimum(np.abs(np.where(nan, 0.0, v)), E4M3_MAX)    # +-inf saturates too
    _, e = np.frexp(a)                                          # a = m 2^e, m in [0.5, 1)
    exp = np.maximum(e - 1, _MIN_NORMAL_EXP)                    # binade, subnormals share -6
    step = np.ldexp(1.0, exp - _MANTISSA_BITS)
    q = np.rint(a / step) * step                                # half to even, exact
    _, qe = np.frexp(q)
    normal = q >= 2.0 ** _MIN_NORMAL_EXP
    biased = np.where(normal, qe - 1 + _BIAS, 0)
    frac = np.where(normal, q / np.ldexp(1.0, qe - 1) - 1.0, 0.0) * 8.0
    man = np.where(normal, frac, q / 2.0 ** (_MIN_NORMAL_EXP - _MANTISSA_BITS))
    mag = (biased << _MANTISSA_BITS) + man.astype(np.int64)
    codes: np.ndarray = (np.where(nan, _NAN_CODE, mag).astype(np.uint8) | sign)
    return codes


def decode_e4m3(codes: np.ndarray) -> np.ndarray:
    """float32 values of E4M3 codes (0x7F and 0xFF are NaN)."""
    c = np.asarray(codes)
    if c.dtype.kind not in "iu" or (c.size and (c.min() < 0 or c.max() > 255)):
        raise ValueError("codes must be integers in [0, 255]")
    out: np.ndarray = _TABLE[c.astype(np.intp)]
    return out


def _scale(scale: float | np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The scale as float64, shaped to broadcast over ``shape`` (per tensor or per head)."""
    s = np.asarray(scale)
    if s.dtype.kind not in "fiu" or s.ndim > 1:
        raise ValueError(f"scale must be a real number or a 1-D array, got {s.dtype} {s.shape}")
    s = s.astype(np.float64)
    if not (np.isfinite(s) & (s > 0)).all() or s.size == 0:
        raise ValueError(f"scale must be finite and > 0, got {s}")
    if s.ndim == 0:
        return s
    if len(shape) < 2 or shape[-2] != s.shape[0]:
        raise ValueError(f"a per-head scale of shape {s.shape} needs x of shape (..., H, D) "
                         f"with H = {s.shape[0]}, got {shape}")
    per_head: np.ndarray = s[:, None]
    return per_head


def quantize(x: np.ndarray, scale: float | np.ndarray) -> np.ndarray:
    """Codes of x / scale (float64 division), per tensor or per head (axis -2)."""
    v = _real("x", x)
    return encode_e4m3(v / _scale(scale, v.shape))


def dequantize(codes: np.ndarray, scale: float | np.ndarray) -> np.ndarray:
    """float64 decode(codes) * scale, per tensor or per head (axis -2)."""
    values = decode_e4m3(codes).astype(np.float64)
    out: np.ndarray = values * _scale(scale, values.shape)
    return out


def clip_fraction(x: np.ndarray, scale: float | np.ndarray) -> float:
    """Fraction of the entries of x with |x| / scale > 448 (the ones saturation changes)."""
    v = _real("x", x)
    s = _scale(scale, v.shape)            # a bad scale raises, even for an empty x
    if v.size == 0:
        return 0.0
    return float(np.count_nonzero(np.abs(v) / s > E4M3_MAX) / v.size)


def calibrate_scale(samples: np.ndarray, per_head: bool = False,
                    margin: float = 1.0) -> float | np.ndarray:
    """amax * margin / 448 per tensor, or per head (amax over every axis but -2)."""
    v = _real("samples", samples)
    if v.size == 0 or not np.isfinite(v).all():
        raise ValueError("samples must be a non-empty array of finite values")
    m = float(margin)
    if not (np.isfinite(m) and m > 0):
        raise ValueError(f"margin must be finite and > 0, got {margin}")
    if per_head:
        if v.ndim < 2:
            raise ValueError(f"per-head calibration needs samples of shape (..., H, D), got {v.shape}")
        axes = tuple(i for i in range(v.ndim) if i != v.ndim - 2)
        amax = np.abs(v).max(axis=axes)
        scales: np.ndarray = np.where(amax > 0, amax * m / E4M3_MAX, 1.0)
        return scales
    amax_all = float(np.abs(v).max())
    return amax_all * m / E4M3_MAX if amax_all > 0 else 1.0


def _attend(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """softmax(q k^T / sqrt(D)) v per head, float64: q (H, D), k and v (T, H, D) -> (H, D)."""
    logits = np.einsum("hd,thd->ht", q, k) / np.sqrt(q.shape[-1])
    w = np.exp(logits - logits.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    out: np.ndarray = np.einsum("ht,thd->hd", w, v)
    return out


def attention_error(q: np.ndarray, k: np.ndarray, v: np.ndarray,
                    scale_k: float | np.ndarray, scale_v: float | np.ndarray) -> np.ndarray:
    """Per-head relative L2 error of attention over the quantized cache (see the stub)."""
    qq, kk, vv = _real("q", q), _real("k", k), _real("v", v)
    if qq.ndim != 2 or kk.ndim != 3 or kk.shape != vv.shape or kk.shape[1:] != qq.shape \
            or kk.shape[0] == 0 or qq.size == 0:
        raise ValueError(f"need q (H, D), k and v (T, H, D) with T >= 1, got "
                         f"{qq.shape}, {kk.shape}, {vv.shape}")
    if not (np.isfinite(qq).all() and np.isfinite(kk).all() and np.isfinite(vv).all()):
        raise ValueError("q, k and v must be finite")
    exact = _attend(qq, kk, vv)
    approx = _attend(qq, dequantize(quantize(kk, scale_k), scale_k),
                     dequantize(quantize(vv, scale_v), scale_v))
    err = np.linalg.norm(approx - exact, axis=1)
    norm = np.linalg.norm(exact, axis=1)
    out: np.ndarray = np.where(norm > 0, err / np.where(norm > 0, norm, 1.0), err)
    return out
