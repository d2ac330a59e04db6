"""roofline: ridge point, step-time floors, MBU and the throughput knee.

Fill in every function. The prompt is katas/roofline/README.md; run the public tests with
``nox -s kata -- roofline``.

Plain data only: ``cfg`` is a model's Hugging Face ``config.json`` as a dict; ``gpu`` is a
datasheet entry as shipped in ``data/gpus/*.json`` (``memory_bandwidth_gb_s`` in decimal
GB/s, ``tensor_tflops[dtype]["dense"]`` and ``["sparse_2_4"]`` in TFLOP/s). Byte sizes
of one element (``weight_bytes``, ``kv_bytes``) are plain numbers: 2 for bf16, 1 for fp8.
Times are seconds, rates per second. Bad input raises ValueError.
"""

from __future__ import annotations

from typing import Any

_PROMPT = "see katas/roofline/README.md"


def ridge_point(gpu: dict[str, Any], dtype: str) -> float:
    """FLOP per byte at which ``gpu`` stops being memory-bound: dense peak / HBM bandwidth.

    Raises ValueError when the entry gives no dense figure for ``dtype``.
    """
    raise NotImplementedError(f"ridge_point ({_PROMPT})")


def expected_experts_touched(num_experts: int, top_k: int, num_tokens: int) -> float:
    """Expected number of distinct experts (of one MoE layer) that ``num_tokens`` tokens use.

    Each token picks ``top_k`` distinct experts, every expert equally likely, tokens
    independent. 0 tokens touch 0 experts. Raises ValueError for top_k > num_experts or
    sizes out of range.
    """
    raise NotImplementedError(f"expected_experts_touched ({_PROMPT})")


def weight_bytes_read(cfg: dict[str, Any], num_tokens: int, weight_bytes: float) -> float:
    """Bytes of weights one forward pass over ``num_tokens`` tokens reads (whole model).

    Counted by the prompt's template: every layer's attention and dense MLP, the router,
    shared experts and the routed experts the tokens touch (expected value), and the LM head;
    not the input embedding.
    """
    raise NotImplementedError(f"weight_bytes_read ({_PROMPT})")


def prefill_time_s(cfg: dict[str, Any], gpu: dict[str, Any], prompt_len: int,
                   weight_bytes: float, dtype: str = "bf16", tp: int = 1,
                   mfu: float = 1.0) -> float:
    """Lower bound on the time to prefill one ``prompt_len``-token prompt on ``tp`` GPUs.

    max(prefill FLOPs / (tp x dense peak x mfu), weight bytes read / (tp x bandwidth)).
    """
    raise NotImplementedError(f"prefill_time_s ({_PROMPT})")


def crossover_prompt_len(cfg: dict[str, Any], gpu: dict[str, Any], weight_bytes: float,
                         dtype: str = "bf16") -> int:
    """The shortest prompt whose prefill is compute-bound (compute time >= memory time)."""
    raise NotImplementedError(f"crossover_prompt_len ({_PROMPT})")


def decode_step_floor_s(cfg: dict[str, Any], gpu: dict[str, Any], ctx_lens: list[int], tp: int,
                        weight_bytes: float, kv_bytes: float, dtype: str = "bf16") -> float:
    """Lower bound on one decode step of a batch with these context lengths, on ``tp`` GPUs.

    max(FLOPs per GPU / dense peak, bytes per GPU / bandwidth): one GPU's share of the work
    against one GPU's datasheet.
    """
    raise NotImplementedError(f"decode_step_floor_s ({_PROMPT})")


def mbu(cfg: dict[str, Any], gpu: dict[str, Any], ctx_lens: list[int], step_time_s: float,
        tp: int, weight_bytes: float, kv_bytes: float) -> float:
    """Model bandwidth utilisation of a decode step that took ``step_time_s``.

    (bytes one GPU must read in the step / step_time_s) / that GPU's peak bandwidth.
    """
    raise NotImplementedError(f"mbu ({_PROMPT})")


def decode_tok_s(cfg: dict[str, Any], gpu: dict[str, Any], ctx_lens: list[int], tp: int,
                 weight_bytes: float, kv_bytes: float,
                 dtype: str = "bf16") -> tuple[float, float]:
    """(tokens/s each user sees, tokens/s the whole batch produces) at the decode floor."""
    raise NotImplementedError(f"decode_tok_s ({_PROMPT})")


def max_decode_tok_s_per_user(cfg: dict[str, Any], gpu: dict[str, Any], n_gpus: int,
                              ctx_len: int, weight_bytes: float, kv_bytes: float,
                              dtype: str = "bf16") -> float:
    """The fastest one user can be served: a batch of one on ``n_gpus`` GPUs (tensor parallel)."""
    raise NotImplementedError(f"max_decode_tok_s_per_user ({_PROMPT})")


def kv_max_batch(cfg: dict[str, Any], kv_cache_gib: float, ctx_len: int, tp: int,
                 kv_bytes: float) -> int:
    """How many ``ctx_len``-token sequences fit in ``kv_cache_gib`` GiB of KV cache per GPU."""
    raise NotImplementedError(f"kv_max_batch ({_PROMPT})")


def throughput_knee(t_fixed_s: float, t_per_seq_s: float,
                    kv_max_batch: int) -> tuple[float, float, float]:
    """For step time t(B) = t_fixed_s + B x t_per_seq_s:

    (knee batch where throughput reaches half its ceiling, the ceiling in tokens/s,
    the aggregate tokens/s at the largest batch the KV cache allows).
    """
    raise NotImplementedError(f"throughput_knee ({_PROMPT})")
