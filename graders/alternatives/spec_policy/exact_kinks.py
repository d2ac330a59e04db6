"""An independent correct spec_policy solution: exact arithmetic and the kinks of the step model.

Written by the kata's author from the prompt and the stub, as a second, differently built
solution (no blind helper was available in this session). It differs from the reference:

- every quantity is a ``fractions.Fraction`` of the inputs, so ties are exact and the 1e-9
  tolerance is applied to exact values;
- expected tokens come from a Horner-style nesting, E = 1 + a1 (1 + a2 (1 + ...));
- a bucket's worst speedup is found without visiting every batch: each pass time is
  overhead + the max of two lines in the batch, so between the batches where a max switches
  lines the speedup is a ratio of two lines, monotone; the worst is at a bucket end or next
  to a switch point;
- the per-request policy walks m for each k with a running sum over requests sorted once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

TOL = Fraction(1, 10**9)
FIELDS = ("weight_bytes", "flops_per_token", "kv_bytes_per_token", "bandwidth", "peak_flops",
          "overhead_s")


class _Bad(ValueError):
    pass


def _number(x: Any, what: str) -> Fraction:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise _Bad(f"{what}: not a number: {x!r}")
    if isinstance(x, float) and not math.isfinite(x):
        raise _Bad(f"{what}: not finite: {x!r}")
    if x < 0:
        raise _Bad(f"{what}: negative: {x!r}")
    return Fraction(x)


def _count(x: Any, what: str, least: int) -> int:
    if type(x) is not int or x < least:
        raise _Bad(f"{what} must be an int >= {least}, got {x!r}")
    return x


def _accept(v: Any, need: int) -> list[Fraction]:
    if not isinstance(v, (list, tuple)):
        raise _Bad(f"acceptance rates must be a list, got {v!r}")
    out = [_number(a, "acceptance rate") for a in v]
    if any(a > 1 for a in out):
        raise _Bad("acceptance rates must be at most 1")
    if len(out) < need:
        raise _Bad(f"need {need} acceptance rates, got {len(out)}")
    return out


class _Stage:
    def __init__(self, raw: Any, target: bool = False) -> None:
        if not isinstance(raw, dict):
            raise _Bad("a stage is a dict")
        for f in FIELDS:
            if f not in raw:
                raise _Bad(f"stage without {f}")
        v = {f: _number(raw[f], f) for f in FIELDS}
        if v["bandwidth"] == 0 or v["peak_flops"] == 0:
            raise _Bad("bandwidth and peak_flops must be positive")
        if target and not (v["weight_bytes"] or v["flops_per_token"] or v["overhead_s"]):
            raise _Bad("the target's passes would take no time")
        self.over = v["overhead_s"]
        self.per_token = v["flops_per_token"] / v["peak_flops"]     # seconds per token scored
        self.fixed = v["weight_bytes"] / v["bandwidth"]             # seconds of weights
        self.per_ctx = v["kv_bytes_per_token"] / v["bandwidth"]     # seconds per context token

    def time(self, seqs: int, tokens: int, ctx: int) -> Fraction:
        return self.over + max(tokens * self.per_token, self.fixed + seqs * ctx * self.per_ctx)

    def switch(self, tokens_per_seq: int, ctx: int) -> Fraction | None:
        """The batch where a pass of ``tokens_per_seq`` tokens a sequence turns compute-bound."""
        slope = tokens_per_seq * self.per_token - ctx * self.per_ctx
        return self.fixed / slope if slope > 0 else None


def _E(rates: Sequence[Fraction], k: int) -> Fraction:
    e = Fraction(1)
    for a in reversed(rates[:k]):
        e = 1 + a * e
    return e


def _speed(t: _Stage, d: _Stage, rates: Sequence[Fraction], k: int, b: int, ctx: int) -> Fraction:
    if k == 0:
        return Fraction(1)
    step = k * d.time(b, b, ctx) + t.time(b, b * (k + 1), ctx)
    return _E(rates, k) * t.time(b, b, ctx) / step


def _pick(values: Sequence[Fraction]) -> int:
    best = max(values)
    for i, v in enumerate(values):
        if v >= best * (1 - TOL):
            return i
    raise AssertionError("unreachable")


def expected_tokens(accept: Sequence[float], k: int) -> float:
    k = _count(k, "k", 0)
    return float(_E(_accept(accept, k), k))


def stage_from_config(cfg: dict[str, Any], gpu: dict[str, Any], tp: int, weight_bytes: float,
                      kv_bytes: float, dtype: str = "bf16",
                      overhead_s: float = 0.0) -> dict[str, float]:
    if not isinstance(cfg, dict) or not isinstance(gpu, dict):
        raise _Bad("cfg and gpu are dicts")
    if cfg.get("kv_lora_rank") is not None:
        raise _Bad("MLA is out of scope")
    for key in ("num_experts", "num_local_experts", "n_routed_experts"):
        if cfg.get(key):
            raise _Bad("MoE is out of scope")
    tp = _count(tp, "tp", 1)
    h = _count(cfg.get("hidden_size"), "hidden_size", 1)
    n_layers = _count(cfg.get("num_hidden_layers"), "num_hidden_layers", 1)
    q = _count(cfg.get("num_attention_heads"), "num_attention_heads", 1)
    kv_raw = cfg.get("num_key_value_heads")
    kv = q if kv_raw is None else _count(kv_raw, "num_key_value_heads", 1)
    d = h // q if cfg.get("head_dim") is None else _count(cfg["head_dim"], "head_dim", 1)
    inter = _count(cfg.get("intermediate_size"), "intermediate_size", 1)
    vocab = _count(cfg.get("vocab_size"), "vocab_size", 1)
    if q % tp != 0 or (kv % tp != 0 and tp % kv != 0):
        raise _Bad(f"tp {tp} does not split the heads")
    wb, kb, oh = _number(weight_bytes, "weight_bytes"), _number(kv_bytes, "kv_bytes"), \
        _number(overhead_s, "overhead_s")
    table = gpu.get("tensor_tflops")
    entry = table.get(dtype) if isinstance(table, dict) else None
    if not isinstance(entry, dict) or "dense" not in entry:
        raise _Bad(f"no dense {dtype} peak")
    peak = _number(entry["dense"], "dense peak")
    bw = _number(gpu.get("memory_bandwidth_gb_s"), "memory_bandwidth_gb_s")
    if peak == 0 or bw == 0:
        raise _Bad("peak and bandwidth must be positive")
    layer = 2 * h * d * q + 2 * h * d * kv + 3 * h * inter
    params = n_layers * layer + vocab * h
    heads = kv // tp if kv >= tp else 1
    return {"weight_bytes": float(params * wb / tp),
            "flops_per_token": float(Fraction(2 * params, tp)),
            "kv_bytes_per_token": float(2 * n_layers * heads * d * kb),
            "bandwidth": float(bw * 10**9), "peak_flops": float(peak * 10**12),
            "overhead_s": float(oh)}


def pass_time_s(stage: dict[str, float], num_seqs: int, num_tokens: int, ctx_len: int) -> float:
    s = _Stage(stage)
    seqs = _count(num_seqs, "num_seqs", 1)
    tokens = _count(num_tokens, "num_tokens", seqs)
    return float(s.time(seqs, tokens, _count(ctx_len, "ctx_len", 0)))


def speedup(target: dict[str, float], drafter: dict[str, float], accept: Sequence[float], k: int,
            batch: int, ctx_len: int) -> float:
    t, d = _Stage(target, True), _Stage(drafter)
    k = _count(k, "k", 0)
    rates = _accept(accept, k)
    return float(_speed(t, d, rates, k, _count(batch, "batch", 1), _count(ctx_len, "ctx_len", 0)))


def best_draft_length(target: dict[str, float], drafter: dict[str, float],
                      accept: Sequence[float], max_k: int, batch: int, ctx_len: int) -> int:
    t, d = _Stage(target, True), _Stage(drafter)
    max_k = _count(max_k, "max_k", 0)
    rates = _accept(accept, max_k)
    b, c = _count(batch, "batch", 1), _count(ctx_len, "ctx_len", 0)
    return _pick([_speed(t, d, rates, k, b, c) for k in range(max_k + 1)])


def _candidates(t: _Stage, d: _Stage, k: int, lo: int, hi: int, ctx: int) -> set[int]:
    """The bucket's ends and the integer batches next to every switch point inside it."""
    out = {lo, hi}
    for x in (t.switch(1, ctx), t.switch(k + 1, ctx), d.switch(1, ctx)):
        if x is not None:
            for b in (math.floor(x), math.ceil(x)):
                if lo <= b <= hi:
                    out.add(b)
    return out


