"""An independent correct spec_policy solution: numpy grids over k and the batch.

Written by the kata's author from the prompt, the stub and the public tests only (no blind
helper was available in this session), in the style a candidate who reaches for numpy would
use: expected tokens are ``1 + cumsum(cumprod(rates))``; every policy evaluates a grid of
speedups (draft lengths x batch sizes) in float64 at once and applies the tolerance to the
grid; the per-request policy sorts the requests once per k (stable argsort) and takes a
cumulative sum over m. Returns numpy scalars where numpy computes them (np.float64, np.int64
inside lists), which the harness must carry like Python numbers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

EPS = 1e-9
NAMES = ("weight_bytes", "flops_per_token", "kv_bytes_per_token", "bandwidth", "peak_flops",
         "overhead_s")


def _real(x: Any) -> bool:
    return type(x) in (int, float) and math.isfinite(x)


def _ints(x: Any, floor: int, what: str) -> int:
    if type(x) is not int or x < floor:
        raise ValueError(f"{what}: expected an int >= {floor}, got {x!r}")
    return x


def _vec(accept: Any, need: int) -> np.ndarray:
    if not isinstance(accept, (list, tuple)) or not all(_real(a) and 0 <= a <= 1 for a in accept):
        raise ValueError(f"acceptance rates must be numbers in [0, 1]: {accept!r}")
    if len(accept) < need:
        raise ValueError(f"{need} draft positions need {need} rates, got {len(accept)}")
    return np.array(accept, dtype=np.float64)


def _e(v: np.ndarray, max_k: int) -> np.ndarray:
    """E(k) for k = 0..max_k."""
    return np.concatenate(([1.0], 1.0 + np.cumsum(np.cumprod(v[:max_k]))))


def _st(stage: Any, target: bool = False) -> np.ndarray:
    if not isinstance(stage, dict) or any(n not in stage for n in NAMES):
        raise ValueError(f"a stage needs the keys {NAMES}")
    vals = [stage[n] for n in NAMES]
    if not all(_real(v) and v >= 0 for v in vals) or vals[3] <= 0 or vals[4] <= 0:
        raise ValueError(f"bad stage values: {stage!r}")
    if target and vals[0] == vals[1] == vals[5] == 0:
        raise ValueError("a target pass must take some time")
    return np.array(vals, dtype=np.float64)


def _pass(s: np.ndarray, seqs: Any, tokens: Any, ctx: int) -> Any:
    w, f, kv, bw, pk, oh = s
    return oh + np.maximum(tokens * f / pk, (w + seqs * ctx * kv) / bw)


def _grid(t: np.ndarray, d: np.ndarray, e: np.ndarray, batches: np.ndarray, ctx: int) -> np.ndarray:
    """Speedups, shape (len(e), len(batches)): row k, column batch."""
    k = np.arange(len(e))[:, None]
    b = batches[None, :].astype(np.float64)
    plain = _pass(t, b, b, ctx)
    step = _pass(t, b, b * (k + 1), ctx) + k * _pass(d, b, b, ctx)
    return e[:, None] * plain / step


def _first_at_top(v: np.ndarray) -> int:
    return int(np.argmax(v >= v.max() * (1 - EPS)))


def expected_tokens(accept: Sequence[float], k: int) -> float:
    k = _ints(k, 0, "k")
    return _e(_vec(accept, k), k)[k]


def stage_from_config(cfg: dict[str, Any], gpu: dict[str, Any], tp: int, weight_bytes: float,
                      kv_bytes: float, dtype: str = "bf16",
                      overhead_s: float = 0.0) -> dict[str, float]:
    if not isinstance(cfg, dict) or not isinstance(gpu, dict):
        raise ValueError("cfg and gpu must be dicts")
    if cfg.get("kv_lora_rank") is not None or any(
            cfg.get(x) for x in ("num_experts", "num_local_experts", "n_routed_experts")):
        raise ValueError("only dense, non-MLA configs")
    for x in (weight_bytes, kv_bytes, overhead_s):
        if not _real(x) or x < 0:
            raise ValueError(f"bad size or overhead {x!r}")
    tp = _ints(tp, 1, "tp")
    hid = _ints(cfg.get("hidden_size"), 1, "hidden_size")
    nl = _ints(cfg.get("num_hidden_layers"), 1, "num_hidden_layers")
    nq = _ints(cfg.get("num_attention_heads"), 1, "num_attention_heads")
    nkv = cfg.get("num_key_value_heads")
    nkv = nq if nkv is None else _ints(nkv, 1, "num_key_value_heads")
    hd = cfg.get("head_dim")
    hd = hid // nq if hd is None else _ints(hd, 1, "head_dim")
    ff = _ints(cfg.get("intermediate_size"), 1, "intermediate_size")
    voc = _ints(cfg.get("vocab_size"), 1, "vocab_size")
    if nq % tp or not (nkv % tp == 0 or tp % nkv == 0):
        raise ValueError("tp must split the query heads and the KV heads")
    try:
        dense = gpu["tensor_tflops"][dtype]["dense"]
        bw = gpu["memory_bandwidth_gb_s"]
    except (KeyError, TypeError):
        raise ValueError(f"no dense {dtype} figure or bandwidth") from None
    if not (_real(dense) and dense > 0 and _real(bw) and bw > 0):
        raise ValueError("bad datasheet figures")
    n_params = nl * (2 * hid * hd * (nq + nkv) + 3 * hid * ff) + voc * hid
    return {"weight_bytes": n_params * weight_bytes / tp, "flops_per_token": 2 * n_params / tp,
            "kv_bytes_per_token": float(2 * nl * max(1, nkv // tp) * hd * kv_bytes),
            "bandwidth": bw * 1e9, "peak_flops": dense * 1e12, "overhead_s": float(overhead_s)}


def pass_time_s(stage: dict[str, float], num_seqs: int, num_tokens: int, ctx_len: int) -> float:
    s = _st(stage)
    n = _ints(num_seqs, 1, "num_seqs")
    return float(_pass(s, n, _ints(num_tokens, n, "num_tokens"), _ints(ctx_len, 0, "ctx_len")))


def speedup(target: dict[str, float], drafter: dict[str, float], accept: Sequence[float], k: int,
            batch: int, ctx_len: int) -> float:
    t, d = _st(target, True), _st(drafter)
    k = _ints(k, 0, "k")
    e = _e(_vec(accept, k), k)
    b = np.array([_ints(batch, 1, "batch")])
    return _grid(t, d, e, b, _ints(ctx_len, 0, "ctx_len"))[k, 0]


def best_draft_length(target: dict[str, float], drafter: dict[str, float],
                      accept: Sequence[float], max_k: int, batch: int, ctx_len: int) -> int:
    t, d = _st(target, True), _st(drafter)
    max_k = _ints(max_k, 0, "max_k")
    e = _e(_vec(accept, max_k), max_k)
    g = _grid(t, d, e, np.array([_ints(batch, 1, "batch")]), _ints(ctx_len, 0, "ctx_len"))
    return _first_at_top(g[:, 0])


def bucket_draft_lengths(target: dict[str, float], drafter: dict[str, float],
                         accept: Sequence[float], max_k: int, bucket_edges: Sequence[int],
                         ctx_len: int) -> list[int]:
    t, d = _st(target, True), _st(drafter)
    max_k = _ints(max_k, 0, "max_k")
    e = _e(_vec(accept, max_k), max_k)
    ctx = _ints(ctx_len, 0, "ctx_len")
    if not isinstance(bucket_edges, (list, tuple)) or not bucket_edges:
        raise ValueError("bucket_edges: a non-empty list")
    edges = [_ints(x, 1, "bucket edge") for x in bucket_edges]
    if any(np.diff(edges) <= 0):
        raise ValueError("bucket edges must strictly increase")
    g = _grid(t, d, e, np.arange(1, edges[-1] + 1), ctx)     # column b - 1 is batch b
    starts = [0, *edges[:-1]]
    return [_first_at_top(g[:, lo:hi].min(axis=1)) for lo, hi in zip(starts, edges)]


def flip_batch(target: dict[str, float], drafter_a: dict[str, float], accept_a: Sequence[float],
               drafter_b: dict[str, float], accept_b: Sequence[float], max_k: int, lo: int,
               hi: int, ctx_len: int) -> int | None:
    t, da, db = _st(target, True), _st(drafter_a), _st(drafter_b)
    max_k = _ints(max_k, 0, "max_k")
    ea, eb = _e(_vec(accept_a, max_k), max_k), _e(_vec(accept_b, max_k), max_k)
    lo = _ints(lo, 1, "lo")
    hi = _ints(hi, lo, "hi")
    ctx = _ints(ctx_len, 0, "ctx_len")
    batches = np.arange(lo, hi + 1)
    b_wins = _grid(t, db, eb, batches, ctx).max(axis=0) > \
        _grid(t, da, ea, batches, ctx).max(axis=0) * (1 + EPS)
    changed = np.nonzero(b_wins != b_wins[0])[0]
    return int(batches[changed[0]]) if len(changed) else None


def per_request_draft_lengths(target: dict[str, float], drafter: dict[str, float],
                              accepts: Sequence[Sequence[float]], max_k: int,
                              ctx_len: int) -> list[int]:
    t, d = _st(target, True), _st(drafter)
    max_k = _ints(max_k, 0, "max_k")
    ctx = _ints(ctx_len, 0, "ctx_len")
    if not isinstance(accepts, (list, tuple)) or not accepts:
        raise ValueError("accepts: a non-empty list of acceptance vectors")
    E = np.stack([_e(_vec(a, max_k), max_k) for a in accepts])     # (n, max_k + 1)
    n = len(accepts)
    rates = [n / _pass(t, n, n, ctx)]
    picks: list[tuple[int, np.ndarray]] = [(0, np.array([], dtype=int))]
    m = np.arange(1, n + 1)
    for k in range(1, max_k + 1):
        order = np.argsort(-E[:, k], kind="stable")
        tokens = n - m + np.cumsum(E[order, k])
        step = _pass(t, n, n + m * k, ctx) + k * _pass(d, m, m, ctx)
        rates.extend(tokens / step)
        picks.extend((k, order[:j]) for j in m)
    k, chosen = picks[_first_at_top(np.array(rates))]
    out = np.zeros(n, dtype=np.int64)
    out[chosen] = k
    return list(out)
