"""Written blind from the prompt, the stub and the public tests only (2026-12-02), by a helper session.

How it is built (a different route from the frexp / rint encoder the hints suggest):

- ``encode_e4m3`` rounds on the float64 bit pattern. After taking the magnitude in float64
  and saturating it to 448, a normal E4M3 value ``(1 + m/8) 2^(e-7)`` is a float64 whose
  mantissa keeps only its top 3 bits, so the float64 word shifted right by 49 bits is
  ``(E64 << 3) | m``. Rounding to nearest even is integer arithmetic on the 49 dropped
  bits (above half: up; exactly half: up only if the kept word is odd); a carry out of the
  mantissa moves into the exponent by itself. Re-biasing the exponent from 1023 to 7 is one
  subtraction of ``(1023 - 7) << 3`` on that word, which is then the 7-bit code. Below
  ``2^-6`` the subnormal grid is ``M x 2^-9``: the code is ``M = rint(|x| * 2^9)`` (the
  product by a power of two is exact, ``np.rint`` ties to even, and 8 is code 0x08 =
  ``2^-6``). NaN gets 0x7F, the sign bit comes from ``np.signbit``.
- ``decode_e4m3`` indexes a 256-entry float32 table built from float32 bit patterns for the
  normal codes (exponent field ``e + 120``, mantissa ``m << 20``) and ``m x 2^-9`` for the
  subnormals; 0x7F and 0xFF are NaN.
- Scales are validated into a float64 array that broadcasts against ``(..., H, D)``
  (shape ``()`` per tensor, ``(H, 1)`` per head).
- ``attention_error`` runs all heads at once with einsum (scores ``(H, T)``, a stable
  softmax along T, the weighted sum of V), the same function for the exact and the
  quantized cache.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

E4M3_MAX = 448.0

_F64 = npt.NDArray[np.float64]

_MIN_NORMAL = 2.0 ** -6
_KEEP_SHIFT = 52 - 3                      # float64 mantissa bits dropped to keep 3
_HALF = np.uint64(1 << (_KEEP_SHIFT - 1))
_LOW_MASK = np.uint64((1 << _KEEP_SHIFT) - 1)
_REBIAS = np.uint64((1023 - 7) << 3)


def _build_table() -> npt.NDArray[np.float32]:
    codes = np.arange(256, dtype=np.uint32)
    sign = (codes >> 7) & 1
    exp = (codes >> 3) & 0xF
    man = codes & 0x7
    bits = (sign << 31) | ((exp + 120) << 23) | (man << 20)
    normal = bits.view(np.float32)
    sub = (man.astype(np.float32) * np.float32(2.0 ** -9))
    sub = np.where(sign == 1, -sub, sub).astype(np.float32)   # 0x80 gives -0.0
    table = np.where(exp == 0, sub, normal).astype(np.float32)
    table[(exp == 15) & (man == 7)] = np.nan
    table.setflags(write=False)
    return table


_TABLE = _build_table()


def _numeric(x: Any, what: str) -> npt.NDArray[Any]:
    a = np.asarray(x)
    if a.dtype.kind not in "iuf":
        raise ValueError(f"{what} must be a real numeric (not boolean or complex) array, "
                         f"got dtype {a.dtype}")
    return a


def encode_e4m3(x: np.ndarray) -> np.ndarray:
    """The E4M3 codes of ``x``: a ``uint8`` array of the same shape."""
    v = _numeric(x, "x").astype(np.float64)
    nan = np.isnan(v)
    a = np.minimum(np.abs(np.where(nan, 0.0, v)), E4M3_MAX)     # +-inf saturates too
    # normal range: round the float64 word to 3 mantissa bits, ties to even
    a_norm = np.where(a >= _MIN_NORMAL, a, _MIN_NORMAL)        # keep the shift meaningful
    word = np.ascontiguousarray(a_norm).view(np.uint64)
    kept = word >> np.uint64(_KEEP_SHIFT)
    low = word & _LOW_MASK
    up = (low > _HALF) | ((low == _HALF) & ((kept & np.uint64(1)) == np.uint64(1)))
    normal_code = (kept + up.astype(np.uint64)) - _REBIAS
    # subnormal range: multiples of 2^-9
    sub_code = np.rint(a * 512.0).astype(np.uint64)
    code = np.where(a >= _MIN_NORMAL, normal_code, sub_code)
    code = np.where(nan, np.uint64(0x7F), code)
    code = code | (np.signbit(v).astype(np.uint64) << np.uint64(7))
    out: np.ndarray = code.astype(np.uint8).reshape(v.shape)
    return out


def decode_e4m3(codes: np.ndarray) -> np.ndarray:
    """The values of E4M3 ``codes`` as a ``float32`` array of the same shape."""
    c = np.asarray(codes)
    if c.dtype.kind not in "iu":
        raise ValueError(f"codes must be an integer array, got dtype {c.dtype}")
    if c.size and (int(c.min()) < 0 or int(c.max()) > 255):
        raise ValueError("codes must lie in [0, 255]")
    out: np.ndarray = _TABLE[c.astype(np.intp)]
    return out


def _scale(scale: Any, x_shape: tuple[int, ...]) -> _F64:
    """The scale as a float64 array broadcasting against ``x_shape``: () or (H, 1)."""
    s = np.asarray(scale)
    if s.dtype.kind not in "iuf":
        raise ValueError(f"scale must be real numbers, got dtype {s.dtype}")
    s = s.astype(np.float64)
    if s.ndim > 1:
        raise ValueError(f"scale must be a number or a 1-D array, got shape {s.shape}")
    if not np.all(np.isfinite(s) & (s > 0)):
        raise ValueError("every scale must be finite and > 0")
    if s.ndim == 0:
        return s
    if len(x_shape) < 2:
        raise ValueError("a per-head scale needs an x of shape (..., H, D)")
    if s.shape[0] != x_shape[-2]:
        raise ValueError(f"per-head scale of length {s.shape[0]} for {x_shape[-2]} heads")
    out: _F64 = s.reshape(-1, 1)
    return out


def quantize(x: np.ndarray, scale: float | np.ndarray) -> np.ndarray:
    """``encode_e4m3(x / scale)``, the division done in float64: ``uint8`` codes."""
    v = _numeric(x, "x")
    s = _scale(scale, v.shape)
    return encode_e4m3(v.astype(np.float64) / s)


def dequantize(codes: np.ndarray, scale: float | np.ndarray) -> np.ndarray:
    """``float64(decode_e4m3(codes)) * scale``: a ``float64`` array of the codes' shape."""
    values = decode_e4m3(codes)
    s = _scale(scale, values.shape)
    out: np.ndarray = values.astype(np.float64) * s
    return out


