"""An independent correct roofline solution, written from the prompt and the stub only.

Written by the kata's author as a second, differently structured solution (no helper agent
was available): parameters are summed layer by layer, the experts touched use
expm1/log1p, the crossover is a plain upward scan (what does not change from one length
to the next computed once), and validation is done once per entry
point with assertions turned into ValueError.
"""

from __future__ import annotations

import math
from typing import Any

BYTES_PER_GB = 1_000_000_000
BYTES_PER_GIB = 1 << 30


def _check(cond: bool, msg: str) -> None:
    if not cond:
        raise ValueError(msg)


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _pos_int(x: Any, what: str) -> int:
    _check(isinstance(x, int) and not isinstance(x, bool) and x >= 1, f"bad {what}: {x!r}")
    return int(x)


def _nonneg(x: Any, what: str) -> float:
    _check(_is_num(x) and x >= 0, f"bad {what}: {x!r}")
    return float(x)


def _bw(gpu: dict[str, Any]) -> float:
    v = gpu.get("memory_bandwidth_gb_s")
    _check(_is_num(v) and v > 0, "bad bandwidth")
    return float(v) * BYTES_PER_GB


def _flops(gpu: dict[str, Any], dtype: str) -> float:
    entry = (gpu.get("tensor_tflops") or {}).get(dtype) or {}
    v = entry.get("dense")
    _check(_is_num(v) and v > 0, f"no dense {dtype} peak")
    return float(v) * 1e12


def _geo(cfg: dict[str, Any], tp: int = 1) -> dict[str, Any]:
    _check(cfg.get("kv_lora_rank") is None, "MLA not covered")
    g: dict[str, Any] = {}
    g["H"] = _pos_int(cfg.get("hidden_size"), "hidden_size")
    g["L"] = _pos_int(cfg.get("num_hidden_layers"), "layers")
    g["q"] = _pos_int(cfg.get("num_attention_heads"), "heads")
    kv = cfg.get("num_key_value_heads")
    g["kv"] = g["q"] if kv is None else _pos_int(kv, "kv heads")
    hd = cfg.get("head_dim")
    g["d"] = g["H"] // g["q"] if hd is None else _pos_int(hd, "head_dim")
    g["V"] = _pos_int(cfg.get("vocab_size"), "vocab")
    e = 0
    for key in ("num_experts", "num_local_experts", "n_routed_experts"):
        if cfg.get(key):
            e = _pos_int(cfg[key], key)
            break
    g["E"] = e
    if e:
        g["k"] = _pos_int(cfg.get("num_experts_per_tok"), "top k")
        _check(g["k"] <= e, "top k > experts")
        ie = cfg.get("moe_intermediate_size")
        g["Ie"] = _pos_int(ie if ie is not None else cfg.get("intermediate_size"), "expert width")
        g["S"] = cfg.get("n_shared_experts") or 0
        g["first"] = cfg.get("first_k_dense_replace") or 0
    else:
        g["k"] = 0
        g["S"] = 0
        g["first"] = g["L"]
    g["dense_layers"] = min(g["first"], g["L"])
    if g["dense_layers"]:
        g["I"] = _pos_int(cfg.get("intermediate_size"), "intermediate_size")
    tp = _pos_int(tp, "tp")
    _check(g["q"] % tp == 0, "tp must divide the query heads")
    _check(g["kv"] % tp == 0 or tp % g["kv"] == 0, "tp vs kv heads")
    g["kv_gpu"] = g["kv"] // tp if tp <= g["kv"] else 1
    return g


def _layer_params(g: dict[str, Any], i: int, experts: float) -> float:
    p = 2.0 * g["H"] * g["d"] * g["q"] + 2.0 * g["H"] * g["d"] * g["kv"]
    if i < g["dense_layers"]:
        return p + 3.0 * g["H"] * g["I"]
    return p + g["H"] * g["E"] + (g["S"] + experts) * 3.0 * g["H"] * g["Ie"]


def _params(g: dict[str, Any], experts: float) -> float:
    return sum(_layer_params(g, i, experts) for i in range(g["L"]))


def ridge_point(gpu: dict[str, Any], dtype: str) -> float:
    return _flops(gpu, dtype) / _bw(gpu)


def expected_experts_touched(num_experts: int, top_k: int, num_tokens: int) -> float:
    e = _pos_int(num_experts, "num_experts")
    k = _pos_int(top_k, "top_k")
    _check(k <= e, "top_k > num_experts")
    _check(isinstance(num_tokens, int) and not isinstance(num_tokens, bool) and num_tokens >= 0,
           "num_tokens")
    if num_tokens == 0:
        return 0.0
    if k == e:
        return float(e)
    return -e * math.expm1(num_tokens * math.log1p(-k / e))


def _read(g: dict[str, Any], tokens: int) -> float:
    ex = expected_experts_touched(g["E"], g["k"], tokens) if g["E"] else 0.0
    return _params(g, ex) + g["V"] * g["H"]


def weight_bytes_read(cfg: dict[str, Any], num_tokens: int, weight_bytes: float) -> float:
    return _read(_geo(cfg), _pos_int(num_tokens, "num_tokens")) * _nonneg(weight_bytes, "wb")


