"""engine_overheads: the costs an engine pays outside the kernels.

Fill in every function. The prompt is katas/engine_overheads/README.md; run the public tests
with ``nox -s kata -- engine_overheads``.

Plain data and exact integers only: every count, size, byte figure and cost is a Python int
(a bool is not an int), every answer is an int (or a list or dict of them), so nothing is
rounded. Bad input raises ValueError and changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

_PROMPT = "see katas/engine_overheads/README.md"

MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
"""The linear layers of a dense decoder layer that a LoRA adapter can target."""


def vllm_capture_sizes(max_num_seqs: int, max_num_batched_tokens: int,
                       num_speculative_tokens: int = 0,
                       max_capture_size: int | None = None) -> list[int]:
    """The CUDA-graph capture sizes (tokens per step, ascending) of vLLM's default rule:
    top = max_capture_size, or min(max_num_seqs x (1 + num_speculative_tokens) x 2, 512)
    when None, then capped at max_num_batched_tokens; the sizes are 1, 2, 4 (those <= top),
    the multiples of 8 from 8 below 256 up to top, and 256, 272, ... (step 16) up to top."""
    raise NotImplementedError(f"vllm_capture_sizes ({_PROMPT})")


def padded_size(num_tokens: int, capture_sizes: Sequence[int]) -> int | None:
    """The size a step of ``num_tokens`` tokens (>= 1) is padded to: the smallest capture size
    >= num_tokens, or None when it exceeds every size (the step runs eagerly, unpadded).
    ``capture_sizes``: a non-empty list of ints >= 1, in any order, repeats allowed."""
    raise NotImplementedError(f"padded_size ({_PROMPT})")


def padding_waste(step_counts: Mapping[int, int],
                  capture_sizes: Sequence[int]) -> dict[str, int]:
    """Totals over a histogram of steps, ``step_counts`` = {tokens in the step (>= 1): number
    of such steps (>= 0)}: ``steps``, ``graph_steps`` (those replayed on a graph),
    ``real_tokens`` and ``padding_tokens`` (padded size - tokens, summed over graph steps).
    The waste is padding_tokens / real_tokens, exact as a fraction."""
    raise NotImplementedError(f"padding_waste ({_PROMPT})")


def capture_ledger(policies: Mapping[str, Sequence[int]], graph_bytes: Mapping[int, int],
                   pool_bytes: Mapping[int, int], kv_bytes: int,
                   page_bytes: int) -> dict[str, dict[str, int]]:
    """For each policy (name -> its capture sizes, possibly empty): ``graph_bytes`` (the sum
    of each distinct size's own bytes plus the largest pool need among its sizes), ``kv_pages``
    ((kv_bytes - graph_bytes) // page_bytes) and ``kv_pages_lost`` (kv_bytes // page_bytes -
    kv_pages). ``kv_bytes`` is what the KV cache gets with no graphs at all. ValueError when a
    size has no entry in graph_bytes or pool_bytes, or a policy's graphs exceed kv_bytes."""
    raise NotImplementedError(f"capture_ledger ({_PROMPT})")


def lora_sub_batches(adapters: Sequence[str | None], max_loras: int) -> list[list[int]]:
    """The steps that serve one batch of requests, request i using adapter ``adapters[i]``
    (None: the base model), when a step may hold at most ``max_loras`` distinct adapters.
    Each step scans the waiting requests in order and admits one when it uses no adapter,
    an adapter already in the step, or a new adapter while the step has fewer than max_loras;
    the others wait, in order, for the next step. One list of request indices per step."""
    raise NotImplementedError(f"lora_sub_batches ({_PROMPT})")


def lora_step_cost(adapters: Sequence[str | None], tokens: Sequence[int], max_loras: int,
                   base_cost: int, adapter_cost: int, token_cost: int) -> int:
    """The cost of serving the batch (request i scores ``tokens[i]`` >= 1 tokens) as
    lora_sub_batches splits it: each step costs base_cost + adapter_cost x its distinct
    adapters + token_cost x the tokens of its requests that use an adapter."""
    raise NotImplementedError(f"lora_step_cost ({_PROMPT})")


def lora_memory(cfg: Mapping[str, Any], dtype_bytes: int, adapter_ranks: Sequence[int],
                adapter_targets: Sequence[str], max_loras: int,
                max_lora_rank: int) -> dict[str, Any]:
    """LoRA memory of a dense model (``cfg``: a Hugging Face config.json dict):
    ``adapter_bytes`` (one int per adapter: its rank x the sum over the targeted modules of
    every layer of (in + out) x dtype_bytes), ``slot_bytes`` (one GPU slot: max_lora_rank over
    all of MODULES) and ``gpu_bytes`` (max_loras slots). ValueError for an MoE config, an
    unknown or repeated target, or an adapter rank above max_lora_rank."""
    raise NotImplementedError(f"lora_memory ({_PROMPT})")


def mm_ledger(images: Sequence[Sequence[int]], patch_size: int, merge_size: int,
              text_tokens: int, max_new_tokens: int, kv_bytes_per_token: int,
              page_tokens: int, embed_bytes_per_token: int,
              encoder_bytes_per_patch: int) -> dict[str, Any]:
    """The memory ledger of one multimodal request: ``image_tokens`` (per image),
    ``prompt_tokens``, ``kv_pages``, ``embed_bytes``, ``encode_bytes``, ``prefill_bytes``,
    ``decode_bytes``, ``peak_bytes`` and ``peak_phase`` ("encode", "prefill" or "decode"),
    as the prompt's "Multimodal ledger" rules define them. ``images``: (height, width) pairs."""
    raise NotImplementedError(f"mm_ledger ({_PROMPT})")
