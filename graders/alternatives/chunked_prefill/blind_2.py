"""chunked_prefill, blind solution 2.

Written blind from the prompt, the stub and the public tests only (2026-12-02), by a helper
session.

How it is built (deliberately not the one-sort-key design):

- The decode set is ``heapq.nsmallest(budget, decoding)`` on the FCFS key, so only the
  oldest ``budget`` decoders are ranked when they outnumber the budget.
- The prefill order is produced lazily, as a generator: the waiting requests are ranked once
  in FCFS order; under "spf" the starving ones (``now - arrival >= starvation_s``) are
  yielded first in that order, then the rest are popped one at a time from a heap keyed by
  (tokens left, FCFS rank). The fill loop consumes the generator only until the budget is
  spent or (without chunking) the first request that does not fit.
- The metrics replay the log once into a per-request event table (prefill tokens still
  owed, token times) and every metric reads that table.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterator
from typing import Any

_POLICIES = ("fcfs", "spf")


def _is_number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _validate(config: dict[str, Any]) -> tuple[str, int, bool, float | None]:
    policy = config.get("policy")
    if not isinstance(policy, str) or policy not in _POLICIES:
        raise ValueError(f"policy must be 'fcfs' or 'spf', got {policy!r}")
    budget = config.get("budget")
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(f"budget must be an int >= 1, got {budget!r}")
    chunked = config.get("chunked")
    if not isinstance(chunked, bool):
        raise ValueError(f"chunked must be a bool, got {chunked!r}")
    wait = config.get("starvation_s")
    if wait is not None:
        if not _is_number(wait) or math.isnan(wait) or not wait >= 0:
            raise ValueError(f"starvation_s must be None or a number >= 0, got {wait!r}")
    return policy, budget, chunked, wait


def _fcfs_key(r: dict[str, Any]) -> tuple[float, str]:
    return (r["arrival"], r["id"])


def _prefill_order(policy: str, now: float, wait: float | None,
                   waiting: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Yield the waiting requests in the policy's prefill order, lazily."""
    fcfs = sorted(waiting, key=_fcfs_key)
    if policy == "fcfs":
        yield from fcfs
        return
    heap: list[tuple[int, int]] = []
    for rank, r in enumerate(fcfs):
        if wait is not None and now - r["arrival"] >= wait:
            yield r                      # starving: FCFS among themselves, before the rest
        else:
            heap.append((r["prompt"] - r["prefilled"], rank))
    heapq.heapify(heap)
    while heap:
        _, rank = heapq.heappop(heap)
        yield fcfs[rank]


def plan_step(config: dict[str, Any], now: float, waiting: list[dict[str, Any]],
              decoding: list[dict[str, Any]]) -> tuple[list[tuple[str, int]], list[str]]:
    """Decide one engine step: ``(chunks, decodes)`` (see the prompt's rules)."""
    policy, budget, chunked, wait = _validate(config)
    if len(decoding) > budget:
        chosen = heapq.nsmallest(budget, decoding, key=_fcfs_key)
    else:
        chosen = list(decoding)
    decodes = [d["id"] for d in chosen]
    left = budget - len(decodes)
    chunks: list[tuple[str, int]] = []
    if left <= 0:
        return chunks, decodes
    for r in _prefill_order(policy, now, wait, waiting):
        rest = r["prompt"] - r["prefilled"]
        take = min(rest, left) if chunked else rest
        if take < 1 or take > left:
            break                        # nothing left, or a whole prompt that does not fit
        chunks.append((r["id"], take))
        left -= take
        if left == 0:
            break
    return chunks, decodes


def _events(log: dict[str, Any]) -> dict[str, list[float]]:
    """Replay the log: request id -> its output token times."""
    owed = {r["id"]: int(r["prompt"]) for r in log["requests"]}
    times: dict[str, list[float]] = {r["id"]: [] for r in log["requests"]}
    for step in log["steps"]:
        end = step["end"]
        for rid, n in step["prefill"]:
            before = owed[rid]
            owed[rid] = before - n
            if before > 0 >= owed[rid]:
                times[rid].append(end)
        for rid in step["decode"]:
            times[rid].append(end)
    return times


def token_times(log: dict[str, Any]) -> dict[str, list[float]]:
    """For each request of the log, the times its output tokens came out, in order."""
    return _events(log)


def ttft(log: dict[str, Any]) -> dict[str, float]:
    """Time to first token per request: first token time minus arrival."""
    times = _events(log)
    return {r["id"]: times[r["id"]][0] - r["arrival"] for r in log["requests"]}


def itl(log: dict[str, Any]) -> dict[str, list[float]]:
    """Inter-token latency series per request (output - 1 gaps, TTFT excluded)."""
    times = _events(log)
    return {rid: [b - a for a, b in zip(ts, ts[1:])] for rid, ts in times.items()}


def slowdown(log: dict[str, Any]) -> dict[str, float]:
    """Per-request slowdown: (last token - arrival) / the time alone on an idle engine."""
    times = _events(log)
    a, b, c = log["model"]["a"], log["model"]["b"], log["model"]["c"]
    budget = log["config"]["budget"]
    chunked = log["config"]["chunked"]
    out: dict[str, float] = {}
    for r in log["requests"]:
        prompt, output = r["prompt"], r["output"]
        k = -(-prompt // budget) if chunked else 1
        alone = k * a + b * prompt + (output - 1) * (a + c)
        out[r["id"]] = (times[r["id"]][-1] - r["arrival"]) / alone
    return out
