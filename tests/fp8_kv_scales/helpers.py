"""Shared helpers for the fp8_kv_scales tests: a model of the format, of the simulator, and
the caches the context-growth checks use.

The model encoder is brute force over the format's table (the prompt's table, written out
code by code): it finds the two grid values around |x| with searchsorted and picks the
nearer, the even code on a tie. It shares no arithmetic with a frexp/rint encoder.
"""

from __future__ import annotations

import numpy as np

E4M3_MAX = 448.0
UNIT_ROUNDOFF = 2.0 ** -4        # half the spacing of 3 mantissa bits, relative
MIN_NORMAL = 2.0 ** -6
MIN_SUBNORMAL = 2.0 ** -9
NAN_CODES = (0x7F, 0xFF)
SHORT, LONG = 1024, 131072       # the short calibration prompt and the 128K context


def code_value(code: int) -> float:
    """The value of one code, straight from the prompt's table."""
    sign = -1.0 if code & 0x80 else 1.0
    e, m = (code >> 3) & 0xF, code & 0x7
    if e == 15 and m == 7:
        return float("nan")
    if e == 0:
        return sign * m * 2.0 ** -9
    return sign * (1 + m / 8) * 2.0 ** (e - 7)


TABLE = np.array([code_value(c) for c in range(256)])
GRID = TABLE[:0x7F]              # codes 0x00 .. 0x7E: 0 .. 448, increasing with the code


def model_encode(x: np.ndarray) -> np.ndarray:
    """The prompt's encoding rules, by nearest-value search (NaN gives 0x7F | sign)."""
    v = np.asarray(x, dtype=np.float64)
    a = np.minimum(np.abs(np.nan_to_num(v, nan=0.0, posinf=np.inf, neginf=-np.inf)), E4M3_MAX)
    hi = np.clip(np.searchsorted(GRID, a), 1, len(GRID) - 1)
    lo = hi - 1
    dlo, dhi = a - GRID[lo], GRID[hi] - a
    code = np.where(dlo < dhi, lo, np.where(dhi < dlo, hi, np.where(lo % 2 == 0, lo, hi)))
    code = np.where(np.isnan(v), 0x7F, code)
    out: np.ndarray = (code | (np.signbit(v).astype(np.int64) << 7)).astype(np.uint8)
    return out


def per_head(scale: float | np.ndarray) -> np.ndarray:
    s = np.asarray(scale, dtype=np.float64)
    return s if s.ndim == 0 else s[:, None]


def model_roundtrip(x: np.ndarray, scale: float | np.ndarray) -> np.ndarray:
    """dequantize(quantize(x, scale), scale) by the prompt's rules, float64."""
    v = np.asarray(x, dtype=np.float64)
    out: np.ndarray = TABLE[model_encode(v / per_head(scale))] * per_head(scale)
    return out


def model_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """softmax(q k^T / sqrt(D)) v per head, in float64, one head at a time."""
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    out = np.empty(q.shape)
    for h in range(q.shape[0]):
        s = k[:, h, :] @ q[h] / np.sqrt(q.shape[1])
        w = np.exp(s - s.max())
        out[h] = (w / w.sum()) @ v[:, h, :]
    return out


def model_error(q: np.ndarray, k: np.ndarray, v: np.ndarray,
                scale_k: float | np.ndarray, scale_v: float | np.ndarray) -> np.ndarray:
    exact = model_attention(q, k, v)
    approx = model_attention(q, model_roundtrip(k, scale_k), model_roundtrip(v, scale_v))
    err = np.linalg.norm(approx - exact, axis=1)
    norm = np.linalg.norm(exact, axis=1)
    out: np.ndarray = np.where(norm > 0, err / np.where(norm > 0, norm, 1.0), err)
    return out


def model_scale(samples: np.ndarray, per_head_axis: bool = False,
                margin: float = 1.0) -> float | np.ndarray:
    x = np.abs(np.asarray(samples, dtype=np.float64))
    if per_head_axis:
        h = x.shape[-2]
        amax = np.moveaxis(x, -2, 0).reshape(h, -1).max(axis=1)
        return np.where(amax > 0, amax * margin / E4M3_MAX, 1.0)
    a = float(x.max())
    return a * margin / E4M3_MAX if a > 0 else 1.0


def hexes(codes: np.ndarray) -> list[str]:
    return [f"0x{int(c):02X}" for c in np.asarray(codes).ravel()]


def check_codes(got: np.ndarray, want: np.ndarray, x: np.ndarray, what: str = "",
                nan_either_sign: bool = True) -> None:
    """Codes equal, entry by entry (a NaN code may carry either sign); the first few
    mismatches are named with their inputs."""
    got = np.asarray(got)
    assert got.dtype == np.uint8, f"{what}codes must be uint8, got {got.dtype}"
    assert got.shape == np.shape(want), f"{what}shape {got.shape}, expected {np.shape(want)}"
    g, w = got.astype(np.int64).ravel(), np.asarray(want).astype(np.int64).ravel()
    same = g == w
    if nan_either_sign:
        same |= np.isin(g, NAN_CODES) & np.isin(w, NAN_CODES)
    if not same.all():
        bad = np.flatnonzero(~same)[:6]
        xs = np.asarray(x, dtype=np.float64).ravel()
        rows = [f"  x = {xs[i]!r}: got 0x{g[i]:02X} ({TABLE[g[i]]}), expected 0x{w[i]:02X} "
                f"({TABLE[w[i]]})" for i in bad]
        raise AssertionError(f"{what}{(~same).sum()} of {g.size} codes wrong, e.g.\n"
                             + "\n".join(rows))


# ----------------------------------------------------------------- the caches
def gaussian_cache(seed: int, tokens: int = LONG, heads: int = 1, dim: int = 4,
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """q (H, D), k and v (T, H, D): unit Gaussians, no outliers, in float32 (a cache's
    dtype, and half the bytes a float64 cache would take to send to the implementation)."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((heads, dim), dtype=np.float32)
    k = rng.standard_normal((tokens, heads, dim), dtype=np.float32)
    v = rng.standard_normal((tokens, heads, dim), dtype=np.float32)
    return q, k, v


def outlier_cache(seed: int, tokens: int = LONG, heads: int = 1, dim: int = 4,
                  outliers: int = 32, factor: float = 8.0,
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The Gaussian cache with ``outliers`` tokens (all after the first SHORT tokens) whose
    K and V are ``factor`` times larger: rare, so a short calibration prompt holds none."""
    q, k, v = gaussian_cache(seed, tokens, heads, dim)
    rng = np.random.default_rng(seed + 1000)
    pos = rng.choice(np.arange(SHORT, tokens), outliers, replace=False)
    k[pos] *= np.float32(factor)
    v[pos] *= np.float32(factor)
    return q, k, v
