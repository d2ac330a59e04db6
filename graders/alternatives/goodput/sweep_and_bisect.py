"""An independent correct goodput solution: event sweeps, bisection and tail sums.

Written by the kata's author from the prompt and the stub as a second, differently built
solution (no blind helper was available in this session; it was written without reading
solutions/goodput.py again). Where it differs from the reference:

- numbers are validated by one helper that returns ``Fraction``s, and every function works
  on exact values until it returns;
- ``best_batch`` bisects on the exact predicate t(B) <= tpot instead of taking a floor;
- the residency is solved as the line N = a + s N (a the intercept, s the slope), with the
  saturation test on s;
- E[max] is a tail sum over the gaps between support points, not the pmf of the max;
- the KV peak is an event sweep (sorted admissions, a heap of finishing steps) whose total
  at a step is sum(p - s + 1) + t x (number active), evaluated at each finishing step;
- the pool batch simulates the cohort with that sweep (only the requests that can overlap
  the first one matter) and bisects on B.
"""

from __future__ import annotations

import heapq
import math
from fractions import Fraction
from typing import Any


def _exact(name: str, x: Any, strict: bool = False) -> Fraction:
    if type(x) not in (int, float) or (type(x) is float and not math.isfinite(x)):
        raise ValueError(f"{name}: not a finite int or float: {x!r}")
    v = Fraction(x)
    if v < 0 or (strict and v == 0):
        raise ValueError(f"{name}: out of range: {x!r}")
    return v


def _count(name: str, x: Any, least: int) -> int:
    if type(x) is not int or x < least:
        raise ValueError(f"{name}: expected an int >= {least}, got {x!r}")
    return x


def _coeffs(t0_s: Any, t1_s: Any) -> tuple[Fraction, Fraction]:
    a, b = _exact("t0_s", t0_s), _exact("t1_s", t1_s)
    if a == b == 0:
        raise ValueError("t0_s and t1_s are both 0")
    return a, b


def _model(cfg: Any) -> tuple[int, int]:
    if not isinstance(cfg, dict):
        raise ValueError("cfg is not a dict")
    if cfg.get("kv_lora_rank") is not None:
        raise ValueError("MLA configs are not covered")
    for key in ("num_experts", "num_local_experts", "n_routed_experts"):
        if cfg.get(key):
            raise ValueError("MoE configs are not covered")
    try:
        hidden = cfg["hidden_size"]
        layers = cfg["num_hidden_layers"]
        heads = cfg["num_attention_heads"]
        mlp = cfg["intermediate_size"]
        vocab = cfg["vocab_size"]
    except KeyError as missing:
        raise ValueError(f"missing {missing}") from None
    kv_heads = cfg.get("num_key_value_heads")
    kv_heads = heads if kv_heads is None else kv_heads
    head_dim = cfg.get("head_dim")
    head_dim = hidden // heads if head_dim is None else head_dim
    attention = 2 * hidden * head_dim * heads + 2 * hidden * head_dim * kv_heads
    weights = layers * (attention + 3 * hidden * mlp) + vocab * hidden
    return weights, layers * kv_heads * head_dim * 2


def _bw(gpu: Any) -> Fraction:
    try:
        return _exact("bandwidth", gpu["memory_bandwidth_gb_s"], strict=True) * 1_000_000_000
    except (KeyError, TypeError):
        raise ValueError("gpu entry without memory_bandwidth_gb_s") from None


def _coefficients(cfg: Any, gpu: Any, ctx_len: Any, weight_bytes: Any, kv_bytes: Any,
                  overhead_s: Any) -> tuple[Fraction, Fraction]:
    weights, kv_elems = _model(cfg)
    ctx = _count("ctx_len", ctx_len, 0)
    wb = _exact("weight_bytes", weight_bytes)
    kb = _exact("kv_bytes", kv_bytes)
    over = _exact("overhead_s", overhead_s)
    bw = _bw(gpu)
    return over + weights * wb / bw, kv_elems * kb * ctx / bw


def step_line(cfg: dict[str, Any], gpu: dict[str, Any], ctx_len: int, weight_bytes: float = 2,
              kv_bytes: float = 2, overhead_s: float = 0.0) -> tuple[float, float]:
    a, b = _coefficients(cfg, gpu, ctx_len, weight_bytes, kv_bytes, overhead_s)
    return float(a), float(b)


def speeds(t0_s: float, t1_s: float, batch: int,
           tpot_s: float) -> tuple[float, float, float]:
    a, b = _coeffs(t0_s, t1_s)
    n = _count("batch", batch, 1)
    target = _exact("tpot_s", tpot_s, strict=True)
    t = a + b * n
    good = Fraction(n) / t if t <= target else Fraction(0)
    return float(1 / t), float(n / t), float(good)


def best_batch(t0_s: float, t1_s: float, tpot_s: float, max_batch: int) -> int:
    a, b = _coeffs(t0_s, t1_s)
    target = _exact("tpot_s", tpot_s, strict=True)
    cap = _count("max_batch", max_batch, 1)

    def fits(n: int) -> bool:
        return a + b * n <= target

    if not fits(1):
        return 0
    lo, hi = 1, cap                     # fits(lo) holds; find the last n <= cap that fits
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def resident_sequences(arrival_rate: float, output_len: int, t0_s: float, t1_s: float,
                       prefill_s: float = 0.0, max_seqs: int | None = None) -> float | None:
    lam = _exact("arrival_rate", arrival_rate)
    n = _count("output_len", output_len, 1)
    a, b = _coeffs(t0_s, t1_s)
    pre = _exact("prefill_s", prefill_s)
    if max_seqs is not None:
        _count("max_seqs", max_seqs, 0)
    intercept = lam * (pre + n * a)     # N = intercept + slope x N
    slope = lam * n * b
    if slope >= 1:
        return None
    value = intercept / (1 - slope)
    if max_seqs is not None and value > max_seqs:
        return None
    return float(value)


