"""A model of the truth for kv_capacity, written from the prompt in exact arithmetic.

Used only by the hidden tests; independent of solutions/kv_capacity.py.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import hypothesis.strategies as st


def stages(num_layers: int, pp: int) -> list[int]:
    base, extra = divmod(num_layers, pp)
    out = [base] * pp
    for k in range(extra):           # stage pp-2, pp-3, ... get the leftovers
        out[pp - 2 - k] += 1
    return out


def kv_heads(cfg: dict[str, Any], tp: int) -> int:
    kvh = cfg.get("num_key_value_heads") or cfg["num_attention_heads"]
    return kvh // tp if tp <= kvh else 1


def head_dim(cfg: dict[str, Any]) -> int:
    return cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]


def mla(cfg: dict[str, Any]) -> bool:
    return cfg.get("kv_lora_rank") is not None


def per_token(cfg: dict[str, Any], b: Fraction | int, tp: int = 1, pp: int = 1) -> Fraction:
    layers = max(stages(cfg["num_hidden_layers"], pp))
    if mla(cfg):
        return Fraction(cfg["kv_lora_rank"] + cfg["qk_rope_head_dim"]) * layers * b
    return Fraction(2 * layers * kv_heads(cfg, tp) * head_dim(cfg)) * b


def experts(cfg: dict[str, Any]) -> int:
    return next((cfg[k] for k in ("num_experts", "num_local_experts", "n_routed_experts")
                 if cfg.get(k)), 0)


def layer(cfg: dict[str, Any], i: int, tp: int) -> Fraction:
    h, a = cfg["hidden_size"], cfg["num_attention_heads"]
    t = Fraction(1, tp)
    n = Fraction(2 * h)
    if mla(cfg):
        nope, rope, v = cfg["qk_nope_head_dim"], cfg["qk_rope_head_dim"], cfg["v_head_dim"]
        rq, rkv = cfg.get("q_lora_rank") or 0, cfg["kv_lora_rank"]
        n += (h * rq + rq * a * (nope + rope) * t) if rq else h * a * (nope + rope) * t
        n += h * (rkv + rope) + rkv * a * (nope + v) * t + a * v * h * t
    else:
        d = head_dim(cfg)
        n += 2 * h * a * d * t + 2 * h * kv_heads(cfg, tp) * d
    e = experts(cfg)
    if e and i >= cfg.get("first_k_dense_replace", 0):
        w = cfg.get("moe_intermediate_size") or cfg["intermediate_size"]
        n += (e + cfg.get("n_shared_experts", 0)) * 3 * h * w * t + h * e
        n += 3 * h * (cfg.get("shared_expert_intermediate_size") or 0) * t   # Qwen2-MoE
    else:
        n += 3 * h * cfg["intermediate_size"] * t
    return n


def weights(cfg: dict[str, Any], b: Fraction | int, tp: int = 1, pp: int = 1) -> Fraction:
    h = cfg["hidden_size"]
    table = Fraction(cfg["vocab_size"] * h, tp)
    tied = cfg.get("tie_word_embeddings", True)
    per_stage = []
    start = 0
    for s, count in enumerate(stages(cfg["num_hidden_layers"], pp)):
        n = sum((layer(cfg, i, tp) for i in range(start, start + count)), Fraction(0))
        start += count
        if s == 0:
            n += table
        if s == pp - 1:
            n += h + (0 if (tied and pp == 1) else table)
        per_stage.append(n)
    return max(per_stage) * b


def saving(cfg: dict[str, Any], n: int) -> Fraction:
    types = cfg.get("layer_types") or []
    s = sum(t == "sliding_attention" for t in types)
    if not s:
        return Fraction(0)
    return Fraction(s * max(0, n - cfg["sliding_window"]), len(types) * n)


# ---------------------------------------------------------------- strategies
@st.composite
def gqa_configs(draw: Any, explicit_head_dim: bool | None = None, moe: bool | None = None) -> dict[str, Any]:
    """Dense or MoE GQA/MHA configs whose fields hit the traps: explicit head_dim unlike
    hidden/heads, KV heads 1..heads, tied/untied/absent head, uneven layer counts."""
    kvh = draw(st.sampled_from([1, 2, 4, 8, 16]))
    group = draw(st.sampled_from([1, 2, 4, 8]))
    heads = kvh * group
    hd = draw(st.sampled_from([64, 80, 96, 128, 256]))
    hidden = draw(st.sampled_from([heads * hd, heads * hd + 128 * heads, max(heads, 2) * 64 * 3]))
    cfg: dict[str, Any] = {
        "hidden_size": hidden, "num_attention_heads": heads,
        "num_hidden_layers": draw(st.integers(1, 95)),
        "intermediate_size": draw(st.sampled_from([1024, 2816, 11008, 14336])),
        "vocab_size": draw(st.sampled_from([32000, 128256, 151936, 256000])),
    }
    if draw(st.booleans()) or kvh != heads:
        cfg["num_key_value_heads"] = kvh
    want_hd = draw(st.booleans()) if explicit_head_dim is None else explicit_head_dim
    if want_hd or hidden % heads or hidden // heads != hd:
        cfg["head_dim"] = hd
    tie = draw(st.sampled_from(["absent", True, False]))
    if tie != "absent":
        cfg["tie_word_embeddings"] = tie
    if moe if moe is not None else draw(st.booleans()):
        key = draw(st.sampled_from(["num_experts", "num_local_experts", "n_routed_experts"]))
        cfg[key] = draw(st.sampled_from([4, 8, 64, 128]))
        cfg["num_experts_per_tok"] = 2
        if draw(st.booleans()):
            cfg["moe_intermediate_size"] = draw(st.sampled_from([512, 768, 1408]))
        if draw(st.booleans()):
            cfg["n_shared_experts"] = draw(st.integers(1, 2))
        if draw(st.booleans()):      # Qwen2-MoE's one shared expert of its own width
            cfg["shared_expert_intermediate_size"] = draw(st.sampled_from([None, 0, 2816, 5632]))
        if draw(st.booleans()):
            cfg["first_k_dense_replace"] = draw(st.integers(0, 3))
    return cfg


@st.composite
def mla_configs(draw: Any) -> dict[str, Any]:
    heads = draw(st.sampled_from([16, 32, 64, 128]))
    cfg: dict[str, Any] = {
        "hidden_size": draw(st.sampled_from([2048, 5120, 7168])),
        "num_attention_heads": heads,
        "num_hidden_layers": draw(st.integers(1, 61)),
        "kv_lora_rank": draw(st.sampled_from([256, 512])),
        "qk_rope_head_dim": draw(st.sampled_from([32, 64])),
        "qk_nope_head_dim": 128, "v_head_dim": 128,
        "q_lora_rank": draw(st.sampled_from([None, 0, 768, 1536])),
        "intermediate_size": draw(st.sampled_from([10944, 18432])),
        "vocab_size": draw(st.sampled_from([102400, 129280])),
        "tie_word_embeddings": draw(st.booleans()),
    }
    if draw(st.booleans()):
        cfg["num_key_value_heads"] = heads       # present in DeepSeek configs, irrelevant to MLA
    if draw(st.booleans()):
        cfg.update(n_routed_experts=draw(st.sampled_from([8, 64])), moe_intermediate_size=1408,
                   n_shared_experts=draw(st.integers(0, 2)), first_k_dense_replace=draw(st.integers(0, 3)))
    return cfg


def valid_tps(cfg: dict[str, Any]) -> list[int]:
    heads = cfg["num_attention_heads"]
    if mla(cfg):
        return [t for t in (1, 2, 4, 8, 16, 32) if heads % t == 0]
    kvh = cfg.get("num_key_value_heads") or heads
    return [t for t in (1, 2, 4, 8, 16, 32, 64)
            if heads % t == 0 and (kvh % t == 0 or t % kvh == 0)]
