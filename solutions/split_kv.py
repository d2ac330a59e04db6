"""split_kv reference: flash-decoding on the CPU in numpy.

A partial result over a set of keys is ``(out, lse)``: the softmax-weighted values and the
log-sum-exp of the scaled scores. Two partials over disjoint keys merge exactly, because
``exp(lse)`` is the softmax denominator each one divided by: re-weighting each output by
``exp(lse_s - lse_total)`` restores the common denominator. Empty key sets are the identity
of the merge: ``(zeros, -inf)``.

The split count follows FlashAttention-2's ``num_splits_heuristic`` (flash_api.cpp), with
every comparison done in exact rational arithmetic.
"""

from __future__ import annotations

import math
from fractions import Fraction
from numbers import Real

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]


# ---------------------------------------------------------------------------------------
# argument checks


def _count(name: str, value: object, minimum: int = 1) -> int:
    if isinstance(value, np.integer):       # a numpy integer counts as its value
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def _fraction(name: str, value: object) -> Fraction:
    if (not isinstance(value, tuple) or len(value) != 2
            or any(isinstance(x, bool) or not isinstance(x, int) for x in value)):
        raise TypeError(f"{name} must be a tuple (numerator, denominator) of two ints, "
                        f"got {value!r}")
    numerator, denominator = value
    if denominator < 1:
        raise ValueError(f"{name}: the denominator must be >= 1, got {denominator}")
    frac = Fraction(numerator, denominator)
    if not 0 < frac <= 1:
        raise ValueError(f"{name} must lie in (0, 1], got {frac}")
    return frac


def _scale(scale: object) -> float:
    if isinstance(scale, (bool, np.bool_)) or not isinstance(scale, Real):
        raise TypeError(f"scale must be a real number, got {type(scale).__name__}")
    value = float(scale)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"scale must be finite and > 0, got {value}")
    return value


def _floats(name: str, array: object, ndim: int) -> Array:
    out = np.asarray(array, dtype=np.float64)
    if out.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got shape {out.shape}")
    return out


# ---------------------------------------------------------------------------------------
# attention over one split, and the merge


def attend_partial(q: NDArray[np.floating], k: NDArray[np.floating], v: NDArray[np.floating],
                   scale: float, valid: NDArray[np.bool_] | None = None) -> tuple[Array, Array]:
    """Attention of one query (all heads) over one split of keys: ``(out, lse)``."""
    s = _scale(scale)
    qa, ka, va = _floats("q", q, 2), _floats("k", k, 3), _floats("v", v, 3)
    q_heads, d = qa.shape
    n, kv_heads, kd = ka.shape
    if va.shape[:2] != (n, kv_heads):
        raise ValueError(f"v must be (n, kv_heads, dv) = ({n}, {kv_heads}, dv), got {va.shape}")
    if kd != d:
        raise ValueError(f"k's head dim {kd} differs from q's {d}")
    if kv_heads < 1 or q_heads % kv_heads:
        raise ValueError(f"q_heads={q_heads} must be a multiple of kv_heads={kv_heads}")
    if valid is not None:
        if not isinstance(valid, np.ndarray) or valid.dtype != np.bool_:
            raise TypeError("valid must be a numpy bool array (or None)")
        if valid.shape != (n,):
            raise ValueError(f"valid must have shape ({n},), got {valid.shape}")
        ka, va = ka[valid], va[valid]
    dv = va.shape[2]
    if ka.shape[0] == 0:
        return np.zeros((q_heads, dv)), np.full(q_heads, -np.inf)

    group = q_heads // kv_heads
    qg = qa.reshape(kv_heads, group, d)                      # query heads grouped by kv head
    scores = s * np.einsum("hgd,nhd->hgn", qg, ka)            # (kv_heads, group, keys)
    top = scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores - top)                            # in (0, 1]: cannot overflow
    total = weights.sum(axis=-1)                              # >= 1
    out = np.einsum("hgn,nhe->hge", weights, va) / total[..., None]
    lse = top[..., 0] + np.log(total)
    return out.reshape(q_heads, dv), lse.reshape(q_heads)


