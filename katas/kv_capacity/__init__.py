"""kv_capacity: the memory budget around the KV-cache formula.

Fill in every function. The prompt is katas/kv_capacity/README.md; run the public tests with
``nox -s kata -- kv_capacity``.

Every function takes plain data: ``cfg`` is a model's Hugging Face ``config.json`` as a dict,
byte counts are plain numbers of bytes (1 GiB = 2**30 bytes). Bad input raises ValueError.
"""

from __future__ import annotations

from typing import Any

_PROMPT = "see katas/kv_capacity/README.md"


class DoesNotFit(ValueError):
    """The model does not fit as configured: no memory is left for the KV cache."""


def pp_stage_layers(num_layers: int, pp: int) -> list[int]:
    """How many decoder layers each of the ``pp`` pipeline stages holds, first stage first.

    Every stage gets ``num_layers // pp`` layers; the ``num_layers % pp`` leftover layers go
    one each to the stages just before the last one (stage pp-2, then pp-3, ...), never to
    the last stage, which also runs the final norm and the LM head.
    Raises ValueError unless ``1 <= pp <= num_layers``.
    """
    raise NotImplementedError(f"pp_stage_layers ({_PROMPT})")


def kv_bytes_per_token(cfg: dict[str, Any], kv_dtype_bytes: float, tp: int = 1,
                       pp: int = 1) -> float:
    """Bytes of KV cache one token occupies on the busiest GPU.

    GQA/MHA: 2 (K and V) x layers x KV heads per GPU x head_dim x kv_dtype_bytes, where KV
    heads per GPU = max(1, num_key_value_heads / tp) (replicated once tp passes the KV head
    count). MLA (``kv_lora_rank`` set): (kv_lora_rank + qk_rope_head_dim) x layers x bytes,
    the same on every TP rank. Layers = the busiest pipeline stage's layer count.
    Raises ValueError for bad sizes or a tp the heads cannot be split by.
    """
    raise NotImplementedError(f"kv_bytes_per_token ({_PROMPT})")


def weight_bytes_per_gpu(cfg: dict[str, Any], weight_dtype_bytes: float, tp: int = 1,
                         pp: int = 1) -> float:
    """Bytes of weights on the busiest GPU, counted by the template in the prompt.

    Embedding, attention, MLP or every expert, norms, and the LM head unless tied; split
    where tensor parallelism shards a tensor; the heaviest pipeline stage.
    Raises ValueError as ``kv_bytes_per_token`` does.
    """
    raise NotImplementedError(f"weight_bytes_per_gpu ({_PROMPT})")


def kv_budget_bytes(total_bytes: float, gpu_mem_util: float, weights: float,
                    activation_peak: float, non_torch: float) -> float:
    """Bytes left for the KV cache on one GPU.

    The engine may use ``total_bytes x gpu_mem_util`` (of the GPU's total memory, not of
    what is free), minus the weights, the activation peak and the memory used outside the
    framework's allocator. Raises DoesNotFit when that is negative; ValueError for a
    utilisation outside (0, 1] or a negative input.
    """
    raise NotImplementedError(f"kv_budget_bytes ({_PROMPT})")


def kv_cache_tokens(kv_budget: float, per_token_bytes: float, block_size: int = 16) -> int:
    """Tokens the KV cache holds: whole blocks of ``block_size`` tokens that fit in the budget.

    Raises DoesNotFit for a negative budget; ValueError for a non-positive per-token size
    or block size.
    """
    raise NotImplementedError(f"kv_cache_tokens ({_PROMPT})")


def max_concurrency(kv_tokens: int, tokens_per_request: int,
                    cfg: dict[str, Any] | None = None) -> float:
    """How many requests of ``tokens_per_request`` tokens the cache holds at once.

    Without ``cfg``: kv_tokens / tokens_per_request. With ``cfg``, sliding-window layers
    keep only their window, so a request costs tokens_per_request x (1 - saving) where
    saving = ``sliding_window_saving(cfg, tokens_per_request)``.
    Raises ValueError for a non-positive request length or negative kv_tokens.
    """
    raise NotImplementedError(f"max_concurrency ({_PROMPT})")


def sliding_window_saving(cfg: dict[str, Any], context_len: int) -> float:
    """Fraction of a ``context_len``-token sequence's KV bytes that sliding windows save.

    A layer whose ``layer_types`` entry is "sliding_attention" keeps at most
    ``sliding_window`` tokens; every other layer keeps all of them. 0.0 for a config
    without ``layer_types``. Raises ValueError for context_len < 1.
    """
    raise NotImplementedError(f"sliding_window_saving ({_PROMPT})")


def effective_max_batch(kv_tokens: int, ctx_len: int, max_num_seqs: int,
                        max_num_batched_tokens: int, block_size: int = 16) -> tuple[int, str]:
    """The decode batch the engine can actually run, and which ceiling sets it.

    Three ceilings: "kv_cache" (sequences of ``ctx_len`` tokens whose blocks all fit),
    "max_num_seqs", and "max_num_batched_tokens" (one token per sequence per decode step).
    Returns (lowest ceiling, its name); on a tie any of the tied names is right.
    Raises DoesNotFit when not one sequence of ``ctx_len`` fits; ValueError for bad sizes.
    """
    raise NotImplementedError(f"effective_max_batch ({_PROMPT})")


def fragmentation_bound(block_size: int, num_seqs: int) -> int:
    """The most KV slots ``num_seqs`` sequences can leave allocated but empty.

    Raises ValueError for block_size < 1 or num_seqs < 0.
    """
    raise NotImplementedError(f"fragmentation_bound ({_PROMPT})")
