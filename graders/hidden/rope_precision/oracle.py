"""An independent model of the rope_precision prompt, and Hypothesis strategies.

Written from the prompt, apart from the reference: the rounding is ml_dtypes' and numpy's own
casts from float64 (one rounding each), the frequencies are a per-element loop with exp/log,
the first bad position is a brute-force scan, the resolution counts each angle's positions
with np.unique (the angle never decreases with the position, so that is the longest run).

The prompt promises answers that do not change for frequencies within 1e-12 of the true
ones; ``robust_*`` check that promise for a case, and the tests ``assume`` it.
"""

from __future__ import annotations

import math
from typing import Any

import hypothesis.strategies as st
import ml_dtypes
import numpy as np

NUMPY_DTYPE: dict[str, Any] = {"float32": np.float32, "bfloat16": ml_dtypes.bfloat16,
                               "float16": np.float16}
LOW = tuple(NUMPY_DTYPE)
DELTA = 1e-12


def R(x: Any, dtype: str) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if dtype == "float64":
        return x.copy()
    with np.errstate(over="ignore", invalid="ignore"):
        return x.astype(NUMPY_DTYPE[dtype]).astype(np.float64)


def head_dim(cfg: dict[str, Any]) -> int:
    d = cfg.get("head_dim")
    return int(d) if d is not None else cfg["hidden_size"] // cfg["num_attention_heads"]


def freqs(cfg: dict[str, Any]) -> np.ndarray:
    d, theta = head_dim(cfg), float(cfg["rope_theta"])
    sc = cfg.get("rope_scaling")
    out = []
    for i in range(d // 2):
        f = math.exp(-(2 * i / d) * math.log(theta))
        if sc is not None:
            n, lo, hi, k = (sc["original_max_position_embeddings"], sc["low_freq_factor"],
                            sc["high_freq_factor"], sc["factor"])
            w = 2 * math.pi / f
            if w > n / lo:
                f = f / k
            elif w >= n / hi:
                s = (n / w - lo) / (hi - lo)
                f = f * (s + (1 - s) / k)
        out.append(f)
    return np.array(out)


def angles(p: Any, f: np.ndarray, dtype: str) -> np.ndarray:
    p = np.asarray(p, dtype=np.float64)
    if dtype == "float64":
        return p[:, None] * f[None, :]
    with np.errstate(invalid="ignore"):
        return R(R(p, dtype)[:, None] * R(f, dtype)[None, :], dtype)


def rope(x: np.ndarray, p: Any, f: np.ndarray, dtype: str) -> np.ndarray:
    a = angles(p, f, dtype)[:, None, :]
    h = x.shape[-1] // 2
    out = np.empty_like(x, dtype=np.float64)
    with np.errstate(invalid="ignore"):            # cos and sin of an infinite angle: NaN
        c, s = np.cos(a), np.sin(a)
    out[..., :h] = x[..., :h] * c - x[..., h:] * s
    out[..., h:] = x[..., h:] * c + x[..., :h] * s
    return out


def errors(f: np.ndarray, dtype: str, maxp: int, start: int = 0) -> np.ndarray:
    p = np.arange(start, maxp, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.abs(angles(p, f, dtype) - p[:, None] * f[None, :])


def first_bad(f: np.ndarray, dtype: str, tol: float, maxp: int) -> int:
    for start in range(0, maxp, 2048):
        bad = np.flatnonzero((errors(f, dtype, min(maxp, start + 2048), start) > tol).any(axis=1))
        if bad.size:
            return start + int(bad[0])
    return -1


def resolution(f: np.ndarray, dtype: str, context: int, index: int) -> int:
    a = angles(np.arange(context), f[index:index + 1], dtype)[:, 0]
    return int(np.unique(a, return_counts=True)[1].max())


def robust_freqs(f: np.ndarray, dtype: str) -> bool:
    """Every frequency within DELTA (relative) rounds to the same dtype value."""
    if dtype == "float64":
        return True
    return bool((R(f * (1 - 2 * DELTA), dtype) == R(f, dtype)).all()
                and (R(f * (1 + 2 * DELTA), dtype) == R(f, dtype)).all())


def robust_first_bad(f: np.ndarray, dtype: str, tol: float, maxp: int) -> tuple[int, bool]:
    """The answer, and whether frequencies within DELTA give the same one."""
    want = first_bad(f, dtype, tol, maxp)
    last = maxp if want < 0 else want + 1
    clear = robust_freqs(f, dtype)
    for start in range(0, last, 8192):
        e = errors(f, dtype, min(last, start + 8192), start)
        slack = 4 * DELTA * np.arange(start, start + len(e))[:, None] * f[None, :] + 1e-300
        clear = clear and bool((np.isinf(e) | (np.abs(e - tol) > slack)).all())
    return want, clear


# ------------------------------------------------------------------ strategies
@st.composite
def configs(draw: Any, max_head_dim: int = 16) -> dict[str, Any]:
    """Small configs: theta, head_dim given or derived, llama3 scaling or none; every
    frequency at least 2**-24 (the prompt's promise)."""
    d = draw(st.sampled_from([d for d in (2, 4, 6, 8, 12, 16, 32, 64, 128) if d <= max_head_dim]))
    theta = draw(st.one_of(st.sampled_from([10000.0, 500000.0, 1e6, 64.0, 1.5]),
                           st.floats(1.01, 1e7)))
    heads = draw(st.sampled_from([1, 2, 4, 8]))
    cfg: dict[str, Any] = {"rope_theta": theta, "num_attention_heads": heads,
                           "num_key_value_heads": draw(st.sampled_from([1, heads])),
                           "num_hidden_layers": draw(st.integers(1, 4))}
    if draw(st.booleans()):
        cfg["head_dim"] = d
        cfg["hidden_size"] = d * heads * draw(st.sampled_from([1, 2]))   # ignored: head_dim wins
    else:
        cfg["hidden_size"] = d * heads
        if draw(st.booleans()):
            cfg["head_dim"] = None
    if draw(st.integers(0, 3)):
        lo = draw(st.sampled_from([0.5, 1.0, 2.0]))
        cfg["rope_scaling"] = {
            "rope_type": "llama3",
            "factor": draw(st.sampled_from([1.0, 2.0, 8.0, 32.0, 5.5])),
            "low_freq_factor": lo,
            "high_freq_factor": lo * draw(st.sampled_from([1.5, 2.0, 4.0, 8.0])),
            # small original lengths put the bands where a small head_dim has frequencies
            "original_max_position_embeddings": draw(st.sampled_from([16, 64, 256, 1024, 8192])),
        }
    elif draw(st.booleans()):
        cfg["rope_scaling"] = None
    return cfg


def min_ok(f: np.ndarray) -> bool:
    return bool(f.min() >= 2.0**-24)


TRAP_POSITIONS = [0, 1, 2, 255, 256, 257, 258, 259, 511, 512, 513, 514, 1023, 1025, 2047, 2048,
                  2049, 2050, 4097, 32767, 32768, 32769, 65503, 65504, 65519, 65520, 65535, 65536,
                  65537, 100000, 131071, 131072]

positions = st.lists(st.one_of(st.sampled_from(TRAP_POSITIONS), st.integers(0, 140000)),
                     min_size=0, max_size=12).map(lambda v: np.array(v, dtype=np.int64))