def bucket_draft_lengths(target: dict[str, float], drafter: dict[str, float],
                         accept: Sequence[float], max_k: int, bucket_edges: Sequence[int],
                         ctx_len: int) -> list[int]:
    t, d = _Stage(target, True), _Stage(drafter)
    max_k = _count(max_k, "max_k", 0)
    rates = _accept(accept, max_k)
    ctx = _count(ctx_len, "ctx_len", 0)
    if not isinstance(bucket_edges, (list, tuple)) or len(bucket_edges) == 0:
        raise _Bad("bucket_edges must be a non-empty list")
    previous = 0
    spans = []
    for e in bucket_edges:
        e = _count(e, "bucket edge", 1)
        if e <= previous:
            raise _Bad("bucket edges must strictly increase")
        spans.append((previous + 1, e))
        previous = e
    table = []
    for lo, hi in spans:
        worst = [min(_speed(t, d, rates, k, b, ctx) for b in _candidates(t, d, k, lo, hi, ctx))
                 for k in range(max_k + 1)]
        table.append(_pick(worst))
    return table


def flip_batch(target: dict[str, float], drafter_a: dict[str, float], accept_a: Sequence[float],
               drafter_b: dict[str, float], accept_b: Sequence[float], max_k: int, lo: int,
               hi: int, ctx_len: int) -> int | None:
    t, da, db = _Stage(target, True), _Stage(drafter_a), _Stage(drafter_b)
    max_k = _count(max_k, "max_k", 0)
    ra, rb = _accept(accept_a, max_k), _accept(accept_b, max_k)
    lo = _count(lo, "lo", 1)
    hi = _count(hi, "hi", lo)
    ctx = _count(ctx_len, "ctx_len", 0)

    def winner(b: int) -> str:
        sa = max(_speed(t, da, ra, k, b, ctx) for k in range(max_k + 1))
        sb = max(_speed(t, db, rb, k, b, ctx) for k in range(max_k + 1))
        return "b" if sb > sa * (1 + TOL) else "a"

    start = winner(lo)
    for b in range(lo + 1, hi + 1):
        if winner(b) != start:
            return b
    return None


