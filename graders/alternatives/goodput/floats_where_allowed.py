"""An independent correct goodput solution in the style a candidate is likely to write:
floating point for every returned value, ``Fraction`` only where the prompt asks for an exact
comparison (and for the residency, whose rule asks for the exact value).

Written by the kata's author from the prompt and the stub, after the reference and the
first alternative, to check that the tests accept floats wherever the prompt allows them
(returned values to a relative 1e-12). Where it differs from the other two:

- the step line, the speeds and the upgrade's ratios are plain float arithmetic;
- ``best_batch`` starts from the float estimate of floor((tpot - t0) / t1) and corrects it
  by one either way with the exact test;
- E[max] sums P(max = x) from the pmf of each support point with integer weights:
  (cum_x^B - cum_{x-1}^B) / total^B, all in integers until one division;
- the KV peak walks every step between the first admission and the last finish (the
  inputs are small) and the pool batch grows the cohort one request at a time, stopping
  once a request starts after the first one's last step (no later request can overlap it).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any


def _real(x: Any, what: str, positive: bool = False) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        raise ValueError(f"{what} must be a finite number, got {x!r}")
    if x < 0 or (positive and x == 0):
        raise ValueError(f"{what} out of range: {x!r}")
    return x


def _whole(x: Any, what: str, least: int) -> int:
    if isinstance(x, bool) or not isinstance(x, int) or x < least:
        raise ValueError(f"{what} must be an int >= {least}, got {x!r}")
    return x


def _check_line(t0_s: Any, t1_s: Any) -> None:
    _real(t0_s, "t0_s")
    _real(t1_s, "t1_s")
    if t0_s == 0 and t1_s == 0:
        raise ValueError("a step takes some time")


def _sizes(cfg: Any) -> tuple[float, float]:
    if not isinstance(cfg, dict):
        raise ValueError("cfg must be a dict")
    if cfg.get("kv_lora_rank") is not None:
        raise ValueError("MLA")
    if cfg.get("num_experts") or cfg.get("num_local_experts") or cfg.get("n_routed_experts"):
        raise ValueError("MoE")
    try:
        h = cfg["hidden_size"]
        n_layers = cfg["num_hidden_layers"]
        q = cfg["num_attention_heads"]
        inter = cfg["intermediate_size"]
        vocab = cfg["vocab_size"]
    except KeyError as e:
        raise ValueError(f"missing {e}") from None
    kv = cfg.get("num_key_value_heads") or q
    d = cfg.get("head_dim") or h // q
    return (float(n_layers * (2 * h * d * (q + kv) + 3 * h * inter) + vocab * h),
            float(2 * n_layers * kv * d))


def _bandwidth(gpu: Any) -> float:
    try:
        return _real(gpu["memory_bandwidth_gb_s"], "bandwidth", positive=True) * 1e9
    except (KeyError, TypeError):
        raise ValueError("no bandwidth") from None


def step_line(cfg: dict[str, Any], gpu: dict[str, Any], ctx_len: int, weight_bytes: float = 2,
              kv_bytes: float = 2, overhead_s: float = 0.0) -> tuple[float, float]:
    params, kv_elems = _sizes(cfg)
    _whole(ctx_len, "ctx_len", 0)
    _real(weight_bytes, "weight_bytes")
    _real(kv_bytes, "kv_bytes")
    _real(overhead_s, "overhead_s")
    bw = _bandwidth(gpu)
    return overhead_s + params * weight_bytes / bw, ctx_len * kv_elems * kv_bytes / bw


def speeds(t0_s: float, t1_s: float, batch: int,
           tpot_s: float) -> tuple[float, float, float]:
    _check_line(t0_s, t1_s)
    _whole(batch, "batch", 1)
    _real(tpot_s, "tpot_s", positive=True)
    step = t0_s + batch * t1_s
    meets = Fraction(t0_s) + batch * Fraction(t1_s) <= Fraction(tpot_s)
    return 1 / step, batch / step, batch / step if meets else 0.0


def best_batch(t0_s: float, t1_s: float, tpot_s: float, max_batch: int) -> int:
    _check_line(t0_s, t1_s)
    _real(tpot_s, "tpot_s", positive=True)
    _whole(max_batch, "max_batch", 1)

    def ok(b: int) -> bool:
        return Fraction(t0_s) + b * Fraction(t1_s) <= Fraction(tpot_s)

    if not ok(1):
        return 0
    if t1_s == 0 or ok(max_batch):
        return max_batch
    guess = min(max_batch, max(1, int((tpot_s - t0_s) / t1_s)))
    while guess > 1 and not ok(guess):
        guess -= 1
    while guess < max_batch and ok(guess + 1):
        guess += 1
    return guess


def resident_sequences(arrival_rate: float, output_len: int, t0_s: float, t1_s: float,
                       prefill_s: float = 0.0, max_seqs: int | None = None) -> float | None:
    _real(arrival_rate, "arrival_rate")
    _whole(output_len, "output_len", 1)
    _check_line(t0_s, t1_s)
    _real(prefill_s, "prefill_s")
    if max_seqs is not None:
        _whole(max_seqs, "max_seqs", 0)
    lam, t0, t1, pre = (Fraction(x) for x in (arrival_rate, t0_s, t1_s, prefill_s))
    denominator = 1 - lam * output_len * t1
    if denominator <= 0:
        return None
    n = lam * (pre + output_len * t0) / denominator
    return None if max_seqs is not None and n > max_seqs else float(n)


def continuous_gain(lengths: dict[int, int], batch: int) -> tuple[int, int]:
    if not isinstance(lengths, dict) or not lengths:
        raise ValueError("lengths must be a non-empty dict")
    for k, w in lengths.items():
        _whole(k, "length", 1)
        _whole(w, "weight", 1)
    _whole(batch, "batch", 1)
    total = sum(lengths.values())
    num_max, cum_prev = 0, 0
    for x in sorted(lengths):
        cum = cum_prev + lengths[x]
        num_max += x * (cum ** batch - cum_prev ** batch)
        cum_prev = cum
    mean_num = sum(k * w for k, w in lengths.items())
    # (num_max / total^B) / (mean_num / total)
    ratio = Fraction(num_max, total ** batch) * Fraction(total, mean_num)
    return ratio.numerator, ratio.denominator


def kv_peak_tokens(admissions: list[tuple[int, int, int]]) -> int:
    if not isinstance(admissions, (list, tuple)):
        raise ValueError("admissions must be a list")
    reqs = []
    for a in admissions:
        if not isinstance(a, (list, tuple)) or len(a) != 3:
            raise ValueError(f"bad admission {a!r}")
        reqs.append((_whole(a[0], "admit_step", 0), _whole(a[1], "prompt_len", 0),
                     _whole(a[2], "output_len", 1)))
    if not reqs:
        return 0
    first = min(s for s, _, _ in reqs)
    last = max(s + n - 1 for s, _, n in reqs)
    return max(sum(p + t - s + 1 for s, p, n in reqs if s <= t <= s + n - 1)
               for t in range(first, last + 1))


def max_batch_for_pool(pool_tokens: int, prompt_len: int, output_len: int, spacing: int,
                       max_seqs: int) -> int:
    pool = _whole(pool_tokens, "pool_tokens", 0)
    p = _whole(prompt_len, "prompt_len", 0)
    n = _whole(output_len, "output_len", 1)
    gap = _whole(spacing, "spacing", 0)
    cap = _whole(max_seqs, "max_seqs", 0)
    if gap == 0:
        return min(cap, pool // (p + n))
    # The peak is reached at the first request's last step (n - 1): request j holds
    # p + n - j * gap then, if it has started. Requests starting after step n - 1 never
    # add to it (each later window looks the same or emptier).
    b, held = 0, 0
    while b < cap:
        start = b * gap
        if start > n - 1:
            return cap
        if held + p + n - start > pool:
            return b
        held += p + n - start
        b += 1
    return b


def _dense_tflops(gpu: Any, dtype: str) -> float:
    try:
        return _real(gpu["tensor_tflops"][dtype]["dense"], "dense peak", positive=True)
    except (KeyError, TypeError):
        raise ValueError(f"no dense {dtype} figure") from None


def upgrade_gains(cfg: dict[str, Any], old_gpu: dict[str, Any], new_gpu: dict[str, Any],
                  ctx_len: int, old_pool_bytes: float, new_pool_bytes: float,
                  weight_bytes: float = 2, kv_bytes: float = 2,
                  dtype: str = "bf16") -> dict[str, float]:
    _whole(ctx_len, "ctx_len", 1)
    _real(kv_bytes, "kv_bytes", positive=True)
    _real(old_pool_bytes, "old_pool_bytes")
    _real(new_pool_bytes, "new_pool_bytes")
    compute = _dense_tflops(new_gpu, dtype) / _dense_tflops(old_gpu, dtype)
    _, kv_elems = _sizes(cfg)
    seq_bytes = int(ctx_len * kv_elems) * Fraction(kv_bytes)
    result = []
    for gpu, pool in ((old_gpu, old_pool_bytes), (new_gpu, new_pool_bytes)):
        t0, t1 = step_line(cfg, gpu, ctx_len, weight_bytes, kv_bytes)
        b = math.floor(Fraction(pool) / seq_bytes)
        if b < 1:
            raise ValueError("the pool holds no whole sequence")
        result.append((t0 + t1, b / (t0 + b * t1)))
    (one_old, thr_old), (one_new, thr_new) = result
    return {"bandwidth": one_old / one_new, "compute": compute, "capacity": thr_new / thr_old}
