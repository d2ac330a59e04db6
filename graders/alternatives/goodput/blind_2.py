"""goodput: an independent correct solution, written blind (round 2).

Written by a second blind tester session, 2026-12-05, from the prompt (katas/goodput/README.md),
the stub and the public tests only (it saw neither the reference, the hidden tests nor
blind_1.py); kept as the tester wrote it, with only this docstring changed. It scored 100/100
in an isolated grade as written, so neither it nor the tests were changed to fit each other.

The tester's own summary: exact arithmetic through Fractions at the boundary (integers where
they suffice); ``best_batch`` checks B = 1 and the cap, then bisects the exact predicate
``t0 + B t1 <= tpot`` (so t1 = 0 and ties need no special case); ``continuous_gain`` is the
tail sum E[max] = sum_k P(max >= k) over the gaps between sorted lengths, all in ints and
reduced with gcd; ``kv_peak_tokens`` is an event sweep keeping a count and a constant sum
(an active request holds (p - s + 1) + t during step t), evaluated at the distinct last
steps; ``max_batch_for_pool`` bisects a closed-form cohort peak m (p + n) - spacing m (m - 1)
/ 2 with m = min(B, (n - 1) // spacing + 1); ``upgrade_gains`` floors the capacity batch
exactly. Its ten bugs are the ``blind2_*`` mutants (graders/alternatives/goodput/blind_2.NOTES.md).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

__all__ = ["step_line", "speeds", "best_batch", "resident_sequences", "continuous_gain",
           "kv_peak_tokens", "max_batch_for_pool", "upgrade_gains"]


# ------------------------------------------------------------------ validation helpers
def _num(x: Any, what: str) -> Fraction:
    """A finite Python int or float (not bool), as its exact Fraction."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ValueError(f"{what}: not a number: {x!r}")
    if isinstance(x, float) and not math.isfinite(x):
        raise ValueError(f"{what}: not finite: {x!r}")
    return Fraction(x)


def _nonneg(x: Any, what: str) -> Fraction:
    v = _num(x, what)
    if v < 0:
        raise ValueError(f"{what}: negative: {x!r}")
    return v


def _count(x: Any, what: str, lo: int) -> int:
    if isinstance(x, bool) or not isinstance(x, int):
        raise ValueError(f"{what}: not an int: {x!r}")
    if x < lo:
        raise ValueError(f"{what}: below {lo}: {x!r}")
    return int(x)


def _line(t0_s: Any, t1_s: Any) -> tuple[Fraction, Fraction]:
    t0 = _nonneg(t0_s, "t0_s")
    t1 = _nonneg(t1_s, "t1_s")
    if t0 == 0 and t1 == 0:
        raise ValueError("t0_s and t1_s both 0: a step that takes no time")
    return t0, t1


def _dense_shape(cfg: Any) -> tuple[int, int, int, int, int, int, int]:
    """(H, L, q, kv, d, I, V) of a dense, non-MLA config; ValueError for MoE or MLA."""
    for key in ("num_experts", "num_local_experts", "n_routed_experts"):
        val = cfg.get(key)
        if val is not None and val != 0:
            raise ValueError(f"MoE config ({key}={val!r}) is not covered")
    if cfg.get("kv_lora_rank") is not None:
        raise ValueError("MLA config (kv_lora_rank set) is not covered")
    h = cfg["hidden_size"]
    layers = cfg["num_hidden_layers"]
    q = cfg["num_attention_heads"]
    kv = cfg.get("num_key_value_heads")
    if kv is None:
        kv = q
    d = cfg.get("head_dim")
    if d is None:
        d = h // q
    inter = cfg["intermediate_size"]
    vocab = cfg["vocab_size"]
    return h, layers, q, kv, d, inter, vocab


def _params(shape: tuple[int, int, int, int, int, int, int]) -> int:
    h, layers, q, kv, d, inter, vocab = shape
    return layers * (2 * h * d * (q + kv) + 3 * h * inter) + vocab * h


def _kv_per_token_elems(shape: tuple[int, int, int, int, int, int, int]) -> int:
    _, layers, _, kv, d, _, _ = shape
    return 2 * layers * kv * d


def _bw(gpu: Any) -> Fraction:
    return Fraction(gpu["memory_bandwidth_gb_s"]) * 10**9


