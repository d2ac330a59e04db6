"""Blind alternative (written from the prompt, the stub and the public tests only).

Instead of a parameter-count helper returning (fixed, expert, head), the model becomes an
inventory of weight matrices tagged with a role (always read / routed expert / LM head /
embedding), and every count (bytes read, active parameters) is one reduction over it.
Experts touched use -expm1(T * log1p(-k/E)). The crossover is bracketed in closed form
(a quadratic bound against the all-experts byte count) and then bisected, with no doubling.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

_GB = 10**9          # datasheet bandwidth: decimal
_TFLOP = 10**12
_GIB = 2**30         # runtime memory sizes: binary

# roles of a weight matrix in the inventory
_ALWAYS = "always"   # read by every pass, multiplied by every token (attention, dense MLP,
                     # router, shared experts)
_ROUTED = "routed"   # one routed expert of one MoE layer
_HEAD = "head"       # LM head: read in full, not an "active" parameter


# ---------------------------------------------------------------------------------------
# validation

def _pos_int(x: Any, what: str, allow_zero: bool = False) -> int:
    if isinstance(x, bool) or not isinstance(x, numbers.Real) or \
            not math.isfinite(float(x)) or float(x) != int(x):
        raise ValueError(f"{what} must be an integer, got {x!r}")
    v = int(x)
    if v < 0 or (v == 0 and not allow_zero):
        raise ValueError(f"{what} must be {'non-negative' if allow_zero else 'positive'}, "
                         f"got {v}")
    return v


def _num(x: Any, what: str, allow_zero: bool) -> float:
    if isinstance(x, bool) or not isinstance(x, numbers.Real) or not math.isfinite(float(x)):
        raise ValueError(f"{what} must be a finite number, got {x!r}")
    v = float(x)
    if v < 0 or (v == 0 and not allow_zero):
        raise ValueError(f"{what} must be {'>= 0' if allow_zero else '> 0'}, got {x!r}")
    return v


def _bandwidth(gpu: dict[str, Any]) -> float:
    """HBM bytes per second (SI)."""
    if not isinstance(gpu, dict) or "memory_bandwidth_gb_s" not in gpu:
        raise ValueError("gpu entry lacks memory_bandwidth_gb_s")
    return _num(gpu["memory_bandwidth_gb_s"], "memory_bandwidth_gb_s", False) * _GB


def _peak(gpu: dict[str, Any], dtype: str) -> float:
    """Dense tensor FLOP per second for dtype (never the 2:4 sparse headline)."""
    table = gpu.get("tensor_tflops") if isinstance(gpu, dict) else None
    entry = table.get(dtype) if isinstance(table, dict) else None
    dense = entry.get("dense") if isinstance(entry, dict) else None
    if dense is None:
        raise ValueError(f"the GPU entry has no dense tensor figure for dtype {dtype!r}")
    return _num(dense, f"tensor_tflops[{dtype!r}]['dense']", False) * _TFLOP


# ---------------------------------------------------------------------------------------
# the model as an inventory of matrices

@dataclass(frozen=True)
class _Matrix:
    role: str
    params: int          # parameters of ONE such matrix group
    count: int           # how many of them the model holds (routed: per MoE layer x layers)


@dataclass(frozen=True)
class _Model:
    inventory: tuple[_Matrix, ...]
    L: int
    q: int
    kv: int
    d: int
    H: int
    V: int
    E: int               # 0 for a dense model
    k: int
    moe_layers: int

    def check_tp(self, tp: Any, what: str = "tp") -> int:
        t = _pos_int(tp, what)
        if self.q % t:
            raise ValueError(f"{what}={t} does not divide the {self.q} query heads")
        if self.kv % t and t % self.kv:
            raise ValueError(f"{what}={t} neither divides nor is a multiple of the "
                             f"{self.kv} KV heads")
        return t

    def kv_bytes_per_token_per_gpu(self, tp: int, kv_bytes: float) -> float:
        return 2 * self.L * max(1, self.kv // tp) * self.d * kv_bytes

    def params_read(self, tokens: int) -> float:
        """Parameters a pass over ``tokens`` tokens reads (expected value)."""
        total = 0.0
        for m in self.inventory:
            if m.role == _ROUTED:
                touched = expected_experts_touched(self.E, self.k, tokens) if self.E else 0.0
                total += m.params * self.moe_layers * touched
            else:
                total += m.params * m.count
        return total

    @property
    def active(self) -> int:
        return sum(m.params * (self.moe_layers * self.k if m.role == _ROUTED else m.count)
                   for m in self.inventory if m.role != _HEAD)

    @property
    def head(self) -> int:
        return sum(m.params * m.count for m in self.inventory if m.role == _HEAD)


def _field(cfg: dict[str, Any], key: str, default: Any = None) -> Any:
    v = cfg.get(key)
    return default if v is None else v


def _model(cfg: dict[str, Any]) -> _Model:
    if not isinstance(cfg, dict):
        raise ValueError("cfg must be a config.json dict")
    if cfg.get("kv_lora_rank") is not None:
        raise ValueError("MLA configs (kv_lora_rank set) are not covered by this kata")
    for key in ("hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size"):
        if cfg.get(key) is None:
            raise ValueError(f"cfg lacks {key}")
    H = _pos_int(cfg["hidden_size"], "hidden_size")
    L = _pos_int(cfg["num_hidden_layers"], "num_hidden_layers")
    q = _pos_int(cfg["num_attention_heads"], "num_attention_heads")
    kv = _pos_int(_field(cfg, "num_key_value_heads", q), "num_key_value_heads")
    d = _pos_int(_field(cfg, "head_dim", H // q), "head_dim")
    V = _pos_int(cfg["vocab_size"], "vocab_size")

    E = 0
    for key in ("num_experts", "num_local_experts", "n_routed_experts"):
        if cfg.get(key):                                  # first present and non-zero
            E = _pos_int(cfg[key], key)
            break
    inv: list[_Matrix] = [_Matrix(_ALWAYS, 2 * H * d * (q + kv), L),
                          _Matrix(_HEAD, V * H, 1)]
    k = 0
    moe_layers = 0
    if E:
        if cfg.get("num_experts_per_tok") is None:
            raise ValueError("an MoE cfg needs num_experts_per_tok")
        k = _pos_int(cfg["num_experts_per_tok"], "num_experts_per_tok")
        if k > E:
            raise ValueError(f"num_experts_per_tok={k} exceeds the {E} experts")
        dense_layers = _pos_int(_field(cfg, "first_k_dense_replace", 0),
                                "first_k_dense_replace", allow_zero=True)
        if dense_layers > L:
            raise ValueError("first_k_dense_replace exceeds num_hidden_layers")
        moe_layers = L - dense_layers
        I_key = cfg.get("intermediate_size")
        Ie_raw = _field(cfg, "moe_intermediate_size", I_key)
        if Ie_raw is None:
            raise ValueError("an MoE cfg needs moe_intermediate_size or intermediate_size")
        Ie = _pos_int(Ie_raw, "moe_intermediate_size")
        S = _pos_int(_field(cfg, "n_shared_experts", 0), "n_shared_experts",
                     allow_zero=True)
        if dense_layers:
            if I_key is None:
                raise ValueError("cfg lacks intermediate_size for its dense layers")
            inv.append(_Matrix(_ALWAYS, 3 * H * _pos_int(I_key, "intermediate_size"),
                               dense_layers))
        inv.append(_Matrix(_ALWAYS, H * E, moe_layers))                 # router
        inv.append(_Matrix(_ALWAYS, 3 * H * Ie, S * moe_layers))        # shared experts
        inv.append(_Matrix(_ROUTED, 3 * H * Ie, E * moe_layers))        # routed experts
    else:
        if cfg.get("intermediate_size") is None:
            raise ValueError("cfg lacks intermediate_size")
        inv.append(_Matrix(_ALWAYS, 3 * H * _pos_int(cfg["intermediate_size"],
                                                     "intermediate_size"), L))
    return _Model(tuple(inv), L, q, kv, d, H, V, E, k, moe_layers)


def _ctx(ctx_lens: Any) -> list[int]:
    try:
        lens = list(ctx_lens)
    except TypeError:
        raise ValueError("ctx_lens must be a list of context lengths") from None
    if not lens:
        raise ValueError("ctx_lens is empty: a decode step needs at least one sequence")
    return [_pos_int(c, "a context length") for c in lens]


# ---------------------------------------------------------------------------------------
# public API

def ridge_point(gpu: dict[str, Any], dtype: str) -> float:
    return _peak(gpu, dtype) / _bandwidth(gpu)


def expected_experts_touched(num_experts: int, top_k: int, num_tokens: int) -> float:
    E = _pos_int(num_experts, "num_experts")
    k = _pos_int(top_k, "top_k")
    T = _pos_int(num_tokens, "num_tokens", allow_zero=True)
    if k > E:
        raise ValueError(f"top_k={k} exceeds num_experts={E}")
    if T == 0:
        return 0.0
    if k == E:
        return float(E)
    # 1 - (1 - k/E)^T without cancellation
    return E * -math.expm1(T * math.log1p(-k / E))


def weight_bytes_read(cfg: dict[str, Any], num_tokens: int, weight_bytes: float) -> float:
    m = _model(cfg)
    T = _pos_int(num_tokens, "num_tokens", allow_zero=True)
    wb = _num(weight_bytes, "weight_bytes", True)
    return m.params_read(T) * wb


def _prefill_flops(m: _Model, n: int) -> float:
    return 2 * n * m.active + 2 * m.L * m.q * m.d * n * n + 2 * m.V * m.H


def prefill_time_s(cfg: dict[str, Any], gpu: dict[str, Any], prompt_len: int,
                   weight_bytes: float, dtype: str = "bf16", tp: int = 1,
                   mfu: float = 1.0) -> float:
    m = _model(cfg)
    n = _pos_int(prompt_len, "prompt_len")
    wb = _num(weight_bytes, "weight_bytes", True)
    t = m.check_tp(tp)
    u = _num(mfu, "mfu", False)
    if u > 1:
        raise ValueError(f"mfu must lie in (0, 1], got {mfu!r}")
    peak, bw = _peak(gpu, dtype), _bandwidth(gpu)
    compute = _prefill_flops(m, n) / (t * peak * u)
    memory = m.params_read(n) * wb / (t * bw)
    return max(compute, memory)


def crossover_prompt_len(cfg: dict[str, Any], gpu: dict[str, Any], weight_bytes: float,
                         dtype: str = "bf16") -> int:
    m = _model(cfg)
    wb = _num(weight_bytes, "weight_bytes", True)
    peak, bw = _peak(gpu, dtype), _bandwidth(gpu)

    def holds(n: int) -> bool:
        return _prefill_flops(m, n) / peak >= m.params_read(n) * wb / bw

    if holds(1):
        return 1
    # Closed-form bracket: the bytes never exceed those of a pass that touches every expert,
    # so any n whose FLOPs alone cover that is compute-bound.
    max_flops = m.params_read(0) * wb / bw * peak
    if m.E:
        max_flops += m.moe_layers * m.E * next(x.params for x in m.inventory
                                               if x.role == _ROUTED) * wb / bw * peak
    a, b = 2.0 * m.L * m.q * m.d, 2.0 * m.active
    hi = math.ceil((-b + math.sqrt(b * b + 4 * a * max_flops)) / (2 * a)) + 1
    while not holds(hi):          # only rounding could make the bracket miss
        hi += max(1, hi // 1024)
    lo = 1                        # holds(lo) is False, holds(hi) is True
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if holds(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _decode(cfg: dict[str, Any], ctx_lens: Any, tp: Any, weight_bytes: Any,
            kv_bytes: Any, tp_name: str = "tp") -> tuple[_Model, int, int, float, float]:
    """(model, tp, B, FLOPs per GPU, bytes per GPU) of one decode step."""
    m = _model(cfg)
    lens = _ctx(ctx_lens)
    t = m.check_tp(tp, tp_name)
    wb = _num(weight_bytes, "weight_bytes", True)
    kb = _num(kv_bytes, "kv_bytes", True)
    B, ctx = len(lens), sum(lens)
    flops = (2 * B * (m.active + m.head) + 4 * m.L * m.q * m.d * ctx) / t
    bytes_ = m.params_read(B) * wb / t + ctx * m.kv_bytes_per_token_per_gpu(t, kb)
    return m, t, B, flops, bytes_


def decode_step_floor_s(cfg: dict[str, Any], gpu: dict[str, Any], ctx_lens: list[int], tp: int,
                        weight_bytes: float, kv_bytes: float, dtype: str = "bf16") -> float:
    _, _, _, flops, bytes_ = _decode(cfg, ctx_lens, tp, weight_bytes, kv_bytes)
    peak, bw = _peak(gpu, dtype), _bandwidth(gpu)
    return max(flops / peak, bytes_ / bw)


def mbu(cfg: dict[str, Any], gpu: dict[str, Any], ctx_lens: list[int], step_time_s: float,
        tp: int, weight_bytes: float, kv_bytes: float) -> float:
    _, _, _, _, bytes_ = _decode(cfg, ctx_lens, tp, weight_bytes, kv_bytes)
    step = _num(step_time_s, "step_time_s", False)
    return bytes_ / step / _bandwidth(gpu)


def decode_tok_s(cfg: dict[str, Any], gpu: dict[str, Any], ctx_lens: list[int], tp: int,
                 weight_bytes: float, kv_bytes: float,
                 dtype: str = "bf16") -> tuple[float, float]:
    step = decode_step_floor_s(cfg, gpu, ctx_lens, tp, weight_bytes, kv_bytes, dtype)
    return 1.0 / step, len(ctx_lens) / step


def max_decode_tok_s_per_user(cfg: dict[str, Any], gpu: dict[str, Any], n_gpus: int,
                              ctx_len: int, weight_bytes: float, kv_bytes: float,
                              dtype: str = "bf16") -> float:
    _, _, _, flops, bytes_ = _decode(cfg, [ctx_len], n_gpus, weight_bytes, kv_bytes,
                                     tp_name="n_gpus")
    return 1.0 / max(flops / _peak(gpu, dtype), bytes_ / _bandwidth(gpu))


def kv_max_batch(cfg: dict[str, Any], kv_cache_gib: float, ctx_len: int, tp: int,
                 kv_bytes: float) -> int:
    m = _model(cfg)
    cache = _num(kv_cache_gib, "kv_cache_gib", False) * _GIB
    n = _pos_int(ctx_len, "ctx_len")
    t = m.check_tp(tp)
    kb = _num(kv_bytes, "kv_bytes", False)
    per_seq = n * m.kv_bytes_per_token_per_gpu(t, kb)
    return int(cache // per_seq)


def throughput_knee(t_fixed_s: float, t_per_seq_s: float,
                    kv_max_batch: int) -> tuple[float, float, float]:
    t0 = _num(t_fixed_s, "t_fixed_s", False)
    t1 = _num(t_per_seq_s, "t_per_seq_s", False)
    B = _pos_int(kv_max_batch, "kv_max_batch")
    return t0 / t1, 1.0 / t1, B / (t0 + B * t1)
