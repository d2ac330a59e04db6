"""Blind alternative (written from the prompt, the stub and the public tests only).

Design: every quantity is carried as an exact ``fractions.Fraction`` and only turned into a
float at the public boundary, so block flooring and "/ tp" splits never see float drift.
Weights are not a closed formula: each layer is described as an inventory of named tensors
(elements, split-by-tp flag), stages are explicit layer-index ranges, and the busiest stage is
the max over per-stage sums. The KV cache is likewise a per-layer list summed per stage.
"""

from __future__ import annotations

import math
from fractions import Fraction
from numbers import Real
from typing import Any

_PROMPT = "see katas/kv_capacity/README.md"


class DoesNotFit(ValueError):
    """The model does not fit as configured: no memory is left for the KV cache."""


# --------------------------------------------------------------------------- validation

def _is_num(v: Any) -> bool:
    return isinstance(v, Real) and not isinstance(v, bool) and math.isfinite(float(v))


def _int(name: str, v: Any, lo: int) -> int:
    if not _is_num(v) or float(v) != int(v):
        raise ValueError(f"{name} must be an integer, got {v!r}")
    iv = int(v)
    if iv < lo:
        raise ValueError(f"{name} must be >= {lo}, got {v!r}")
    return iv


def _pos(name: str, v: Any) -> Fraction:
    if not _is_num(v) or v <= 0:
        raise ValueError(f"{name} must be a positive number, got {v!r}")
    return Fraction(v)


def _nonneg(name: str, v: Any) -> Fraction:
    if not _is_num(v) or v < 0:
        raise ValueError(f"{name} must be a non-negative number, got {v!r}")
    return Fraction(v)


def _get(cfg: dict[str, Any], key: str) -> Any:
    """A config field, None when absent or null."""
    return cfg.get(key)


def _req_int(cfg: dict[str, Any], key: str, lo: int = 1) -> int:
    v = _get(cfg, key)
    if v is None:
        raise ValueError(f"config field {key!r} is required")
    return _int(key, v, lo)


def _opt_int(cfg: dict[str, Any], key: str, default: int, lo: int = 1) -> int:
    v = _get(cfg, key)
    return default if v is None else _int(key, v, lo)


