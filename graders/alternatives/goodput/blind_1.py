"""goodput: an independent correct solution, written blind.

Written by a blind tester session, 2026-12-05, from the prompt (katas/goodput/README.md), the
stub and the public tests only (it saw neither the reference nor the hidden tests); kept as
the tester wrote it, with only this docstring changed. It scored 100/100 in an isolated grade
as written, so neither it nor the tests were changed to fit each other.

How it differs from the reference (solutions/goodput.py):

- numbers become Fractions at the boundary through one helper with a floor (strict or not),
  counts through another;
- ``best_batch`` scales t0, t1 and the target to one integer denominator (their lcm) and
  takes an integer floor;
- ``continuous_gain`` sums the tail, E[max] = sum of (x_j - x_{j-1}) (1 - F(x_{j-1})^B),
  scaled by the total weight to the B in integers;
- ``kv_peak_tokens`` is an event sweep over the steps where the active set changes,
  evaluated at the last step of each stretch;
- ``max_batch_for_pool`` is a closed form: the cohort peak M (p + n) - spacing M (M - 1) / 2
  with M capped at (n - 1) // spacing + 1, its quadratic solved with ``math.isqrt`` and
  fixed up by a step either way.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Iterable

_MOE_KEYS = ("num_experts", "num_local_experts", "n_routed_experts")


# ------------------------------------------------------------------ validation helpers
def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _exact(x: Any, what: str, *, low: Fraction | int | None = 0, strict: bool = False) -> Fraction:
    """A finite Python int/float (not a bool) as an exact Fraction, checked against a floor."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ValueError(f"{what} must be an int or float, got {x!r}")
    if isinstance(x, float) and not math.isfinite(x):
        raise ValueError(f"{what} must be finite, got {x!r}")
    q = Fraction(x)
    if low is not None:
        if strict and not q > low:
            raise ValueError(f"{what} must be > {low}, got {x!r}")
        if not strict and q < low:
            raise ValueError(f"{what} must be >= {low}, got {x!r}")
    return q


def _count(x: Any, what: str, low: int) -> int:
    if not _is_int(x):
        raise ValueError(f"{what} must be an int, got {x!r}")
    if x < low:
        raise ValueError(f"{what} must be >= {low}, got {x!r}")
    return int(x)


def _line(t0_s: Any, t1_s: Any) -> tuple[Fraction, Fraction]:
    t0 = _exact(t0_s, "t0_s")
    t1 = _exact(t1_s, "t1_s")
    if t0 == 0 and t1 == 0:
        raise ValueError("t0_s and t1_s are both 0: a step that takes no time")
    return t0, t1


