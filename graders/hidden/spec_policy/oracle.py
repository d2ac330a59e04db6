"""An independent model of the spec_policy prompt, in exact arithmetic, and Hypothesis strategies.

Written from the prompt, not from the reference: every quantity is a Fraction of the exact
inputs (a float converts to a Fraction exactly), expected tokens come from the distribution of
the number of accepted drafts, and every policy is an exhaustive search (every k, every batch
of a bucket or a range, every subset of requests). Comparisons use the prompt's tolerance in
exact arithmetic; ``Ambiguous`` marks an input whose answer a float implementation could
legitimately get either way (a ratio between 1e-12 and 1e-7 away from the tolerance's edge),
which the tests skip.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from itertools import combinations
from typing import Any

import hypothesis.strategies as st

REL = Fraction(1, 10**9)
NEAR = Fraction(1, 10**12)      # closer than this to a tie: the prompt calls it a tie
CLEAR = Fraction(1, 10**7)      # farther than this: the prompt calls it a clear difference
KEYS = ("weight_bytes", "flops_per_token", "kv_bytes_per_token", "bandwidth", "peak_flops",
        "overhead_s")


class Ambiguous(Exception):
    """Two values are neither within NEAR of a tie nor CLEAR apart."""


def fr(x: Any) -> Fraction:
    return Fraction(x)


# ------------------------------------------------------------------ model
def expected(rates: Sequence[float], k: int) -> Fraction:
    """E(k) = sum over j of (j + 1) x P(exactly j drafts accepted)."""
    a = [fr(r) for r in rates[:k]]
    total, reach = Fraction(0), Fraction(1)
    for j in range(k):
        total += (j + 1) * reach * (1 - a[j])        # accepted exactly j, then rejected
        reach *= a[j]
    return total + (k + 1) * reach                   # every draft accepted, plus the bonus


def pass_time(s: dict[str, Any], seqs: int, tokens: int, ctx: int) -> Fraction:
    compute = tokens * fr(s["flops_per_token"]) / fr(s["peak_flops"])
    memory = (fr(s["weight_bytes"]) + seqs * ctx * fr(s["kv_bytes_per_token"])) / fr(s["bandwidth"])
    return fr(s["overhead_s"]) + (compute if compute > memory else memory)


def step_time(t: dict[str, Any], d: dict[str, Any], batch: int, drafting: int, k: int,
              ctx: int) -> Fraction:
    draft = sum((pass_time(d, drafting, drafting, ctx) for _ in range(k)), Fraction(0)) \
        if drafting else Fraction(0)
    return draft + pass_time(t, batch, batch + drafting * k, ctx)


def speedup(t: dict[str, Any], d: dict[str, Any], rates: Sequence[float], k: int, batch: int,
            ctx: int) -> Fraction:
    if k == 0:
        return Fraction(1)
    plain = pass_time(t, batch, batch, ctx)
    return expected(rates, k) * plain / step_time(t, d, batch, batch, k, ctx)


# ------------------------------------------------------------------ comparisons
def is_best(x: Fraction, top: Fraction) -> bool:
    """x is a best value against the largest ``top``; raise Ambiguous near the edge."""
    if top == 0:
        return True
    gap = 1 - x / top                 # >= 0
    if gap <= NEAR:
        return True
    if gap >= CLEAR:
        return False
    raise Ambiguous(f"relative gap {float(gap):.3e}")


def first_best(values: Sequence[Fraction]) -> int:
    top = max(values)
    return next(i for i, v in enumerate(values) if is_best(v, top))


def b_beats_a(b: Fraction, a: Fraction) -> bool:
    """b > a x (1 + REL), decided only when clear."""
    gap = b / a - 1
    if gap <= NEAR:
        return False
    if gap >= CLEAR:
        return True
    raise Ambiguous(f"relative gap {float(gap):.3e}")


# ------------------------------------------------------------------ policies
def best_k(t: dict[str, Any], d: dict[str, Any], rates: Sequence[float], max_k: int, batch: int,
           ctx: int) -> int:
    return first_best([speedup(t, d, rates, k, batch, ctx) for k in range(max_k + 1)])


def buckets(t: dict[str, Any], d: dict[str, Any], rates: Sequence[float], max_k: int,
            edges: Sequence[int], ctx: int) -> list[int]:
    out = []
    lo = 1
    for hi in edges:
        worst = [min(speedup(t, d, rates, k, b, ctx) for b in range(lo, hi + 1))
                 for k in range(max_k + 1)]
        out.append(first_best(worst))
        lo = hi + 1
    return out


def best_overall(t: dict[str, Any], d: dict[str, Any], rates: Sequence[float], max_k: int,
                 batch: int, ctx: int) -> Fraction:
    return max(speedup(t, d, rates, k, batch, ctx) for k in range(max_k + 1))


def flip(t: dict[str, Any], da: dict[str, Any], ra: Sequence[float], db: dict[str, Any],
         rb: Sequence[float], max_k: int, lo: int, hi: int, ctx: int) -> int | None:
    winners = [b_beats_a(best_overall(t, db, rb, max_k, b, ctx),
                         best_overall(t, da, ra, max_k, b, ctx)) for b in range(lo, hi + 1)]
    return next((lo + i for i, w in enumerate(winners) if w != winners[0]), None)


def request_options(t: dict[str, Any], d: dict[str, Any], accepts: Sequence[Sequence[float]],
                    max_k: int, ctx: int) -> dict[tuple[int, int], Fraction]:
    """Best tokens per second for each (k, m), over every subset of m requests (exhaustive)."""
    n = len(accepts)
    out = {(0, 0): Fraction(n) / pass_time(t, n, n, ctx)}
    for k in range(1, max_k + 1):
        gains = [expected(a, k) for a in accepts]
        for m in range(1, n + 1):
            time = step_time(t, d, n, m, k, ctx)
            tokens = max(n - m + sum(gains[i] for i in s) for s in combinations(range(n), m))
            out[(k, m)] = tokens / time
    return out


def request_choice(t: dict[str, Any], d: dict[str, Any], accepts: Sequence[Sequence[float]],
                   max_k: int, ctx: int) -> tuple[int, int]:
    """(k, m) of the prompt's per-request policy."""
    opts = request_options(t, d, accepts, max_k, ctx)
    top = max(opts.values())
    return min(key for key, v in opts.items() if is_best(v, top))


