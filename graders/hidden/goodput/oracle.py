"""An independent model of the goodput prompt, in exact arithmetic, and Hypothesis strategies.

Written from the prompt, not from the reference: every quantity is a Fraction of the exact
inputs; the best batch is a scan over every batch; E[max] is a tail sum (or, for small
cases, an enumeration of every tuple of draws); the KV peak is a step-by-step simulation;
the batch a pool holds is a scan over cohort sizes, each simulated.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import hypothesis.strategies as st


def fr(x: Any) -> Fraction:
    return Fraction(x)


# ------------------------------------------------------------------ model
def dense_counts(cfg: dict[str, Any]) -> tuple[int, int]:
    """(weights read per step in elements, KV elements per token), layer by layer."""
    h, q = cfg["hidden_size"], cfg["num_attention_heads"]
    kv = cfg.get("num_key_value_heads") or q
    d = cfg.get("head_dim") or h // q
    per_layer = h * d * q * 2 + h * d * kv * 2 + h * cfg["intermediate_size"] * 3
    params = sum(per_layer for _ in range(cfg["num_hidden_layers"]))
    return params + cfg["vocab_size"] * h, sum(2 * kv * d for _ in range(cfg["num_hidden_layers"]))


def line(cfg: dict[str, Any], gpu: dict[str, Any], ctx: int, wb: Any, kb: Any,
         overhead: Any) -> tuple[Fraction, Fraction]:
    params, kv_tok = dense_counts(cfg)
    bw = fr(gpu["memory_bandwidth_gb_s"]) * 1_000_000_000
    return fr(overhead) + params * fr(wb) / bw, ctx * kv_tok * fr(kb) / bw


def step(t0: Any, t1: Any, b: int) -> Fraction:
    return fr(t0) + b * fr(t1)


def best_batch(t0: Any, t1: Any, tpot: Any, cap: int) -> int:
    best = 0
    for b in range(1, cap + 1):
        if step(t0, t1, b) <= fr(tpot):
            best = b
    return best


def residency(lam: Any, n: int, t0: Any, t1: Any, pre: Any,
              cap: int | None) -> Fraction | None:
    """The N with N = lam (pre + n (t0 + N t1)), found as the root of a line; None as the prompt says."""
    rate, a, b, p = fr(lam), fr(t0), fr(t1), fr(pre)
    slope = rate * n * b                      # d(rhs)/dN
    if slope >= 1:
        return None
    at_zero = rate * (p + n * a)              # rhs at N = 0
    n_star = at_zero / (1 - slope)
    assert n_star == rate * (p + n * (a + n_star * b))
    if cap is not None and n_star > cap:
        return None
    return n_star


def gain_enumerated(lengths: dict[int, int], b: int) -> Fraction:
    """E[max]/E[L] by visiting every tuple of b draws (small cases only)."""
    total = sum(lengths.values())
    e_max = Fraction(0)
    for draw in itertools.product(sorted(lengths), repeat=b):
        weight = 1
        for x in draw:
            weight *= lengths[x]
        e_max += Fraction(max(draw) * weight, total ** b)
    mean = Fraction(sum(x * w for x, w in lengths.items()), total)
    return e_max / mean


def gain_tail(lengths: dict[int, int], b: int) -> Fraction:
    """E[max] = sum over y of P(max >= y) = sum of 1 - F(y - 1)^b, grouped between support points."""
    total = sum(lengths.values())
    xs = sorted(lengths)
    e_max, prev, below = Fraction(0), 0, 0
    for x in xs:
        # for y in prev+1 .. x: P(max >= y) = 1 - (mass strictly below x)^b ... = 1 - F(prev)^b
        e_max += (x - prev) * (1 - Fraction(below, total) ** b)
        below += lengths[x]
        prev = x
    mean = Fraction(sum(x * w for x, w in lengths.items()), total)
    return e_max / mean


def kv_peak(adm: list[tuple[int, int, int]]) -> int:
    if not adm:
        return 0
    last = max(s + n - 1 for s, _, n in adm)
    peak = 0
    for t in range(0, last + 1):
        peak = max(peak, sum(p + t - s + 1 for s, p, n in adm if s <= t < s + n))
    return peak


def pool_batch(pool: int, p: int, n: int, spacing: int, cap: int) -> int:
    best = 0
    for b in range(1, cap + 1):
        if kv_peak([(i * spacing, p, n) for i in range(b)]) <= pool:
            best = b
        else:
            break                              # a larger cohort only adds tokens
    return best


def pool_batch_scan(pool: int, p: int, n: int, spacing: int, cap: int) -> int:
    """The same, without the early stop: the peak of the cohort checked at every size."""
    ok = [b for b in range(0, cap + 1)
          if kv_peak([(i * spacing, p, n) for i in range(b)]) <= pool]
    return max(ok)


# ------------------------------------------------------------------ strategies
DECIMALS = st.builds(lambda k, e: k / 10 ** e, st.integers(1, 999), st.integers(1, 5))
DYADIC = st.builds(lambda k, e: k / 2 ** e, st.integers(1, 999), st.integers(0, 12))
TIMES = st.one_of(DECIMALS, DYADIC)


@st.composite
def lines_near_target(draw: Any) -> tuple[float, float, float, int]:
    """(t0, t1, tpot, b_star): tpot lands on, a float rounding away from, or a hair below t(b_star)
    (on a flat line, t1 = 0, a hair below t0: no batch meets the target)."""
    t0 = draw(st.one_of(st.just(0.0), TIMES), label="t0")
    t1 = draw(st.one_of(st.just(0.0), TIMES), label="t1")
    if t0 == 0 and t1 == 0:
        t1 = 0.25
    b = draw(st.integers(1, 300), label="b_star")
    tpot = t0 + b * t1                          # float arithmetic: may round either way
    tpot = draw(st.sampled_from([tpot, float(step(t0, t1, b)), tpot * (1 + 2 ** -40),
                                 tpot * (1 - 2 ** -40)]), label="tpot")
    return t0, t1, tpot, b


@st.composite
def length_dists(draw: Any, max_support: int = 6, max_len: int = 5000) -> dict[int, int]:
    xs = draw(st.lists(st.integers(1, max_len), min_size=1, max_size=max_support, unique=True))
    skew = draw(st.booleans())
    return {x: draw(st.integers(1, 50 if skew else 3)) for x in xs}
