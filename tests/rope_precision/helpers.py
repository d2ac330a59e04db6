"""Data and checks shared by the rope_precision tests. Nothing here calls the implementation.

The public tests' expected values are written out by hand (from the prompt's rules), so
these helpers use numpy only; the hidden tests build their oracle with ml_dtypes.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

#: Llama-3.1-8B's config.json, the fields the kata reads (huggingface.co/meta-llama/Llama-3.1-8B).
LLAMA_3_1_8B: dict[str, Any] = {
    "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
    "num_hidden_layers": 32, "rope_theta": 500000.0,
    "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                     "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
}


def llama() -> dict[str, Any]:
    """A fresh copy of the Llama-3.1-8B config."""
    return copy.deepcopy(LLAMA_3_1_8B)


def small(theta: float = 10000.0, head_dim: int = 8, scaling: dict[str, Any] | None = None,
          **extra: Any) -> dict[str, Any]:
    cfg: dict[str, Any] = {"head_dim": head_dim, "num_attention_heads": 4,
                           "num_key_value_heads": 2, "num_hidden_layers": 2,
                           "rope_theta": theta, "rope_scaling": scaling}
    cfg.update(extra)
    return cfg


def ints(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def float_array(got: Any, shape: tuple[int, ...], what: str) -> np.ndarray:
    assert isinstance(got, np.ndarray), f"{what}: expected a numpy array, got {type(got).__name__}"
    assert got.shape == shape, f"{what}: expected shape {shape}, got {got.shape}"
    assert got.dtype == np.float64, f"{what}: expected float64, got {got.dtype}"
    return got


def same_bits(got: np.ndarray, want: np.ndarray, what: str, inputs: Any = None) -> None:
    """Equal values (NaN matches NaN, +-0 must match in sign), with the first mismatch shown."""
    got = float_array(got, want.shape, what)
    same = (got == want) & (np.signbit(got) == np.signbit(want)) | (np.isnan(got) & np.isnan(want))
    if not same.all():
        k = tuple(int(i) for i in np.argwhere(~same)[0])
        where = "" if inputs is None else f" (input {np.asarray(inputs)[k[:np.ndim(inputs)]]!r})"
        raise AssertionError(f"{what}: {int((~same).sum())} value(s) differ; first at {k}{where}: "
                             f"expected {want[k]!r}, got {got[k]!r}")


def close(got: np.ndarray, want: np.ndarray, what: str, rel: float,
          per_element: bool = False) -> None:
    """Within ``rel`` of each expected value (``per_element``), or of the largest of them
    (at least 1)."""
    got = float_array(got, want.shape, what)
    want = np.asarray(want, dtype=np.float64)
    if per_element:
        scale: Any = np.abs(want)
    else:
        finite = np.abs(want[np.isfinite(want)])
        scale = max(1.0, float(finite.max())) if finite.size else 1.0
    with np.errstate(invalid="ignore"):
        ok = (np.abs(got - want) <= rel * scale) | (np.isnan(got) & np.isnan(want)) | (got == want)
    if not ok.all():
        k = tuple(int(i) for i in np.argwhere(~ok)[0])
        raise AssertionError(f"{what}: first difference at {k}: expected {want[k]!r}, got {got[k]!r}")
