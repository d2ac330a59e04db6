"""Trivial answers: zeros, empty lists and no errors.

Rubric: *
"""

from __future__ import annotations

from typing import Any


class DoesNotFit(ValueError):
    """The model does not fit as configured."""


def pp_stage_layers(num_layers: int, pp: int) -> list[int]:
    return []


def kv_bytes_per_token(cfg: dict[str, Any], kv_dtype_bytes: float, tp: int = 1, pp: int = 1) -> float:
    return 0.0


def weight_bytes_per_gpu(cfg: dict[str, Any], weight_dtype_bytes: float, tp: int = 1, pp: int = 1) -> float:
    return 0.0


def kv_budget_bytes(total_bytes: float, gpu_mem_util: float, weights: float,
                    activation_peak: float, non_torch: float) -> float:
    return 0.0


def kv_cache_tokens(kv_budget: float, per_token_bytes: float, block_size: int = 16) -> int:
    return 0


def max_concurrency(kv_tokens: int, tokens_per_request: int, cfg: dict[str, Any] | None = None) -> float:
    return 0.0


def sliding_window_saving(cfg: dict[str, Any], context_len: int) -> float:
    return 0.0


def effective_max_batch(kv_tokens: int, ctx_len: int, max_num_seqs: int,
                        max_num_batched_tokens: int, block_size: int = 16) -> tuple[int, str]:
    return 0, "kv_cache"


def fragmentation_bound(block_size: int, num_seqs: int) -> int:
    return 0
