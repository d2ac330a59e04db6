"""split_kv: flash-decoding on the CPU (attention over KV splits, the exact merge, the split count).

Fill in every function. The prompt is katas/split_kv/README.md; run the public tests with
``nox -s kata -- split_kv``. numpy only.

Shapes (decode: one query token per sequence):
  q        (q_heads, d)                  one sequence's query, all heads
  k, v     (n, kv_heads, d), (n, kv_heads, dv)
  q head h reads kv head h // (q_heads // kv_heads)  (GQA; q_heads a multiple of kv_heads)
A partial result is (out, lse): the softmax-weighted values over the keys it saw, and the
natural log of the sum of exp(scaled scores) over those keys. No keys: zeros and -inf.
Everything returned is float64.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

_PROMPT = "see katas/split_kv/README.md"

Array = NDArray[np.float64]


def attend_partial(q: NDArray[np.floating], k: NDArray[np.floating], v: NDArray[np.floating],
                   scale: float, valid: NDArray[np.bool_] | None = None) -> tuple[Array, Array]:
    """Attention of one sequence's query over one split of its keys: ``(out, lse)``.

    ``q`` is ``(q_heads, d)``, ``k`` is ``(n, kv_heads, d)``, ``v`` is ``(n, kv_heads, dv)``,
    ``n >= 0``. ``valid`` is None (every key counts) or a bool array of shape ``(n,)``
    (False keys are masked out). For each q head ``h`` with kv head ``g = h // (q_heads //
    kv_heads)``, over the counted keys ``j``: ``s_j = scale * q[h] . k[j, g]``,
    ``lse[h] = log(sum_j exp(s_j))`` and ``out[h] = sum_j exp(s_j - lse[h]) * v[j, g]``.
    With no counted key: ``out[h]`` is zeros and ``lse[h]`` is ``-inf``.

    Returns ``out`` of shape ``(q_heads, dv)`` and ``lse`` of shape ``(q_heads,)``, float64,
    finite except for ``-inf`` in ``lse``, for any finite inputs (scores up to about 1e5).
    Raises ValueError for shapes that do not fit or a scale that is not finite and > 0,
    TypeError for a scale that is not a real number (a bool, a str, None; an int such as 2
    is a valid scale) or a ``valid`` that is not a bool array.
    """
    raise NotImplementedError(f"attend_partial ({_PROMPT})")


def merge_partials(outs: NDArray[np.floating], lses: NDArray[np.floating]) -> tuple[Array, Array]:
    """Merge partial results over disjoint key sets into the result over their union.

    ``outs`` has shape ``(S, *rest, dv)`` and ``lses`` shape ``(S, *rest)``, ``S >= 1``
    partials along axis 0. Returns ``(out, lse)`` of shapes ``(*rest, dv)`` and ``rest``:
    ``lse = log(sum_s exp(lses[s]))`` and ``out = sum_s exp(lses[s] - lse) * outs[s]``,
    computed without overflow for any finite lse. A partial with lse ``-inf`` contributes
    nothing (its output is ignored, whatever it holds); where every partial is ``-inf`` the
    result is zeros and ``-inf``. Never NaN.

    Raises ValueError for S == 0, shapes that do not fit, or an lse that is NaN or +inf.
    """
    raise NotImplementedError(f"merge_partials ({_PROMPT})")


def split_ranges(num_keys: int, block_size: int, num_splits: int) -> list[tuple[int, int]]:
    """The key range ``[start, end)`` of each of ``num_splits`` splits, in order.

    Keys form ``nb = ceil(num_keys / block_size)`` blocks; each split takes
    ``ceil(nb / num_splits)`` whole blocks in order (the last block may be short); splits
    past the end are empty (``start == end == num_keys``). Always exactly ``num_splits``
    ranges. ``num_keys >= 0``, ``block_size >= 1``, ``num_splits >= 1`` (ints, not bool);
    TypeError / ValueError otherwise.
    """
    raise NotImplementedError(f"split_ranges ({_PROMPT})")


def decode_partials(q: NDArray[np.floating], k_cache: NDArray[np.floating],
                    v_cache: NDArray[np.floating], context_lens: list[int] | NDArray[np.integer],
                    scale: float, block_size: int, num_splits: int) -> tuple[Array, Array]:
    """The partial results of every split for a batch of decoding sequences.

    ``q`` is ``(batch, q_heads, d)``, ``k_cache`` ``(batch, max_len, kv_heads, d)``,
    ``v_cache`` ``(batch, max_len, kv_heads, dv)``; sequence ``b`` attends to its keys
    ``0 .. context_lens[b] - 1`` (``0 <= context_lens[b] <= max_len``). The splits are
    ``split_ranges(max_len, block_size, num_splits)``, the same for every sequence; keys at
    or past a sequence's length are masked.

    Returns ``(outs, lses)`` of shapes ``(num_splits, batch, q_heads, dv)`` and
    ``(num_splits, batch, q_heads)``. Raises ValueError / TypeError for bad input.
    """
    raise NotImplementedError(f"decode_partials ({_PROMPT})")


def split_kv_decode(q: NDArray[np.floating], k_cache: NDArray[np.floating],
                    v_cache: NDArray[np.floating], context_lens: list[int] | NDArray[np.integer],
                    scale: float, block_size: int, num_splits: int) -> tuple[Array, Array]:
    """Decode attention by splitting the keys and merging: ``(out, lse)``.

    Same arguments as ``decode_partials``; returns the merge of its partials, shapes
    ``(batch, q_heads, dv)`` and ``(batch, q_heads)``. Equal to attention over each
    sequence's whole context whatever ``num_splits`` and ``block_size`` are.
    """
    raise NotImplementedError(f"split_kv_decode ({_PROMPT})")


def wave_efficiency(work: int, num_splits: int, num_sms: int) -> tuple[int, int]:
    """``x / ceil(x)`` with ``x = work * num_splits / num_sms``, exactly, as a fraction.

    ``work`` thread blocks per split, each of ``num_splits`` splits, on ``num_sms`` SMs:
    the fraction of the SM slots of the waves launched that do work. Returned as
    ``(numerator, denominator)``, two ints in lowest terms (``denominator >= 1``).
    Positive ints only (TypeError for a non-int or bool, ValueError for < 1).
    """
    raise NotImplementedError(f"wave_efficiency ({_PROMPT})")


def choose_num_splits(batch: int, q_heads: int, num_kv_blocks: int, num_sms: int,
                      max_splits: int = 128, fill_fraction: tuple[int, int] = (4, 5),
                      efficiency_fraction: tuple[int, int] = (17, 20)) -> int:
    """The split count from the wave-efficiency rule in the README, exactly.

    ``work = batch * q_heads``. One split when ``work >= fill_fraction * num_sms``.
    Otherwise, among the eligible counts ``1 .. min(max_splits, num_sms, num_kv_blocks)``
    (``s == 1`` or ``ceil(nb / s) != ceil(nb / (s - 1))``), the smallest whose
    ``wave_efficiency`` is ``>= efficiency_fraction * best``, best being the largest
    efficiency among them.

    The counts are positive ints (TypeError for a non-int or bool, ValueError for < 1); a
    numpy integer is a count of its value.
    A fraction is a tuple ``(numerator, denominator)`` of two ints, ``denominator >= 1``,
    whose value lies in ``(0, 1]``: TypeError for anything else (a float, a bool, a list),
    ValueError for a zero or negative denominator or a value outside ``(0, 1]``.
    """
    raise NotImplementedError(f"choose_num_splits ({_PROMPT})")


def plan_splits(batch: int, q_heads: int, kv_heads: int, context: int, num_sms: int) -> int:
    """Your split count for the project's reference decode kernel on a real GPU.

    The kernel (README, "On hardware"): 64-key KV blocks, one program per (sequence,
    query head, split), bf16, head_dim 128, at most 64 splits. Decide how; the rule above
    with inputs you justify is a fine start. Return an int in
    ``1 .. min(64, ceil(context / 64))``. The choice is graded only by timing, on a GPU;
    the range and the input checks are graded on the CPU like every other function's.
    """
    raise NotImplementedError(f"plan_splits ({_PROMPT})")
