"""Independent correct solution: no sort at all; the cut is found by bisection on bit patterns.

Written by the kata's author working from the prompt and stub (no separate helper could be
started, so not blind: the author also wrote the reference), to differ from the reference in
every step: the logits are mapped to order-preserving int64 keys, and for each row a vectorised
bisection (64 rounds, every row at once) finds the largest key c whose set "keys >= c" still
reaches the mass. Masses are masked float64 sums, probabilities are normalized first, top-k is
a count-based bisection too, and sampling uses np.searchsorted on a normalized CDF.
"""

from __future__ import annotations

import numpy as np

TOL = 1e-6


def _keys(x: np.ndarray) -> np.ndarray:
    """int64 keys with the same order as the float64 values (-inf included)."""
    bits = (x.astype(np.float64) + 0.0).view(np.int64)    # + 0.0 turns -0.0 into 0.0
    return np.where(bits < 0, np.int64(-(2 ** 63)) - bits - 1, bits)


def _validate(logits, temperature, top_p, top_k, u=None):  # type: ignore[no-untyped-def]
    x = np.array(logits, dtype=np.float64)          # a copy: never touches the caller's array
    if x.ndim != 2 or 0 in x.shape:
        raise ValueError("logits: need a non-empty 2-D array")
    if np.isnan(x).any() or (x == np.inf).any():
        raise ValueError("logits: NaN or +inf")
    if (x == -np.inf).all(axis=1).any():
        raise ValueError("logits: a row is entirely -inf")
    n = x.shape[0]

    def vec(name, v, dtype):  # type: ignore[no-untyped-def]
        a = np.asarray(v)
        if a.shape != (n,):
            raise ValueError(f"{name}: expected shape ({n},), got {a.shape}")
        return a.astype(dtype)

    t = vec("temperature", temperature, np.float64)
    if np.isnan(t).any() or np.isinf(t).any() or (t < 0).any():
        raise ValueError("temperature: must be finite and non-negative")
    p = vec("top_p", top_p, np.float64)
    if np.isnan(p).any() or (p <= 0).any():
        raise ValueError("top_p: must be positive")
    if top_k is None:
        k = np.zeros(n, dtype=np.int64)
    else:
        raw = np.asarray(top_k)
        if raw.shape != (n,):
            raise ValueError("top_k: wrong shape")
        if raw.dtype.kind == "f":
            if not (np.isfinite(raw) & (np.floor(raw) == raw)).all():
                raise ValueError("top_k: not integers")
        elif raw.dtype.kind not in "iu":
            raise ValueError("top_k: not integers")
        k = raw.astype(np.int64)
        if (k < 0).any():
            raise ValueError("top_k: negative")
    if u is not None:
        uu = vec("u", u, np.float64)
        if not ((uu >= 0) & (uu < 1)).all():
            raise ValueError("u: must be in [0, 1)")
        return x, t, p, k, uu
    return x, t, p, k, None


def _largest_cut(keys: np.ndarray, ok) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Per row, the largest int64 c with ok(c) True, where ok is monotone (True, then False)
    as c grows and True at the row's smallest key."""
    lo = keys.min(axis=1)                     # ok(lo) holds
    hi = keys.max(axis=1) + 1                 # search in [lo, hi)
    for _ in range(64):
        mid = (lo & hi) + ((lo ^ hi) >> 1)    # floor((lo + hi) / 2) without overflow
        good = ok(mid)
        lo = np.where(good, mid, lo)
        hi = np.where(good, hi, mid)
    return lo


def _keep(x: np.ndarray, t: np.ndarray, p: np.ndarray, k: np.ndarray) -> np.ndarray:
    finite = np.isfinite(x)
    keys = np.where(finite, _keys(x), np.iinfo(np.int64).max)   # -inf never counts
    fkeys = np.where(finite, keys, np.iinfo(np.int64).min)
    nfin = finite.sum(axis=1)
    # top-k: largest c with at least min(k, nfin) tokens >= c
    want = np.where(k > 0, np.minimum(k, nfin), nfin)
    lowest = np.where(finite, keys, np.iinfo(np.int64).max).min(axis=1)
    kcut = _largest_cut(np.stack([lowest, fkeys.max(axis=1)], axis=1),
                        lambda c: (fkeys >= c[:, None]).sum(axis=1) >= want)
    topk = finite & (fkeys >= kcut[:, None])
    m = np.where(finite, x, -np.inf).max(axis=1, keepdims=True)
    tt = np.where(t > 0, t, 1.0)[:, None]
    w = np.where(topk, np.exp((x - m) / tt), 0.0)
    prob = w / w.sum(axis=1, keepdims=True)
    goal = p - TOL
    pcut = _largest_cut(np.stack([kcut, fkeys.max(axis=1)], axis=1),
                        lambda c: np.where(fkeys >= c[:, None], prob, 0.0).sum(axis=1) >= goal)
    cut = np.where(p >= 1, kcut, pcut)
    cut = np.where(t == 0, fkeys.max(axis=1), cut)
    return finite & (fkeys >= cut[:, None])


def kept_mask(logits, temperature, top_p, top_k=None):  # type: ignore[no-untyped-def]
    x, t, p, k, _ = _validate(logits, temperature, top_p, top_k)
    return _keep(x, t, p, k)


def sample(logits, temperature, top_p, u, top_k=None):  # type: ignore[no-untyped-def]
    x, t, p, k, uu = _validate(logits, temperature, top_p, top_k, u)
    keep = _keep(x, t, p, k)
    m = np.where(keep, x, -np.inf).max(axis=1, keepdims=True)
    tt = np.where(t > 0, t, 1.0)[:, None]
    w = np.where(keep, np.exp((x - m) / tt), 0.0)
    cdf = np.cumsum(w / w.sum(axis=1, keepdims=True), axis=1)
    out = np.empty(x.shape[0], dtype=np.int64)
    # one searchsorted for all rows: row r's CDF (within [0, 1] up to rounding) is shifted
    # to [2r, 2r + 1], so rows cannot interleave
    shift = 2.0 * np.arange(x.shape[0])
    flat = (cdf + shift[:, None]).ravel()
    idx = np.searchsorted(flat, uu + shift, side="right")
    idx -= np.arange(x.shape[0]) * x.shape[1]
    last = x.shape[1] - 1 - np.argmax(w[:, ::-1] > 0, axis=1)
    out[:] = np.minimum(idx, last)
    first_max = np.argmax(keep, axis=1)
    return np.where(t == 0, first_max, out)
