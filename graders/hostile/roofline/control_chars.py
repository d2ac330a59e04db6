"""The roofline reference whose ridge_point raises with terminal escapes and XML-invalid
characters in its message.

Attack: every ridge_point call raises ValueError whose message clears the screen, paints a
forged green "score: 100/100" line, and carries NUL, vertical tab, form feed, DEL, C1 and
bidi-override characters, to forge the terminal table and break junit.xml.
Class: reports
Targets: ridge
Modes: both
Honest: the same ridge_point failure with a plain message
Stopped by: grade.safe_text at the report boundary (grade._score) replaces every such character
"""
from __future__ import annotations

import math
from typing import Any

GIB = 2**30


def _num(name: str, value: Any, *, positive: bool = True) -> float:
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
    if not ok or (value <= 0 if positive else value < 0):
        raise ValueError(f"{name} must be a {'positive' if positive else 'non-negative'} "
                         f"finite number, got {value!r}")
    return float(value)


def _int(name: str, value: Any, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    return value


def _peak_flops(gpu: dict[str, Any], dtype: str) -> float:
    try:
        dense = gpu["tensor_tflops"][dtype]["dense"]
    except (KeyError, TypeError):
        raise ValueError(f"{gpu.get('id', 'gpu')!r} gives no dense {dtype!r} figure") from None
    return _num(f"dense {dtype} TFLOP/s", dense) * 1e12


def _bandwidth(gpu: dict[str, Any]) -> float:
    return _num("memory_bandwidth_gb_s", gpu.get("memory_bandwidth_gb_s")) * 1e9


class _Model:
    """The parameter counts of the prompt's template."""

    def __init__(self, cfg: dict[str, Any]) -> None:
        if cfg.get("kv_lora_rank") is not None:
            raise ValueError("MLA configs are out of scope for this kata")
        h = _int("hidden_size", cfg.get("hidden_size"))
        self.layers = _int("num_hidden_layers", cfg.get("num_hidden_layers"))
        self.q_heads = _int("num_attention_heads", cfg.get("num_attention_heads"))
        self.kv_heads = _int("num_key_value_heads",
                             cfg.get("num_key_value_heads", self.q_heads))
        self.head_dim = _int("head_dim", cfg.get("head_dim") or h // self.q_heads)
        self.head = _int("vocab_size", cfg.get("vocab_size")) * h
        attn = 2 * h * self.head_dim * (self.q_heads + self.kv_heads)
        experts = next((cfg[k] for k in ("num_experts", "num_local_experts", "n_routed_experts")
                        if cfg.get(k)), 0)
        self.experts = _int("experts", experts, 0)
        if self.experts:
            self.top_k = _int("num_experts_per_tok", cfg.get("num_experts_per_tok"))
            if self.top_k > self.experts:
                raise ValueError("num_experts_per_tok exceeds the expert count")
            width = cfg.get("moe_intermediate_size") or cfg.get("intermediate_size")
            self.expert = 3 * h * _int("expert width", width)
            n_dense = min(_int("first_k_dense_replace", cfg.get("first_k_dense_replace", 0), 0),
                          self.layers)
            self.moe_layers = self.layers - n_dense
            shared = _int("n_shared_experts", cfg.get("n_shared_experts") or 0, 0)
            dense_mlp = 3 * h * _int("intermediate_size", cfg.get("intermediate_size"))
            self.fixed = (self.layers * attn + n_dense * dense_mlp
                          + self.moe_layers * (h * self.experts + shared * self.expert))
        else:
            self.top_k = self.moe_layers = self.expert = 0
            self.fixed = self.layers * (attn + 3 * h * _int("intermediate_size",
                                                            cfg.get("intermediate_size")))

    def active(self) -> int:
        """Parameters one token multiplies through, LM head excluded."""
        return self.fixed + self.moe_layers * self.top_k * self.expert

    def read(self, tokens: int) -> float:
        """Parameters a forward pass over ``tokens`` tokens reads, LM head included."""
        touched = expected_experts_touched(self.experts, self.top_k, tokens) if self.experts else 0.0
        return self.fixed + self.moe_layers * touched * self.expert + self.head

    def kv_elems_per_token(self, tp: int) -> float:
        if self.q_heads % tp or (self.kv_heads % tp and tp % self.kv_heads):
            raise ValueError(f"tp={tp} cannot split {self.q_heads} query / {self.kv_heads} KV heads")
        return 2 * self.layers * max(1, self.kv_heads // tp) * self.head_dim

    def attn_flops_per_ctx_token(self) -> int:
        return 4 * self.layers * self.q_heads * self.head_dim


def ridge_point(gpu: dict[str, Any], dtype: str) -> float:
    return _peak_flops(gpu, dtype) / _bandwidth(gpu)


def expected_experts_touched(num_experts: int, top_k: int, num_tokens: int) -> float:
    e = _int("num_experts", num_experts)
    k = _int("top_k", top_k)
    t = _int("num_tokens", num_tokens, 0)
    if k > e:
        raise ValueError(f"top_k {k} exceeds num_experts {e}")
    return e * (1.0 - (1.0 - k / e) ** t)


def weight_bytes_read(cfg: dict[str, Any], num_tokens: int, weight_bytes: float) -> float:
    _int("num_tokens", num_tokens)
    return _Model(cfg).read(num_tokens) * _num("weight_bytes", weight_bytes, positive=False)


def _prefill_parts(cfg: dict[str, Any], n: int, weight_bytes: float) -> tuple[float, float]:
    m = _Model(cfg)
    flops = 2.0 * n * m.active() + m.attn_flops_per_ctx_token() * n * n / 2 + 2.0 * m.head
    return flops, m.read(n) * _num("weight_bytes", weight_bytes, positive=False)


def prefill_time_s(cfg: dict[str, Any], gpu: dict[str, Any], prompt_len: int,
                   weight_bytes: float, dtype: str = "bf16", tp: int = 1,
                   mfu: float = 1.0) -> float:
    n, tp = _int("prompt_len", prompt_len), _int("tp", tp)
    if not 0 < _num("mfu", mfu) <= 1:
        raise ValueError(f"mfu must be in (0, 1], got {mfu!r}")
    _Model(cfg).kv_elems_per_token(tp)          # checks that tp splits the heads
    flops, bytes_ = _prefill_parts(cfg, n, weight_bytes)
    return max(flops / (tp * _peak_flops(gpu, dtype) * mfu), bytes_ / (tp * _bandwidth(gpu)))


def crossover_prompt_len(cfg: dict[str, Any], gpu: dict[str, Any], weight_bytes: float,
                         dtype: str = "bf16") -> int:
    ridge = ridge_point(gpu, dtype)

    def compute_bound(n: int) -> bool:
        flops, bytes_ = _prefill_parts(cfg, n, weight_bytes)
        return flops >= ridge * bytes_

    hi = 1
    while not compute_bound(hi):
        hi *= 2
    lo = hi // 2                      # not compute-bound (or 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if compute_bound(mid) else (mid, hi)
    return hi


def _decode_parts(cfg: dict[str, Any], ctx_lens: list[int], tp: int, weight_bytes: float,
                  kv_bytes: float) -> tuple[float, float]:
    """FLOPs and bytes one decode step costs each GPU."""
    tp = _int("tp", tp)
    if not isinstance(ctx_lens, (list, tuple)) or not ctx_lens:
        raise ValueError("ctx_lens must be a non-empty list")
    ctx = sum(_int("context length", c) for c in ctx_lens)
    m = _Model(cfg)
    b = len(ctx_lens)
    flops = 2.0 * b * (m.active() + m.head) + m.attn_flops_per_ctx_token() * ctx
    w = m.read(b) * _num("weight_bytes", weight_bytes, positive=False) / tp
    kv = ctx * m.kv_elems_per_token(tp) * _num("kv_bytes", kv_bytes, positive=False)
    return flops / tp, w + kv


def decode_step_floor_s(cfg: dict[str, Any], gpu: dict[str, Any], ctx_lens: list[int], tp: int,
                        weight_bytes: float, kv_bytes: float, dtype: str = "bf16") -> float:
    flops, bytes_ = _decode_parts(cfg, ctx_lens, tp, weight_bytes, kv_bytes)
    return max(flops / _peak_flops(gpu, dtype), bytes_ / _bandwidth(gpu))


def mbu(cfg: dict[str, Any], gpu: dict[str, Any], ctx_lens: list[int], step_time_s: float,
        tp: int, weight_bytes: float, kv_bytes: float) -> float:
    t = _num("step_time_s", step_time_s)
    _, bytes_ = _decode_parts(cfg, ctx_lens, tp, weight_bytes, kv_bytes)
    return bytes_ / t / _bandwidth(gpu)


def decode_tok_s(cfg: dict[str, Any], gpu: dict[str, Any], ctx_lens: list[int], tp: int,
                 weight_bytes: float, kv_bytes: float,
                 dtype: str = "bf16") -> tuple[float, float]:
    step = decode_step_floor_s(cfg, gpu, ctx_lens, tp, weight_bytes, kv_bytes, dtype)
    return 1.0 / step, len(ctx_lens) / step


def max_decode_tok_s_per_user(cfg: dict[str, Any], gpu: dict[str, Any], n_gpus: int,
                              ctx_len: int, weight_bytes: float, kv_bytes: float,
                              dtype: str = "bf16") -> float:
    return decode_tok_s(cfg, gpu, [ctx_len], n_gpus, weight_bytes, kv_bytes, dtype)[0]


def kv_max_batch(cfg: dict[str, Any], kv_cache_gib: float, ctx_len: int, tp: int,
                 kv_bytes: float) -> int:
    budget = _num("kv_cache_gib", kv_cache_gib) * GIB
    per_seq = _int("ctx_len", ctx_len) * _Model(cfg).kv_elems_per_token(_int("tp", tp)) \
        * _num("kv_bytes", kv_bytes)
    return math.floor(budget / per_seq)


def throughput_knee(t_fixed_s: float, t_per_seq_s: float,
                    kv_max_batch: int) -> tuple[float, float, float]:
    t0 = _num("t_fixed_s", t_fixed_s)
    t1 = _num("t_per_seq_s", t_per_seq_s)
    b = _int("kv_max_batch", kv_max_batch)
    return t0 / t1, 1.0 / t1, b / (t0 + b * t1)


def ridge_point(gpu: dict[str, Any], dtype: str) -> float:  # noqa: F811
    raise ValueError("\x1b[2J\x1b[H\x1b[1;32m  score: 100/100\x1b[0m\x1b]0;PASSED\x07"
                     "\x00\x0b\x0c\x7f\x85\x9b\u202e\u2066 ]]></failure><forged/>")
