"""fp4_formats: MXFP4 and NVFP4, the same eight 4-bit values scaled two ways.

Fill in every function. The prompt is katas/fp4_formats/README.md; run the public tests with
``nox -s kata -- fp4_formats``.

``x`` is always a non-empty float32 numpy array with at least one axis. Blocks run along the
last axis: every row (every index of the leading axes) is cut into blocks of its own, the last
block of a row holding the remainder when the row length is not a multiple of the block size.
Every function returns new arrays and never modifies ``x``. Bad input raises ValueError.

Results are compared exactly: every value must be the one the prompt's rules give, rounded
once (the sign of a zero result is not graded; NaN must be NaN).
"""

from __future__ import annotations

import numpy as np

_PROMPT = "see katas/fp4_formats/README.md"

#: The non-negative E2M1 values; the format also holds their negatives (and -0).
E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
MX_BLOCK = 32
NV_BLOCK = 16


def round_e2m1(x: np.ndarray) -> np.ndarray:
    """Every element rounded to the nearest E2M1 value, as a float32 array of x's shape.

    Round to nearest, ties to even (the even one is the value whose mantissa bit is 0:
    0, 1, 2 and 4 are even; 0.5, 1.5, 3 and 6 are odd). Magnitudes above 6, infinities
    included, saturate to +-6. NaN stays NaN. The sign is kept.
    """
    raise NotImplementedError(f"round_e2m1 ({_PROMPT})")


def mxfp4(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """MXFP4 round trip: ``(dequantized, scales)``.

    Blocks of 32 along the last axis. Each block's scale is ``2**X`` with
    ``X = max(floor(log2(amax)) - 2, -127)`` where ``amax`` is the block's largest |x|
    (the OCP MX rule; an all-zero block gets ``X = -127``). Each element becomes
    ``round_e2m1(x / 2**X) * 2**X``. A block holding a NaN or an infinity has scale NaN and
    every one of its elements comes back NaN.

    ``dequantized``: float32, x's shape. ``scales``: float32, shape
    ``x.shape[:-1] + (ceil(n / 32),)`` for rows of length ``n``.
    """
    raise NotImplementedError(f"mxfp4 ({_PROMPT})")


def nvfp4(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """NVFP4 round trip: ``(dequantized, block_scales, tensor_scale)``.

    ``tensor_scale`` = the float32 nearest to ``amax_t / (6 * 448)``, where ``amax_t`` is the
    largest |x| over the finite elements of the whole tensor (1.0 when that is 0).
    Blocks of 16 along the last axis; each block's scale is the E4M3 value nearest to
    ``amax_b / (6 * tensor_scale)`` (ties to even, saturating at 448, subnormals kept).
    Each element becomes the float32 nearest to
    ``round_e2m1(x / (block_scale * tensor_scale)) * block_scale * tensor_scale``, every
    quotient and product taken exactly; a block whose scale is 0 comes back all zeros. A
    block holding a NaN or an infinity has block scale NaN and comes back all NaN.

    ``dequantized``: float32, x's shape. ``block_scales``: float32 (E4M3 values), shape
    ``x.shape[:-1] + (ceil(n / 16),)``. ``tensor_scale``: a float holding a float32 value.
    """
    raise NotImplementedError(f"nvfp4 ({_PROMPT})")


def bits_per_weight(fmt: str, shape: tuple[int, ...]) -> float:
    """Storage bits per element of a tensor of ``shape`` in ``fmt`` ("mxfp4" or "nvfp4").

    (4 bits per element + 8 bits per block + 32 bits per tensor for nvfp4's tensor scale)
    / number of elements, with blocks counted as ``mxfp4`` and ``nvfp4`` cut them (a partial
    last block of a row costs a whole scale). Raises ValueError for an unknown ``fmt`` or a
    shape that is empty or has a dimension below 1.
    """
    raise NotImplementedError(f"bits_per_weight ({_PROMPT})")


def relative_error(x: np.ndarray, fmt: str) -> float:
    """``sqrt(sum((q - x)**2) / sum(x**2))`` where ``q`` is x's round trip through ``fmt``.

    Sums in float64 over every element; 0.0 when x is all zeros. Raises ValueError for an
    unknown ``fmt`` or an ``x`` holding NaN or an infinity.
    """
    raise NotImplementedError(f"relative_error ({_PROMPT})")
