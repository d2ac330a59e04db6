"""Written blind from the prompt, the stub and the public tests only (2026-12-02), by a helper session.

How it is built (deliberately not the hints' frexp / rint / block-scan recipe):

- Rounding works on the float64 bit pattern: the biased exponent field of ``|x|`` gives the
  binade, clamped below at the dtype's smallest normal exponent (so subnormals share its
  spacing ``q``) and above just past its largest finite binade. A power of two
  ``M = 2**52 * q`` is built directly from exponent bits and ``(|x| + M) - M`` lets the
  float64 adder itself round ``|x|`` to a multiple of ``q``, ties to even. A magnitude above
  the largest finite value becomes inf; ``copysign`` puts the sign back (-0.0 included).
  inf and NaN pass through the same arithmetic unchanged, so they need no special case.
- Frequencies: ``theta ** (-2i/d)``, then the llama3 bands chosen with masks on the
  wavelength.
- The rotation multiplies each split-halves pair, seen as the complex number
  ``x[j] + i x[j + d/2]``, by ``cos a + i sin a``.
- first_bad_position scans positions in growing blocks (a small first block, so early
  answers are cheap), all frequencies at once, and stops at the first block with a bad row.
- position_resolution labels each run of equal angles with a cumulative sum of "changed"
  flags and counts the labels with ``np.bincount``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

#: The dtypes an angle can be computed in ("float64" means: no rounding at all).
DTYPES = ("float64", "float32", "bfloat16", "float16")

F64 = npt.NDArray[np.float64]

# dtype -> (significant bits, exponent of the smallest normal, exponent of the largest
# binade, largest finite value)
_FORMATS: dict[str, tuple[int, int, int, float]] = {
    "float32": (24, -126, 127, (2.0 - 2.0 ** -23) * 2.0 ** 127),
    "bfloat16": (8, -126, 127, (2.0 - 2.0 ** -7) * 2.0 ** 127),
    "float16": (11, -14, 15, 65504.0),
}


# ------------------------------------------------------------------ validation helpers
def _check_dtype(dtype: Any) -> str:
    if not isinstance(dtype, str) or dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
    return dtype


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_real(v: Any) -> bool:
    return (isinstance(v, (int, float, np.integer, np.floating))
            and not isinstance(v, (bool, np.bool_)))


def _pos_int(v: Any, what: str) -> int:
    if not _is_int(v) or int(v) < 1:
        raise ValueError(f"{what} must be a positive int, got {v!r}")
    return int(v)


def _field_int(config: dict[str, Any], key: str) -> int:
    if not isinstance(config, dict):
        raise ValueError(f"config must be a dict, got {type(config).__name__}")
    if key not in config or config[key] is None:
        raise ValueError(f"config lacks {key!r}")
    return _pos_int(config[key], f"config[{key!r}]")


def _head_dim(config: dict[str, Any]) -> int:
    if not isinstance(config, dict):
        raise ValueError(f"config must be a dict, got {type(config).__name__}")
    if config.get("head_dim") is not None:
        d = _field_int(config, "head_dim")
    else:
        d = _field_int(config, "hidden_size") // _field_int(config, "num_attention_heads")
        if d < 1:
            raise ValueError("hidden_size // num_attention_heads must be at least 1")
    if d % 2:
        raise ValueError(f"head_dim must be even, got {d}")
    return d


def _finite_real(v: Any, what: str) -> float:
    if not _is_real(v) or not math.isfinite(float(v)):
        raise ValueError(f"{what} must be a finite number, got {v!r}")
    return float(v)


def _positions(positions: Any) -> F64:
    p = np.asarray(positions)
    if p.ndim != 1:
        raise ValueError(f"positions must be 1-D, got shape {p.shape}")
    if p.size == 0:
        return np.zeros(0, dtype=np.float64)
    if p.dtype.kind not in "iu":
        raise ValueError(f"positions must be integers, got dtype {p.dtype}")
    if p.dtype.kind == "i" and bool((p < 0).any()):
        raise ValueError("positions must be >= 0")
    return p.astype(np.float64)


# ------------------------------------------------------------------ rounding
def _round_magnitude(a: F64, dtype: str) -> F64:
    """Round non-negative (or inf / NaN) float64 values ``a`` to ``dtype``; a new array.

    Works through the flattened values a cache-sized chunk at a time, in place in the
    output, so a call over millions of angles stays fast.
    """
    bits, emin, emax, largest = _FORMATS[dtype]
    src = np.ascontiguousarray(a).reshape(-1)
    out: F64 = np.empty_like(src)
    low, high = np.uint64(emin + 1023), np.uint64(emax + 1024)
    shift, widen = np.uint64(52), np.uint64(53 - bits)
    step = 1 << 15
    for i in range(0, src.shape[0], step):
        chunk = src[i:i + step]
        e = chunk.view(np.uint64) >> shift                      # biased exponent (sign is 0)
        np.clip(e, low, high, out=e)
        e += widen
        e <<= shift
        m = e.view(np.float64)          # M = 2**52 * q, q the dtype's spacing in that binade
        r = out[i:i + step]
        np.add(chunk, m, out=r)         # the float64 adder rounds to a multiple of q, ties even
        r -= m
        r[r > largest] = np.inf
    return out.reshape(np.shape(a))


def round_to_dtype(x: np.ndarray, dtype: str) -> np.ndarray:
    """Each float64 value of ``x`` rounded to the nearest value of ``dtype``, as float64."""
    dtype = _check_dtype(dtype)
    xs = np.asarray(x, dtype=np.float64)
    if dtype == "float64":
        return xs.copy()
    flat = xs.reshape(-1)
    mag = np.abs(flat)
    out: F64 = np.copysign(_round_magnitude(mag, dtype), flat)
    return out.reshape(xs.shape)


# ------------------------------------------------------------------ frequencies
def _scaling(config: dict[str, Any]) -> tuple[float, float, float, int] | None:
    rs = config.get("rope_scaling")
    if rs is None:
        return None
    if not isinstance(rs, dict) or rs.get("rope_type") != "llama3":
        raise ValueError(f"rope_scaling must be None or rope_type 'llama3', got {rs!r}")
    for key in ("factor", "low_freq_factor", "high_freq_factor",
                "original_max_position_embeddings"):
        if key not in rs or rs[key] is None:
            raise ValueError(f"rope_scaling lacks {key!r}")
    factor = _finite_real(rs["factor"], "factor")
    lo = _finite_real(rs["low_freq_factor"], "low_freq_factor")
    hi = _finite_real(rs["high_freq_factor"], "high_freq_factor")
    n = _pos_int(rs["original_max_position_embeddings"], "original_max_position_embeddings")
    if factor < 1.0:
        raise ValueError(f"factor must be >= 1, got {factor}")
    if lo <= 0.0:
        raise ValueError(f"low_freq_factor must be positive, got {lo}")
    if hi <= lo:
        raise ValueError(f"high_freq_factor must exceed low_freq_factor, got {hi} <= {lo}")
    return factor, lo, hi, n


def inv_freq(config: dict[str, Any]) -> np.ndarray:
    """The ``(head_dim // 2,)`` float64 rotation frequencies (radians per position)."""
    d = _head_dim(config)
    if "rope_theta" not in config:
        raise ValueError("config lacks 'rope_theta'")
    theta = _finite_real(config["rope_theta"], "rope_theta")
    if theta <= 1.0:
        raise ValueError(f"rope_theta must be above 1, got {theta}")
    scaling = _scaling(config)
    f: F64 = np.power(theta, -np.arange(0, d, 2, dtype=np.float64) / d)
    if scaling is None:
        return f
    factor, lo, hi, n = scaling
    wavelength = 2.0 * math.pi / f
    slow = wavelength > n / lo
    fast = wavelength < n / hi
    band = ~(slow | fast)
    out = f.copy()
    out[slow] = f[slow] / factor
    s = (n / wavelength[band] - lo) / (hi - lo)
    out[band] = (1.0 - s) * f[band] / factor + s * f[band]
    return out


# ------------------------------------------------------------------ angles and rotation
def _angles(p: F64, f: F64, dtype: str) -> F64:
    if dtype == "float64":
        plain: F64 = np.multiply.outer(p, f)
        return plain
    prod: F64 = np.multiply.outer(_round_magnitude(p.copy(), dtype),
                                  _round_magnitude(f.copy(), dtype))
    return _round_magnitude(prod, dtype)


def angles(positions: np.ndarray, config: dict[str, Any], dtype: str) -> np.ndarray:
    """The ``(len(positions), head_dim // 2)`` float64 angles as computed in ``dtype``."""
    dtype = _check_dtype(dtype)
    p = _positions(positions)
    return _angles(p, inv_freq(config), dtype)


def apply_rope(x: np.ndarray, positions: np.ndarray, config: dict[str, Any],
               angle_dtype: str = "float64") -> np.ndarray:
    """``x`` (``(T, heads, head_dim)``) rotated by position, as a new float64 array."""
    angle_dtype = _check_dtype(angle_dtype)
    p = _positions(positions)
    f = inv_freq(config)
    xs = np.asarray(x)
    if xs.dtype.kind not in "biuf":
        raise ValueError(f"x must be real numbers, got dtype {xs.dtype}")
    d = 2 * f.shape[0]
    if xs.ndim != 3 or xs.shape[0] != p.shape[0] or xs.shape[2] != d:
        raise ValueError(f"x must have shape ({p.shape[0]}, heads, {d}), got {xs.shape}")
    a = _angles(p, f, angle_dtype)
    with np.errstate(invalid="ignore"):
        turn = (np.cos(a) + 1j * np.sin(a))[:, None, :]
    half = d // 2
    z = xs[..., :half].astype(np.float64) + 1j * xs[..., half:].astype(np.float64)
    with np.errstate(invalid="ignore"):
        w = z * turn
    out: F64 = np.concatenate([w.real, w.imag], axis=-1).astype(np.float64)
    return out


# ------------------------------------------------------------------ the two effects
def fused_bytes_saved(config: dict[str, Any], dtype_bytes: int) -> int:
    """HBM bytes per token (all layers) that fusing RoPE into its neighbours saves."""
    nbytes = _pos_int(dtype_bytes, "dtype_bytes")
    heads = _field_int(config, "num_attention_heads")
    kv = heads if config.get("num_key_value_heads") is None else _field_int(
        config, "num_key_value_heads")
    layers = _field_int(config, "num_hidden_layers")
    d = _head_dim(config)
    return 2 * (heads + kv) * d * nbytes * layers


def first_bad_position(config: dict[str, Any], dtype: str, tolerance: float,
                       max_position: int = 131072) -> int:
    """The smallest position in ``[0, max_position)`` with some angle off by more than
    ``tolerance``; -1 if there is none."""
    dtype = _check_dtype(dtype)
    tol = _finite_real(tolerance, "tolerance")
    if tol < 0.0:
        raise ValueError(f"tolerance must be >= 0, got {tolerance!r}")
    limit = _pos_int(max_position, "max_position")
    f = inv_freq(config)
    if dtype == "float64":                  # the angle is the reference itself
        return -1
    rf = _round_magnitude(f.copy(), dtype)
    cap = max(256, (1 << 21) // f.shape[0])
    start, size = 0, 256
    while start < limit:
        stop = min(limit, start + size)
        p = np.arange(start, stop, dtype=np.float64)
        got = _round_magnitude(np.multiply.outer(_round_magnitude(p.copy(), dtype), rf), dtype)
        got -= np.multiply.outer(p, f)
        np.abs(got, out=got)
        bad = (got > tol).any(axis=1)
        if bool(bad.any()):
            return start + int(np.argmax(bad))
        start, size = stop, min(cap, size * 4)
    return -1


def position_resolution(config: dict[str, Any], dtype: str, context: int,
                        index: int = 0) -> int:
    """The longest run of consecutive positions in ``[0, context)`` with one and the same
    angle at frequency ``index`` in ``dtype``."""
    dtype = _check_dtype(dtype)
    n = _pos_int(context, "context")
    f = inv_freq(config)
    if not _is_int(index) or not 0 <= int(index) < f.shape[0]:
        raise ValueError(f"index must be an int in [0, {f.shape[0]}), got {index!r}")
    a = _angles(np.arange(n, dtype=np.float64), f[int(index):int(index) + 1], dtype)[:, 0]
    changed = np.empty(n, dtype=np.int64)
    changed[0] = 0
    np.not_equal(a[1:], a[:-1], out=changed[1:], casting="unsafe")
    labels = np.cumsum(changed)
    return int(np.bincount(labels).max())
