"""rope_precision: Llama-3.1 RoPE, what fusing it saves, and what a low-precision angle costs.

Fill in every function. The prompt is katas/rope_precision/README.md; run the public tests
with ``nox -s kata -- rope_precision``.

Plain data only: ``config`` is a model's Hugging Face ``config.json`` as a dict (fields
``rope_theta``, ``head_dim`` or ``hidden_size`` / ``num_attention_heads``,
``num_key_value_heads``, ``num_hidden_layers``, ``rope_scaling``). ``dtype`` is one of the
strings in ``DTYPES``. Arrays are numpy; every float result is float64. numpy only (no torch, no
ml_dtypes): bfloat16 rounding you write yourself. Bad input raises ValueError. Never modify
the arrays you are given.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_PROMPT = "see katas/rope_precision/README.md"

#: The dtypes an angle can be computed in ("float64" means: no rounding at all).
DTYPES = ("float64", "float32", "bfloat16", "float16")


def round_to_dtype(x: np.ndarray, dtype: str) -> np.ndarray:
    """Each float64 value of ``x`` rounded to the nearest value of ``dtype``, as float64.

    Round to nearest, ties to even, on the dtype's grid (subnormals included); a value whose
    rounded magnitude exceeds the dtype's largest finite value becomes +-inf; +-inf and NaN
    stay as they are; the sign is kept (a tiny negative value gives -0.0). ``"float64"``
    returns the values unchanged. Same shape as ``x``.
    """
    raise NotImplementedError(f"round_to_dtype ({_PROMPT})")


def inv_freq(config: dict[str, Any]) -> np.ndarray:
    """The ``(head_dim // 2,)`` float64 rotation frequencies (radians per position).

    ``theta ** (-2i / head_dim)`` for ``i = 0 .. head_dim/2 - 1``, then, when ``config``
    has ``rope_scaling`` with ``rope_type == "llama3"``, the llama3 frequency scaling of the
    prompt. No ``rope_scaling`` (absent or None): no scaling. Any other rope_type, an odd
    head_dim, a missing or non-positive field: ValueError.
    """
    raise NotImplementedError(f"inv_freq ({_PROMPT})")


def angles(positions: np.ndarray, config: dict[str, Any], dtype: str) -> np.ndarray:
    """The ``(len(positions), head_dim // 2)`` float64 angles as computed in ``dtype``.

    ``positions``: 1-D integers >= 0. Entry ``[t, i]`` is
    ``R(R(positions[t]) * R(inv_freq(config)[i]))`` where ``R`` is ``round_to_dtype(.,
    dtype)`` and the product of the two rounded values is exact (then rounded once). For
    ``"float64"`` it is the plain float64 product ``positions[t] * inv_freq[i]``.
    """
    raise NotImplementedError(f"angles ({_PROMPT})")


def apply_rope(x: np.ndarray, positions: np.ndarray, config: dict[str, Any],
               angle_dtype: str = "float64") -> np.ndarray:
    """``x`` (``(T, heads, head_dim)``) rotated by position, as a new float64 array.

    Token ``t`` at position ``positions[t]``; dimension ``j`` is paired with ``j +
    head_dim/2`` (split halves, "rotate_half") and the pair turns by the angle
    ``angles(positions, config, angle_dtype)[t, j]``, computed in float64 from that angle.
    """
    raise NotImplementedError(f"apply_rope ({_PROMPT})")


def fused_bytes_saved(config: dict[str, Any], dtype_bytes: int) -> int:
    """HBM bytes per token (all layers) that fusing RoPE into its neighbours saves.

    An unfused RoPE kernel reads Q and K and writes them back rotated; a fused one does not:
    ``2 * (num_attention_heads + num_key_value_heads) * head_dim * dtype_bytes *
    num_hidden_layers``. ``num_key_value_heads`` absent or None: equal to the query heads.
    """
    raise NotImplementedError(f"fused_bytes_saved ({_PROMPT})")


def first_bad_position(config: dict[str, Any], dtype: str, tolerance: float,
                       max_position: int = 131072) -> int:
    """The smallest position ``p`` in ``[0, max_position)`` at which some frequency's angle
    computed in ``dtype`` is off by more than ``tolerance`` radians; -1 if there is none.

    Off by more than: ``abs(angles([p], config, dtype)[0, i] - p * inv_freq[i]) >
    tolerance`` for some ``i`` (the reference is the float64 product; an infinite angle is
    off by infinity). ``tolerance``: finite, >= 0. ``max_position``: int >= 1.
    """
    raise NotImplementedError(f"first_bad_position ({_PROMPT})")


def position_resolution(config: dict[str, Any], dtype: str, context: int,
                        index: int = 0) -> int:
    """The longest run of consecutive positions in ``[0, context)`` whose angle at frequency
    ``index``, computed in ``dtype``, is one and the same value (+inf equals +inf).

    1 means every position is distinguishable at that frequency. ``context``: int >= 1;
    ``index``: int in ``[0, head_dim // 2)``.
    """
    raise NotImplementedError(f"position_resolution ({_PROMPT})")
