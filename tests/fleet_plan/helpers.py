"""Data shared by the fleet_plan tests: the shipped config and datasheet, a replica, checks.

Nothing here calls the implementation under test.
"""

from __future__ import annotations

import numbers
from typing import Any

import pytest

from graders.support.shipped import config, gpu

H100_SXM = "nvidia-h100-sxm-80gb"
LLAMA70 = "meta-llama--Llama-3.3-70B-Instruct"
REPLICA_KEYS = ("gpus", "params", "weight_bytes", "kv_bytes_per_token", "peak_flops",
                "bandwidth")


def dense_params(cfg: dict[str, Any]) -> int:
    """Parameters of a dense config: attention and MLP per layer, plus the LM head (the
    input embedding is a lookup: no FLOPs, and its bytes are left out as in roofline)."""
    h, layers = cfg["hidden_size"], cfg["num_hidden_layers"]
    q = cfg["num_attention_heads"]
    kv = cfg.get("num_key_value_heads") or q
    d = cfg.get("head_dim") or h // q
    return int(layers * (2 * h * d * (q + kv) + 3 * h * cfg["intermediate_size"])
               + cfg["vocab_size"] * h)


def replica(model: str = LLAMA70, gpu_id: str = H100_SXM, gpus: int = 8,
            bytes_per_elem: int = 2) -> dict[str, Any]:
    """One replica of a shipped dense model on ``gpus`` GPUs of a shipped datasheet, bf16."""
    cfg, g = config(model), gpu(gpu_id)
    q = cfg["num_attention_heads"]
    kv = cfg.get("num_key_value_heads") or q
    d = cfg.get("head_dim") or cfg["hidden_size"] // q
    params = dense_params(cfg)
    return {"gpus": gpus, "params": params, "weight_bytes": params * bytes_per_elem,
            "kv_bytes_per_token": 2 * cfg["num_hidden_layers"] * kv * d * bytes_per_elem,
            "peak_flops": g["tensor_tflops"]["bf16"]["dense"] * 1e12,
            "bandwidth": g["memory_bandwidth_gb_s"] * 1e9}


def close(got: Any, want: float, what: str, rel: float = 1e-9) -> None:
    assert isinstance(got, (int, float)) and not isinstance(got, bool), \
        f"{what}: expected a number, got {got!r}"
    assert got == pytest.approx(want, rel=rel, abs=1e-300), \
        f"{what}: expected {want!r}, got {got!r}"


def is_int(got: Any, want: int, what: str) -> None:
    assert isinstance(got, numbers.Integral) and not isinstance(got, bool), \
        f"{what}: expected an int, got {got!r}"
    assert got == want, f"{what}: expected {want}, got {got}"