def _dense_shape(cfg: Any) -> tuple[int, int, int]:
    """(P, L, kv x d) of a dense config; MoE and MLA are refused."""
    if not isinstance(cfg, dict):
        raise ValueError("cfg must be a dict")
    for key in _MOE_KEYS:
        val = cfg.get(key)
        if val is not None and val != 0:
            raise ValueError(f"MoE config ({key}={val!r}) is not covered")
    if cfg.get("kv_lora_rank") is not None:
        raise ValueError("MLA config (kv_lora_rank set) is not covered")

    def field(name: str, default: Any = None) -> int:
        val = cfg.get(name, default)
        if val is None:
            val = default
        if not _is_int(val) or val < 1:
            raise ValueError(f"config field {name} must be an int >= 1, got {val!r}")
        return int(val)

    hidden = field("hidden_size")
    layers = field("num_hidden_layers")
    heads = field("num_attention_heads")
    kv_heads = field("num_key_value_heads", heads)
    head_dim = field("head_dim", hidden // heads)
    inter = field("intermediate_size")
    vocab = field("vocab_size")
    per_layer = 2 * hidden * head_dim * (heads + kv_heads) + 3 * hidden * inter
    params = layers * per_layer + vocab * hidden
    return params, layers, kv_heads * head_dim


def _bandwidth(gpu: Any) -> Fraction:
    if not isinstance(gpu, dict):
        raise ValueError("gpu must be a dict")
    bw = _exact(gpu.get("memory_bandwidth_gb_s"), "memory_bandwidth_gb_s", strict=True)
    return bw * 10**9


def _exact_line(cfg: Any, gpu: Any, ctx_len: int, weight_bytes: Fraction, kv_bytes: Fraction,
                overhead: Fraction) -> tuple[Fraction, Fraction, Fraction]:
    """(t0, t1, kv bytes of one ctx_len sequence), exact."""
    params, layers, kvd = _dense_shape(cfg)
    bw = _bandwidth(gpu)
    seq_bytes = ctx_len * 2 * layers * kvd * kv_bytes
    return overhead + params * weight_bytes / bw, seq_bytes / bw, seq_bytes


# ------------------------------------------------------------------ the step
def step_line(cfg: dict[str, Any], gpu: dict[str, Any], ctx_len: int, weight_bytes: float = 2,
              kv_bytes: float = 2, overhead_s: float = 0.0) -> tuple[float, float]:
    ctx = _count(ctx_len, "ctx_len", 0)
    wb = _exact(weight_bytes, "weight_bytes")
    kb = _exact(kv_bytes, "kv_bytes")
    oh = _exact(overhead_s, "overhead_s")
    t0, t1, _ = _exact_line(cfg, gpu, ctx, wb, kb, oh)
    return float(t0), float(t1)


def speeds(t0_s: float, t1_s: float, batch: int,
           tpot_s: float) -> tuple[float, float, float]:
    t0, t1 = _line(t0_s, t1_s)
    b = _count(batch, "batch", 1)
    tpot = _exact(tpot_s, "tpot_s", strict=True)
    step = t0 + b * t1
    per_user = 1 / step
    total = b * per_user
    goodput = float(total) if step <= tpot else 0.0
    return float(per_user), float(total), goodput


def best_batch(t0_s: float, t1_s: float, tpot_s: float, max_batch: int) -> int:
    t0, t1 = _line(t0_s, t1_s)
    tpot = _exact(tpot_s, "tpot_s", strict=True)
    cap = _count(max_batch, "max_batch", 1)
    # scale the three to one integer denominator: t0 + B t1 <= tpot  <=>  a + B c <= z
    den = math.lcm(t0.denominator, t1.denominator, tpot.denominator)
    a = t0.numerator * (den // t0.denominator)
    c = t1.numerator * (den // t1.denominator)
    z = tpot.numerator * (den // tpot.denominator)
    slack = z - a
    if slack < c:           # not even B = 1 (covers c == 0 with a > z too)
        return 0
    if c == 0:
        return cap
    return min(cap, slack // c)


# ------------------------------------------------------------------ load
def resident_sequences(arrival_rate: float, output_len: int, t0_s: float, t1_s: float,
                       prefill_s: float = 0.0, max_seqs: int | None = None) -> float | None:
    lam = _exact(arrival_rate, "arrival_rate")
    n = _count(output_len, "output_len", 1)
    t0, t1 = _line(t0_s, t1_s)
    pre = _exact(prefill_s, "prefill_s")
    cap = None if max_seqs is None else _count(max_seqs, "max_seqs", 0)
    slowdown = lam * n * t1          # the coefficient of N on the right-hand side
    if slowdown >= 1:
        return None
    resident = lam * (pre + n * t0) / (1 - slowdown)
    if cap is not None and resident > cap:
        return None
    return float(resident)


# ------------------------------------------------------------------ batching
def continuous_gain(lengths: dict[int, int], batch: int) -> tuple[int, int]:
    if not isinstance(lengths, dict) or not lengths:
        raise ValueError("lengths must be a non-empty dict")
    b = _count(batch, "batch", 1)
    items = []
    for length, weight in lengths.items():
        items.append((_count(length, "length", 1), _count(weight, "weight", 1)))
    items.sort()
    total_w = sum(w for _, w in items)
    # tail sum: E[max] = sum over gaps (x_j - x_{j-1}) P(max > x_{j-1}),
    # scaled by total_w ** b to stay in integers
    scale = total_w ** b
    emax_scaled = 0
    below = 0          # cumulative weight strictly below the current length
    prev_x = 0
    for x, w in items:
        emax_scaled += (x - prev_x) * (scale - below ** b)
        below += w
        prev_x = x
    mean_scaled = sum(x * w for x, w in items)          # E[L] x total_w
    gain = Fraction(emax_scaled, total_w ** (b - 1) * mean_scaled)
    return gain.numerator, gain.denominator


def _entries(admissions: Any) -> list[tuple[int, int, int]]:
    if isinstance(admissions, (str, bytes, dict)):
        raise ValueError("admissions must be a list of (admit_step, prompt_len, output_len)")
    try:
        rows = list(admissions)
    except TypeError as exc:
        raise ValueError("admissions must be a list of entries") from exc
    out = []
    for row in rows:
        if not isinstance(row, (list, tuple)) or len(row) != 3:
            raise ValueError(f"entry {row!r} is not three ints")
        s, p, n = row
        out.append((_count(s, "admit_step", 0), _count(p, "prompt_len", 0),
                    _count(n, "output_len", 1)))
    return out


def kv_peak_tokens(admissions: list[tuple[int, int, int]]) -> int:
    rows = _entries(admissions)
    # during step t the active set holds sum(p - s + 1) + t x (number active); sweep the
    # points where the active set changes and evaluate at the last step of each stretch.
    delta: dict[int, list[int]] = {}
    for s, p, n in rows:
        base = p - s + 1
        d = delta.setdefault(s, [0, 0])
        d[0] += base
        d[1] += 1
        e = delta.setdefault(s + n, [0, 0])
        e[0] -= base
        e[1] -= 1
    points = sorted(delta)
    best = 0
    acc_base = 0
    acc_count = 0
    for here, after in zip(points, points[1:]):
        acc_base += delta[here][0]
        acc_count += delta[here][1]
        if acc_count:
            best = max(best, acc_base + (after - 1) * acc_count)
    return best


def _cohort_peak(m: int, full: int, spacing: int) -> int:
    """Peak of m overlapping requests of p + n = full tokens, spacing steps apart."""
    return m * full - spacing * m * (m - 1) // 2


def max_batch_for_pool(pool_tokens: int, prompt_len: int, output_len: int, spacing: int,
                       max_seqs: int) -> int:
    pool = _count(pool_tokens, "pool_tokens", 0)
    p = _count(prompt_len, "prompt_len", 0)
    n = _count(output_len, "output_len", 1)
    sp = _count(spacing, "spacing", 0)
    cap = _count(max_seqs, "max_seqs", 0)
    full = p + n
    # at most `overlap` requests ever run together; beyond that the peak stops growing
    overlap = cap if sp == 0 else min(cap, (n - 1) // sp + 1)
    if _cohort_peak(overlap, full, sp) <= pool:
        return cap
    # the peak is strictly increasing on 0..overlap: largest m with peak(m) <= pool
    if sp == 0:
        return pool // full
    # sp m^2 - (2 full + sp) m + 2 pool >= 0, smaller root
    bq = 2 * full + sp
    disc = bq * bq - 8 * sp * pool
    if disc < 0:
        m = overlap
    else:
        m = (bq - math.isqrt(disc)) // (2 * sp)
    m = max(0, min(m, overlap))
    while m < overlap and _cohort_peak(m + 1, full, sp) <= pool:
        m += 1
    while m > 0 and _cohort_peak(m, full, sp) > pool:
        m -= 1
    return m


# ------------------------------------------------------------------ upgrades
def _dense_peak(gpu: Any, dtype: Any) -> Fraction:
    table = gpu.get("tensor_tflops") if isinstance(gpu, dict) else None
    entry = table.get(dtype) if isinstance(table, dict) and isinstance(dtype, str) else None
    figure = entry.get("dense") if isinstance(entry, dict) else None
    if figure is None:
        raise ValueError(f"no dense {dtype!r} figure for {gpu.get('id') if isinstance(gpu, dict) else gpu!r}")
    return _exact(figure, f"dense {dtype} TFLOPS", strict=True)


def upgrade_gains(cfg: dict[str, Any], old_gpu: dict[str, Any], new_gpu: dict[str, Any],
                  ctx_len: int, old_pool_bytes: float, new_pool_bytes: float,
                  weight_bytes: float = 2, kv_bytes: float = 2,
                  dtype: str = "bf16") -> dict[str, float]:
    ctx = _count(ctx_len, "ctx_len", 1)
    pools = (_exact(old_pool_bytes, "old_pool_bytes"), _exact(new_pool_bytes, "new_pool_bytes"))
    wb = _exact(weight_bytes, "weight_bytes")
    kb = _exact(kv_bytes, "kv_bytes", strict=True)
    peaks = (_dense_peak(old_gpu, dtype), _dense_peak(new_gpu, dtype))
    rates = []
    single = []
    for gpu, pool in zip((old_gpu, new_gpu), pools):
        t0, t1, seq_bytes = _exact_line(cfg, gpu, ctx, wb, kb, Fraction(0))
        b = math.floor(pool / seq_bytes)
        if b < 1:
            raise ValueError(f"a pool of {pool} bytes holds no whole {ctx}-token sequence")
        single.append(t0 + t1)
        rates.append(b / (t0 + b * t1))
    return {
        "bandwidth": float(single[0] / single[1]),
        "compute": float(peaks[1] / peaks[0]),
        "capacity": float(rates[1] / rates[0]),
    }
