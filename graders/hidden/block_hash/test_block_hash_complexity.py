"""Complexity of BlockPool: allocate/append/free must not grow with num_blocks.

A pool of 100,000 blocks is filled with cached free blocks (a long eviction queue). Each
step then hits blocks at the back of the queue (taking them out of its end), evicts from
the front, and frees blocks back. An O(1) queue costs about as much per step at any pool
size; a scan of the queue or the pool costs ~100,000 operations per hit.

Evidence: the CPU time of the steps, taken from outside the implementation's process
(graders.impl.metered: the kernel's account of the grading worker, or this process's when
testing in-process), judged against the reference's CPU time for the very same calls on
its own 100,000-block pool, in a worker of its own. So the baseline is nothing the
submission can influence, and slowing any call down can only lose. Every call is made from
the test's side and its answer checked, so nothing inside the worker can skip the work.
Filling the pools is not timed. Measured on 2 busy cores: the reference and the correct
alternatives 0.9-1.8x; a list-based queue (the mutant linear_queue) 100-380x. The limit is
``LIMIT`` (10) times the reference; a near miss is measured once more (a busy machine).
No absolute time is ever compared with a constant.
"""

from __future__ import annotations

import gc
from typing import Any

import pytest

from graders.impl import metered

BS = 4
NUM_BLOCKS = 100_000
HOT_BLOCKS = 32
STEPS = 40
LIMIT = 10.0

HOT = [7_000_000 + i for i in range(HOT_BLOCKS * BS)] + [1]


def _filled_pool(bh: Any) -> Any:
    pool = bh.BlockPool(NUM_BLOCKS, BS)
    per_request = 500   # few calls: filling costs the hashing, not round trips
    r = 0
    while pool.num_free_blocks() >= per_request:
        base = r * per_request * BS
        pool.allocate(f"fill{r}", [(base + i) % 2**32 for i in range(per_request * BS)])
        r += 1
    for i in range(r):
        pool.free(f"fill{i}")
    free = pool.num_free_blocks()
    assert r > 0 and free == NUM_BLOCKS, (
        f"after {r} requests were allocated and freed, num_free_blocks() must be "
        f"{NUM_BLOCKS}, got {free}: the workload cannot be measured")
    return pool


def _steps(pool: Any, start: int, count: int = STEPS, fresh: bool = False) -> None:
    """``count`` steps; on a ``fresh`` pool the hot prompt misses at the first one."""
    for step in range(start, start + count):
        table, computed = pool.allocate("hot", HOT)
        if len(table) != HOT_BLOCKS + 1:
            raise AssertionError(f"a {len(HOT)}-token prompt needs {HOT_BLOCKS + 1} blocks "
                                 f"of {BS}, got {table}")
        if not (fresh and step == start) and computed != HOT_BLOCKS * BS:
            raise AssertionError(f"the {len(HOT)}-token prompt was allocated and freed before: "
                                 f"its {HOT_BLOCKS} full blocks must hit, got "
                                 f"num_computed_tokens={computed}")
        pool.append("hot", [2] * (BS - 1))
        cold = [9_000_000 + step, 3, 3, 3, 4]  # 1 new full block + 1 partial
        pool.allocate("cold", cold)
        pool.free("cold")
        pool.free("hot")


def _cpu(reference: bool, start: int) -> float:
    """CPU seconds of STEPS steps on a filled pool, measured outside the implementation."""
    bh, meter = metered("block_hash", reference=reference)
    pool = _filled_pool(bh)
    _steps(pool, start, 2, fresh=True)     # warm-up: the hot prompt is cached from here on
    gc.collect()
    gc.disable()   # this process's collector runs with its heap, not with the algorithm
    try:
        m = meter()
        _steps(pool, start + 2)
        return float(m.seconds())
    finally:
        gc.enable()


@pytest.mark.rubric("complexity")
def test_allocate_and_free_do_not_grow_with_the_pool():
    """Rule: Complexity"""
    seen = []
    for attempt in range(2):
        ref = _cpu(True, 1000 * attempt)
        used = _cpu(False, 1000 * attempt)
        print(f"block_hash complexity: {STEPS} steps on a {NUM_BLOCKS}-block pool: "
              f"{used * 1e3:.1f} ms of CPU, the reference {ref * 1e3:.1f} ms "
              f"({used / ref:.1f}x, limit {LIMIT:g}x)")
        if used <= LIMIT * ref:
            return
        seen.append(f"{used * 1e3:.1f} ms against the reference's {ref * 1e3:.1f} ms "
                    f"({used / ref:.0f}x)")
        if used > 3 * LIMIT * ref:
            break   # far off: no busy machine explains that
    pytest.fail(
        f"{STEPS} allocate/append/free steps that hit, evict and free blocks of a "
        f"{NUM_BLOCKS:,}-block pool used {'; then '.join(seen)} of CPU (limit {LIMIT:g}x): "
        "free-queue operations must be O(1), not a scan of the queue or the pool")
