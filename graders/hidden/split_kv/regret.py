"""Regret of a chosen split count against decode timings per split count.

Plain functions (no pytest, no torch): the lead unit-tests them, the hardware tests of
split_kv use them on recorded fixtures (sweep "split_kv_decode") and on live timings.

A shape is ``(sms, batch, q_heads, kv_heads, context, head_dim)``; its table maps a split
count to the median kernel time in microseconds. The regret of a count is
``time(count) / min(times) - 1``: 0 for the best count, 0.25 for one 25% slower.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

BLOCK_SIZE = 128          # tokens per KV block when the kata's rule sees a context (README)
MAX_MEAN_REGRET = 0.15    # the item passes at a mean regret <= this over the shapes ...
MAX_REGRET = 0.5          # ... and no shape above this

Shape = tuple[int, int, int, int, int, int]


def num_kv_blocks(context: int, block_size: int = BLOCK_SIZE) -> int:
    """``ceil(context / block_size)``, at least 1."""
    if context < 1 or block_size < 1:
        raise ValueError(f"context {context} and block_size {block_size} must be >= 1")
    return -(-context // block_size)


def split_tables(fixtures: Iterable[Mapping[str, Any]]) -> dict[Shape, dict[int, float]]:
    """Times per split count for each shape in ``split_kv_decode`` fixtures.

    The SM count comes from the fixture's ``gpu`` (or the row's, when ``gpu`` is
    ``"per-row"``). A split count recorded twice for one shape is an error, not averaged.
    """
    tables: dict[Shape, dict[int, float]] = {}
    for fixture in fixtures:
        for row in fixture["rows"]:
            gpu = row["gpu"] if fixture["gpu"] == "per-row" else fixture["gpu"]
            shape: Shape = (int(gpu["sms"]), int(row["batch"]), int(row["q_heads"]),
                            int(row["kv_heads"]), int(row["context"]), int(row["head_dim"]))
            table = tables.setdefault(shape, {})
            splits, us = int(row["num_splits"]), float(row["median_us"])
            if splits in table:
                raise ValueError(f"shape {shape}: split count {splits} recorded twice")
            if not (math.isfinite(us) and us > 0):
                raise ValueError(f"shape {shape}, {splits} splits: median_us {us!r} is not a time")
            table[splits] = us
    return tables


def regret(times: Mapping[int, float], chosen: int) -> float:
    """``times[chosen] / min(times) - 1``; KeyError when ``chosen`` was not timed."""
    if not times:
        raise ValueError("no timings")
    if chosen not in times:
        raise KeyError(f"split count {chosen} was not timed (timed: {sorted(times)})")
    return times[chosen] / min(times.values()) - 1.0


def verdict(regrets: Mapping[Shape, float]) -> str | None:
    """None when the regrets pass (mean <= MAX_MEAN_REGRET, each <= MAX_REGRET), else why not."""
    if not regrets:
        raise ValueError("no shape was graded")
    mean = sum(regrets.values()) / len(regrets)
    worst = max(regrets, key=lambda s: regrets[s])
    problems = []
    if mean > MAX_MEAN_REGRET:
        problems.append(f"mean regret {mean:.3f} > {MAX_MEAN_REGRET}")
    if regrets[worst] > MAX_REGRET:
        problems.append(f"regret {regrets[worst]:.3f} > {MAX_REGRET} at shape {worst}")
    if not problems:
        return None
    table = "\n".join(f"  (sms, batch, q_heads, kv_heads, context, head_dim) = {s}: regret {r:.3f}"
                      for s, r in sorted(regrets.items()))
    return "; ".join(problems) + "\n" + table


def eligible_counts(nb: int, cap: int) -> list[int]:
    """Split counts 1..cap that change the blocks per split (the ones worth timing live)."""
    return [s for s in range(1, cap + 1) if s == 1 or -(-nb // s) != -(-nb // (s - 1))]
