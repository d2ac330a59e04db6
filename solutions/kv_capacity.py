"""Reference solution for kv_capacity: the memory budget around the KV formula."""

from __future__ import annotations

import math
from typing import Any


class DoesNotFit(ValueError):
    """The model does not fit as configured: no memory is left for the KV cache."""


def _positive_int(name: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return value


def _positive(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    return float(value)


def _non_negative(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ValueError(f"{name} must be a non-negative number, got {value!r}")
    return float(value)


def pp_stage_layers(num_layers: int, pp: int) -> list[int]:
    """Layers per pipeline stage; leftovers go to the stages just before the last (vLLM)."""
    _positive_int("num_layers", num_layers)
    _positive_int("pp", pp)
    if pp > num_layers:
        raise ValueError(f"pp={pp} is more stages than the {num_layers} layers")
    stages = [num_layers // pp] * pp
    for i in range(2, num_layers % pp + 2):
        stages[-i] += 1
    return stages


def _is_mla(cfg: dict[str, Any]) -> bool:
    return cfg.get("kv_lora_rank") is not None


def _kv_heads_per_gpu(cfg: dict[str, Any], tp: int) -> int:
    """KV heads each TP rank holds: split while tp <= KV heads, one replicated head past it."""
    heads = _positive_int("num_attention_heads", cfg["num_attention_heads"])
    kv = cfg.get("num_key_value_heads") or heads
    if heads % tp:
        raise ValueError(f"tp={tp} does not divide {heads} attention heads")
    if kv % tp and tp % kv:
        raise ValueError(f"tp={tp} neither divides nor is a multiple of {kv} KV heads")
    return max(1, kv // tp)


def _head_dim(cfg: dict[str, Any]) -> int:
    head_dim = cfg.get("head_dim")
    return int(head_dim) if head_dim else cfg["hidden_size"] // cfg["num_attention_heads"]


def kv_bytes_per_token(cfg: dict[str, Any], kv_dtype_bytes: float, tp: int = 1,
                       pp: int = 1) -> float:
    """KV bytes per token on the busiest GPU (see the prompt's rules)."""
    nbytes = _positive("kv_dtype_bytes", kv_dtype_bytes)
    _positive_int("tp", tp)
    layers = max(pp_stage_layers(cfg["num_hidden_layers"], pp))
    if _is_mla(cfg):
        if cfg["num_attention_heads"] % tp:
            raise ValueError(f"tp={tp} does not divide {cfg['num_attention_heads']} attention heads")
        # The latent has no head axis: every TP rank caches all of it.
        return float((cfg["kv_lora_rank"] + cfg["qk_rope_head_dim"]) * layers * nbytes)
    return float(2 * layers * _kv_heads_per_gpu(cfg, tp) * _head_dim(cfg) * nbytes)


def _num_experts(cfg: dict[str, Any]) -> int:
    for key in ("num_experts", "num_local_experts", "n_routed_experts"):
        if cfg.get(key):
            return int(cfg[key])
    return 0


def _layer_elements(cfg: dict[str, Any], index: int, tp: int) -> float:
    """Weight elements of decoder layer ``index`` held by one TP rank."""
    h, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    n: float = 2.0 * h                                       # two norms, replicated
    if _is_mla(cfg):
        nope, rope, v = cfg["qk_nope_head_dim"], cfg["qk_rope_head_dim"], cfg["v_head_dim"]
        r_q, r_kv = cfg.get("q_lora_rank") or 0, cfg["kv_lora_rank"]
        n += h * r_q + r_q * heads * (nope + rope) / tp if r_q else h * heads * (nope + rope) / tp
        n += h * (r_kv + rope) + r_kv * heads * (nope + v) / tp + heads * v * h / tp
    else:
        hd = _head_dim(cfg)
        n += 2 * h * heads * hd / tp + 2 * h * _kv_heads_per_gpu(cfg, tp) * hd
    experts = _num_experts(cfg)
    if experts and index >= cfg.get("first_k_dense_replace", 0):
        width = cfg.get("moe_intermediate_size") or cfg["intermediate_size"]
        n += (experts + cfg.get("n_shared_experts", 0)) * 3 * h * width / tp + h * experts
        n += 3 * h * (cfg.get("shared_expert_intermediate_size") or 0) / tp   # Qwen2-MoE
    else:
        n += 3 * h * cfg["intermediate_size"] / tp
    return n


def weight_bytes_per_gpu(cfg: dict[str, Any], weight_dtype_bytes: float, tp: int = 1,
                         pp: int = 1) -> float:
    """Weight bytes on the heaviest GPU (see the prompt's template)."""
    nbytes = _positive("weight_dtype_bytes", weight_dtype_bytes)
    _positive_int("tp", tp)
    stages = pp_stage_layers(cfg["num_hidden_layers"], pp)
    if not _is_mla(cfg):
        _kv_heads_per_gpu(cfg, tp)
    elif cfg["num_attention_heads"] % tp:
        raise ValueError(f"tp={tp} does not divide {cfg['num_attention_heads']} attention heads")
    h = cfg["hidden_size"]
    table = cfg["vocab_size"] * h / tp
    tied = cfg.get("tie_word_embeddings", True)
    heaviest, first = 0.0, 0
    for s, count in enumerate(stages):
        n = sum(_layer_elements(cfg, i, tp) for i in range(first, first + count))
        first += count
        if s == 0:
            n += table
        if s == pp - 1:
            n += h + (0 if tied and pp == 1 else table)
        heaviest = max(heaviest, n)
    return heaviest * nbytes


def kv_budget_bytes(total_bytes: float, gpu_mem_util: float, weights: float,
                    activation_peak: float, non_torch: float) -> float:
    """Utilisation of the total memory, minus what the engine holds besides the cache."""
    total = _positive("total_bytes", total_bytes)
    util = _positive("gpu_mem_util", gpu_mem_util)
    if util > 1:
        raise ValueError(f"gpu_mem_util must be in (0, 1], got {gpu_mem_util!r}")
    held = sum(_non_negative(name, value) for name, value in (
        ("weights", weights), ("activation_peak", activation_peak), ("non_torch", non_torch)))
    budget = total * util - held
    if budget < 0:
        raise DoesNotFit(f"the model does not fit as configured: {total * util:.0f} bytes usable, "
                         f"{held:.0f} bytes held before the KV cache")
    return budget


def kv_cache_tokens(kv_budget: float, per_token_bytes: float, block_size: int = 16) -> int:
    """Whole blocks of ``block_size`` tokens that fit in the budget, in tokens."""
    per_token = _positive("per_token_bytes", per_token_bytes)
    _positive_int("block_size", block_size)
    if isinstance(kv_budget, bool) or not isinstance(kv_budget, (int, float)):
        raise ValueError(f"kv_budget must be a number, got {kv_budget!r}")
    if kv_budget < 0:
        raise DoesNotFit(f"the model does not fit as configured: KV budget {kv_budget} bytes")
    return math.floor(kv_budget / (per_token * block_size)) * block_size


def sliding_window_saving(cfg: dict[str, Any], context_len: int) -> float:
    """Share of a sequence's KV bytes that sliding-window layers do not keep."""
    n = _positive_int("context_len", context_len)
    types = cfg.get("layer_types") or []
    sliding = sum(1 for t in types if t == "sliding_attention")
    if not sliding:
        return 0.0
    window = _positive_int("sliding_window", cfg.get("sliding_window"))
    return sliding * max(0, n - window) / (len(types) * n)


def max_concurrency(kv_tokens: int, tokens_per_request: int,
                    cfg: dict[str, Any] | None = None) -> float:
    """Requests of ``tokens_per_request`` tokens the cache holds at once."""
    n = _positive_int("tokens_per_request", tokens_per_request)
    tokens = _non_negative("kv_tokens", kv_tokens)
    saving = sliding_window_saving(cfg, n) if cfg is not None else 0.0
    return tokens / (n * (1.0 - saving))


def effective_max_batch(kv_tokens: int, ctx_len: int, max_num_seqs: int,
                        max_num_batched_tokens: int, block_size: int = 16) -> tuple[int, str]:
    """The lowest of the KV, sequence and token ceilings, and its name."""
    if not isinstance(kv_tokens, int) or isinstance(kv_tokens, bool) or kv_tokens < 0:
        raise ValueError(f"kv_tokens must be a non-negative int, got {kv_tokens!r}")
    for name, value in (("ctx_len", ctx_len), ("max_num_seqs", max_num_seqs),
                        ("max_num_batched_tokens", max_num_batched_tokens),
                        ("block_size", block_size)):
        _positive_int(name, value)
    kv_ceiling = (kv_tokens // block_size) // -(-ctx_len // block_size)
    if kv_ceiling == 0:
        raise DoesNotFit(f"the model does not fit as configured: {kv_tokens} KV tokens "
                         f"hold no sequence of {ctx_len} tokens")
    return min((kv_ceiling, "kv_cache"), (max_num_seqs, "max_num_seqs"),
               (max_num_batched_tokens, "max_num_batched_tokens"), key=lambda c: c[0])


def fragmentation_bound(block_size: int, num_seqs: int) -> int:
    """Only a sequence's last block can be partly full: at most block_size - 1 empty slots each."""
    _positive_int("block_size", block_size)
    if not isinstance(num_seqs, int) or isinstance(num_seqs, bool) or num_seqs < 0:
        raise ValueError(f"num_seqs must be a non-negative int, got {num_seqs!r}")
    return num_seqs * (block_size - 1)