def continuous_gain(lengths: dict[int, int], batch: int) -> tuple[int, int]:
    if not isinstance(lengths, dict) or len(lengths) == 0:
        raise ValueError("lengths: a non-empty {length: weight} dict")
    items = sorted((_count("length", k, 1), _count("weight", w, 1)) for k, w in lengths.items())
    b = _count("batch", batch, 1)
    total = sum(w for _, w in items)
    mean = Fraction(sum(k * w for k, w in items), total)
    tail, prev, cum = Fraction(0), 0, 0
    for k, w in items:
        tail += (k - prev) * (1 - Fraction(cum, total) ** b)
        prev, cum = k, cum + w
    ratio = tail / mean
    return ratio.numerator, ratio.denominator


def _parse(admissions: Any) -> list[tuple[int, int, int]]:
    if not isinstance(admissions, (list, tuple)):
        raise ValueError("admissions: a list of (admit_step, prompt_len, output_len)")
    out = []
    for entry in admissions:
        if not isinstance(entry, (list, tuple)) or len(entry) != 3:
            raise ValueError(f"bad admission {entry!r}")
        s, p, n = entry
        out.append((_count("admit_step", s, 0), _count("prompt_len", p, 0),
                    _count("output_len", n, 1)))
    return out


def _sweep_peak(reqs: list[tuple[int, int, int]]) -> int:
    """Sum at step t = sum over active (p - s + 1) + t x active; checked at each last step."""
    events = sorted(reqs)
    ends: list[tuple[int, int]] = []            # (last step, p - s + 1)
    base = active = best = 0
    i = 0
    while i < len(events) or ends:
        next_start = events[i][0] if i < len(events) else None
        if ends and (next_start is None or ends[0][0] < next_start):
            t, c = heapq.heappop(ends)
            best = max(best, base + t * active)
            base -= c
            active -= 1
            while ends and ends[0][0] == t:       # others finishing in the same step
                _, c2 = heapq.heappop(ends)
                base -= c2
                active -= 1
            continue
        s, p, n = events[i]
        i += 1
        heapq.heappush(ends, (s + n - 1, p - s + 1))
        base += p - s + 1
        active += 1
    return best


def kv_peak_tokens(admissions: list[tuple[int, int, int]]) -> int:
    return _sweep_peak(_parse(admissions))


def max_batch_for_pool(pool_tokens: int, prompt_len: int, output_len: int, spacing: int,
                       max_seqs: int) -> int:
    pool = _count("pool_tokens", pool_tokens, 0)
    p = _count("prompt_len", prompt_len, 0)
    n = _count("output_len", output_len, 1)
    gap = _count("spacing", spacing, 0)
    cap = _count("max_seqs", max_seqs, 0)

    def peak(b: int) -> int:
        if gap == 0:
            return b * (p + n)
        overlap = min(b, (n - 1) // gap + 1)    # later requests start after the first ends
        return _sweep_peak([(i * gap, p, n) for i in range(overlap)])

    lo, hi = 0, cap
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if peak(mid) <= pool:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _dense_peak(gpu: Any, dtype: Any) -> Fraction:
    try:
        return _exact("dense peak", gpu["tensor_tflops"][dtype]["dense"], strict=True)
    except (KeyError, TypeError):
        raise ValueError(f"no dense {dtype!r} peak") from None


def upgrade_gains(cfg: dict[str, Any], old_gpu: dict[str, Any], new_gpu: dict[str, Any],
                  ctx_len: int, old_pool_bytes: float, new_pool_bytes: float,
                  weight_bytes: float = 2, kv_bytes: float = 2,
                  dtype: str = "bf16") -> dict[str, float]:
    ctx = _count("ctx_len", ctx_len, 1)
    kb = _exact("kv_bytes", kv_bytes, strict=True)
    old_pool = _exact("old_pool_bytes", old_pool_bytes)
    new_pool = _exact("new_pool_bytes", new_pool_bytes)
    compute = _dense_peak(new_gpu, dtype) / _dense_peak(old_gpu, dtype)
    a_old, b_old = _coefficients(cfg, old_gpu, ctx, weight_bytes, kv_bytes, 0)
    a_new, b_new = _coefficients(cfg, new_gpu, ctx, weight_bytes, kv_bytes, 0)
    seq_bytes = ctx * _model(cfg)[1] * kb
    n_old, n_new = math.floor(old_pool / seq_bytes), math.floor(new_pool / seq_bytes)
    if n_old < 1 or n_new < 1:
        raise ValueError("a pool holds no whole sequence")
    bandwidth = (a_old + b_old) / (a_new + b_new)
    capacity = (n_new / (a_new + b_new * n_new)) / (n_old / (a_old + b_old * n_old))
    return {"bandwidth": float(bandwidth), "compute": float(compute), "capacity": float(capacity)}
