"""Written blind from the prompt, the stub and the public tests only (2026-12-02), by a helper session.

How it is built (a different design from the frexp / np.where / block-scan one):

- ``round_to_dtype`` works on the float64 bit pattern: it takes each value's 53-bit integer
  significand and unbiased exponent from ``view(np.uint64)``, drops the low bits the target
  format cannot hold (more of them below its smallest normal, so subnormals round on their
  grid) with an integer round-half-to-even (``+ half - 1 + lsb``, then shift), and puts the
  result back together with ``np.ldexp``. A carry out of the significand moves to the next
  binade by itself. Overflow is judged on the rounded magnitude; the sign is put back with
  ``np.copysign`` so a negative value that rounds to zero gives -0.0.
- ``inv_freq`` does the three llama3 bands in one formula: the blend weight
  ``s = (N / w - lo) / (hi - lo)`` clipped to ``[0, 1]`` is exactly 1 in the kept band and
  exactly 0 in the divided band, so ``(1 - s) * f / factor + s * f`` covers all three.
- ``first_bad_position`` scans frequency by frequency, each only below the best position
  found so far (chunks of positions, early exit), instead of all frequencies per block.
- ``position_resolution`` walks the positions in chunks and carries the open run (its value
  and length) across chunk borders; inside a chunk the run length at each position is its
  index minus the index of the last change, via ``np.maximum.accumulate``.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

#: The dtypes an angle can be computed in ("float64" means: no rounding at all).
DTYPES = ("float64", "float32", "bfloat16", "float16")

# dtype -> (significant bits, exponent of the smallest normal as 2**e, largest finite)
_FORMATS: dict[str, tuple[int, int, float]] = {
    "float32": (24, -126, float(np.finfo(np.float32).max)),
    "bfloat16": (8, -126, (2.0 - 2.0 ** -7) * 2.0 ** 127),
    "float16": (11, -14, 65504.0),
}

_CHUNK = 1 << 15


# ------------------------------------------------------------------ validation helpers
def _check_dtype(dtype: Any) -> str:
    if not isinstance(dtype, str) or dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
    return dtype


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_number(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def _pos_int(v: Any, what: str) -> int:
    if not _is_int(v) or int(v) < 1:
        raise ValueError(f"{what} must be a positive int, got {v!r}")
    return int(v)


def _field_int(config: Any, key: str) -> int:
    if not isinstance(config, dict):
        raise ValueError("config must be a dict")
    if key not in config:
        raise ValueError(f"config lacks {key!r}")
    return _pos_int(config[key], f"config[{key!r}]")


def _head_dim(config: Any) -> int:
    if not isinstance(config, dict):
        raise ValueError("config must be a dict")
    if config.get("head_dim") is not None:
        d = _pos_int(config["head_dim"], "config['head_dim']")
    else:
        d = _field_int(config, "hidden_size") // _field_int(config, "num_attention_heads")
        if d < 1:
            raise ValueError("hidden_size // num_attention_heads must be at least 1")
    if d % 2:
        raise ValueError(f"head_dim must be even, got {d}")
    return d


def _finite_number(v: Any, what: str) -> float:
    if not _is_number(v) or not math.isfinite(float(v)):
        raise ValueError(f"{what} must be a finite number, got {v!r}")
    return float(v)


def _positions(positions: Any) -> np.ndarray:
    p = np.asarray(positions)
    if p.ndim != 1 or p.dtype.kind not in "iu":
        raise ValueError("positions must be a 1-D integer array")
    if p.size and int(p.min()) < 0:
        raise ValueError("positions must be >= 0")
    return p


# ------------------------------------------------------------------ rounding
def _round_subnormal(a: np.ndarray, bits: int, emin: int) -> np.ndarray:
    """Positive finite ``a`` below the target's smallest normal, rounded on its subnormal grid
    with an integer round-half-to-even of the 53-bit significand."""
    raw = a.view(np.uint64)
    biased = ((raw >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
    # float64 subnormals (biased exponent 0) lie far below every target's half-subnormal:
    # give them a tiny exponent so they shift out entirely and round to zero.
    e = np.where(biased == 0, -1100, biased - 1023)            # a = M * 2**(e - 52)
    sig = (raw & np.uint64((1 << 52) - 1)) | np.uint64(1 << 52)
    sig = np.where(biased == 0, np.uint64(0), sig)
    q = emin - (bits - 1)                                       # the subnormal quantum 2**q
    drop = np.minimum(q - (e - 52), 60).astype(np.uint64)
    one = np.uint64(1)
    lsb = (sig >> drop) & one
    rounded = (sig + (one << (drop - one)) - one + lsb) >> drop
    out: np.ndarray = np.ldexp(rounded.astype(np.float64), q)
    return out


def round_to_dtype(x: np.ndarray, dtype: str) -> np.ndarray:
    """Each float64 value of ``x`` rounded to the nearest value of ``dtype``, as float64.

    In the target's normal range every value loses the same number of low significand
    bits (53 - bits), so the rounding is done on the float64 bit pattern itself: add half
    an ulp minus one plus the kept lsb (round half to even), clear the dropped bits; a carry
    runs into the exponent, which is the next binade. Values below the target's smallest
    normal lose more bits and go through ``_round_subnormal``.
    """
    dtype = _check_dtype(dtype)
    v = np.array(x, dtype=np.float64, copy=True)
    if dtype == "float64":
        return v
    bits, emin, largest = _FORMATS[dtype]
    drop = np.uint64(53 - bits)
    half_minus_one = np.uint64((1 << (52 - bits)) - 1)
    keep = ~np.uint64((1 << (53 - bits)) - 1)
    flat = v.reshape(-1)
    a = np.abs(flat)
    raw = a.view(np.uint64)
    r = (raw >> drop) & np.uint64(1)
    r += raw
    r += half_minus_one
    r &= keep
    out = r.view(np.float64)
    low = (a < 2.0 ** emin) & (a > 0.0)
    if low.any():
        out[low] = _round_subnormal(a[low], bits, emin)
    out[out > largest] = np.inf
    nan = np.isnan(flat)
    if nan.any():
        out[nan] = np.nan
    result: np.ndarray = np.copysign(out, flat).reshape(v.shape)
    return result


# ------------------------------------------------------------------ frequencies
def inv_freq(config: dict[str, Any]) -> np.ndarray:
    """The ``(head_dim // 2,)`` float64 rotation frequencies (radians per position)."""
    d = _head_dim(config)
    if "rope_theta" not in config:
        raise ValueError("config lacks 'rope_theta'")
    theta = _finite_number(config["rope_theta"], "rope_theta")
    if not theta > 1.0:
        raise ValueError(f"rope_theta must be above 1, got {theta}")
    f = theta ** (-(2.0 * np.arange(d // 2, dtype=np.float64)) / d)
    scaling = config.get("rope_scaling")
    if scaling is None:
        return f
    if not isinstance(scaling, dict) or scaling.get("rope_type") != "llama3":
        raise ValueError(f"unsupported rope_scaling {scaling!r}: only rope_type 'llama3'")
    for key in ("factor", "low_freq_factor", "high_freq_factor",
                "original_max_position_embeddings"):
        if key not in scaling:
            raise ValueError(f"rope_scaling lacks {key!r}")
    factor = _finite_number(scaling["factor"], "factor")
    lo = _finite_number(scaling["low_freq_factor"], "low_freq_factor")
    hi = _finite_number(scaling["high_freq_factor"], "high_freq_factor")
    n = float(_pos_int(scaling["original_max_position_embeddings"],
                       "original_max_position_embeddings"))
    if not (factor >= 1.0 and lo > 0.0 and hi > lo):
        raise ValueError("llama3 scaling needs factor >= 1, low_freq_factor > 0 and "
                         "high_freq_factor > low_freq_factor")
    wavelength = 2.0 * math.pi / f
    s = np.clip((n / wavelength - lo) / (hi - lo), 0.0, 1.0)   # 1: keep, 0: divide
    result: np.ndarray = (1.0 - s) * f / factor + s * f
    return result


# ------------------------------------------------------------------ angles
def _angles_of(p: np.ndarray, f: np.ndarray, dtype: str) -> np.ndarray:
    """Angles for validated positions ``p`` and frequencies ``f`` (outer product)."""
    pf = p.astype(np.float64)
    if dtype == "float64":
        plain: np.ndarray = np.multiply.outer(pf, f)
        return plain
    return round_to_dtype(np.multiply.outer(round_to_dtype(pf, dtype),
                                            round_to_dtype(f, dtype)), dtype)


def angles(positions: np.ndarray, config: dict[str, Any], dtype: str) -> np.ndarray:
    """The ``(len(positions), head_dim // 2)`` float64 angles as computed in ``dtype``."""
    dtype = _check_dtype(dtype)
    p = _positions(positions)
    return _angles_of(p, inv_freq(config), dtype)


def apply_rope(x: np.ndarray, positions: np.ndarray, config: dict[str, Any],
               angle_dtype: str = "float64") -> np.ndarray:
    """``x`` (``(T, heads, head_dim)``) rotated by position, as a new float64 array."""
    angle_dtype = _check_dtype(angle_dtype)
    p = _positions(positions)
    d = _head_dim(config)
    xa = np.asarray(x)
    if xa.ndim != 3 or xa.shape[0] != p.shape[0] or xa.shape[2] != d:
        raise ValueError(f"x must have shape ({p.shape[0]}, heads, {d}), got {xa.shape}")
    xf = xa.astype(np.float64)
    a = angles(p, config, angle_dtype)[:, None, :]              # (T, 1, d/2)
    with np.errstate(invalid="ignore"):
        c, s = np.cos(a), np.sin(a)
    half = d // 2
    lo, hi = xf[..., :half], xf[..., half:]
    return np.concatenate((lo * c - hi * s, hi * c + lo * s), axis=-1)


# ------------------------------------------------------------------ fused bytes
def fused_bytes_saved(config: dict[str, Any], dtype_bytes: int) -> int:
    """HBM bytes per token (all layers) that fusing RoPE into its neighbours saves."""
    nbytes = _pos_int(dtype_bytes, "dtype_bytes")
    d = _head_dim(config)
    q_heads = _field_int(config, "num_attention_heads")
    kv = config.get("num_key_value_heads")
    kv_heads = q_heads if kv is None else _pos_int(kv, "num_key_value_heads")
    layers = _field_int(config, "num_hidden_layers")
    return 2 * (q_heads + kv_heads) * d * nbytes * layers


# ------------------------------------------------------------------ angle error
def first_bad_position(config: dict[str, Any], dtype: str, tolerance: float,
                       max_position: int = 131072) -> int:
    """The smallest position in ``[0, max_position)`` whose angle at some frequency is off
    by more than ``tolerance``; -1 if none."""
    dtype = _check_dtype(dtype)
    if not _is_number(tolerance) or not math.isfinite(float(tolerance)) or tolerance < 0:
        raise ValueError(f"tolerance must be finite and >= 0, got {tolerance!r}")
    tol = float(tolerance)
    limit = _pos_int(max_position, "max_position")
    f = inv_freq(config)
    if dtype == "float64":
        return -1
    best = limit                                  # positions >= best need not be looked at
    for i in range(f.shape[0]):
        fi = f[i:i + 1]
        for start in range(0, best, _CHUNK):
            p = np.arange(start, min(start + _CHUNK, best), dtype=np.int64)
            got = _angles_of(p, fi, dtype)[:, 0]
            exact = p.astype(np.float64) * fi[0]
            with np.errstate(invalid="ignore"):
                bad = np.abs(got - exact) > tol
            if bad.any():
                best = start + int(np.argmax(bad))
                break
    return best if best < limit else -1


# ------------------------------------------------------------------ resolution
def position_resolution(config: dict[str, Any], dtype: str, context: int,
                        index: int = 0) -> int:
    """The longest run of consecutive positions in ``[0, context)`` sharing one angle at
    frequency ``index`` in ``dtype``."""
    dtype = _check_dtype(dtype)
    n = _pos_int(context, "context")
    f = inv_freq(config)
    if not _is_int(index) or not 0 <= int(index) < f.shape[0]:
        raise ValueError(f"index must be an int in [0, {f.shape[0]}), got {index!r}")
    fi = f[int(index):int(index) + 1]
    longest = 0
    run = 0                              # length of the run still open at the chunk border
    last = np.nan                        # its angle (NaN: no run open yet)
    for start in range(0, n, _CHUNK):
        p = np.arange(start, min(start + _CHUNK, n), dtype=np.int64)
        a = _angles_of(p, fi, dtype)[:, 0]
        prev = np.concatenate(([last], a[:-1]))
        change = a != prev                # inf == inf; NaN never equals: a new run
        idx = np.arange(a.shape[0])
        # index where the run at each position began (-1: it began before this chunk)
        began = np.maximum.accumulate(np.where(change, idx, -1))
        lengths = np.where(began >= 0, idx - began + 1, idx + 1 + run)
        longest = max(longest, int(lengths.max()))
        run = int(lengths[-1])
        last = float(a[-1])
    return longest