def _prefill(g: dict[str, Any], n: int, wb: float) -> tuple[float, float]:
    fl = 2.0 * n * _params(g, g["k"]) + 2.0 * g["L"] * g["q"] * g["d"] * n * n + 2.0 * g["V"] * g["H"]
    return fl, _read(g, n) * wb


def prefill_time_s(cfg: dict[str, Any], gpu: dict[str, Any], prompt_len: int,
                   weight_bytes: float, dtype: str = "bf16", tp: int = 1,
                   mfu: float = 1.0) -> float:
    g = _geo(cfg, tp)
    n = _pos_int(prompt_len, "prompt_len")
    _check(_is_num(mfu) and 0 < mfu <= 1, "mfu")
    fl, by = _prefill(g, n, _nonneg(weight_bytes, "wb"))
    return max(fl / (tp * _flops(gpu, dtype) * mfu), by / (tp * _bw(gpu)))


def crossover_prompt_len(cfg: dict[str, Any], gpu: dict[str, Any], weight_bytes: float,
                         dtype: str = "bf16") -> int:
    g = _geo(cfg)
    wb = _nonneg(weight_bytes, "wb")
    peak, bw = _flops(gpu, dtype), _bw(gpu)
    active = _params(g, g["k"])                     # the same at every prompt length
    reads: dict[float, float] = {}                  # bytes by experts touched (which stops
    n = 1                                           # changing once every expert is)
    while True:
        fl = 2.0 * n * active + 2.0 * g["L"] * g["q"] * g["d"] * n * n + 2.0 * g["V"] * g["H"]
        ex = expected_experts_touched(g["E"], g["k"], n) if g["E"] else 0.0
        if ex not in reads:
            reads[ex] = _params(g, ex) + g["V"] * g["H"]
        by = reads[ex] * wb
        if fl / peak >= by / bw:
            return n
        n += 1


def _decode(cfg: dict[str, Any], ctx_lens: list[int], tp: int, wb: float,
            kvb: float) -> tuple[float, float]:
    g = _geo(cfg, tp)
    _check(isinstance(ctx_lens, (list, tuple)) and len(ctx_lens) > 0, "empty batch")
    total = 0
    for c in ctx_lens:
        total += _pos_int(c, "context length")
    b = len(ctx_lens)
    fl = 2.0 * b * (_params(g, g["k"]) + g["V"] * g["H"]) + 4.0 * g["L"] * g["q"] * g["d"] * total
    by = _read(g, b) * _nonneg(wb, "wb") / tp \
        + total * 2.0 * g["L"] * g["kv_gpu"] * g["d"] * _nonneg(kvb, "kvb")
    return fl / tp, by


def decode_step_floor_s(cfg: dict[str, Any], gpu: dict[str, Any], ctx_lens: list[int], tp: int,
                        weight_bytes: float, kv_bytes: float, dtype: str = "bf16") -> float:
    fl, by = _decode(cfg, ctx_lens, tp, weight_bytes, kv_bytes)
    return max(fl / _flops(gpu, dtype), by / _bw(gpu))


def mbu(cfg: dict[str, Any], gpu: dict[str, Any], ctx_lens: list[int], step_time_s: float,
        tp: int, weight_bytes: float, kv_bytes: float) -> float:
    _check(_is_num(step_time_s) and step_time_s > 0, "step time")
    _, by = _decode(cfg, ctx_lens, tp, weight_bytes, kv_bytes)
    return (by / step_time_s) / _bw(gpu)


def decode_tok_s(cfg: dict[str, Any], gpu: dict[str, Any], ctx_lens: list[int], tp: int,
                 weight_bytes: float, kv_bytes: float,
                 dtype: str = "bf16") -> tuple[float, float]:
    t = decode_step_floor_s(cfg, gpu, ctx_lens, tp, weight_bytes, kv_bytes, dtype)
    return 1 / t, len(ctx_lens) / t


def max_decode_tok_s_per_user(cfg: dict[str, Any], gpu: dict[str, Any], n_gpus: int,
                              ctx_len: int, weight_bytes: float, kv_bytes: float,
                              dtype: str = "bf16") -> float:
    return 1 / decode_step_floor_s(cfg, gpu, [ctx_len], n_gpus, weight_bytes, kv_bytes, dtype)


def kv_max_batch(cfg: dict[str, Any], kv_cache_gib: float, ctx_len: int, tp: int,
                 kv_bytes: float) -> int:
    g = _geo(cfg, tp)
    kvb = _nonneg(kv_bytes, "kvb")
    _check(kvb > 0, "kv_bytes must be positive")
    per_seq = _pos_int(ctx_len, "ctx_len") * 2 * g["L"] * g["kv_gpu"] * g["d"] * kvb
    gib = _nonneg(kv_cache_gib, "kv_cache_gib")
    _check(gib > 0, "kv_cache_gib must be positive")
    return int(gib * BYTES_PER_GIB // per_seq)


def throughput_knee(t_fixed_s: float, t_per_seq_s: float,
                    kv_max_batch: int) -> tuple[float, float, float]:
    _check(_is_num(t_fixed_s) and t_fixed_s > 0, "t_fixed_s")
    _check(_is_num(t_per_seq_s) and t_per_seq_s > 0, "t_per_seq_s")
    b = _pos_int(kv_max_batch, "kv_max_batch")
    return t_fixed_s / t_per_seq_s, 1 / t_per_seq_s, b / (t_fixed_s + b * t_per_seq_s)
