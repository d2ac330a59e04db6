"""goodput: one step time for every sequence in the batch.

Fill in every function. The prompt is katas/goodput/README.md; run the public tests with
``nox -s kata -- goodput``.

Plain data only: ``cfg`` is a model's Hugging Face ``config.json`` as a dict; ``gpu`` is a
datasheet entry as shipped in ``data/gpus/*.json``. Times are seconds, rates per second,
sizes bytes or tokens as named. Numbers are instances of int or float (a bool is not a
number; the tests pass no other subclass), finite; counts are ints. Every comparison the
prompt names (a step against its target, the load against 1, a residency or a peak against
its cap, the floor of the capacity batch) is exact on the values given: use
``fractions.Fraction`` (a float converts to one exactly) or integers. Bad input raises
ValueError, whatever the other arguments are.
"""

from __future__ import annotations

from typing import Any

_PROMPT = "see katas/goodput/README.md"


def step_line(cfg: dict[str, Any], gpu: dict[str, Any], ctx_len: int, weight_bytes: float = 2,
              kv_bytes: float = 2, overhead_s: float = 0.0) -> tuple[float, float]:
    """(t0_s, t1_s) of the memory-bound decode step t(B) = t0_s + B x t1_s of a dense model on
    one GPU, every sequence reading ``ctx_len`` tokens of KV: t0_s = overhead_s + weight bytes
    / bandwidth, t1_s = one sequence's KV bytes / bandwidth.

    Raises ValueError for an MoE config (an expert count other than 0 or null) or an MLA
    config (``kv_lora_rank`` not null), a negative ``ctx_len``, element sizes or overhead.
    Zeros are fine: ``ctx_len`` or element sizes of 0 give the line they give, (0.0, 0.0)
    included.
    """
    raise NotImplementedError(f"step_line ({_PROMPT})")


def speeds(t0_s: float, t1_s: float, batch: int,
           tpot_s: float) -> tuple[float, float, float]:
    """(tokens/s each user sees, tokens/s the batch produces, goodput) of a batch of ``batch``
    sequences sharing the step t(B) = t0_s + batch x t1_s. Goodput is the batch's tokens/s
    when t(B) <= tpot_s (exactly), else 0.0.

    Raises ValueError for negative times, t0_s = t1_s = 0, batch < 1 or tpot_s <= 0.
    """
    raise NotImplementedError(f"speeds ({_PROMPT})")


def best_batch(t0_s: float, t1_s: float, tpot_s: float, max_batch: int) -> int:
    """The batch in 1..max_batch with the largest goodput: the largest B whose step
    t0_s + B x t1_s is at most tpot_s (exactly). 0 when not even B = 1 meets the target.

    Raises ValueError as ``speeds`` does, and for max_batch < 1.
    """
    raise NotImplementedError(f"best_batch ({_PROMPT})")


def resident_sequences(arrival_rate: float, output_len: int, t0_s: float, t1_s: float,
                       prefill_s: float = 0.0, max_seqs: int | None = None) -> float | None:
    """The mean number N of sequences resident when requests arrive at ``arrival_rate`` per
    second, each spends ``prefill_s`` then ``output_len`` steps of t(N) = t0_s + N x t1_s:
    the solution of N = arrival_rate x (prefill_s + output_len x t(N)).

    None when there is no finite solution (arrival_rate x output_len x t1_s >= 1) or it
    exceeds ``max_seqs`` (when given; 0 is a cap that only N = 0 meets). Raises ValueError
    for negative rates or times, output_len < 1, max_seqs not an int >= 0, or t0_s = t1_s = 0
    (a load of 0 included).
    """
    raise NotImplementedError(f"resident_sequences ({_PROMPT})")


def continuous_gain(lengths: dict[int, int], batch: int) -> tuple[int, int]:
    """Throughput of continuous batching over static batching for ``batch`` slots, output
    lengths drawn independently from ``lengths`` ({length: weight}, the probability of a
    length is its weight over the total): E[max of batch draws] / E[length], exactly, as
    (numerator, denominator) in lowest terms with a positive denominator.

    Raises ValueError for ``lengths`` that is not a non-empty dict, a length or weight that
    is not an int >= 1, or batch < 1.
    """
    raise NotImplementedError(f"continuous_gain ({_PROMPT})")


def kv_peak_tokens(admissions: list[tuple[int, int, int]]) -> int:
    """The most KV tokens held at once by requests admitted at ``(admit_step, prompt_len,
    output_len)``: during step t, for admit_step <= t <= admit_step + output_len - 1, a
    request holds prompt_len + (t - admit_step) + 1 tokens; it holds nothing before or after.
    0 for no requests.

    Raises ValueError for ``admissions`` that is not a list or tuple, an entry that is not
    three ints, admit_step < 0, prompt_len < 0 or output_len < 1.
    """
    raise NotImplementedError(f"kv_peak_tokens ({_PROMPT})")


def max_batch_for_pool(pool_tokens: int, prompt_len: int, output_len: int, spacing: int,
                       max_seqs: int) -> int:
    """The largest B in 0..max_seqs such that B requests of ``prompt_len`` prompt tokens and
    ``output_len`` output tokens, admitted at steps 0, spacing, 2 x spacing, ..., never hold
    more than ``pool_tokens`` KV tokens at once (as ``kv_peak_tokens`` counts them).

    Raises ValueError for a count that is not an int, a negative pool, prompt_len, spacing
    or max_seqs, or output_len < 1.
    """
    raise NotImplementedError(f"max_batch_for_pool ({_PROMPT})")


def upgrade_gains(cfg: dict[str, Any], old_gpu: dict[str, Any], new_gpu: dict[str, Any],
                  ctx_len: int, old_pool_bytes: float, new_pool_bytes: float,
                  weight_bytes: float = 2, kv_bytes: float = 2,
                  dtype: str = "bf16") -> dict[str, float]:
    """The new GPU over the old in three regimes, as a dict with the keys "bandwidth"
    (decode at batch 1: t_old(1) / t_new(1)), "compute" (a compute-bound prefill: the ratio
    of the dense ``dtype`` peaks) and "capacity" (the batch's tokens/s at the largest batch
    of ``ctx_len``-token sequences each GPU's KV pool holds, floor(pool / KV bytes of one
    sequence) exactly, new over old).

    Raises ValueError for an MoE or MLA config, ctx_len < 1, kv_bytes <= 0, a negative pool
    or weight_bytes (0 is fine), a ``dtype`` either entry has no dense figure for (no number
    at tensor_tflops[dtype]["dense"]), or a pool that holds no whole sequence.
    """
    raise NotImplementedError(f"upgrade_gains ({_PROMPT})")
