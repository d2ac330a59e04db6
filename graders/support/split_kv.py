"""A driver for the split_kv tests that must run next to the implementation.

``modified_arguments`` calls the implementation's functions on arrays made here, in the
implementation's process, and reports which of them it changed in place. Across the
grading worker's wire the arguments are copies, so only a check made on this side can see
an in-place write. It returns plain observations; the expectation stays in the tests.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def modified_arguments(attend_partial: Any, merge_partials: Any, decode_partials: Any,
                       split_kv_decode: Any, seed: int) -> list[str]:
    """Names of the arguments that a call changed, as ``function.argument``."""
    rng = np.random.default_rng(seed)
    # (function name, function, [(argument name, value)], positional order as in the stub)
    calls: list[tuple[str, Any, list[tuple[str, Any]]]] = []
    q, k, v = rng.normal(size=(4, 3)), rng.normal(size=(9, 2, 3)), rng.normal(size=(9, 2, 2))
    calls.append(("attend_partial", attend_partial,
                  [("q", q), ("k", k), ("v", v), ("scale", 1e3), ("valid", rng.random(9) < 0.5)]))
    outs = np.stack([np.full((4, 3), np.nan), rng.normal(size=(4, 3)), rng.normal(size=(4, 3))])
    lses = np.stack([np.full(4, -np.inf), rng.normal(size=4) * 1e4, rng.normal(size=4)])
    calls.append(("merge_partials", merge_partials, [("outs", outs), ("lses", lses)]))
    qb = rng.normal(size=(2, 4, 4)).astype(np.float32)
    kc, vc = rng.normal(size=(2, 10, 2, 4)), rng.normal(size=(2, 10, 2, 3))
    for name, fn in (("decode_partials", decode_partials), ("split_kv_decode", split_kv_decode)):
        calls.append((name, fn, [("q", qb.copy()), ("k_cache", kc.copy()), ("v_cache", vc.copy()),
                                 ("context_lens", np.array([10, 3])), ("scale", 1.0),
                                 ("block_size", 4), ("num_splits", 3)]))
    changed = []
    for name, fn, args in calls:
        kept = [a.copy() if isinstance(a, np.ndarray) else a for _, a in args]
        fn(*(a for _, a in args))
        for (key, a), before in zip(args, kept):
            if isinstance(a, np.ndarray) and (a.shape != before.shape or not np.array_equal(
                    a, before, equal_nan=a.dtype.kind == "f")):
                changed.append(f"{name}.{key}")
    return changed
