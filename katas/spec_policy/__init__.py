"""spec_policy: when speculative decoding pays, per batch and per request.

Fill in every function. The prompt is katas/spec_policy/README.md; run the public tests with
``nox -s kata -- spec_policy``.

Plain data only. A *stage* (the target model, or a drafter) is a dict of six numbers, per
GPU: ``weight_bytes`` (read once per forward pass), ``flops_per_token`` (per token scored),
``kv_bytes_per_token`` (per context token of each sequence, read once per pass),
``bandwidth`` (bytes/s), ``peak_flops`` (FLOP/s) and ``overhead_s`` (fixed seconds per pass).
Acceptance rates are conditional per draft position: ``accept[i]`` is the probability that
draft i+1 is accepted given that drafts 1..i were. Numbers are Python ints or floats (a bool
is not a number), finite; counts are ints. Bad input raises ValueError.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

_PROMPT = "see katas/spec_policy/README.md"


def expected_tokens(accept: Sequence[float], k: int) -> float:
    """Expected tokens one verification step emits per sequence with ``k`` drafts.

    1 + sum over i = 1..k of accept[0] x ... x accept[i-1] (the target's own token
    included). Uses the first ``k`` rates; ``len(accept) >= k`` is required.
    """
    raise NotImplementedError(f"expected_tokens ({_PROMPT})")


def stage_from_config(cfg: dict[str, Any], gpu: dict[str, Any], tp: int, weight_bytes: float,
                      kv_bytes: float, dtype: str = "bf16",
                      overhead_s: float = 0.0) -> dict[str, float]:
    """The stage of a dense model (``cfg`` a Hugging Face config.json dict) on ``tp`` GPUs of
    the datasheet entry ``gpu`` (``data/gpus/*.json``), with ``weight_bytes`` and ``kv_bytes``
    bytes per element. The six keys, per GPU, as the prompt's "Stage from a config" says.

    Raises ValueError for MoE or MLA configs, a ``tp`` that does not split the heads, or a
    ``dtype`` the entry has no dense figure for.
    """
    raise NotImplementedError(f"stage_from_config ({_PROMPT})")


def pass_time_s(stage: dict[str, float], num_seqs: int, num_tokens: int, ctx_len: int) -> float:
    """Seconds of one forward pass of ``stage`` over ``num_seqs`` sequences scoring
    ``num_tokens`` tokens in all (at least one each), each over ``ctx_len`` cached tokens:
    overhead_s + max(compute time, memory time)."""
    raise NotImplementedError(f"pass_time_s ({_PROMPT})")


def speedup(target: dict[str, float], drafter: dict[str, float], accept: Sequence[float], k: int,
            batch: int, ctx_len: int) -> float:
    """Tokens per second with ``k`` drafts per sequence over tokens per second without, for a
    batch of ``batch`` sequences with ``ctx_len`` cached tokens each. 1.0 at k = 0."""
    raise NotImplementedError(f"speedup ({_PROMPT})")


def best_draft_length(target: dict[str, float], drafter: dict[str, float],
                      accept: Sequence[float], max_k: int, batch: int, ctx_len: int) -> int:
    """The k in 0..max_k with the largest speedup at this batch; speedups within a relative
    1e-9 of the largest count as equal and the smallest such k wins (0 = do not speculate)."""
    raise NotImplementedError(f"best_draft_length ({_PROMPT})")


def bucket_draft_lengths(target: dict[str, float], drafter: dict[str, float],
                         accept: Sequence[float], max_k: int, bucket_edges: Sequence[int],
                         ctx_len: int) -> list[int]:
    """One k per batch bucket. ``bucket_edges`` (strictly increasing ints >= 1) are the
    buckets' largest batch sizes; bucket i holds the batches edges[i-1]+1 .. edges[i]
    (the first starts at 1). Each bucket's k maximises its worst speedup over its batches,
    with best_draft_length's tie rule."""
    raise NotImplementedError(f"bucket_draft_lengths ({_PROMPT})")


def flip_batch(target: dict[str, float], drafter_a: dict[str, float], accept_a: Sequence[float],
               drafter_b: dict[str, float], accept_b: Sequence[float], max_k: int, lo: int,
               hi: int, ctx_len: int) -> int | None:
    """The smallest batch in lo+1..hi whose winning drafter differs from the winner at ``lo``,
    or None. Drafter b wins a batch when its best speedup (over k in 0..max_k) exceeds a's by
    more than a relative 1e-9; otherwise a wins."""
    raise NotImplementedError(f"flip_batch ({_PROMPT})")


def per_request_draft_lengths(target: dict[str, float], drafter: dict[str, float],
                              accepts: Sequence[Sequence[float]], max_k: int,
                              ctx_len: int) -> list[int]:
    """Draft length per request of one batch (one acceptance vector per request): 0 for the
    requests that do not draft, one shared k for those that do, chosen to maximise the batch's
    tokens per second as the prompt's "Per-request policy" says, with its tie rules."""
    raise NotImplementedError(f"per_request_draft_lengths ({_PROMPT})")