class _Arch:
    """The parsed, validated shape of one model under a given tp."""

    def __init__(self, cfg: dict[str, Any], tp: Any, pp: Any) -> None:
        if not isinstance(cfg, dict):
            raise ValueError("cfg must be a dict")
        self.tp = _int("tp", tp, 1)
        self.pp = _int("pp", pp, 1)
        self.cfg = cfg
        self.layers = _req_int(cfg, "num_hidden_layers")
        self.heads = _req_int(cfg, "num_attention_heads")
        if self.pp > self.layers:
            raise ValueError(f"pp={self.pp} exceeds the {self.layers} layers")
        if self.heads % self.tp:
            raise ValueError(f"tp={self.tp} does not divide {self.heads} query heads")
        self.mla = _get(cfg, "kv_lora_rank") is not None
        if self.mla:
            self.r_kv = _req_int(cfg, "kv_lora_rank")
            self.rope = _req_int(cfg, "qk_rope_head_dim")
        else:
            self.kv_heads = _opt_int(cfg, "num_key_value_heads", self.heads)
            if self.kv_heads % self.tp and self.tp % self.kv_heads:
                raise ValueError(f"tp={self.tp} neither divides nor is a multiple of "
                                 f"{self.kv_heads} KV heads")
            # max(1, kv/tp): exact because one divides the other
            self.kv_per_gpu = max(1, self.kv_heads // self.tp)
            hd = _get(cfg, "head_dim")
            if hd is None:
                h = _req_int(cfg, "hidden_size")
                hd = h // self.heads
                if hd < 1:
                    raise ValueError("hidden_size // num_attention_heads is zero")
            self.head_dim = _int("head_dim", hd, 1)
        self.stages = _stage_ranges(self.layers, self.pp)

    # KV elements (per token, per layer) on one GPU
    def kv_elems_per_layer(self) -> int:
        if self.mla:
            return self.r_kv + self.rope
        return 2 * self.kv_per_gpu * self.head_dim


def _stage_ranges(num_layers: int, pp: int) -> list[range]:
    counts = _stage_counts(num_layers, pp)
    out, start = [], 0
    for c in counts:
        out.append(range(start, start + c))
        start += c
    return out


def _stage_counts(num_layers: int, pp: int) -> list[int]:
    # Hand layers out one at a time: a full round of pp for every stage, then the leftovers
    # walking backwards from the stage before the last.
    counts = [0] * pp
    remaining = num_layers
    while remaining >= pp:
        for s in range(pp):
            counts[s] += 1
        remaining -= pp
    s = pp - 2
    while remaining:
        counts[s] += 1
        remaining -= 1
        s -= 1
    return counts


# --------------------------------------------------------------------------- public API

def pp_stage_layers(num_layers: int, pp: int) -> list[int]:
    """How many decoder layers each of the ``pp`` pipeline stages holds, first stage first."""
    n = _int("num_layers", num_layers, 1)
    p = _int("pp", pp, 1)
    if p > n:
        raise ValueError(f"pp={p} exceeds the {n} layers")
    return _stage_counts(n, p)


def kv_bytes_per_token(cfg: dict[str, Any], kv_dtype_bytes: float, tp: int = 1,
                       pp: int = 1) -> float:
    """Bytes of KV cache one token occupies on the busiest GPU."""
    b = _pos("kv_dtype_bytes", kv_dtype_bytes)
    arch = _Arch(cfg, tp, pp)
    per_layer = [Fraction(arch.kv_elems_per_layer()) * b for _ in range(arch.layers)]
    busiest = max(sum((per_layer[i] for i in st), Fraction(0)) for st in arch.stages)
    return float(busiest)


def _layer_inventory(arch: _Arch, idx: int) -> list[tuple[str, Fraction, bool]]:
    """(tensor name, elements, split by tp) for decoder layer ``idx``."""
    cfg = arch.cfg
    H = _req_int(cfg, "hidden_size")
    heads = arch.heads
    inv: list[tuple[str, Fraction, bool]] = [("norms", Fraction(2 * H), False)]
    if arch.mla:
        nope = _req_int(cfg, "qk_nope_head_dim")
        rope = arch.rope
        v = _req_int(cfg, "v_head_dim")
        r_kv = arch.r_kv
        r_q = _opt_int(cfg, "q_lora_rank", 0, lo=0)
        if r_q:
            inv.append(("q_a", Fraction(H * r_q), False))
            inv.append(("q_b", Fraction(r_q * heads * (nope + rope)), True))
        else:
            inv.append(("q", Fraction(H * heads * (nope + rope)), True))
        inv.append(("kv_a", Fraction(H * (r_kv + rope)), False))
        inv.append(("kv_b", Fraction(r_kv * heads * (nope + v)), True))
        inv.append(("o", Fraction(heads * v * H), True))
    else:
        hd = arch.head_dim
        inv.append(("q", Fraction(H * heads * hd), True))
        inv.append(("o", Fraction(H * heads * hd), True))
        # K and V already per GPU (replicated past the KV head count): not divided again
        inv.append(("k", Fraction(H * arch.kv_per_gpu * hd), False))
        inv.append(("v", Fraction(H * arch.kv_per_gpu * hd), False))

    experts = 0
    for key in ("num_experts", "num_local_experts", "n_routed_experts"):
        if _get(cfg, key) is not None:
            experts = _int(key, _get(cfg, key), 0)
            break
    dense_first = _opt_int(cfg, "first_k_dense_replace", 0, lo=0)
    if experts > 0 and idx >= dense_first:
        width_v = _get(cfg, "moe_intermediate_size")
        width = (_int("moe_intermediate_size", width_v, 1) if width_v is not None
                 else _req_int(cfg, "intermediate_size"))
        shared = _opt_int(cfg, "n_shared_experts", 0, lo=0)
        inv.append(("experts", Fraction((experts + shared) * 3 * H * width), True))
        # issue 29 (maintainer): Qwen2-MoE's shared expert of its own width
        own = _opt_int(cfg, "shared_expert_intermediate_size", 0, lo=0)
        inv.append(("shared expert", Fraction(3 * H * own), True))
        inv.append(("router", Fraction(H * experts), False))
    else:
        inter = _req_int(cfg, "intermediate_size")
        inv.append(("mlp", Fraction(3 * H * inter), True))
    return inv


def weight_bytes_per_gpu(cfg: dict[str, Any], weight_dtype_bytes: float, tp: int = 1,
                         pp: int = 1) -> float:
    """Bytes of weights on the busiest GPU, counted by the template in the prompt."""
    b = _pos("weight_dtype_bytes", weight_dtype_bytes)
    arch = _Arch(cfg, tp, pp)
    H = _req_int(cfg, "hidden_size")
    V = _req_int(cfg, "vocab_size")
    tie_v = _get(cfg, "tie_word_embeddings")
    tied = True if tie_v is None else bool(tie_v)
    tpf = Fraction(arch.tp)

    def elems(inv: list[tuple[str, Fraction, bool]]) -> Fraction:
        return sum((e / tpf if split else e for _, e, split in inv), Fraction(0))

    stage_elems: list[Fraction] = []
    last = len(arch.stages) - 1
    for s, layer_ids in enumerate(arch.stages):
        extra: list[tuple[str, Fraction, bool]] = []
        if s == 0:
            extra.append(("embed", Fraction(V * H), True))
        if s == last:
            extra.append(("final_norm", Fraction(H), False))
            if not (tied and arch.pp == 1):
                extra.append(("lm_head", Fraction(V * H), True))
        total = elems(extra)
        for i in layer_ids:
            total += elems(_layer_inventory(arch, i))
        stage_elems.append(total)
    return float(max(stage_elems) * b)


def kv_budget_bytes(total_bytes: float, gpu_mem_util: float, weights: float,
                    activation_peak: float, non_torch: float) -> float:
    """Bytes left for the KV cache on one GPU."""
    total = _pos("total_bytes", total_bytes)
    if not _is_num(gpu_mem_util) or not 0 < gpu_mem_util <= 1:
        raise ValueError(f"gpu_mem_util must be in (0, 1], got {gpu_mem_util!r}")
    deductions = [_nonneg("weights", weights), _nonneg("activation_peak", activation_peak),
                  _nonneg("non_torch", non_torch)]
    usable = total * Fraction(gpu_mem_util)
    left = usable - sum(deductions, Fraction(0))
    if left < 0:
        raise DoesNotFit("the model does not fit as configured")
    return float(left)


def kv_cache_tokens(kv_budget: float, per_token_bytes: float, block_size: int = 16) -> int:
    """Tokens the KV cache holds: whole blocks of ``block_size`` tokens that fit in the budget."""
    if not _is_num(kv_budget):
        raise ValueError(f"kv_budget must be a number, got {kv_budget!r}")
    pt = _pos("per_token_bytes", per_token_bytes)
    bs = _int("block_size", block_size, 1)
    if kv_budget < 0:
        raise DoesNotFit("the model does not fit as configured")
    blocks = Fraction(kv_budget) // (pt * bs)
    return int(blocks) * bs


def sliding_window_saving(cfg: dict[str, Any], context_len: int) -> float:
    """Fraction of a ``context_len``-token sequence's KV bytes that sliding windows save."""
    if not isinstance(cfg, dict):
        raise ValueError("cfg must be a dict")
    n = _int("context_len", context_len, 1)
    types = _get(cfg, "layer_types")
    if types is None:
        return 0.0
    types = list(types)
    L = len(types)
    declared = _get(cfg, "num_hidden_layers")
    if declared is not None and _int("num_hidden_layers", declared, 1) != L:
        raise ValueError("layer_types does not list every layer")
    S = sum(1 for t in types if t == "sliding_attention")
    if S == 0 or L == 0:
        return 0.0
    window = _req_int(cfg, "sliding_window")
    saved_per_sliding_layer = Fraction(max(0, n - window), n)
    return float(Fraction(S, L) * saved_per_sliding_layer)


def max_concurrency(kv_tokens: int, tokens_per_request: int,
                    cfg: dict[str, Any] | None = None) -> float:
    """How many requests of ``tokens_per_request`` tokens the cache holds at once."""
    kv = _nonneg("kv_tokens", kv_tokens)
    n = _pos("tokens_per_request", tokens_per_request)
    if cfg is None:
        return float(kv / n)
    saving = Fraction(sliding_window_saving(cfg, _int("tokens_per_request",
                                                      tokens_per_request, 1)))
    return float(kv / (n * (1 - saving)))


def effective_max_batch(kv_tokens: int, ctx_len: int, max_num_seqs: int,
                        max_num_batched_tokens: int, block_size: int = 16) -> tuple[int, str]:
    """The decode batch the engine can actually run, and which ceiling sets it."""
    kv = _int("kv_tokens", kv_tokens, 0)
    ctx = _int("ctx_len", ctx_len, 1)
    seqs = _int("max_num_seqs", max_num_seqs, 1)
    batched = _int("max_num_batched_tokens", max_num_batched_tokens, 1)
    bs = _int("block_size", block_size, 1)
    blocks_per_seq = -(-ctx // bs)
    ceilings = {
        "kv_cache": (kv // bs) // blocks_per_seq,
        "max_num_seqs": seqs,
        "max_num_batched_tokens": batched,   # one decode token per sequence
    }
    name = min(ceilings, key=ceilings.__getitem__)
    value = ceilings[name]
    if value < 1:
        raise DoesNotFit(f"not one {ctx}-token sequence fits in {kv} KV tokens")
    return value, name


def fragmentation_bound(block_size: int, num_seqs: int) -> int:
    """The most KV slots ``num_seqs`` sequences can leave allocated but empty."""
    bs = _int("block_size", block_size, 1)
    n = _int("num_seqs", num_seqs, 0)
    return n * (bs - 1)
