"""GQA head mapping is interleaved: query head h reads KV head h % kv_heads instead of h // (q_heads // kv_heads).
Written blind (from the prompt and the stub only) by a helper session, 2026-12-01.
Rubric: partial_attention
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]

_CHUNK = 512  # keys per step of the streaming softmax


# ----------------------------------------------------------------------------- validation

def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _count(x, name: str, minimum: int = 1) -> int:
    if not _is_int(x):
        raise TypeError(f"{name} must be an int, got {type(x).__name__}")
    x = int(x)
    if x < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {x}")
    return x


def _scale(scale) -> float:
    if isinstance(scale, (bool, np.bool_)) or not isinstance(scale, (Real, np.integer, np.floating)):
        raise TypeError(f"scale must be a real number, got {type(scale).__name__}")
    s = float(scale)
    if not (math.isfinite(s) and s > 0):
        raise ValueError(f"scale must be finite and > 0, got {scale!r}")
    return s


def _real_array(a, name: str, ndim: int) -> Array:
    arr = np.asarray(a)
    if arr.dtype == np.bool_ or not (np.issubdtype(arr.dtype, np.floating)
                                     or np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(f"{name} must be a real float array, got dtype {arr.dtype}")
    if arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dims, got shape {arr.shape}")
    return arr.astype(np.float64)  # always a copy: the caller's array is never touched


def _fraction(fr, name: str) -> tuple[int, int]:
    if not isinstance(fr, tuple) or len(fr) != 2 or not all(_is_int(x) for x in fr):
        raise TypeError(f"{name} must be a tuple of two ints, got {fr!r}")
    num, den = int(fr[0]), int(fr[1])
    if den < 1:
        raise ValueError(f"{name} denominator must be >= 1, got {den}")
    if not (0 < num <= den):
        raise ValueError(f"{name} must lie in (0, 1], got {num}/{den}")
    return num, den


# ----------------------------------------------------------------------------- attention

def attend_partial(q, k, v, scale, valid=None):
    """Attention of one sequence's query over one split of its keys: ``(out, lse)``."""
    sc = _scale(scale)
    qa = _real_array(q, "q", 2)
    ka = _real_array(k, "k", 3)
    va = _real_array(v, "v", 3)
    q_heads, d = qa.shape
    n, kv_heads, dk = ka.shape
    nv, kv_heads_v, dv = va.shape
    if kv_heads < 1 or kv_heads_v != kv_heads:
        raise ValueError(f"kv_heads mismatch: k {ka.shape}, v {va.shape}")
    if nv != n:
        raise ValueError(f"k has {n} keys but v has {nv}")
    if dk != d:
        raise ValueError(f"q has d={d} but k has d={dk}")
    if q_heads % kv_heads:
        raise ValueError(f"q_heads={q_heads} is not a multiple of kv_heads={kv_heads}")
    if valid is not None:
        if not isinstance(valid, np.ndarray) or valid.dtype != np.bool_:
            raise TypeError("valid must be a numpy bool array or None")
        if valid.shape != (n,):
            raise ValueError(f"valid must have shape ({n},), got {valid.shape}")
        ka = ka[valid]
        va = va[valid]
        n = ka.shape[0]

    group = q_heads // kv_heads
    qg = qa.reshape(group, kv_heads, d).transpose(1, 0, 2) * sc   # (G, g, d)

    # running state per (kv head, group member)
    m = np.full((kv_heads, group), -np.inf)           # running max score
    l = np.zeros((kv_heads, group))                   # sum exp(s - m)
    acc = np.zeros((kv_heads, group, dv))             # sum exp(s - m) * v
    for lo in range(0, n, _CHUNK):
        kc = ka[lo:lo + _CHUNK]                       # (c, G, d)
        vc = va[lo:lo + _CHUNK]                       # (c, G, dv)
        s = np.einsum("Ggd,cGd->Ggc", qg, kc)         # (G, g, c)
        m_new = np.maximum(m, s.max(axis=-1))         # finite: the chunk is non-empty
        alpha = np.exp(m - m_new)                     # m = -inf -> 0, never nan
        p = np.exp(s - m_new[..., None])
        l = l * alpha + p.sum(axis=-1)
        acc = acc * alpha[..., None] + np.einsum("Ggc,cGe->Gge", p, vc)
        m = m_new

    seen = l > 0
    l_safe = np.where(seen, l, 1.0)
    out = np.where(seen[..., None], acc / l_safe[..., None], 0.0)
    lse = np.where(seen, m + np.log(l_safe), -np.inf)
    return out.transpose(1, 0, 2).reshape(q_heads, dv), lse.T.reshape(q_heads)


