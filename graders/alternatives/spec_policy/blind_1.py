"""spec_policy: an independent correct solution, written blind.

Written by a blind tester session, 2026-12-04, from the prompt, stub and public tests only
(it saw neither the reference nor the hidden tests); kept as the tester wrote it, untyped,
with only this docstring changed.

How it differs from the reference (solutions/spec_policy.py):

- a speedup is computed one k at a time (the reference builds the list over 0..max_k per
  batch), with k = 0 returned as exactly 1.0 without pricing a step;
- stages and rates are validated and then used as given (an int stays an int in the
  arithmetic), where the reference copies every stage value and rate to a float first;
  ``stage_from_config`` gathers the config fields under one KeyError guard;
- the bucket table walks each bucket's batches per k (a list over k of minima over the
  batches, where the reference transposes a batch-major grid); ``flip_batch`` names the
  winner "a" or "b" per batch; the per-request options carry (k, m, rate, chosen) and the
  drafting set is written by index.
"""
from __future__ import annotations

import math

KEYS = ("weight_bytes", "flops_per_token", "kv_bytes_per_token", "bandwidth", "peak_flops",
        "overhead_s")
TOL = 1e-9


def _num(x, what):
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ValueError(f"{what}: not a number: {x!r}")
    if not math.isfinite(x):
        raise ValueError(f"{what}: not finite: {x!r}")
    return x


def _count(x, what, lo=None):
    if isinstance(x, bool) or not isinstance(x, int):
        raise ValueError(f"{what}: not an int: {x!r}")
    if lo is not None and x < lo:
        raise ValueError(f"{what}: below {lo}: {x!r}")
    return x


def _accept(a, need, what="accept"):
    if not isinstance(a, (list, tuple)):
        raise ValueError(f"{what}: not a list or tuple")
    for i, r in enumerate(a):
        _num(r, f"{what}[{i}]")
        if r < 0 or r > 1:
            raise ValueError(f"{what}[{i}] outside [0, 1]: {r!r}")
    if len(a) < need:
        raise ValueError(f"{what}: {len(a)} rates, {need} needed")
    return a


def _stage(s, what="stage", target=False):
    if not isinstance(s, dict):
        raise ValueError(f"{what}: not a dict")
    for k in KEYS:
        if k not in s:
            raise ValueError(f"{what}: lacks {k}")
        _num(s[k], f"{what}[{k}]")
        if s[k] < 0:
            raise ValueError(f"{what}[{k}] negative")
    if s["bandwidth"] == 0 or s["peak_flops"] == 0:
        raise ValueError(f"{what}: zero bandwidth or peak_flops")
    if target and s["weight_bytes"] == 0 and s["flops_per_token"] == 0 and s["overhead_s"] == 0:
        raise ValueError(f"{what}: target passes take no time")
    return s


def _e(accept, k):
    total, reach = 1.0, 1.0
    for i in range(k):
        reach *= accept[i]
        total += reach
    return total


def expected_tokens(accept, k):
    _count(k, "k", 0)
    _accept(accept, k)
    return _e(accept, k)