def merge_partials(outs: NDArray[np.floating], lses: NDArray[np.floating]) -> tuple[Array, Array]:
    """Merge partials over disjoint key sets (stacked on axis 0) into one ``(out, lse)``."""
    oa = np.asarray(outs, dtype=np.float64)
    la = np.asarray(lses, dtype=np.float64)
    if la.ndim < 1 or oa.ndim != la.ndim + 1 or oa.shape[:-1] != la.shape:
        raise ValueError(f"outs must be (S, *rest, dv) and lses (S, *rest); got {oa.shape} "
                         f"and {la.shape}")
    if la.shape[0] == 0:
        raise ValueError("merge_partials needs at least one partial (S >= 1)")
    if np.isnan(la).any() or np.isposinf(la).any():
        raise ValueError("an lse is NaN or +inf: not the log-sum-exp of finite scores")

    counts = np.isfinite(la)                        # -inf partials saw no key: they drop out
    top = la.max(axis=0)
    alive = np.isfinite(top)                        # at least one partial saw a key
    shift = np.where(alive, top, 0.0)               # never -inf - -inf
    weights = np.exp(la - shift)                    # exactly 0 for the -inf partials
    total = weights.sum(axis=0)                     # >= 1 where alive
    kept = np.where(counts[..., None], oa, 0.0)     # select, so garbage in dead splits is ignored
    merged = (weights[..., None] * kept).sum(axis=0)
    out = merged / np.where(alive, total, 1.0)[..., None]
    lse = np.where(alive, shift + np.log(np.where(alive, total, 1.0)), -np.inf)
    return out, lse


# ---------------------------------------------------------------------------------------
# splitting and the batched decode


