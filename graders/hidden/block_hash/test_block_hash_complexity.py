"""Complexity of BlockPool: allocate/append/free must not grow with num_blocks.

The same workload runs on a pool of 1,000 and one of 100,000 blocks, both filled with
cached free blocks (a long eviction queue). Each step hits blocks at the back of the queue
(taking them out of its middle/end), evicts from the front, and frees blocks back. An
O(1) queue costs the same at both sizes; a scan of the queue costs ~100x more at 100k.
Timing: short chunks of steps, alternating between the two pools, the garbage collector
paused (its passes grow with the heap, not with the algorithm); each pool's cost is the
median chunk, and the ratio of the medians must stay under 10x. A load spike slows single
chunks; a false alarm needs more than half the large pool's chunks slowed 10x. Each step
hits 32 blocks, so a scan per hit dominates even the cost of a sandboxed call. Measured on
2 busy cores (large/small): reference ~0.9-1.1x; a list-based queue ~95x in process and
~30x in the sandboxed worker.
"""

from __future__ import annotations

import gc
import statistics
import time

import pytest

from graders.impl import kata_impl

bh = kata_impl("block_hash")

BS = 4
HOT_BLOCKS = 32
CHUNK = 4       # steps per timed chunk
ROUNDS = 15     # chunks per pool size, alternating between the sizes
MAX_RATIO = 10.0


def _filled_pool(num_blocks: int):
    pool = bh.BlockPool(num_blocks, BS)
    per_request = 500   # few calls: filling costs the hashing, not round trips
    r = 0
    while pool.num_free_blocks() >= per_request:
        base = r * per_request * BS
        pool.allocate(f"fill{r}", [(base + i) % 2**32 for i in range(per_request * BS)])
        r += 1
    for i in range(r):
        pool.free(f"fill{i}")
    free = pool.num_free_blocks()
    assert r > 0 and free == num_blocks, (
        f"after {r} requests were allocated and freed, num_free_blocks() must be {num_blocks}, "
        f"got {free}: the workload cannot be measured")
    return pool


HOT = [7_000_000 + i for i in range(HOT_BLOCKS * BS)] + [1]


def _chunk(pool, start: int) -> float:
    """Time CHUNK steps, the garbage collector paused."""
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter()
        for step in range(start, start + CHUNK):
            table, computed = pool.allocate("hot", HOT)
            if len(table) != HOT_BLOCKS + 1:
                raise AssertionError(f"a {len(HOT)}-token prompt needs {HOT_BLOCKS + 1} blocks "
                                     f"of {BS}, got {table}")
            pool.append("hot", [2] * (BS - 1))
            cold = [9_000_000 + step, 3, 3, 3, 4]  # 1 new full block + 1 partial
            pool.allocate("cold", cold)
            pool.free("cold")
            pool.free("hot")
        return time.perf_counter() - t0
    finally:
        gc.enable()


@pytest.mark.rubric("complexity")
def test_allocate_and_free_do_not_grow_with_the_pool():
    """Rule: Complexity"""
    pools = {1_000: _filled_pool(1_000), 100_000: _filled_pool(100_000)}
    times: dict[int, list[float]] = {n: [] for n in pools}
    for r in range(ROUNDS):
        for n, pool in pools.items():
            times[n].append(_chunk(pool, r * CHUNK))
    best = {n: statistics.median(t) for n, t in times.items()}
    ratio = best[100_000] / best[1_000]
    print(f"block_hash complexity: {CHUNK} steps, median of {ROUNDS}: "
          f"1k blocks {best[1_000] * 1e3:.3f} ms, 100k blocks {best[100_000] * 1e3:.3f} ms, "
          f"ratio {ratio:.2f} (limit {MAX_RATIO})")
    assert ratio < MAX_RATIO, (
        f"the same {CHUNK} allocate/append/free steps took {best[1_000] * 1e3:.2f} ms on a "
        f"1,000-block pool and {best[100_000] * 1e3:.2f} ms on a 100,000-block pool "
        f"({ratio:.1f}x, median of {ROUNDS}): free-queue operations must be O(1), not a scan "
        "of the queue or the pool")