def stage_from_config(cfg, gpu, tp, weight_bytes, kv_bytes, dtype="bf16", overhead_s=0.0):
    if not isinstance(cfg, dict) or not isinstance(gpu, dict):
        raise ValueError("cfg and gpu must be dicts")
    _count(tp, "tp", 1)
    _num(weight_bytes, "weight_bytes")
    _num(kv_bytes, "kv_bytes")
    _num(overhead_s, "overhead_s")
    if weight_bytes < 0 or kv_bytes < 0 or overhead_s < 0:
        raise ValueError("negative bytes or overhead")
    for key in ("num_experts", "num_local_experts", "n_routed_experts"):
        if cfg.get(key):
            raise ValueError(f"MoE config ({key})")
    if cfg.get("kv_lora_rank") is not None:
        raise ValueError("MLA config")
    try:
        H = cfg["hidden_size"]
        L = cfg["num_hidden_layers"]
        q = cfg["num_attention_heads"]
        I = cfg["intermediate_size"]
        V = cfg["vocab_size"]
    except KeyError as e:
        raise ValueError(f"config lacks {e}") from None
    kv = cfg.get("num_key_value_heads")
    if kv is None:
        kv = q
    d = cfg.get("head_dim")
    for name, v in (("hidden_size", H), ("num_hidden_layers", L), ("num_attention_heads", q),
                    ("intermediate_size", I), ("vocab_size", V), ("num_key_value_heads", kv)):
        _count(v, name, 1)
    if d is None:
        d = H // q
    _count(d, "head_dim", 1)
    if q % tp != 0:
        raise ValueError("tp does not divide the query heads")
    if not (kv % tp == 0 or tp % kv == 0):
        raise ValueError("tp neither divides nor is a multiple of the KV heads")
    try:
        bw = gpu["memory_bandwidth_gb_s"]
        peak = gpu["tensor_tflops"][dtype]["dense"]
    except (KeyError, TypeError):
        raise ValueError(f"no dense figure for {dtype!r}") from None
    _num(bw, "memory_bandwidth_gb_s")
    _num(peak, "dense tflops")
    if bw <= 0 or peak <= 0:
        raise ValueError("non-positive GPU figures")
    P = L * (2 * H * d * (q + kv) + 3 * H * I) + V * H
    return {
        "weight_bytes": P * weight_bytes / tp,
        "flops_per_token": 2 * P / tp,
        "kv_bytes_per_token": 2 * L * max(1, kv // tp) * d * kv_bytes,
        "bandwidth": bw * 1e9,
        "peak_flops": peak * 1e12,
        "overhead_s": overhead_s,
    }


def _pass(s, seqs, toks, ctx):
    compute = toks * s["flops_per_token"] / s["peak_flops"]
    memory = (s["weight_bytes"] + seqs * ctx * s["kv_bytes_per_token"]) / s["bandwidth"]
    return s["overhead_s"] + max(compute, memory)


def pass_time_s(stage, num_seqs, num_tokens, ctx_len):
    _stage(stage)
    _count(num_seqs, "num_seqs", 1)
    _count(num_tokens, "num_tokens")
    _count(ctx_len, "ctx_len", 0)
    if num_tokens < num_seqs:
        raise ValueError("num_tokens below num_seqs")
    return _pass(stage, num_seqs, num_tokens, ctx_len)


def _step(t, d, k, B, ctx):
    if k == 0:
        return _pass(t, B, B, ctx)
    return k * _pass(d, B, B, ctx) + _pass(t, B, B * (k + 1), ctx)


def _speedup(t, d, accept, k, B, ctx):
    if k == 0:
        return 1.0
    return _e(accept, k) * _pass(t, B, B, ctx) / _step(t, d, k, B, ctx)


def _first_best(values):
    top = max(values)
    for i, v in enumerate(values):
        if v >= (1 - TOL) * top:
            return i
    raise AssertionError


def _common(target, drafter, ctx_len):
    _stage(target, "target", target=True)
    _stage(drafter, "drafter")
    _count(ctx_len, "ctx_len", 0)


def speedup(target, drafter, accept, k, batch, ctx_len):
    _common(target, drafter, ctx_len)
    _count(k, "k", 0)
    _count(batch, "batch", 1)
    _accept(accept, k)
    return _speedup(target, drafter, accept, k, batch, ctx_len)


def best_draft_length(target, drafter, accept, max_k, batch, ctx_len):
    _common(target, drafter, ctx_len)
    _count(max_k, "max_k", 0)
    _count(batch, "batch", 1)
    _accept(accept, max_k)
    return _first_best([_speedup(target, drafter, accept, k, batch, ctx_len)
                        for k in range(max_k + 1)])


def bucket_draft_lengths(target, drafter, accept, max_k, bucket_edges, ctx_len):
    _common(target, drafter, ctx_len)
    _count(max_k, "max_k", 0)
    _accept(accept, max_k)
    if not isinstance(bucket_edges, (list, tuple)) or len(bucket_edges) == 0:
        raise ValueError("bucket_edges must be a non-empty list")
    prev = 0
    for e in bucket_edges:
        _count(e, "bucket edge", 1)
        if e <= prev:
            raise ValueError("bucket_edges not strictly increasing")
        prev = e
    out = []
    lo = 1
    for hi in bucket_edges:
        worst = [min(_speedup(target, drafter, accept, k, b, ctx_len) for b in range(lo, hi + 1))
                 for k in range(max_k + 1)]
        out.append(_first_best(worst))
        lo = hi + 1
    return out


def flip_batch(target, drafter_a, accept_a, drafter_b, accept_b, max_k, lo, hi, ctx_len):
    _stage(target, "target", target=True)
    _stage(drafter_a, "drafter_a")
    _stage(drafter_b, "drafter_b")
    _count(ctx_len, "ctx_len", 0)
    _count(max_k, "max_k", 0)
    _count(lo, "lo", 1)
    _count(hi, "hi")
    if hi < lo:
        raise ValueError("hi below lo")
    _accept(accept_a, max_k, "accept_a")
    _accept(accept_b, max_k, "accept_b")

    def winner(B):
        a = max(_speedup(target, drafter_a, accept_a, k, B, ctx_len) for k in range(max_k + 1))
        b = max(_speedup(target, drafter_b, accept_b, k, B, ctx_len) for k in range(max_k + 1))
        return "b" if b > a * (1 + TOL) else "a"

    w0 = winner(lo)
    for B in range(lo + 1, hi + 1):
        if winner(B) != w0:
            return B
    return None


def per_request_draft_lengths(target, drafter, accepts, max_k, ctx_len):
    _common(target, drafter, ctx_len)
    _count(max_k, "max_k", 0)
    if not isinstance(accepts, (list, tuple)) or len(accepts) == 0:
        raise ValueError("accepts must be a non-empty list")
    for i, a in enumerate(accepts):
        _accept(a, max_k, f"accepts[{i}]")
    B = len(accepts)
    options = [(0, 0, B / _pass(target, B, B, ctx_len), None)]
    for k in range(1, max_k + 1):
        es = [_e(a, k) for a in accepts]
        order = sorted(range(B), key=lambda r: (-es[r], r))
        dpass = None
        tokens = B
        for m in range(1, B + 1):
            tokens += es[order[m - 1]] - 1
            t = k * _pass(drafter, m, m, ctx_len) + _pass(target, B, B + m * k, ctx_len)
            options.append((k, m, tokens / t, order[:m]))
    best = _first_best([o[2] for o in options])
    k, m, _, chosen = options[best]
    out = [0] * B
    if k:
        for r in chosen:
            out[r] = k
    return out
