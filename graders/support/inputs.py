"""A driver any kata's tests can use: did a call change the arguments it was given?

Across the isolated grader's wire every argument is a copy, so a check on the test's side
that an input is unchanged cannot fail. ``changed_arguments`` makes the call where the
implementation lives and compares each argument with a deep copy taken before the call.
It returns plain observations (the positions of changed arguments); the tests assert.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
                and a.dtype == b.dtype
                and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    return bool(a == b) or (a != a and b != b)   # NaN equals NaN here


def changed_arguments(fn: Any, *args: Any) -> list[int]:
    """Call ``fn(*args)``; the 0-based positions of the arguments it changed."""
    before = copy.deepcopy(args)
    fn(*args)
    return [i for i, (a, b) in enumerate(zip(args, before)) if not _same(a, b)]
