"""An independent correct kv_capacity, written from the prompt and the stub only.

Written by the kata's author as the blind check the brief asks for (no helper agent was
available), without reusing the reference's code: it reads the config into a small record
first, sums KV and weights layer by layer over explicit stage index ranges, works in
integers where the prompt's quantities are integers, and computes the sliding saving as
1 - (kept layer-tokens / all layer-tokens) rather than from the closed form.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class DoesNotFit(ValueError):
    """The model does not fit as configured: no memory is left for the KV cache."""


def _check_int(value: Any, name: str, low: int = 1) -> int:
    if type(value) is not int or value < low:
        raise ValueError(f"{name}={value!r}: expected an int >= {low}")
    return value


def _check_num(value: Any, name: str, positive: bool) -> float:
    if type(value) not in (int, float) or (value <= 0 if positive else value < 0):
        raise ValueError(f"{name}={value!r}: expected a {'positive' if positive else 'non-negative'} number")
    return float(value)


def pp_stage_layers(num_layers: int, pp: int) -> list[int]:
    _check_int(num_layers, "num_layers")
    _check_int(pp, "pp")
    if pp > num_layers:
        raise ValueError(f"cannot split {num_layers} layers into {pp} stages")
    base, extra = divmod(num_layers, pp)
    plus_one = set(range(pp - 1 - extra, pp - 1))      # the `extra` stages right before the last
    return [base + (1 if s in plus_one else 0) for s in range(pp)]


@dataclass(frozen=True)
class _Model:
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    tied: bool
    latent: int            # MLA: kv_lora_rank + qk_rope_head_dim; 0 when not MLA
    cfg: dict[str, Any]


def _model(cfg: dict[str, Any]) -> _Model:
    heads = cfg["num_attention_heads"]
    latent = 0
    if cfg.get("kv_lora_rank") is not None:
        latent = cfg["kv_lora_rank"] + cfg["qk_rope_head_dim"]
    return _Model(
        hidden=cfg["hidden_size"], layers=cfg["num_hidden_layers"], heads=heads,
        kv_heads=cfg.get("num_key_value_heads") or heads,
        head_dim=cfg.get("head_dim") or cfg["hidden_size"] // heads,
        vocab=cfg["vocab_size"], tied=bool(cfg.get("tie_word_embeddings", True)),
        latent=latent, cfg=cfg)


def _local_kv_heads(m: _Model, tp: int) -> int:
    _check_int(tp, "tp")
    if m.heads % tp != 0:
        raise ValueError(f"tp={tp} must divide the {m.heads} query heads")
    if m.latent:
        return 0
    if tp <= m.kv_heads:
        if m.kv_heads % tp:
            raise ValueError(f"tp={tp} does not divide the {m.kv_heads} KV heads")
        return m.kv_heads // tp
    if tp % m.kv_heads:
        raise ValueError(f"tp={tp} is not a multiple of the {m.kv_heads} KV heads")
    return 1


def kv_bytes_per_token(cfg: dict[str, Any], kv_dtype_bytes: float, tp: int = 1,
                       pp: int = 1) -> float:
    b = _check_num(kv_dtype_bytes, "kv_dtype_bytes", True)
    m = _model(cfg)
    local = _local_kv_heads(m, tp)
    busiest = max(pp_stage_layers(m.layers, pp))
    per_layer = m.latent if m.latent else 2 * local * m.head_dim
    return busiest * per_layer * b


def _layer_weights(m: _Model, index: int, tp: int) -> float:
    c, h = m.cfg, m.hidden
    attn: float
    if m.latent:
        nope, rope, v = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
        q_rank = c.get("q_lora_rank") or 0
        q = (h * q_rank + q_rank * m.heads * (nope + rope) / tp) if q_rank else h * m.heads * (nope + rope) / tp
        kv_down = h * (c["kv_lora_rank"] + rope)
        kv_up = c["kv_lora_rank"] * m.heads * (nope + v) / tp
        attn = q + kv_down + kv_up + m.heads * v * h / tp
    else:
        q_and_o = 2 * h * m.heads * m.head_dim / tp
        k_and_v = 2 * h * _local_kv_heads(m, tp) * m.head_dim
        attn = q_and_o + k_and_v
    n_exp = 0
    for key in ("num_experts", "num_local_experts", "n_routed_experts"):
        if c.get(key):
            n_exp = c[key]
            break
    mlp: float
    if n_exp and index >= c.get("first_k_dense_replace", 0):
        width = c.get("moe_intermediate_size") or c["intermediate_size"]
        every = n_exp + c.get("n_shared_experts", 0)
        mlp = every * 3 * h * width / tp + h * n_exp
        mlp += 3 * h * (c.get("shared_expert_intermediate_size") or 0) / tp  # issue 29
    else:
        mlp = 3 * h * c["intermediate_size"] / tp
    return attn + mlp + 2 * h


def weight_bytes_per_gpu(cfg: dict[str, Any], weight_dtype_bytes: float, tp: int = 1,
                         pp: int = 1) -> float:
    b = _check_num(weight_dtype_bytes, "weight_dtype_bytes", True)
    m = _model(cfg)
    _local_kv_heads(m, tp)
    sizes = pp_stage_layers(m.layers, pp)
    bounds = [sum(sizes[:s]) for s in range(pp + 1)]
    vocab_shard = m.vocab * m.hidden / tp
    totals = []
    for s in range(pp):
        total = sum(_layer_weights(m, i, tp) for i in range(bounds[s], bounds[s + 1]))
        if s == 0:
            total += vocab_shard                      # embedding
        if s == pp - 1:
            total += m.hidden                         # final norm
            if not (m.tied and pp == 1):
                total += vocab_shard                  # LM head (its own copy)
        totals.append(total)
    return max(totals) * b


def kv_budget_bytes(total_bytes: float, gpu_mem_util: float, weights: float,
                    activation_peak: float, non_torch: float) -> float:
    total = _check_num(total_bytes, "total_bytes", True)
    util = _check_num(gpu_mem_util, "gpu_mem_util", True)
    if util > 1.0:
        raise ValueError(f"gpu_mem_util={gpu_mem_util} is above 1")
    usable = total * util
    for name, value in (("weights", weights), ("activation_peak", activation_peak),
                        ("non_torch", non_torch)):
        usable -= _check_num(value, name, False)
    if usable < 0:
        raise DoesNotFit("the model does not fit as configured "
                         f"(short by {-usable:.0f} bytes before any KV cache)")
    return usable


def kv_cache_tokens(kv_budget: float, per_token_bytes: float, block_size: int = 16) -> int:
    per_token = _check_num(per_token_bytes, "per_token_bytes", True)
    _check_int(block_size, "block_size")
    if type(kv_budget) not in (int, float):
        raise ValueError(f"kv_budget={kv_budget!r} is not a number")
    if kv_budget < 0:
        raise DoesNotFit("the model does not fit as configured (negative KV budget)")
    blocks = int(kv_budget // (per_token * block_size))
    return blocks * block_size


def sliding_window_saving(cfg: dict[str, Any], context_len: int) -> float:
    _check_int(context_len, "context_len")
    kinds = cfg.get("layer_types") or []
    if "sliding_attention" not in kinds:
        return 0.0
    window = cfg["sliding_window"]
    kept = sum(min(window, context_len) if k == "sliding_attention" else context_len for k in kinds)
    full = len(kinds) * context_len
    return (full - kept) / full


def max_concurrency(kv_tokens: int, tokens_per_request: int,
                    cfg: dict[str, Any] | None = None) -> float:
    _check_int(tokens_per_request, "tokens_per_request")
    _check_num(kv_tokens, "kv_tokens", False)
    cost = float(tokens_per_request)
    if cfg is not None:
        cost *= 1.0 - sliding_window_saving(cfg, tokens_per_request)
    return kv_tokens / cost


def effective_max_batch(kv_tokens: int, ctx_len: int, max_num_seqs: int,
                        max_num_batched_tokens: int, block_size: int = 16) -> tuple[int, str]:
    _check_int(kv_tokens, "kv_tokens", 0)
    _check_int(ctx_len, "ctx_len")
    _check_int(max_num_seqs, "max_num_seqs")
    _check_int(max_num_batched_tokens, "max_num_batched_tokens")
    _check_int(block_size, "block_size")
    blocks_per_seq = (ctx_len + block_size - 1) // block_size
    fit = (kv_tokens // block_size) // blocks_per_seq
    if fit < 1:
        raise DoesNotFit(f"the model does not fit as configured: no {ctx_len}-token sequence fits")
    best = ("kv_cache", fit)
    for name, cap in (("max_num_batched_tokens", max_num_batched_tokens), ("max_num_seqs", max_num_seqs)):
        if cap < best[1]:
            best = (name, cap)
    return best[1], best[0]


def fragmentation_bound(block_size: int, num_seqs: int) -> int:
    _check_int(block_size, "block_size")
    _check_int(num_seqs, "num_seqs", 0)
    return (block_size - 1) * num_seqs
