"""Oracles and checks shared by the split_kv tests. Nothing here calls the implementation.

The oracle is attention computed directly over all counted keys, one head at a time, in
float64: the model of the truth every split/merge must reproduce.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

RTOL = ATOL = 1e-9  # the tolerances the README states


def attention(q, k, v, scale, valid=None):
    """Softmax attention of one query (all heads) over the counted keys: ``(out, lse)``.

    Per head, directly from the definition; the max shift only keeps exp finite.
    """
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    q_heads, kv_heads, dv = q.shape[0], k.shape[1], v.shape[2]
    group = q_heads // kv_heads
    keys = np.arange(k.shape[0]) if valid is None else np.flatnonzero(valid)
    out = np.zeros((q_heads, dv))
    lse = np.full(q_heads, -np.inf)
    for h in range(q_heads):
        g = h // group
        if len(keys) == 0:
            continue
        scores = np.array([scale * float(np.dot(q[h], k[j, g])) for j in keys])
        top = scores.max()
        w = np.exp(scores - top)
        lse[h] = top + math.log(w.sum())
        out[h] = (w[:, None] * v[keys, g]).sum(axis=0) / w.sum()
    return out, lse


def decode_oracle(q, k_cache, v_cache, lens, scale):
    """Attention of each sequence over its whole context: ``(out, lse)`` stacked on batch."""
    outs, lses = [], []
    for b in range(q.shape[0]):
        o, l = attention(q[b], k_cache[b, : lens[b]], v_cache[b, : lens[b]], scale)
        outs.append(o)
        lses.append(l)
    return np.stack(outs), np.stack(lses)


def ranges_oracle(num_keys, block_size, num_splits):
    """The split key ranges as the README defines them, counted block by block."""
    nb = -(-num_keys // block_size)
    per = -(-nb // num_splits)
    out = []
    for i in range(num_splits):
        blocks = [b for b in range(nb) if i * per <= b < (i + 1) * per]
        if blocks:
            out.append((blocks[0] * block_size, min((blocks[-1] + 1) * block_size, num_keys)))
        else:
            out.append((num_keys, num_keys))
    return out


def efficiency(work, s, sms):
    x = Fraction(work * s, sms)
    return x / math.ceil(x)


def rule(batch, q_heads, nb, sms, max_splits=128, fill=(4, 5), near=(17, 20)):
    """The README's split-count rule, exactly, by brute force."""
    work = batch * q_heads
    if work >= Fraction(*fill) * sms:
        return 1
    cap = min(max_splits, sms, nb)
    eligible = [s for s in range(1, cap + 1)
                if s == 1 or math.ceil(Fraction(nb, s)) != math.ceil(Fraction(nb, s - 1))]
    best = max(efficiency(work, s, sms) for s in eligible)
    return min(s for s in eligible if efficiency(work, s, sms) >= Fraction(*near) * best)


def check_result(got, want, what):
    """``got`` is an ``(out, lse)`` pair matching ``want`` within the stated tolerance."""
    assert isinstance(got, tuple) and len(got) == 2, f"{what}: expected an (out, lse) tuple, got {type(got)}"
    out, lse = (np.asarray(x) for x in got)
    w_out, w_lse = want
    assert out.shape == w_out.shape, f"{what}: out shape {out.shape}, expected {w_out.shape}"
    assert lse.shape == w_lse.shape, f"{what}: lse shape {lse.shape}, expected {w_lse.shape}"
    assert out.dtype == np.float64 and lse.dtype == np.float64, (
        f"{what}: results must be float64, got {out.dtype} and {lse.dtype}")
    assert not np.isnan(out).any() and not np.isnan(lse).any(), f"{what}: NaN in the result\nout={out}\nlse={lse}"
    empty = np.isneginf(w_lse)
    assert np.array_equal(np.isneginf(lse), empty), (
        f"{what}: lse must be -inf exactly where no key counts (expected -inf at "
        f"{np.argwhere(empty).tolist()}), got lse={lse}")
    assert np.all(out[empty] == 0.0), f"{what}: a head with no key must get zeros, got {out[empty]}"
    assert np.allclose(lse[~empty], w_lse[~empty], rtol=RTOL, atol=ATOL), (
        f"{what}: lse differs from the log-sum-exp of the scaled scores\n got {lse}\nwant {w_lse}")
    assert np.isfinite(out).all(), f"{what}: non-finite output {out}"
    assert np.allclose(out, w_out, rtol=RTOL, atol=ATOL), (
        f"{what}: output differs from softmax attention over the keys\n got {out}\nwant {w_out}")


def random_case(rng, n, q_heads, kv_heads, d=4, dv=3, spread=1.0):
    """A query, keys and values for one sequence; ``spread`` scales the scores."""
    q = rng.normal(size=(q_heads, d)) * spread
    k = rng.normal(size=(n, kv_heads, d))
    v = rng.normal(size=(n, kv_heads, dv))
    return q, k, v
