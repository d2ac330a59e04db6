"""Helpers shared by the fp8_block_gemm tests: exact comparison with readable failures.

Nothing here calls the implementation under test or depends on ml_dtypes.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

DEEPSEEK_V3_MLA = {"num_attention_heads": 128, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
                   "qk_nope_head_dim": 128, "v_head_dim": 128}


def same(got: Any, want: Any, what: str) -> None:
    """Exact equality of float32 arrays (-0 == 0)."""
    want = np.asarray(want)
    assert isinstance(got, np.ndarray), f"{what}: expected a numpy array, got {type(got).__name__}"
    assert got.shape == want.shape, f"{what}: expected shape {want.shape}, got {got.shape}"
    assert got.dtype == np.float32, f"{what}: expected float32, got {got.dtype}"
    bad = got.astype(np.float64) != want.astype(np.float64)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise AssertionError(f"{what}: {int(bad.sum())} of {bad.size} values differ; first at "
                             f"{idx}: expected {float(want[idx])!r}, got {float(got[idx])!r}")


def pair(result: Any, what: str) -> tuple[Any, Any]:
    assert isinstance(result, (tuple, list)) and len(result) == 2, \
        f"{what}: expected a pair, got {type(result).__name__}"
    return result[0], result[1]


def frac(got: Any, what: str) -> Fraction:
    """A (numerator, denominator) pair in lowest terms, checked, as a Fraction."""
    assert isinstance(got, (tuple, list)) and len(got) == 2, \
        f"{what}: expected a (numerator, denominator) pair, got {got!r}"
    num, den = got
    assert all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
               for v in (num, den)), f"{what}: numerator and denominator must be ints, got {got!r}"
    num, den = int(num), int(den)
    f = Fraction(num, den)
    assert den >= 1 and (f.numerator, f.denominator) == (num, den), \
        f"{what}: {got!r} is not in lowest terms with a positive denominator"
    return f
