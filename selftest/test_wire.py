"""The JSON wire between the grader and the sandboxed worker: values come back as they went.

Plain data and numpy arrays must round-trip exactly (shape, dtype, values), including the
shapes that are easy to lose: 0-d arrays, empty arrays, non-contiguous views.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from graders import wire


def _round_trip(value: Any) -> Any:
    return wire.decode(wire.encode(value, lambda x: {"$": "h", "id": 0}), lambda d: None)


@pytest.mark.parametrize("value", [
    0, -7, 2**70, 1.5, True, None, "text", b"\x00\xffbytes", [1, [2, "x"]], (1, (2.5, "y")),
    {"a": [1, 2], "b": {"c": None}},
], ids=repr)
def test_plain_values_round_trip(value: Any) -> None:
    got = _round_trip(value)
    assert got == value and type(got) is type(value)


def test_special_floats_round_trip() -> None:
    got = _round_trip([math.inf, -math.inf, math.nan])
    assert got[0] == math.inf and got[1] == -math.inf and math.isnan(got[2])


@pytest.mark.parametrize("array", [
    np.array(3.5),                                   # 0-d: must not come back as shape (1,)
    np.zeros((0, 3)),
    np.arange(12, dtype=np.int64).reshape(3, 4).T,   # a non-contiguous view
    np.array([[np.inf, -np.inf], [np.nan, 1.0]], dtype=np.float32),
    np.array([True, False]),
], ids=["0-d", "empty", "transposed", "float32-special", "bool"])
def test_arrays_keep_shape_dtype_and_values(array: np.ndarray) -> None:
    got = _round_trip(array)
    assert isinstance(got, np.ndarray)
    assert got.shape == array.shape and got.dtype == array.dtype
    assert np.array_equal(got, array, equal_nan=array.dtype.kind == "f")