def per_request_draft_lengths(target: dict[str, float], drafter: dict[str, float],
                              accepts: Sequence[Sequence[float]], max_k: int,
                              ctx_len: int) -> list[int]:
    t, d = _Stage(target, True), _Stage(drafter)
    max_k = _count(max_k, "max_k", 0)
    ctx = _count(ctx_len, "ctx_len", 0)
    if not isinstance(accepts, (list, tuple)) or len(accepts) == 0:
        raise _Bad("accepts must be a non-empty list")
    vectors = [_accept(v, max_k) for v in accepts]
    n = len(vectors)
    rate = {(0, 0): Fraction(n) / t.time(n, n, ctx)}
    order: dict[int, list[int]] = {0: []}
    for k in range(1, max_k + 1):
        e = [_E(v, k) for v in vectors]
        order[k] = sorted(range(n), key=lambda i: (-e[i], i))
        tokens = Fraction(n)
        for m in range(1, n + 1):
            tokens += e[order[k][m - 1]] - 1
            step = k * d.time(m, m, ctx) + t.time(n, n + m * k, ctx)
            rate[(k, m)] = tokens / step
    best = max(rate.values())
    k, m = min(key for key, v in rate.items() if v >= best * (1 - TOL))
    drafting = set(order[k][:m])
    return [k if i in drafting else 0 for i in range(n)]
