"""Regret of a chosen split count against decode timings per split count.

Plain functions (no pytest, no torch): the lead unit-tests them, the hardware tests of
split_kv use them on recorded fixtures (sweep "split_kv_decode") and on live timings.

A shape is ``(sms, batch, q_heads, kv_heads, context, head_dim, kv_blocks)``; its table
maps a split count to the median kernel time in microseconds. The regret of a count is
``time(count) / min(times) - 1``: 0 for the best count, 0.25 for one 25% slower.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

BLOCK_N = 64        # keys per KV block of the reference kernel (graders.hardware.kernels.BLOCK_N)
MAX_SPLITS = 64     # the recorded sweep's largest count (graders.hardware.sweeps.MAX_SPLITS)
MAX_REGRET = 0.25   # every graded shape must be within 25% of its fastest count

Shape = tuple[int, int, int, int, int, int, int]


def num_kv_blocks(context: int, block_n: int = BLOCK_N) -> int:
    """``ceil(context / block_n)``."""
    if context < 1 or block_n < 1:
        raise ValueError(f"context {context} and block_n {block_n} must be >= 1")
    return -(-context // block_n)


def shape_of(sms: int, batch: int, q_heads: int, kv_heads: int, context: int,
             head_dim: int, kv_blocks: int | None = None) -> Shape:
    blocks = num_kv_blocks(context) if kv_blocks is None else kv_blocks
    return (sms, batch, q_heads, kv_heads, context, head_dim, blocks)


def split_tables(fixtures: Iterable[Mapping[str, Any]]) -> dict[Shape, dict[int, float]]:
    """Times per split count for each shape in ``split_kv_decode`` fixtures.

    The SM count comes from the fixture's ``gpu`` (or the row's, when ``gpu`` is
    ``"per-row"``); the KV block count from the row's ``kv_blocks`` when it has one. A
    split count recorded twice for one shape is an error, not averaged.
    """
    tables: dict[Shape, dict[int, float]] = {}
    for fixture in fixtures:
        for row in fixture["rows"]:
            gpu = row["gpu"] if fixture["gpu"] == "per-row" else fixture["gpu"]
            shape = shape_of(int(gpu["sms"]), int(row["batch"]), int(row["q_heads"]),
                             int(row["kv_heads"]), int(row["context"]), int(row["head_dim"]),
                             int(row["kv_blocks"]) if "kv_blocks" in row else None)
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


def verdict(regrets: Mapping[Shape, float], limit: float = MAX_REGRET) -> str | None:
    """None when every shape's regret is at most ``limit``, else which shapes are not."""
    if not regrets:
        raise ValueError("no shape was graded")
    bad = {s: r for s, r in regrets.items() if r > limit}
    if not bad:
        return None
    table = "\n".join(
        f"  (sms, batch, q_heads, kv_heads, context, head_dim, kv_blocks) = {s}: regret {r:.3f}"
        + ("  <-- over" if s in bad else "")
        for s, r in sorted(regrets.items()))
    return f"{len(bad)} of {len(regrets)} shapes have a regret above {limit}:\n{table}"


def eligible_counts(nb: int, cap: int) -> list[int]:
    """Split counts 1..cap that change the blocks per split (the ones worth timing live)."""
    return [s for s in range(1, cap + 1) if s == 1 or -(-nb // s) != -(-nb // (s - 1))]
