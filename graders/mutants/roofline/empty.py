"""Trivial answers: zeros and no errors.

Rubric: *
"""

from __future__ import annotations

from typing import Any



def ridge_point(gpu: dict[str, Any], dtype: str) -> float:
    return 0.0


def expected_experts_touched(num_experts: int, top_k: int, num_tokens: int) -> float:
    return 0.0


def weight_bytes_read(cfg: dict[str, Any], num_tokens: int, weight_bytes: float) -> float:
    return 0.0


def prefill_time_s(cfg: dict[str, Any], gpu: dict[str, Any], prompt_len: int,
                   weight_bytes: float, dtype: str = "bf16", tp: int = 1,
                   mfu: float = 1.0) -> float:
    return 0.0


def crossover_prompt_len(cfg: dict[str, Any], gpu: dict[str, Any], weight_bytes: float,
                         dtype: str = "bf16") -> int:
    return 0


def decode_step_floor_s(cfg: dict[str, Any], gpu: dict[str, Any], ctx_lens: list[int], tp: int,
                        weight_bytes: float, kv_bytes: float, dtype: str = "bf16") -> float:
    return 0.0


def mbu(cfg: dict[str, Any], gpu: dict[str, Any], ctx_lens: list[int], step_time_s: float,
        tp: int, weight_bytes: float, kv_bytes: float) -> float:
    return 0.0


def decode_tok_s(cfg: dict[str, Any], gpu: dict[str, Any], ctx_lens: list[int], tp: int,
                 weight_bytes: float, kv_bytes: float,
                 dtype: str = "bf16") -> tuple[float, float]:
    return (0.0, 0.0)


def max_decode_tok_s_per_user(cfg: dict[str, Any], gpu: dict[str, Any], n_gpus: int,
                              ctx_len: int, weight_bytes: float, kv_bytes: float,
                              dtype: str = "bf16") -> float:
    return 0.0


def kv_max_batch(cfg: dict[str, Any], kv_cache_gib: float, ctx_len: int, tp: int,
                 kv_bytes: float) -> int:
    return 0


def throughput_knee(t_fixed_s: float, t_per_seq_s: float,
                    kv_max_batch: int) -> tuple[float, float, float]:
    return (0.0, 0.0, 0.0)
