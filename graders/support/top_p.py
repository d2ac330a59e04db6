"""A driver for the top_p tests that must run next to the implementation.

``modified_arguments`` calls ``kept_mask`` and ``sample`` on the arrays it is given, in the
implementation's process, and reports which arrays a call changed in place. Across the
grading worker's wire the arguments are copies, so only a check made on this side can see
an in-place write. It returns plain observations; the expectation stays in the tests.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np


def modified_arguments(kept_mask: Any, sample: Any, logits: np.ndarray,
                       temperature: np.ndarray, top_p: np.ndarray, u: np.ndarray,
                       top_k: np.ndarray) -> list[str]:
    """``call: argument`` for every argument a call changed."""
    names = ("logits", "temperature", "top_p", "u", "top_k")
    calls: list[tuple[str, Callable[[list[np.ndarray]], object]]] = [
        ("kept_mask(top_k)", lambda a: kept_mask(a[0], a[1], a[2], a[4])),
        ("sample(top_k)", lambda a: sample(a[0], a[1], a[2], a[3], a[4])),
        ("kept_mask", lambda a: kept_mask(a[0], a[1], a[2])),
        ("sample", lambda a: sample(a[0], a[1], a[2], a[3])),
    ]
    changed = []
    for label, call in calls:
        args = [np.array(a, copy=True) for a in (logits, temperature, top_p, u, top_k)]
        kept = [a.copy() for a in args]
        call(args)
        for name, after, before in zip(names, args, kept):
            if not np.array_equal(after, before, equal_nan=True):
                changed.append(f"{label}: {name}")
    return changed
