"""Reference solution for the spec_policy kata: when speculative decoding pays.

Closed forms where the prompt gives one (expected tokens, the step model), plain scans over
the few candidates elsewhere (k in 0..max_k, the batch sizes of a bucket or a range, the
number of requests that draft).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

REL = 1e-9
STAGE_KEYS = ("weight_bytes", "flops_per_token", "kv_bytes_per_token",
              "bandwidth", "peak_flops", "overhead_s")


# ------------------------------------------------------------------ checks
def _num(name: str, value: Any, *, positive: bool = False) -> float:
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
    if not ok or (value <= 0 if positive else value < 0):
        raise ValueError(f"{name} must be a {'positive' if positive else 'non-negative'} "
                         f"finite int or float, got {value!r}")
    return float(value)


def _int(name: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    return value


def _rates(accept: Any, need: int) -> list[float]:
    if not isinstance(accept, (list, tuple)):
        raise ValueError(f"acceptance rates must be a list of numbers, got {accept!r}")
    rates = [_num("acceptance rate", a) for a in accept]
    if any(a > 1 for a in rates):
        raise ValueError(f"acceptance rates must lie in [0, 1], got {list(accept)!r}")
    if len(rates) < need:
        raise ValueError(f"{len(rates)} acceptance rates cannot price {need} draft positions")
    return rates


def _stage(stage: Any) -> dict[str, float]:
    if not isinstance(stage, dict):
        raise ValueError(f"a stage is a dict with keys {STAGE_KEYS}, got {stage!r}")
    missing = [k for k in STAGE_KEYS if k not in stage]
    if missing:
        raise ValueError(f"stage lacks {missing}")
    return {k: _num(k, stage[k], positive=k in ("bandwidth", "peak_flops")) for k in STAGE_KEYS}


# ------------------------------------------------------------------ closed forms
def _target(stage: Any) -> dict[str, float]:
    t = _stage(stage)
    if not (t["weight_bytes"] or t["flops_per_token"] or t["overhead_s"]):
        raise ValueError("a target whose passes take no time has no speedup")
    return t


def _expected(rates: Sequence[float], k: int) -> float:
    total, reach = 1.0, 1.0
    for a in rates[:k]:
        reach *= a
        total += reach
    return total


def expected_tokens(accept: Sequence[float], k: int) -> float:
    rates = _rates(accept, _int("k", k, 0))
    return _expected(rates, k)


def stage_from_config(cfg: dict[str, Any], gpu: dict[str, Any], tp: int, weight_bytes: float,
                      kv_bytes: float, dtype: str = "bf16",
                      overhead_s: float = 0.0) -> dict[str, float]:
    if not isinstance(cfg, dict) or not isinstance(gpu, dict):
        raise ValueError("cfg and gpu must be dicts")
    if cfg.get("kv_lora_rank") is not None:
        raise ValueError("MLA configs are out of scope: build their stage by hand")
    if any(cfg.get(k) for k in ("num_experts", "num_local_experts", "n_routed_experts")):
        raise ValueError("MoE configs are out of scope: build their stage by hand")
    h = _int("hidden_size", cfg.get("hidden_size"), 1)
    layers = _int("num_hidden_layers", cfg.get("num_hidden_layers"), 1)
    q = _int("num_attention_heads", cfg.get("num_attention_heads"), 1)
    kv_raw = cfg.get("num_key_value_heads")
    kv = q if kv_raw is None else _int("num_key_value_heads", kv_raw, 1)
    d_raw = cfg.get("head_dim")
    d = h // q if d_raw is None else _int("head_dim", d_raw, 1)
    inter = _int("intermediate_size", cfg.get("intermediate_size"), 1)
    vocab = _int("vocab_size", cfg.get("vocab_size"), 1)
    tp = _int("tp", tp, 1)
    if q % tp or (kv % tp and tp % kv):
        raise ValueError(f"tp={tp} does not split {q} query heads and {kv} KV heads")
    wb = _num("weight_bytes", weight_bytes)
    kvb = _num("kv_bytes", kv_bytes)
    try:
        peak = _num(f"dense {dtype} TFLOP/s", gpu["tensor_tflops"][dtype]["dense"], positive=True)
    except (KeyError, TypeError):
        raise ValueError(f"the GPU entry gives no dense {dtype!r} figure") from None
    bw = _num("memory_bandwidth_gb_s", gpu.get("memory_bandwidth_gb_s"), positive=True)
    params = layers * (2 * h * d * (q + kv) + 3 * h * inter) + vocab * h
    return {
        "weight_bytes": params * wb / tp,
        "flops_per_token": 2.0 * params / tp,
        "kv_bytes_per_token": 2.0 * layers * max(1, kv // tp) * d * kvb,
        "bandwidth": bw * 1e9,
        "peak_flops": peak * 1e12,
        "overhead_s": _num("overhead_s", overhead_s),
    }


def _pass(s: dict[str, float], seqs: int, tokens: int, ctx: int) -> float:
    compute = tokens * s["flops_per_token"] / s["peak_flops"]
    memory = (s["weight_bytes"] + seqs * ctx * s["kv_bytes_per_token"]) / s["bandwidth"]
    return s["overhead_s"] + max(compute, memory)


def pass_time_s(stage: dict[str, float], num_seqs: int, num_tokens: int, ctx_len: int) -> float:
    s = _stage(stage)
    seqs = _int("num_seqs", num_seqs, 1)
    tokens = _int("num_tokens", num_tokens, seqs)
    return _pass(s, seqs, tokens, _int("ctx_len", ctx_len, 0))


def _step(t: dict[str, float], d: dict[str, float], batch: int, drafting: int, k: int,
          ctx: int) -> float:
    """One verification step: the target scores batch + drafting * k tokens, the drafter runs
    k passes over the drafting sequences."""
    verify = _pass(t, batch, batch + drafting * k, ctx)
    return verify + (k * _pass(d, drafting, drafting, ctx) if drafting and k else 0.0)


def _speedups(t: dict[str, float], d: dict[str, float], rates: Sequence[float], max_k: int,
              batch: int, ctx: int) -> list[float]:
    plain = _pass(t, batch, batch, ctx)
    return [_expected(rates, k) * plain / _step(t, d, batch, batch, k, ctx)
            for k in range(max_k + 1)]


def _first_best(values: Sequence[float]) -> int:
    """The first index whose value is within REL (relative) of the largest."""
    top = max(values)
    return next(i for i, v in enumerate(values) if v >= top * (1 - REL))


# ------------------------------------------------------------------ policies
def speedup(target: dict[str, float], drafter: dict[str, float], accept: Sequence[float], k: int,
            batch: int, ctx_len: int) -> float:
    t, d = _target(target), _stage(drafter)
    rates = _rates(accept, _int("k", k, 0))
    return _speedups(t, d, rates, k, _int("batch", batch, 1), _int("ctx_len", ctx_len, 0))[k]


def best_draft_length(target: dict[str, float], drafter: dict[str, float],
                      accept: Sequence[float], max_k: int, batch: int, ctx_len: int) -> int:
    t, d = _target(target), _stage(drafter)
    rates = _rates(accept, _int("max_k", max_k, 0))
    return _first_best(_speedups(t, d, rates, max_k, _int("batch", batch, 1),
                                 _int("ctx_len", ctx_len, 0)))


def bucket_draft_lengths(target: dict[str, float], drafter: dict[str, float],
                         accept: Sequence[float], max_k: int, bucket_edges: Sequence[int],
                         ctx_len: int) -> list[int]:
    t, d = _target(target), _stage(drafter)
    rates = _rates(accept, _int("max_k", max_k, 0))
    ctx = _int("ctx_len", ctx_len, 0)
    if not isinstance(bucket_edges, (list, tuple)) or not bucket_edges:
        raise ValueError(f"bucket_edges must be a non-empty list of ints, got {bucket_edges!r}")
    edges = [_int("bucket edge", e, 1) for e in bucket_edges]
    if any(b <= a for a, b in zip(edges, edges[1:])):
        raise ValueError(f"bucket edges must strictly increase, got {edges}")
    table = []
    for lo, hi in zip([0, *edges], edges):
        worst = [min(col) for col in zip(*(_speedups(t, d, rates, max_k, b, ctx)
                                           for b in range(lo + 1, hi + 1)))]
        table.append(_first_best(worst))
    return table


def flip_batch(target: dict[str, float], drafter_a: dict[str, float], accept_a: Sequence[float],
               drafter_b: dict[str, float], accept_b: Sequence[float], max_k: int, lo: int,
               hi: int, ctx_len: int) -> int | None:
    t, da, db = _target(target), _stage(drafter_a), _stage(drafter_b)
    max_k = _int("max_k", max_k, 0)
    ra, rb = _rates(accept_a, max_k), _rates(accept_b, max_k)
    lo = _int("lo", lo, 1)
    hi = _int("hi", hi, lo)
    ctx = _int("ctx_len", ctx_len, 0)

    def b_wins(batch: int) -> bool:
        best_a = max(_speedups(t, da, ra, max_k, batch, ctx))
        best_b = max(_speedups(t, db, rb, max_k, batch, ctx))
        return best_b > best_a * (1 + REL)

    first = b_wins(lo)
    return next((b for b in range(lo + 1, hi + 1) if b_wins(b) != first), None)


def per_request_draft_lengths(target: dict[str, float], drafter: dict[str, float],
                              accepts: Sequence[Sequence[float]], max_k: int,
                              ctx_len: int) -> list[int]:
    t, d = _target(target), _stage(drafter)
    max_k = _int("max_k", max_k, 0)
    ctx = _int("ctx_len", ctx_len, 0)
    if not isinstance(accepts, (list, tuple)) or not accepts:
        raise ValueError(f"accepts must be a non-empty list of acceptance vectors, got {accepts!r}")
    rates = [_rates(a, max_k) for a in accepts]
    batch = len(rates)
    # options[(k, m)] = (tokens per step / step time, the m requests that draft)
    options: list[tuple[float, int, int, list[int]]] = [
        (batch / _pass(t, batch, batch, ctx), 0, 0, [])]
    for k in range(1, max_k + 1):
        gains = [_expected(r, k) for r in rates]
        order = sorted(range(batch), key=lambda i: (-gains[i], i))
        tokens = float(batch)
        for m in range(1, batch + 1):
            tokens += gains[order[m - 1]] - 1
            options.append((tokens / _step(t, d, batch, m, k, ctx), k, m, order[:m]))
    best = _first_best([o[0] for o in options])      # options run in (k, m) order
    _, k, _, chosen = options[best]
    return [k if i in chosen else 0 for i in range(batch)]