def merge_partials(outs, lses):
    """Merge partial results over disjoint key sets into the result over their union."""
    o = np.asarray(outs)
    ls = np.asarray(lses)
    for name, arr in (("outs", o), ("lses", ls)):
        if arr.dtype == np.bool_ or not (np.issubdtype(arr.dtype, np.floating)
                                         or np.issubdtype(arr.dtype, np.integer)):
            raise TypeError(f"{name} must be a real float array, got dtype {arr.dtype}")
    if ls.ndim < 1 or o.ndim != ls.ndim + 1 or o.shape[:-1] != ls.shape:
        raise ValueError(f"shapes do not fit: outs {o.shape}, lses {ls.shape}")
    if ls.shape[0] == 0:
        raise ValueError("need at least one partial (S >= 1)")
    ls = ls.astype(np.float64)
    o = o.astype(np.float64)
    if np.isnan(ls).any() or (ls == np.inf).any():
        raise ValueError("an lse is NaN or +inf")

    live = ls > -np.inf                                  # (S, *rest)
    m = ls.max(axis=0)                                   # (*rest,)
    any_live = m > -np.inf
    m_safe = np.where(any_live, m, 0.0)
    w = np.where(live, np.exp(ls - m_safe), 0.0)         # in [0, 1], the max gets 1
    total = w.sum(axis=0)                                # >= 1 where any_live
    contrib = np.where(live[..., None], w[..., None] * np.where(live[..., None], o, 0.0), 0.0)
    total_safe = np.where(any_live, total, 1.0)
    out = np.where(any_live[..., None], contrib.sum(axis=0) / total_safe[..., None], 0.0)
    lse = np.where(any_live, m_safe + np.log(total_safe), -np.inf)
    return out, lse


# ----------------------------------------------------------------------------- splitting

