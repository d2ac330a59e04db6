"""Helpers shared by the fp4_formats tests: exact comparison with readable failures.

Nothing here calls the implementation under test or depends on ml_dtypes.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def f32(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float32)


def same(got: Any, want: Any, what: str, x: Any = None) -> None:
    """Exact equality of float arrays: NaN where NaN, equal values elsewhere (-0 == 0)."""
    want = np.asarray(want)
    assert isinstance(got, np.ndarray), f"{what}: expected a numpy array, got {type(got).__name__}"
    assert got.shape == want.shape, f"{what}: expected shape {want.shape}, got {got.shape}"
    assert got.dtype == np.float32, f"{what}: expected float32, got {got.dtype}"
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    bad = (np.isnan(g) != np.isnan(w)) | (~np.isnan(w) & (g != w))
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        shown = "" if x is None else f" for x = {np.asarray(x)[idx[:np.ndim(x)]]!r}"
        raise AssertionError(
            f"{what}: {int(bad.sum())} of {bad.size} values differ; first at index {idx}"
            f"{shown}: expected {w[idx]!r}, got {g[idx]!r}")


def unpack(result: Any, n: int, what: str) -> tuple[Any, ...]:
    assert isinstance(result, (tuple, list)) and len(result) == n, \
        f"{what}: expected a tuple of {n} items, got {type(result).__name__}"
    return tuple(result)