def _exact_line(shape: tuple[int, int, int, int, int, int, int], gpu: Any, ctx_len: int,
                wb: Fraction, kvb: Fraction, overhead: Fraction) -> tuple[Fraction, Fraction]:
    bw = _bw(gpu)
    t0 = overhead + _params(shape) * wb / bw
    t1 = ctx_len * _kv_per_token_elems(shape) * kvb / bw
    return t0, t1


# ------------------------------------------------------------------ the step
def step_line(cfg: dict[str, Any], gpu: dict[str, Any], ctx_len: int, weight_bytes: float = 2,
              kv_bytes: float = 2, overhead_s: float = 0.0) -> tuple[float, float]:
    n_ctx = _count(ctx_len, "ctx_len", 0)
    wb = _nonneg(weight_bytes, "weight_bytes")
    kvb = _nonneg(kv_bytes, "kv_bytes")
    ovh = _nonneg(overhead_s, "overhead_s")
    shape = _dense_shape(cfg)
    t0, t1 = _exact_line(shape, gpu, n_ctx, wb, kvb, ovh)
    return float(t0), float(t1)


def speeds(t0_s: float, t1_s: float, batch: int,
           tpot_s: float) -> tuple[float, float, float]:
    t0, t1 = _line(t0_s, t1_s)
    b = _count(batch, "batch", 1)
    tpot = _num(tpot_s, "tpot_s")
    if tpot <= 0:
        raise ValueError("tpot_s must be positive")
    step = t0 + b * t1
    user = float(1 / step)
    total = float(b / step)
    good = total if step <= tpot else 0.0
    return user, total, good


def best_batch(t0_s: float, t1_s: float, tpot_s: float, max_batch: int) -> int:
    t0, t1 = _line(t0_s, t1_s)
    tpot = _num(tpot_s, "tpot_s")
    if tpot <= 0:
        raise ValueError("tpot_s must be positive")
    cap = _count(max_batch, "max_batch", 1)

    def ok(b: int) -> bool:
        return t0 + b * t1 <= tpot

    if not ok(1):
        return 0
    if ok(cap):
        return cap
    # ok(lo) and not ok(hi); the predicate is monotone (t1 >= 0)
    lo, hi = 1, cap
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo


# ------------------------------------------------------------------ load
def resident_sequences(arrival_rate: float, output_len: int, t0_s: float, t1_s: float,
                       prefill_s: float = 0.0, max_seqs: int | None = None) -> float | None:
    lam = _nonneg(arrival_rate, "arrival_rate")
    n = _count(output_len, "output_len", 1)
    t0, t1 = _line(t0_s, t1_s)
    pre = _nonneg(prefill_s, "prefill_s")
    cap = None if max_seqs is None else _count(max_seqs, "max_seqs", 0)
    load = lam * n * t1
    if load >= 1:
        return None
    resident = lam * (pre + n * t0) / (1 - load)
    if cap is not None and resident > cap:
        return None
    return float(resident)


# ------------------------------------------------------------------ batching
def continuous_gain(lengths: dict[int, int], batch: int) -> tuple[int, int]:
    if not isinstance(lengths, dict) or len(lengths) == 0:
        raise ValueError("lengths must be a non-empty dict")
    items = []
    for length, weight in lengths.items():
        items.append((_count(length, "length", 1), _count(weight, "weight", 1)))
    b = _count(batch, "batch", 1)
    items.sort()
    total_w = sum(w for _, w in items)
    mean_num = sum(x * w for x, w in items)            # E[L] = mean_num / total_w
    # E[max] = sum_{k >= 1} P(max >= k) = sum over gaps (x_{i-1}, x_i] of 1 - (C_{i-1}/W)^B
    wb = total_w ** b
    tail_num = 0                                        # E[max] = tail_num / W^B
    prev_x, cum = 0, 0
    for x, w in items:
        tail_num += (x - prev_x) * (wb - cum ** b)
        prev_x, cum = x, cum + w
    num = tail_num * total_w
    den = wb * mean_num
    g = math.gcd(num, den)
    return num // g, den // g


def _admission(entry: Any) -> tuple[int, int, int]:
    if not isinstance(entry, (list, tuple)) or len(entry) != 3:
        raise ValueError(f"admission {entry!r}: not three ints")
    s, p, n = entry
    return _count(s, "admit_step", 0), _count(p, "prompt_len", 0), _count(n, "output_len", 1)


