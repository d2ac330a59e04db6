"""Independent correct solution: top-p without sorting the vocabulary.

Written by a helper session from the prompt and the stub (it had read the reference, so not
blind), to differ from the reference where it spends its time: the reference sorts every
row and sums the sorted weights in float64; this one sorts only a small sample of each row
and a thin band of values around the cut, in the spirit of the sort-free samplers of
serving engines (find the threshold, then compare every token with it).

Per row: the weights exp((x - max) / T) (float32 for float32 logits), their total, and a
sample of every V / 2048-th token, sorted. The sample estimates where the mass reaches p
(the total less the sampled mass below a value: the light tokens below the cut estimate
well, the few heavy ones above it would not); one masked sum gives the exact mass at or
above a sampled value next to that point (the anchor), and the estimate is shifted to it.
The cut then lies between the anchor and a sampled value a margin away: the tokens of that
band (a few thousand per row) are gathered and sorted, and the cut is the first of them at
which the exact mass reaches p. A band that missed (a bad sample) is widened, up to the
row's end. Every finite token at or above the cut is kept, so ties are never split. Top-k
selects the largest max(k) values with np.partition and sorts only those. Sampling is the
inverse CDF over the kept tokens in token-id order.

On 64 x 128K float32 logits (N(0, 4), T in [0.7, 1.3], p in [0.8, 0.95]) it takes 0.4-0.5
of the reference's time (the kata's interviewer notes); with huge numbers of exact ties in
the band it sorts more, never the whole vocabulary unless the band grows to it.
"""

from __future__ import annotations

import numpy as np

TOL = 1e-6
SAMPLE = 2048    # tokens per row in the sample
MARGIN = 24      # sample tokens between the anchor's far side and the band's end (x4 on a miss)


def _rows(name: str, value: object, n: int) -> np.ndarray:
    arr = np.asarray(value)
    if arr.shape != (n,):
        raise ValueError(f"{name}: expected shape ({n},), got {arr.shape}")
    return arr


