"""Shared by the kv_transfer tests: shipped configs and GPUs, and the prompt's model in
exact rationals, written apart from the reference (per-token coefficients, not its code).
"""

from __future__ import annotations

import numbers
from fractions import Fraction
from typing import Any

from graders.support.shipped import config, gpu, gpu_ids, model_names

LLAMA_70B = "meta-llama--Llama-3.3-70B-Instruct"
LLAMA_8B = "meta-llama--Meta-Llama-3.1-8B"
DEEPSEEK_V3 = "deepseek-ai--DeepSeek-V3"
QWEN3_32B = "Qwen--Qwen3-32B"
H100 = "nvidia-h100-sxm-80gb"
GB = 10**9


def uses_sliding_window(cfg: dict[str, Any]) -> bool:
    return ("sliding_attention" in (cfg.get("layer_types") or [])
            or (cfg.get("sliding_window") is not None and cfg.get("use_sliding_window") is not False))


def full_attention_models() -> list[str]:
    return [n for n in model_names() if not uses_sliding_window(config(n))]


def gqa_config(layers: int, heads: int, kv_heads: int, head_dim: int, window: int = 131072,
               hidden: int | None = None) -> dict[str, Any]:
    return {"num_hidden_layers": layers, "num_attention_heads": heads,
            "num_key_value_heads": kv_heads, "head_dim": head_dim,
            "hidden_size": hidden if hidden is not None else heads * head_dim,
            "max_position_embeddings": window}


def peak_gpu(tflops: Any, dtype: str = "bf16") -> dict[str, Any]:
    return {"id": "test-gpu", "tensor_tflops": {dtype: {"dense": tflops, "sparse_2_4": 2 * tflops}}}


class Exact:
    """The prompt's model for one (cfg, gpu, active, kv_dtype_bytes, mfu, dtype) setup,
    as per-token coefficients: recompute(T) = lin x T + quad x T^2."""

    def __init__(self, cfg: dict[str, Any], gpu_entry: dict[str, Any], active: int,
                 kv_bytes: int, mfu: Any, dtype: str = "bf16") -> None:
        layers, q = cfg["num_hidden_layers"], cfg["num_attention_heads"]
        if cfg.get("kv_lora_rank") is not None:
            self.per_token = (cfg["kv_lora_rank"] + cfg["qk_rope_head_dim"]) * layers * kv_bytes
            dims = cfg["qk_nope_head_dim"] + cfg["qk_rope_head_dim"] + cfg["v_head_dim"]
        else:
            d = cfg.get("head_dim") or cfg["hidden_size"] // q
            kv = cfg.get("num_key_value_heads", q)
            self.per_token = 2 * layers * kv * d * kv_bytes
            dims = 2 * d
        self.layers = layers
        self.attn = layers * q * dims                       # FLOPs per T^2
        self.active = active
        self.flops_s = Fraction(gpu_entry["tensor_tflops"][dtype]["dense"]) * 10**12 * Fraction(mfu)
        self.window = cfg.get("max_position_embeddings")

    def flops(self, t: int) -> int:
        return 2 * self.active * t + self.attn * t * t

    def recompute(self, t: int) -> Fraction:
        return self.flops(t) / self.flops_s

    def fetch(self, t: int, latency: Any, link: Any) -> Fraction:
        return Fraction(latency) + Fraction(self.per_token * t) / (Fraction(link) * GB)

    def break_even(self) -> Fraction:
        return self.per_token * self.flops_s / (2 * self.active) / GB

    def wins(self, t: int, latency: Any, link: Any) -> bool:
        return self.fetch(t, latency, link) < self.recompute(t)

    def pd(self, t: int) -> Fraction:
        return self.per_token * t / self.recompute(t) / GB

    def handoff(self, t: int, latency: Any, link: Any) -> tuple[Fraction, Fraction]:
        p = self.recompute(t)
        s = Fraction(self.per_token * t) / (Fraction(link) * GB)
        x, per_layer = s / self.layers, p / self.layers
        # the timeline: transfer i starts at max(compute end of layer i, end of transfer i-1)
        end = Fraction(0)
        for i in range(1, self.layers + 1):
            end = max(end, i * per_layer) + x
        return Fraction(latency) + s, Fraction(latency) + end - p

    def tier_value(self, t: int, latency: Any, link: Any) -> Fraction:
        return (self.recompute(t) - self.fetch(t, latency, link)) / t


def is_number(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def close(got: Any, want: Fraction, what: str, rel: Fraction = Fraction(1, 10**9),
          scale: Fraction | None = None) -> None:
    """got equals want within rel x (scale, or |want|); got is a float, int or Fraction."""
    assert is_number(got), f"{what}: expected a number, got {got!r}"
    err = abs(Fraction(got) - Fraction(want))
    bound = rel * (abs(Fraction(want)) if scale is None else scale)
    assert err <= bound, f"{what}: expected {float(want)!r} ({want}), got {got!r}"