def kv_peak_tokens(admissions: list[tuple[int, int, int]]) -> int:
    if not isinstance(admissions, (list, tuple)):
        raise ValueError("admissions must be a list or tuple")
    reqs = [_admission(e) for e in admissions]
    if not reqs:
        return 0
    # during step t an active request holds (p - s + 1) + t: keep count and the constant sum
    starts = sorted((s, p - s + 1) for s, p, _ in reqs)
    stops = sorted((s + n, p - s + 1) for s, p, n in reqs)      # first step it holds nothing
    ends = sorted({s + n - 1 for s, _, n in reqs})
    i = j = 0
    count = const = 0
    best = 0
    for t in ends:
        while i < len(starts) and starts[i][0] <= t:
            count += 1
            const += starts[i][1]
            i += 1
        while j < len(stops) and stops[j][0] <= t:
            count -= 1
            const -= stops[j][1]
            j += 1
        best = max(best, const + count * t)
    return best


def _cohort_peak(b: int, p: int, n: int, spacing: int) -> int:
    """Peak KV of b requests admitted at 0, spacing, 2 spacing, ...: at the first request's
    last step the m overlapping ones hold p + n, p + n - spacing, ..."""
    if b == 0:
        return 0
    m = b if spacing == 0 else min(b, (n - 1) // spacing + 1)
    return m * (p + n) - spacing * m * (m - 1) // 2


def max_batch_for_pool(pool_tokens: int, prompt_len: int, output_len: int, spacing: int,
                       max_seqs: int) -> int:
    pool = _count(pool_tokens, "pool_tokens", 0)
    p = _count(prompt_len, "prompt_len", 0)
    n = _count(output_len, "output_len", 1)
    sp = _count(spacing, "spacing", 0)
    cap = _count(max_seqs, "max_seqs", 0)
    if _cohort_peak(cap, p, n, sp) <= pool:
        return cap
    lo, hi = 0, cap                       # peak(lo) <= pool < peak(hi); peak is monotone in b
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _cohort_peak(mid, p, n, sp) <= pool:
            lo = mid
        else:
            hi = mid
    return lo


# ------------------------------------------------------------------ upgrades
def _dense_peak(gpu: Any, dtype: Any) -> Fraction:
    try:
        val = gpu["tensor_tflops"][dtype]["dense"]
    except (KeyError, TypeError, IndexError) as exc:
        raise ValueError(f"no dense {dtype!r} figure for {gpu.get('id', gpu)!r}") from exc
    if isinstance(val, bool) or not isinstance(val, (int, float)) or not math.isfinite(val):
        raise ValueError(f"no dense {dtype!r} figure for {gpu.get('id', gpu)!r}")
    return Fraction(val)


def upgrade_gains(cfg: dict[str, Any], old_gpu: dict[str, Any], new_gpu: dict[str, Any],
                  ctx_len: int, old_pool_bytes: float, new_pool_bytes: float,
                  weight_bytes: float = 2, kv_bytes: float = 2,
                  dtype: str = "bf16") -> dict[str, float]:
    n_ctx = _count(ctx_len, "ctx_len", 1)
    pools = (_num(old_pool_bytes, "old_pool_bytes"), _num(new_pool_bytes, "new_pool_bytes"))
    wb = _nonneg(weight_bytes, "weight_bytes")
    kvb = _num(kv_bytes, "kv_bytes")
    if kvb <= 0:
        raise ValueError("kv_bytes must be positive")
    shape = _dense_shape(cfg)
    peak_old = _dense_peak(old_gpu, dtype)
    peak_new = _dense_peak(new_gpu, dtype)
    seq_bytes = n_ctx * _kv_per_token_elems(shape) * kvb
    batches = []
    for pool in pools:
        b = math.floor(pool / seq_bytes) if pool >= 0 else 0
        if b < 1:
            raise ValueError(f"a pool of {pool} bytes holds no whole {n_ctx}-token sequence")
        batches.append(b)
    zero = Fraction(0)
    lines = [_exact_line(shape, g, n_ctx, wb, kvb, zero) for g in (old_gpu, new_gpu)]
    step1 = [t0 + t1 for t0, t1 in lines]
    rates = [b / (t0 + b * t1) for b, (t0, t1) in zip(batches, lines)]
    return {
        "bandwidth": float(step1[0] / step1[1]),
        "compute": float(peak_new / peak_old),
        "capacity": float(rates[1] / rates[0]),
    }
