"""A second, independent model of the roofline prompt's formulas, and Hypothesis strategies.

Written from the prompt, structured differently from the reference: it sums per-layer
costs instead of counting a template once.
"""

from __future__ import annotations

from typing import Any

import hypothesis.strategies as st

DENSE_DTYPES = ("bf16", "fp8")


def _f(cfg: dict[str, Any], key: str, default: Any = None) -> Any:
    v = cfg.get(key)
    return default if v is None else v


def geometry(cfg: dict[str, Any]) -> dict[str, Any]:
    h, q = cfg["hidden_size"], cfg["num_attention_heads"]
    kv = _f(cfg, "num_key_value_heads", q)
    d = _f(cfg, "head_dim", h // q) or h // q
    e = 0
    for key in ("num_experts", "num_local_experts", "n_routed_experts"):
        if cfg.get(key):
            e = cfg[key]
            break
    return {"h": h, "q": q, "kv": kv, "d": d, "L": cfg["num_hidden_layers"],
            "V": cfg["vocab_size"], "E": e, "k": _f(cfg, "num_experts_per_tok", 0),
            "Ie": _f(cfg, "moe_intermediate_size", cfg.get("intermediate_size")),
            "I": cfg.get("intermediate_size"), "S": _f(cfg, "n_shared_experts", 0),
            "first_dense": _f(cfg, "first_k_dense_replace", 0)}


def touched(e: int, k: int, t: int) -> float:
    return float(e) * (1.0 - (1.0 - k / e) ** t)


def _layers(g: dict[str, Any], experts_per_moe_layer: float) -> float:
    attn = 2 * g["h"] * g["d"] * (g["q"] + g["kv"])
    n_moe = max(0, g["L"] - g["first_dense"]) if g["E"] else 0
    moe = g["h"] * g["E"] + (g["S"] + experts_per_moe_layer) * 3 * g["h"] * g["Ie"] if n_moe else 0.0
    dense = 3 * g["h"] * g["I"] if g["L"] - n_moe else 0
    return g["L"] * attn + n_moe * moe + (g["L"] - n_moe) * dense


def params_read(cfg: dict[str, Any], tokens: int) -> float:
    g = geometry(cfg)
    per = touched(g["E"], g["k"], tokens) if g["E"] else 0.0
    return _layers(g, per) + g["V"] * g["h"]


def params_active(cfg: dict[str, Any]) -> float:
    g = geometry(cfg)
    return _layers(g, g["k"])


def kv_elems_per_token_per_gpu(cfg: dict[str, Any], tp: int) -> float:
    g = geometry(cfg)
    return 2 * g["L"] * max(1, g["kv"] // tp) * g["d"]


def peak(gpu: dict[str, Any], dtype: str) -> float:
    return float(gpu["tensor_tflops"][dtype]["dense"]) * 1e12


def bw(gpu: dict[str, Any]) -> float:
    return float(gpu["memory_bandwidth_gb_s"]) * 1e9


def prefill(cfg: dict[str, Any], n: int, wb: float) -> tuple[float, float]:
    g = geometry(cfg)
    flops = 2 * n * params_active(cfg) + 2 * g["L"] * g["q"] * g["d"] * n * n + 2 * g["V"] * g["h"]
    return flops, params_read(cfg, n) * wb


def prefill_time(cfg: dict[str, Any], gpu: dict[str, Any], n: int, wb: float, dtype: str,
                 tp: int, mfu: float) -> float:
    flops, by = prefill(cfg, n, wb)
    return max(flops / tp / (peak(gpu, dtype) * mfu), by / tp / bw(gpu))


def compute_bound(cfg: dict[str, Any], gpu: dict[str, Any], n: int, wb: float, dtype: str) -> bool:
    flops, by = prefill(cfg, n, wb)
    return flops / peak(gpu, dtype) >= by / bw(gpu)


def crossover(cfg: dict[str, Any], gpu: dict[str, Any], wb: float, dtype: str) -> int:
    """The defining property is checked at the answer and one below it."""
    hi = 1
    while not compute_bound(cfg, gpu, hi, wb, dtype):
        hi *= 2
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if compute_bound(cfg, gpu, mid, wb, dtype):
            hi = mid
        else:
            lo = mid
    assert compute_bound(cfg, gpu, hi, wb, dtype)
    assert hi == 1 or not compute_bound(cfg, gpu, hi - 1, wb, dtype)
    return hi


def decode(cfg: dict[str, Any], ctx: list[int], tp: int, wb: float,
           kvb: float) -> tuple[float, float]:
    """(FLOPs per GPU, bytes per GPU)."""
    g = geometry(cfg)
    b = len(ctx)
    flops = 2 * b * (params_active(cfg) + g["V"] * g["h"]) + 4 * g["L"] * g["q"] * g["d"] * sum(ctx)
    by = params_read(cfg, b) * wb / tp + sum(ctx) * kv_elems_per_token_per_gpu(cfg, tp) * kvb
    return flops / tp, by


def decode_floor(cfg: dict[str, Any], gpu: dict[str, Any], ctx: list[int], tp: int, wb: float,
                 kvb: float, dtype: str = "bf16") -> float:
    flops, by = decode(cfg, ctx, tp, wb, kvb)
    return max(flops / peak(gpu, dtype), by / bw(gpu))


def mbu(cfg: dict[str, Any], gpu: dict[str, Any], ctx: list[int], t: float, tp: int, wb: float,
        kvb: float) -> float:
    return decode(cfg, ctx, tp, wb, kvb)[1] / t / bw(gpu)


# ------------------------------------------------------------------ strategies
@st.composite
def configs(draw: st.DrawFn, moe: bool | None = None) -> dict[str, Any]:
    """Small-to-real-sized dense or MoE configs with valid head counts."""
    kv = draw(st.sampled_from([1, 2, 4, 8, 16]))
    group = draw(st.sampled_from([1, 2, 4, 8]))
    q = kv * group
    d = draw(st.sampled_from([64, 128, 256]))
    h = draw(st.sampled_from([q * d, 1024, 2048, 4096, 5120]))
    cfg: dict[str, Any] = {
        "hidden_size": h, "num_attention_heads": q, "num_key_value_heads": kv,
        "num_hidden_layers": draw(st.integers(1, 96)),
        "vocab_size": draw(st.sampled_from([32000, 128256, 151936])),
        "intermediate_size": draw(st.sampled_from([2048, 8192, 14336, 28672])),
        "tie_word_embeddings": draw(st.booleans()),
    }
    if draw(st.booleans()) or h != q * d:
        cfg["head_dim"] = d
    is_moe = draw(st.booleans()) if moe is None else moe
    if is_moe:
        e = draw(st.sampled_from([8, 16, 64, 128, 256]))
        cfg[draw(st.sampled_from(["num_experts", "num_local_experts", "n_routed_experts"]))] = e
        cfg["num_experts_per_tok"] = draw(st.sampled_from([k for k in (1, 2, 4, 6, 8) if k <= e]))
        if draw(st.booleans()):
            cfg["moe_intermediate_size"] = draw(st.sampled_from([512, 768, 1536, 2048]))
        if draw(st.booleans()):
            cfg["n_shared_experts"] = draw(st.integers(0, 2))
        if draw(st.booleans()):
            cfg["first_k_dense_replace"] = draw(st.integers(0, min(3, cfg["num_hidden_layers"])))
    return cfg


def tps(cfg: dict[str, Any]) -> list[int]:
    """Every tp the prompt allows for this config, up to 64."""
    q, kv = cfg["num_attention_heads"], cfg.get("num_key_value_heads", cfg["num_attention_heads"])
    return [t for t in (1, 2, 4, 8, 16, 32, 64) if q % t == 0 and (kv % t == 0 or t % kv == 0)]


def synthetic_gpu(dense: float, sparse: float, bw_gb_s: float, dtype: str = "bf16") -> dict[str, Any]:
    return {"id": "synthetic", "memory_bandwidth_gb_s": bw_gb_s,
            "tensor_tflops": {dtype: {"dense": dense, "sparse_2_4": sparse}}}


gpus = st.builds(
    synthetic_gpu,
    st.sampled_from([156.0, 312.0, 756.5, 989.4, 1978.9, 2250.0]),
    st.sampled_from([100.0, 624.0, 1513.0, 3958.0, 4500.0]),
    st.sampled_from([900.0, 1555.0, 2000.0, 2039.0, 3350.0, 4800.0, 8000.0]))

ctx_lists = st.lists(st.integers(1, 131072), min_size=1, max_size=64)