def split_ranges(num_keys: int, block_size: int, num_splits: int) -> list[tuple[int, int]]:
    """Key ranges of ``num_splits`` splits of whole blocks, ``ceil(nb / num_splits)`` blocks each."""
    num_keys = _count("num_keys", num_keys, minimum=0)
    block_size = _count("block_size", block_size)
    num_splits = _count("num_splits", num_splits)
    num_blocks = -(-num_keys // block_size)
    keys_per_split = -(-num_blocks // num_splits) * block_size
    return [(min(i * keys_per_split, num_keys), min((i + 1) * keys_per_split, num_keys))
            for i in range(num_splits)]


def decode_partials(q: NDArray[np.floating], k_cache: NDArray[np.floating],
                    v_cache: NDArray[np.floating], context_lens: list[int] | NDArray[np.integer],
                    scale: float, block_size: int, num_splits: int) -> tuple[Array, Array]:
    """Per-split partials ``(num_splits, batch, ...)`` of a batch of decoding sequences."""
    s = _scale(scale)
    _count("block_size", block_size)
    _count("num_splits", num_splits)
    qa = _floats("q", q, 3)
    ka, va = _floats("k_cache", k_cache, 4), _floats("v_cache", v_cache, 4)
    batch, q_heads, _ = qa.shape
    if ka.shape[0] != batch or va.shape[:3] != ka.shape[:3]:
        raise ValueError(f"q {qa.shape}, k_cache {ka.shape} and v_cache {va.shape} must agree "
                         "on batch, max_len and kv_heads")
    max_len = ka.shape[1]
    lens = np.asarray(context_lens)
    if lens.shape != (batch,):
        raise ValueError(f"context_lens must hold {batch} lengths, got shape {lens.shape}")
    if lens.dtype == np.bool_ or not np.issubdtype(lens.dtype, np.integer):
        raise TypeError("context_lens must be ints")
    if ((lens < 0) | (lens > max_len)).any():
        raise ValueError(f"context_lens must lie in 0 .. {max_len}, got {lens.tolist()}")

    ranges = split_ranges(max_len, block_size, num_splits)
    dv = va.shape[3]
    outs = np.zeros((num_splits, batch, q_heads, dv))
    lses = np.full((num_splits, batch, q_heads), -np.inf)
    for b in range(batch):
        for i, (start, end) in enumerate(ranges):
            valid = np.arange(start, end) < lens[b]
            outs[i, b], lses[i, b] = attend_partial(qa[b], ka[b, start:end], va[b, start:end],
                                                    s, valid)
    return outs, lses


def split_kv_decode(q: NDArray[np.floating], k_cache: NDArray[np.floating],
                    v_cache: NDArray[np.floating], context_lens: list[int] | NDArray[np.integer],
                    scale: float, block_size: int, num_splits: int) -> tuple[Array, Array]:
    """Split-KV decode attention: the merge of ``decode_partials``."""
    outs, lses = decode_partials(q, k_cache, v_cache, context_lens, scale, block_size, num_splits)
    return merge_partials(outs, lses)


# ---------------------------------------------------------------------------------------
# the split count


def _efficiency(work: int, num_splits: int, num_sms: int) -> Fraction:
    waves = Fraction(work * num_splits, num_sms)
    return waves / math.ceil(waves)


def wave_efficiency(work: int, num_splits: int, num_sms: int) -> tuple[int, int]:
    """Busy fraction of the SM slots over the waves ``work * num_splits`` blocks need."""
    eff = _efficiency(_count("work", work), _count("num_splits", num_splits),
                      _count("num_sms", num_sms))
    return eff.numerator, eff.denominator


def choose_num_splits(batch: int, q_heads: int, num_kv_blocks: int, num_sms: int,
                      max_splits: int = 128, fill_fraction: tuple[int, int] = (4, 5),
                      efficiency_fraction: tuple[int, int] = (17, 20)) -> int:
    """FA2's split-count heuristic, exactly: the smallest eligible count near the best efficiency."""
    work = _count("batch", batch) * _count("q_heads", q_heads)
    nb = _count("num_kv_blocks", num_kv_blocks)
    _count("num_sms", num_sms)
    _count("max_splits", max_splits)
    fill = _fraction("fill_fraction", fill_fraction)
    near = _fraction("efficiency_fraction", efficiency_fraction)
    if work >= fill * num_sms:
        return 1                                     # the grid already fills most SMs
    cap = min(max_splits, num_sms, nb)

    def eligible(s: int) -> bool:                    # keeping ceil(nb / s) only adds empty splits
        return s == 1 or -(-nb // s) != -(-nb // (s - 1))

    efficiency = {s: _efficiency(work, s, num_sms) for s in range(1, cap + 1) if eligible(s)}
    best = max(efficiency.values())
    return min(s for s, e in efficiency.items() if e >= near * best)


KERNEL_BLOCK = 64       # keys per KV block of the project's reference decode kernel
KERNEL_MAX_SPLITS = 64  # the most splits it is timed with
PROGRAMS_PER_SM = 2     # decode programs are small: assume two resident per SM, as FA2 does


def plan_splits(batch: int, q_heads: int, kv_heads: int, context: int, num_sms: int) -> int:
    """The rule, fed what runs at once: two programs per SM, the kernel's 64-key blocks.

    Uncalibrated until a recording exists: the two-per-SM figure follows FlashAttention-2's
    call of its heuristic (twice the SM count), not a measurement of this kernel.
    """
    for name, value in (("batch", batch), ("q_heads", q_heads), ("kv_heads", kv_heads),
                        ("context", context), ("num_sms", num_sms)):
        _count(name, value)
    if q_heads % kv_heads:
        raise ValueError(f"q_heads ({q_heads}) must be a multiple of kv_heads ({kv_heads})")
    blocks = -(-context // KERNEL_BLOCK)
    return choose_num_splits(batch, q_heads, blocks, PROGRAMS_PER_SM * num_sms,
                             max_splits=KERNEL_MAX_SPLITS)