def split_ranges(num_keys, block_size, num_splits):
    """The key range ``[start, end)`` of each of ``num_splits`` splits, in order."""
    nk = _count(num_keys, "num_keys", minimum=0)
    bs = _count(block_size, "block_size")
    ns = _count(num_splits, "num_splits")
    nb = -(-nk // bs)
    per = -(-nb // ns)
    ranges = []
    for i in range(ns):
        start = min(i * per * bs, nk)
        end = min((i + 1) * per * bs, nk)
        ranges.append((start, end))
    return ranges


def _context_lens(context_lens, batch: int, max_len: int) -> list[int]:
    if isinstance(context_lens, np.ndarray):
        if context_lens.dtype == np.bool_ or not np.issubdtype(context_lens.dtype, np.integer):
            raise TypeError(f"context_lens must be ints, got dtype {context_lens.dtype}")
        if context_lens.ndim != 1:
            raise ValueError(f"context_lens must be 1-D, got shape {context_lens.shape}")
        items = [int(x) for x in context_lens]
    elif isinstance(context_lens, (list, tuple)):
        for x in context_lens:
            if not _is_int(x):
                raise TypeError(f"context length {x!r} is not an int")
        items = [int(x) for x in context_lens]
    else:
        raise TypeError("context_lens must be a list of ints or an integer array")
    if len(items) != batch:
        raise ValueError(f"{len(items)} context lengths for batch {batch}")
    for x in items:
        if not 0 <= x <= max_len:
            raise ValueError(f"context length {x} outside 0..{max_len}")
    return items


def decode_partials(q, k_cache, v_cache, context_lens, scale, block_size, num_splits):
    """The partial results of every split for a batch of decoding sequences."""
    sc = _scale(scale)
    bs = _count(block_size, "block_size")
    ns = _count(num_splits, "num_splits")
    qa = _real_array(q, "q", 3)
    ka = _real_array(k_cache, "k_cache", 4)
    va = _real_array(v_cache, "v_cache", 4)
    batch, q_heads, d = qa.shape
    if ka.shape[0] != batch or va.shape[0] != batch:
        raise ValueError("batch mismatch between q, k_cache and v_cache")
    _, max_len, kv_heads, dk = ka.shape
    if va.shape[1:3] != (max_len, kv_heads):
        raise ValueError("k_cache and v_cache disagree on max_len or kv_heads")
    if dk != d:
        raise ValueError(f"q has d={d} but k_cache has d={dk}")
    if kv_heads < 1 or q_heads % kv_heads:
        raise ValueError(f"q_heads={q_heads} is not a multiple of kv_heads={kv_heads}")
    dv = va.shape[3]
    lens = _context_lens(context_lens, batch, max_len)

    outs = np.zeros((ns, batch, q_heads, dv))
    lses = np.full((ns, batch, q_heads), -np.inf)
    for i, (start, end) in enumerate(split_ranges(max_len, bs, ns)):
        pos = np.arange(start, end)
        for b in range(batch):
            o, l = attend_partial(qa[b], ka[b, start:end], va[b, start:end], sc,
                                  valid=pos < lens[b])
            outs[i, b] = o
            lses[i, b] = l
    return outs, lses


def split_kv_decode(q, k_cache, v_cache, context_lens, scale, block_size, num_splits):
    """Decode attention by splitting the keys and merging: ``(out, lse)``."""
    outs, lses = decode_partials(q, k_cache, v_cache, context_lens, scale, block_size, num_splits)
    return merge_partials(outs, lses)


# ----------------------------------------------------------------------------- split count

def _efficiency(work: int, s: int, num_sms: int) -> tuple[int, int]:
    blocks = work * s
    waves = -(-blocks // num_sms)
    num, den = blocks, num_sms * waves
    g = math.gcd(num, den)
    return num // g, den // g


def wave_efficiency(work, num_splits, num_sms):
    """``x / ceil(x)`` with ``x = work * num_splits / num_sms``, exactly, as a fraction."""
    w = _count(work, "work")
    s = _count(num_splits, "num_splits")
    n = _count(num_sms, "num_sms")
    return _efficiency(w, s, n)


def choose_num_splits(batch, q_heads, num_kv_blocks, num_sms, max_splits=128,
                      fill_fraction=(4, 5), efficiency_fraction=(17, 20)):
    """The split count from the wave-efficiency rule in the README, exactly."""
    b = _count(batch, "batch")
    h = _count(q_heads, "q_heads")
    nb = _count(num_kv_blocks, "num_kv_blocks")
    sms = _count(num_sms, "num_sms")
    cap_user = _count(max_splits, "max_splits")
    fn, fd = _fraction(fill_fraction, "fill_fraction")
    en, ed = _fraction(efficiency_fraction, "efficiency_fraction")

    work = b * h
    if work * fd >= fn * sms:
        return 1
    cap = min(cap_user, sms, nb)
    eligible = [s for s in range(1, cap + 1)
                if s == 1 or -(-nb // s) != -(-nb // (s - 1))]
    effs = {s: _efficiency(work, s, sms) for s in eligible}
    bn, bd = effs[eligible[0]]
    for s in eligible[1:]:
        n_, d_ = effs[s]
        if n_ * bd > bn * d_:
            bn, bd = n_, d_
    # eff >= (en/ed) * (bn/bd)  <=>  n * ed * bd >= en * bn * d
    for s in eligible:
        n_, d_ = effs[s]
        if n_ * ed * bd >= en * bn * d_:
            return s
    raise AssertionError("unreachable: the best candidate always qualifies")

def plan_splits(batch, q_heads, kv_heads, context, num_sms):
    """(Added with the API, the same in every mutant: this file's own rule, fed as the
    reference feeds it; the bug above is elsewhere.)"""
    for name, value in (("batch", batch), ("q_heads", q_heads), ("kv_heads", kv_heads),
                        ("context", context), ("num_sms", num_sms)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int, got {type(value).__name__}")
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")
    if q_heads % kv_heads:
        raise ValueError(f"q_heads ({q_heads}) must be a multiple of kv_heads ({kv_heads})")
    return choose_num_splits(batch, q_heads, -(-context // 64), 2 * num_sms, max_splits=64)