def clip_fraction(x: np.ndarray, scale: float | np.ndarray) -> float:
    """The fraction of the entries of ``x`` that clip: ``|x| / scale > 448`` in float64."""
    v = _numeric(x, "x")
    s = _scale(scale, v.shape)
    if v.size == 0:
        return 0.0
    clipped = np.abs(v.astype(np.float64)) / s > E4M3_MAX      # NaN compares False
    return float(np.count_nonzero(clipped)) / float(v.size)


def calibrate_scale(samples: np.ndarray, per_head: bool = False,
                    margin: float = 1.0) -> float | np.ndarray:
    """The scale an amax rule picks from sample activations: ``amax * margin / 448``."""
    x = _numeric(samples, "samples")
    if isinstance(margin, (bool, np.bool_)) or not isinstance(margin, (int, float, np.integer,
                                                                       np.floating)):
        raise ValueError(f"margin must be a real number, got {margin!r}")
    m = float(margin)
    if not (np.isfinite(m) and m > 0):
        raise ValueError(f"margin must be finite and > 0, got {margin!r}")
    if x.size == 0:
        raise ValueError("calibrate_scale needs at least one sample")
    a = np.abs(x.astype(np.float64))
    if not np.all(np.isfinite(a)):
        raise ValueError("samples must be finite")
    if not per_head:
        amax = float(a.max())
        return (amax * m) / E4M3_MAX if amax > 0 else 1.0
    if x.ndim < 2:
        raise ValueError("per_head=True needs samples of shape (..., H, D)")
    axes = tuple(i for i in range(a.ndim) if i != a.ndim - 2)
    amax_h = a.max(axis=axes)
    out: np.ndarray = np.where(amax_h > 0, (amax_h * m) / E4M3_MAX, 1.0).astype(np.float64)
    return out


def _attend(q: _F64, k: _F64, v: _F64) -> _F64:
    """softmax(q[h] . k[:, h] / sqrt(D)) @ v[:, h] for every head at once: (H, D)."""
    d = q.shape[1]
    scores = np.einsum("thd,hd->ht", k, q) / np.sqrt(d)        # (H, T)
    w = np.exp(scores - scores.max(axis=1, keepdims=True))
    w = w / w.sum(axis=1, keepdims=True)
    out: _F64 = np.einsum("ht,thd->hd", w, v)
    return out


def attention_error(q: np.ndarray, k: np.ndarray, v: np.ndarray,
                    scale_k: float | np.ndarray, scale_v: float | np.ndarray) -> np.ndarray:
    """Per-head relative error of one decode step's attention over the FP8 cache: ``(H,)``."""
    qa, ka, va = _numeric(q, "q"), _numeric(k, "k"), _numeric(v, "v")
    if qa.ndim != 2 or ka.ndim != 3 or va.shape != ka.shape:
        raise ValueError(f"shapes q {qa.shape}, k {ka.shape}, v {va.shape}: "
                         "expected (H, D), (T, H, D), (T, H, D)")
    if ka.shape[1:] != qa.shape:
        raise ValueError(f"q {qa.shape} does not match the cache's (H, D) {ka.shape[1:]}")
    if ka.shape[0] == 0:
        raise ValueError("the cache holds no token (T == 0)")
    q64, k64, v64 = (a.astype(np.float64) for a in (qa, ka, va))
    if not (np.all(np.isfinite(q64)) and np.all(np.isfinite(k64))
            and np.all(np.isfinite(v64))):
        raise ValueError("q, k and v must be finite")
    _scale(scale_k, ka.shape), _scale(scale_v, va.shape)       # raise before any work
    heads, dim = qa.shape
    if dim == 0:                       # empty outputs: nothing to differ
        return np.zeros(heads, dtype=np.float64)
    kq = dequantize(quantize(k64, scale_k), scale_k)
    vq = dequantize(quantize(v64, scale_v), scale_v)
    exact = _attend(q64, k64, v64)
    approx = _attend(q64, kq, vq)
    err = np.linalg.norm(approx - exact, axis=1)
    norm = np.linalg.norm(exact, axis=1)
    out: np.ndarray = np.where(norm > 0, err / np.where(norm > 0, norm, 1.0), err)
    return out
