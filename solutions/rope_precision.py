"""Reference solution for rope_precision: Llama-3.1 RoPE and the cost of the angle's dtype.

numpy only. The dtype rounding is done by hand (frexp, rint, ldexp), so it depends on no
dtype package.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

# dtype: (significand bits, frexp exponent of the smallest normal, largest finite value)
_FORMATS: dict[str, tuple[int, int, float]] = {
    "float32": (24, -125, float(np.finfo(np.float32).max)),
    "bfloat16": (8, -125, (2.0 - 2.0**-7) * 2.0**127),
    "float16": (11, -13, 65504.0),
}
DTYPES = ("float64", *_FORMATS)
_CHUNK = 4096


def _dtype(dtype: Any) -> str:
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
    return str(dtype)


def round_to_dtype(x: np.ndarray, dtype: str) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if _dtype(dtype) == "float64":
        return x.copy()
    bits, emin, top = _FORMATS[dtype]
    with np.errstate(invalid="ignore", over="ignore"):
        _, e = np.frexp(x)                                  # |x| = m * 2**e, m in [0.5, 1)
        quantum = np.ldexp(1.0, np.maximum(e, emin) - bits)  # spacing of the dtype near x
        y = np.rint(x / quantum) * quantum                  # both exact; rint ties to even
    out: np.ndarray = np.where(np.abs(y) > top, np.copysign(np.inf, x), y)
    return out


def _int_field(cfg: dict[str, Any], key: str, value: Any = None) -> int:
    v = cfg.get(key) if value is None else value
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
        raise ValueError(f"config field {key!r} must be a positive int, got {v!r}")
    return int(v)


def _pos(name: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {v!r}")
    return float(v)


def _head_dim(cfg: dict[str, Any]) -> int:
    if cfg.get("head_dim") is not None:
        d = _int_field(cfg, "head_dim")
    else:
        d = _int_field(cfg, "hidden_size") // _int_field(cfg, "num_attention_heads")
    if d < 2 or d % 2:
        raise ValueError(f"head_dim must be even, got {d}")
    return d


def inv_freq(config: dict[str, Any]) -> np.ndarray:
    d = _head_dim(config)
    theta = _pos("rope_theta", config.get("rope_theta"))
    if theta <= 1:
        raise ValueError(f"rope_theta must exceed 1, got {theta}")
    freq = 1.0 / theta ** (np.arange(0, d, 2, dtype=np.float64) / d)
    scaling = config.get("rope_scaling")
    if scaling is None:
        return freq
    if not isinstance(scaling, dict) or scaling.get("rope_type") != "llama3":
        raise ValueError(f"only rope_type 'llama3' scaling is supported, got {scaling!r}")
    factor = _pos("factor", scaling.get("factor"))
    low = _pos("low_freq_factor", scaling.get("low_freq_factor"))
    high = _pos("high_freq_factor", scaling.get("high_freq_factor"))
    orig = _int_field(scaling, "original_max_position_embeddings")    # a count: an int
    if factor < 1 or high <= low:
        raise ValueError("llama3 scaling needs factor >= 1 and high_freq_factor > low_freq_factor")
    wavelen = 2 * math.pi / freq
    smooth = (orig / wavelen - low) / (high - low)     # 0 at orig/low, 1 at orig/high
    blended = (1 - smooth) * freq / factor + smooth * freq
    return np.where(wavelen < orig / high, freq,
                    np.where(wavelen > orig / low, freq / factor, blended))


def _positions(positions: Any) -> np.ndarray:
    p = np.asarray(positions)
    if p.ndim != 1 or not (np.issubdtype(p.dtype, np.integer) or p.size == 0):
        raise ValueError("positions must be a 1-D array of integers")
    if p.size and p.min() < 0:
        raise ValueError("positions must be >= 0")
    return p.astype(np.float64)


def _angles(p: np.ndarray, freq: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "float64":
        return np.outer(p, freq)
    # the product of two rounded values is exact in float64 (at most 2 x 24 bits)
    with np.errstate(invalid="ignore"):
        exact = np.outer(round_to_dtype(p, dtype), round_to_dtype(freq, dtype))
    return round_to_dtype(exact, dtype)


def angles(positions: np.ndarray, config: dict[str, Any], dtype: str) -> np.ndarray:
    return _angles(_positions(positions), inv_freq(config), _dtype(dtype))


def apply_rope(x: np.ndarray, positions: np.ndarray, config: dict[str, Any],
               angle_dtype: str = "float64") -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    p = _positions(positions)
    half = _head_dim(config) // 2
    if x.ndim != 3 or x.shape[0] != p.size or x.shape[2] != 2 * half:
        raise ValueError(f"x must be (len(positions), heads, {2 * half}), got {x.shape}")
    theta = angles(positions, config, angle_dtype)[:, None, :]   # (T, 1, D/2)
    with np.errstate(invalid="ignore"):          # an infinite angle gives NaN
        cos, sin = np.cos(theta), np.sin(theta)
    a, b = x[..., :half], x[..., half:]                           # pairs (j, j + D/2)
    return np.concatenate([a * cos - b * sin, b * cos + a * sin], axis=-1)


def fused_bytes_saved(config: dict[str, Any], dtype_bytes: int) -> int:
    q = _int_field(config, "num_attention_heads")
    # absent or null: as many KV heads as query heads (Hugging Face's default)
    kv = q if config.get("num_key_value_heads") is None else \
        _int_field(config, "num_key_value_heads")
    layers = _int_field(config, "num_hidden_layers")
    nbytes = _int_field({}, "dtype_bytes", dtype_bytes)
    return 2 * (q + kv) * _head_dim(config) * nbytes * layers   # read + write of Q and K


def _errors(start: int, stop: int, freq: np.ndarray, dtype: str) -> np.ndarray:
    p = np.arange(start, stop, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        err: np.ndarray = np.abs(_angles(p, freq, dtype) - np.outer(p, freq))
    return err


def first_bad_position(config: dict[str, Any], dtype: str, tolerance: float,
                       max_position: int = 131072) -> int:
    freq, dtype = inv_freq(config), _dtype(dtype)
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) \
            or not 0 <= tolerance < math.inf:
        raise ValueError(f"tolerance must be finite and >= 0, got {tolerance!r}")
    end = _int_field({}, "max_position", max_position)
    for start in range(0, end, _CHUNK):
        bad = (_errors(start, min(end, start + _CHUNK), freq, dtype) > tolerance).any(axis=1)
        if bad.any():
            return start + int(np.argmax(bad))
    return -1


def position_resolution(config: dict[str, Any], dtype: str, context: int, index: int = 0) -> int:
    freq, dtype = inv_freq(config), _dtype(dtype)
    n = _int_field({}, "context", context)
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)) \
            or not 0 <= index < freq.size:
        raise ValueError(f"index must be in [0, {freq.size}), got {index!r}")
    theta = _angles(np.arange(n, dtype=np.float64), freq[index:index + 1], dtype)[:, 0]
    # the angle never decreases with the position, so equal angles are consecutive
    starts = np.flatnonzero(np.concatenate([[True], theta[1:] != theta[:-1], [True]]))
    return int(np.diff(starts).max())
