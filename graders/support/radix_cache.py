"""Drivers for the radix_cache tests that must run next to the implementation.

``serve`` runs a stream of requests (acquire, extend, release) through a fresh cache where
the implementation lives; graders.impl.measured_call takes the CPU time of the whole call
from outside the worker (the evidence of the lookup-cost check: no clock read in here
counts). It returns what every acquire reported, so the trusted side can check the answers
against the prompt's rules.
"""

from __future__ import annotations

import time
from typing import Any


def serve(cache_cls: Any, num_slots: int, requests: list[tuple[list[int], list[int]]],
          budget: float = float("inf")) -> tuple[list[int], dict[str, int]]:
    """For each (prompt, generated) pair: acquire the prompt, extend the lease by the
    generated tokens, release prompt + generated. Stops early once ``budget`` CPU seconds
    are spent (the trusted side enforces the budget from outside as well).

    Returns (num_cached of each acquire made, the cache's final stats)."""
    start = time.process_time()
    cache = cache_cls(num_slots)
    hits: list[int] = []
    for k, (prompt, generated) in enumerate(requests):
        lease, cached, _ = cache.acquire(list(prompt))
        cache.extend(lease, len(generated))
        cache.release(lease, list(prompt) + list(generated))
        hits.append(int(cached))
        if k % 200 == 199 and time.process_time() - start > budget:
            break
    return hits, dict(cache.stats())