def _inputs(logits: object, temperature: object, top_p: object, top_k: object,
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(logits as floats, each row's maximum, T, p, k), or ValueError."""
    x = np.asarray(logits)
    if x.ndim != 2 or 0 in x.shape:
        raise ValueError(f"logits: need a non-empty 2-D array, got shape {x.shape}")
    if x.dtype.kind not in "fiu":
        raise ValueError(f"logits: need real numbers, got {x.dtype}")
    if x.dtype.kind != "f" or x.dtype.itemsize < 4:
        x = x.astype(np.float32 if x.dtype == np.float16 else np.float64)
    top = x.max(axis=1)       # NaN anywhere in a row makes its maximum NaN
    if np.isnan(top).any():
        raise ValueError("logits: NaN")
    if np.isposinf(top).any():
        raise ValueError("logits: +inf")
    if np.isneginf(top).any():
        raise ValueError("logits: a row has no finite value")
    n = x.shape[0]
    t = _rows("temperature", temperature, n).astype(np.float64)
    if not (np.isfinite(t) & (t >= 0)).all():
        raise ValueError(f"temperature: must be finite and >= 0, got {t}")
    p = _rows("top_p", top_p, n).astype(np.float64)
    if not (p > 0).all():
        raise ValueError(f"top_p: must be > 0, got {p}")
    if top_k is None:
        k = np.zeros(n, dtype=np.int64)
    else:
        raw = _rows("top_k", top_k, n)
        whole = raw.dtype.kind in "iu" or (
            raw.dtype.kind == "f" and bool(np.isfinite(raw).all())
            and bool((np.floor(raw) == raw).all()))
        if not whole:
            raise ValueError(f"top_k: must hold integers, got {raw}")
        k = raw.astype(np.int64)
        if (k < 0).any():
            raise ValueError(f"top_k: must be >= 0, got {k}")
    return x, top, t, p, k


def _kth_largest(x: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Per row, the value of its k-th largest finite token (-inf where k keeps them all):
    np.partition selects the largest max(k) values of the rows that ask, and only those
    are sorted."""
    cut = np.full(x.shape[0], -np.inf)
    rows = np.flatnonzero(k > 0)
    if rows.size == 0:
        return cut
    rows = rows[k[rows] < np.isfinite(x[rows]).sum(axis=1)]
    if rows.size == 0:
        return cut
    vocab, most = x.shape[1], int(k[rows].max())
    block = np.sort(np.partition(x[rows], vocab - most, axis=1)[:, vocab - most:], axis=1)
    cut[rows] = block[np.arange(rows.size), most - k[rows]]   # ascending: k-th from the end
    return cut


def _weights(x: np.ndarray, top: np.ndarray, t: np.ndarray) -> np.ndarray:
    """exp((x - top) / T) per row: float32 for float32 logits, else float64."""
    wtype = np.float32 if x.dtype == np.float32 else np.float64
    w: np.ndarray = np.subtract(x, top.astype(wtype)[:, None], dtype=wtype)
    np.multiply(w, (1.0 / t).astype(wtype)[:, None], out=w)
    np.exp(w, out=w)                                     # in (0, 1]; 0 for -inf
    return w


def _mass_at_or_above(x: np.ndarray, w: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Per row, the float64 sum of the weights of the tokens >= v (one pass)."""
    out: np.ndarray = np.einsum("ij,ij->i", w, x >= v[:, None], dtype=np.float64)
    return out


def _anchor(x: np.ndarray, w: np.ndarray, total: np.ndarray, need: np.ndarray,
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A sample of every ``V // SAMPLE``-th token, highest value first; an anchor value in
    it next to the cut, the exact mass at or above the anchor, and the estimated position
    of the cut in the sample.

    A sampled token stands for ``stride`` tokens. The mass above a value is estimated as
    the total less the sampled mass below it: the tokens below the cut are many and light,
    so that estimate is steady where the few heaviest tokens would make a sum from the top
    noisy. Its remaining error is mostly a level, set from the exact mass at the anchor."""
    stride = max(1, x.shape[1] // SAMPLE)
    sx, sw = x[:, ::stride], w[:, ::stride].astype(np.float64) * stride
    order = np.argsort(-sx, axis=1)
    sx, sw = np.take_along_axis(sx, order, axis=1), np.take_along_axis(sw, order, axis=1)
    below = np.cumsum(sw[:, ::-1], axis=1)[:, ::-1] - sw   # sampled mass below sx[:, i]
    est = total[:, None] - below                           # ~ mass of x >= sx[:, i]
    r, n = np.arange(x.shape[0]), sx.shape[1]
    g = np.minimum((est < need[:, None]).sum(axis=1), n - 1)
    anchor = sx[r, g].astype(np.float64)
    exact = _mass_at_or_above(x, w, anchor)
    est += (exact - est[r, g])[:, None]
    return sx, anchor, exact, (est < need[:, None]).sum(axis=1)


def _by_row_then_value_down(r_idx: np.ndarray, vals: np.ndarray) -> np.ndarray:
    """The order that sorts tokens by row, then by value from high to low. For float32 the
    two make one int64 key (row, then the value's bits mapped to an order-preserving
    integer), a single fast argsort; otherwise np.lexsort."""
    if vals.dtype != np.float32:
        order: np.ndarray = np.lexsort((-vals, r_idx))
        return order
    bits = vals.view(np.int32).astype(np.int64)
    up = np.where(bits < 0, bits ^ 0x7FFFFFFF, bits)    # the same order as the values
    return np.argsort((r_idx.astype(np.int64) << 32) | ((1 << 31) - 1 - up))


def _cut_in_band(x: np.ndarray, w: np.ndarray, need: np.ndarray, lo: np.ndarray,
                 hi: np.ndarray, above_lo: np.ndarray, known_lo: np.ndarray,
                 whole: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, (the cut, whether it lies in lo <= x < hi). One end of each band is the
    anchor, whose exact mass is known: ``above_lo`` is the mass at or above ``lo`` where
    ``known_lo`` holds, else the mass at or above ``hi``. Only the band's tokens are sorted.
    Where the band reaches the row's end (``whole``) the cut is in it, rounding aside: the
    first token that reaches p, else the band's last."""
    rows, vocab = x.shape
    band = x >= lo[:, None]
    band &= x < hi[:, None]
    flat = np.flatnonzero(band)                          # row-major: grouped by row
    flat = flat[w.ravel()[flat] > 0]
    r_idx, vals = flat // vocab, x.ravel()[flat]
    order = _by_row_then_value_down(r_idx, vals)
    r_idx, vals = r_idx[order], vals[order]
    csum = np.cumsum(w.ravel()[flat[order]], dtype=np.float64)
    starts = np.searchsorted(r_idx, np.arange(rows))
    ends = np.append(starts[1:], r_idx.size)             # row r's tokens: starts[r]:ends[r]
    prior = np.where(starts > 0, csum[np.maximum(starts - 1, 0)], 0.0)
    in_band = np.where(ends > starts, csum[np.maximum(ends - 1, 0)] - prior, 0.0)
    above = np.where(known_lo, above_lo - in_band, above_lo)   # mass at or above hi
    ok = ((above < need) & (above + in_band >= need) | whole) & (ends > starts)
    cut = np.full(rows, -np.inf)
    good = np.flatnonzero(ok)
    if good.size:
        reached = above[r_idx] + csum - prior[r_idx] >= need[r_idx]
        hit = np.where(reached, np.arange(r_idx.size), r_idx.size)
        first = np.minimum.reduceat(hit, starts[good])   # each good row's first reaching token
        cut[good] = vals[np.minimum(first, ends[good] - 1)]
    return cut, ok


def _cut(x: np.ndarray, top: np.ndarray, t: np.ndarray, p: np.ndarray, k: np.ndarray,
         ) -> np.ndarray:
    """Per row, the smallest kept value: keep every finite token >= it."""
    kcut = _kth_largest(x, k)
    cut = np.where(t == 0, top, kcut).astype(np.float64)
    rows = np.flatnonzero((t > 0) & (p < 1))
    if rows.size == 0:
        return cut
    xs = x if rows.size == x.shape[0] else x[rows]
    w = _weights(xs, top[rows], t[rows])
    if (kcut[rows] > -np.inf).any():
        w[xs < kcut[rows, None]] = 0                     # outside the top-k set
    total = w.sum(axis=1, dtype=np.float64)
    need = (p[rows] - TOL) * total
    sx, anchor, exact, at = _anchor(xs, w, total, need)
    below = exact < need          # the cut lies below the anchor: band [lo, anchor)
    found = top[rows].astype(np.float64)                # a tiny p keeps the argmax set
    todo, margin, n = np.flatnonzero(need > 0), MARGIN, sx.shape[1]
    while todo.size:   # widen the band away from the anchor until it holds the cut
        a, b = at[todo], below[todo]
        far_lo = np.where(a + margin < n, sx[todo, np.minimum(a + margin, n - 1)], -np.inf)
        far_hi = np.where(a >= margin, sx[todo, np.maximum(a - margin, 0)], np.inf)
        lo = np.where(b, far_lo, anchor[todo])
        hi = np.where(b, anchor[todo], np.maximum(far_hi, np.nextafter(anchor[todo], np.inf)))
        whole = np.where(b, far_lo == -np.inf, far_hi == np.inf)
        every = todo.size == rows.size
        got, ok = _cut_in_band(xs if every else xs[todo], w if every else w[todo], need[todo],
                               lo, hi, exact[todo], ~b, whole)
        found[todo[ok]] = got[ok]
        todo = todo[~ok & ~whole]
        margin *= 4
    cut[rows] = np.maximum(found, kcut[rows])
    return cut


def kept_mask(logits: np.ndarray, temperature: np.ndarray, top_p: np.ndarray,
              top_k: np.ndarray | None = None) -> np.ndarray:
    x, top, t, p, k = _inputs(logits, temperature, top_p, top_k)
    cut = _cut(x, top, t, p, k)
    mask: np.ndarray = x >= cut[:, None]
    if np.isneginf(cut).any():          # "keep every finite token": -inf logits stay out
        mask &= x > -np.inf
    return mask


def sample(logits: np.ndarray, temperature: np.ndarray, top_p: np.ndarray, u: np.ndarray,
           top_k: np.ndarray | None = None) -> np.ndarray:
    x, top, t, p, k = _inputs(logits, temperature, top_p, top_k)
    draw = _rows("u", u, x.shape[0]).astype(np.float64)
    if not ((draw >= 0) & (draw < 1)).all():
        raise ValueError(f"u: must lie in [0, 1), got {draw}")
    cut = _cut(x, top, t, p, k)
    keep = (x >= cut[:, None]) & (x > -np.inf)
    scale = np.where(t > 0, t, 1.0)[:, None]
    w = np.where(keep, np.exp((x.astype(np.float64) - top[:, None]) / scale), 0.0)
    cdf = np.cumsum(w, axis=1)
    pick = (cdf <= (draw * cdf[:, -1])[:, None]).sum(axis=1)   # the smallest t: u * S < C[t]
    last = x.shape[1] - 1 - np.argmax(w[:, ::-1] > 0, axis=1)  # rounding at the very top
    ids: np.ndarray = np.where(t == 0, np.argmax(keep, axis=1), np.minimum(pick, last))
    return ids.astype(np.int64)
