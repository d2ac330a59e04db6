"""Reference solution for the goodput kata: one step time for every sequence in the batch.

Every decision (a batch meets its target or not, a fixed point exists or not, a batch fits
its pool or not) is made in exact arithmetic on the given values: a float converts to a
``fractions.Fraction`` exactly. Closed forms throughout: the step line, the largest feasible
batch, Little's law as a linear fixed point, E[max] from the CDF, and the peak KV of a
staggered cohort.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

MOE_KEYS = ("num_experts", "num_local_experts", "n_routed_experts")


# ------------------------------------------------------------------ checks
def _num(name: str, value: Any, *, positive: bool = False) -> Fraction:
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
    if not ok or (value <= 0 if positive else value < 0):
        raise ValueError(f"{name} must be a {'positive' if positive else 'non-negative'} "
                         f"finite int or float, got {value!r}")
    return Fraction(value)


def _int(name: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    return value


def _line(t0_s: Any, t1_s: Any) -> tuple[Fraction, Fraction]:
    t0, t1 = _num("t0_s", t0_s), _num("t1_s", t1_s)
    if t0 == 0 and t1 == 0:
        raise ValueError("a step that takes no time (t0_s = t1_s = 0) has no speed")
    return t0, t1


def _dense(cfg: Any) -> tuple[int, int]:
    """(weights read per step in elements, KV elements per token) of a dense config."""
    if not isinstance(cfg, dict):
        raise ValueError(f"cfg must be a dict, got {type(cfg).__name__}")
    if cfg.get("kv_lora_rank") is not None or any(cfg.get(k) for k in MOE_KEYS):
        raise ValueError("only dense GQA/MHA configs are covered (MoE or MLA given)")
    try:
        h, n_layers = cfg["hidden_size"], cfg["num_hidden_layers"]
        q, inter, vocab = cfg["num_attention_heads"], cfg["intermediate_size"], cfg["vocab_size"]
    except KeyError as e:
        raise ValueError(f"config lacks {e}") from None
    kv = cfg.get("num_key_value_heads") or q
    d = cfg.get("head_dim") or h // q
    params = n_layers * (2 * h * d * (q + kv) + 3 * h * inter) + vocab * h
    return params, 2 * n_layers * kv * d


def _bandwidth(gpu: Any) -> Fraction:
    if not isinstance(gpu, dict) or "memory_bandwidth_gb_s" not in gpu:
        raise ValueError("gpu must be a datasheet entry with memory_bandwidth_gb_s")
    return _num("memory_bandwidth_gb_s", gpu["memory_bandwidth_gb_s"], positive=True) * 10**9


def _peak(gpu: Any, dtype: str) -> Fraction:
    try:
        dense = gpu["tensor_tflops"][dtype]["dense"]
    except (KeyError, TypeError):
        raise ValueError(f"the GPU entry gives no dense {dtype!r} figure") from None
    return _num("dense TFLOP/s", dense, positive=True) * 10**12


def _exact_line(cfg: Any, gpu: Any, ctx_len: Any, weight_bytes: Any, kv_bytes: Any,
                overhead_s: Any) -> tuple[Fraction, Fraction]:
    params, kv_per_token = _dense(cfg)
    ctx = _int("ctx_len", ctx_len, 0)
    wb, kb = _num("weight_bytes", weight_bytes), _num("kv_bytes", kv_bytes)
    bw = _bandwidth(gpu)
    return _num("overhead_s", overhead_s) + params * wb / bw, ctx * kv_per_token * kb / bw


# ------------------------------------------------------------------ the step
def step_line(cfg: dict[str, Any], gpu: dict[str, Any], ctx_len: int, weight_bytes: float = 2,
              kv_bytes: float = 2, overhead_s: float = 0.0) -> tuple[float, float]:
    t0, t1 = _exact_line(cfg, gpu, ctx_len, weight_bytes, kv_bytes, overhead_s)
    return float(t0), float(t1)


def speeds(t0_s: float, t1_s: float, batch: int,
           tpot_s: float) -> tuple[float, float, float]:
    t0, t1 = _line(t0_s, t1_s)
    b = _int("batch", batch, 1)
    tpot = _num("tpot_s", tpot_s, positive=True)
    step = t0 + b * t1
    throughput = b / step
    return float(1 / step), float(throughput), float(throughput if step <= tpot else 0)


def best_batch(t0_s: float, t1_s: float, tpot_s: float, max_batch: int) -> int:
    t0, t1 = _line(t0_s, t1_s)
    tpot = _num("tpot_s", tpot_s, positive=True)
    cap = _int("max_batch", max_batch, 1)
    if t0 + t1 > tpot:
        return 0
    if t1 == 0:
        return cap
    return min(cap, math.floor((tpot - t0) / t1))


# ------------------------------------------------------------------ Little's law
def resident_sequences(arrival_rate: float, output_len: int, t0_s: float, t1_s: float,
                       prefill_s: float = 0.0, max_seqs: int | None = None) -> float | None:
    lam = _num("arrival_rate", arrival_rate)
    n_out = _int("output_len", output_len, 1)
    t0, t1 = _line(t0_s, t1_s)
    pre = _num("prefill_s", prefill_s)
    cap = None if max_seqs is None else _int("max_seqs", max_seqs, 0)
    load = lam * n_out * t1
    if load >= 1:
        return None
    n = lam * (pre + n_out * t0) / (1 - load)
    if cap is not None and n > cap:
        return None
    return float(n)


# ------------------------------------------------------------------ continuous batching
def continuous_gain(lengths: dict[int, int], batch: int) -> tuple[int, int]:
    if not isinstance(lengths, dict) or not lengths:
        raise ValueError("lengths must be a non-empty dict {output length: weight}")
    for n, w in lengths.items():
        _int("an output length", n, 1)
        _int("a weight", w, 1)
    b = _int("batch", batch, 1)
    total = sum(lengths.values())
    mean = Fraction(sum(n * w for n, w in lengths.items()), total)
    e_max, below = Fraction(0), 0
    for n in sorted(lengths):
        at_most = below + lengths[n]
        e_max += n * (Fraction(at_most, total) ** b - Fraction(below, total) ** b)
        below = at_most
    gain = e_max / mean
    return gain.numerator, gain.denominator


# ------------------------------------------------------------------ KV that grows
def kv_peak_tokens(admissions: list[tuple[int, int, int]]) -> int:
    if not isinstance(admissions, (list, tuple)):
        raise ValueError("admissions must be a list of (admit_step, prompt_len, output_len)")
    reqs = []
    for a in admissions:
        if not isinstance(a, (list, tuple)) or len(a) != 3:
            raise ValueError(f"an admission is (admit_step, prompt_len, output_len), got {a!r}")
        reqs.append((_int("admit_step", a[0], 0), _int("prompt_len", a[1], 0),
                     _int("output_len", a[2], 1)))
    peak = 0
    for t in {s + n - 1 for s, _, n in reqs}:      # the sum only drops after a last step
        held = sum(p + t - s + 1 for s, p, n in reqs if s <= t <= s + n - 1)
        peak = max(peak, held)
    return peak


def _cohort_peak(b: int, prompt: int, out: int, spacing: int) -> int:
    if b == 0:
        return 0
    k = b - 1 if spacing == 0 else min(b - 1, (out - 1) // spacing)
    return (k + 1) * (prompt + out) - spacing * k * (k + 1) // 2


def max_batch_for_pool(pool_tokens: int, prompt_len: int, output_len: int, spacing: int,
                       max_seqs: int) -> int:
    pool = _int("pool_tokens", pool_tokens, 0)
    prompt, out = _int("prompt_len", prompt_len, 0), _int("output_len", output_len, 1)
    gap, cap = _int("spacing", spacing, 0), _int("max_seqs", max_seqs, 0)
    lo, hi = 0, cap                     # the peak never falls as the cohort grows
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _cohort_peak(mid, prompt, out, gap) <= pool:
            lo = mid
        else:
            hi = mid - 1
    return lo


# ------------------------------------------------------------------ a GPU upgrade
def upgrade_gains(cfg: dict[str, Any], old_gpu: dict[str, Any], new_gpu: dict[str, Any],
                  ctx_len: int, old_pool_bytes: float, new_pool_bytes: float,
                  weight_bytes: float = 2, kv_bytes: float = 2,
                  dtype: str = "bf16") -> dict[str, float]:
    _int("ctx_len", ctx_len, 1)
    _num("kv_bytes", kv_bytes, positive=True)
    pools = _num("old_pool_bytes", old_pool_bytes), _num("new_pool_bytes", new_pool_bytes)
    compute = _peak(new_gpu, dtype) / _peak(old_gpu, dtype)
    _, kv_per_token = _dense(cfg)
    per_seq = ctx_len * kv_per_token * Fraction(kv_bytes)
    rates = []
    for gpu, pool in zip((old_gpu, new_gpu), pools):
        t0, t1 = _exact_line(cfg, gpu, ctx_len, weight_bytes, kv_bytes, 0)
        b = math.floor(pool / per_seq)
        if b == 0:
            raise ValueError("not one sequence of ctx_len tokens fits in a pool")
        rates.append((t0 + t1, b / (t0 + b * t1)))
    (t_old, thr_old), (t_new, thr_new) = rates
    return {"bandwidth": float(t_old / t_new), "compute": float(compute),
            "capacity": float(thr_new / thr_old)}