# ------------------------------------------------------------------ strategies
RATE = st.one_of(st.sampled_from([0.0, 1.0, 0.5, 0.25, 0.75, 0.9, 0.6, 0.3, 0.95]),
                 st.floats(0.0, 1.0, allow_nan=False))


def rates(min_size: int = 0, max_size: int = 6) -> st.SearchStrategy[list[float]]:
    return st.lists(RATE, min_size=min_size, max_size=max_size)


@st.composite
def small_stage(draw: st.DrawFn, drafter: bool = False) -> dict[str, float]:
    """Small numbers, so that passes turn compute-bound at small batches (kinks inside buckets)."""
    scale = 0.1 if drafter else 1.0
    return {
        "weight_bytes": draw(st.sampled_from([0, 1, 10, 50, 100, 200, 400])) * scale,
        "flops_per_token": draw(st.sampled_from([0, 0.5, 1, 2, 3, 5])) * scale,
        "kv_bytes_per_token": draw(st.sampled_from([0, 0, 0.01, 0.1, 0.5])),
        "bandwidth": draw(st.sampled_from([1, 2, 4])),
        "peak_flops": draw(st.sampled_from([1, 2, 3])),
        "overhead_s": draw(st.sampled_from([0, 0, 1, 5, 20])) * scale,
    }


# a target's pass always takes time (weights to read); a drafter may be free
target_stages = small_stage().map(lambda s: {**s, "weight_bytes": s["weight_bytes"] + 50})
drafter_stages = small_stage(drafter=True)
