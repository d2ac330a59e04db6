"""prefix_routing: an alternative written blind (second blind round).

Written blind from the prompt, the stub and the public tests only (2026-12-05), by a
helper session (a second blind tester); it scored 100/100 in the isolated grade as
written. Changed only for ``mypy --strict`` (no behaviour changed): this docstring,
``_is_int`` declared a ``TypeGuard[int]``, and an ``assert choice is not None`` before
the route records its choice.

How it is built (on purpose not the hints' shape):

- The view is one stamp table keyed by ``(replica, hash)``, holding the time of the latest
  route that sent that block there, not one dict per replica.
- Loads are per-replica cumulative reservation counters; each request stores the counter
  right after it was routed, and a report stores the counter value it covers, so the load
  is outstanding + total - covered.
- The policies are explicit "is this candidate better" loops, not ``min`` over key tuples.
- ``prefix_boundary`` finds the longest common prefix by binary search on
  ``old[:k] == new[:k]``.
"""

from __future__ import annotations

from typing import TypeGuard

from graders.support.prefix_routing import block_hashes

__all__ = ["POLICIES", "Router", "block_hashes", "prefix_boundary"]

POLICIES = ("round_robin", "affinity", "predicted_finish")
_LIMIT = 1 << 32


def _is_int(x: object) -> TypeGuard[int]:
    return isinstance(x, int) and not isinstance(x, bool)


def _check_pos(name: str, x: object) -> None:
    if not _is_int(x) or x < 1:
        raise ValueError(f"{name} must be a positive int, got {x!r}")


def _check_nonneg(name: str, x: object) -> None:
    if not _is_int(x) or x < 0:
        raise ValueError(f"{name} must be an int >= 0, got {x!r}")


def _check_tokens(tokens: object) -> None:
    if not isinstance(tokens, list) or len(tokens) == 0:
        raise ValueError("a prompt must be a non-empty list of token ids")
    for t in tokens:
        if not _is_int(t) or t < 0 or t >= _LIMIT:
            raise ValueError(f"token ids must be ints in [0, 2**32), got {t!r}")


def _lcp(a: list[int], b: list[int]) -> int:
    """Longest common prefix by binary search on the (monotone) predicate a[:k] == b[:k]."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def prefix_boundary(old: list[int], new: list[int],
                    block_size: int) -> tuple[int, int, int, int]:
    _check_tokens(old)
    _check_tokens(new)
    _check_pos("block_size", block_size)
    first_diff = _lcp(old, new)
    first_diff_block = first_diff // block_size
    reused = min(first_diff_block, (len(new) - 1) // block_size)
    lost = len(old) // block_size - first_diff_block
    return (first_diff, first_diff_block, reused, lost)


class Router:
    def __init__(self, num_replicas: int, block_size: int, policy: str,
                 load_cap: int = 0) -> None:
        _check_pos("num_replicas", num_replicas)
        _check_pos("block_size", block_size)
        if not isinstance(policy, str) or policy not in POLICIES:
            raise ValueError(f"unknown policy {policy!r}")
        _check_nonneg("load_cap", load_cap)
        self.n = num_replicas
        self.bs = block_size
        self.policy = policy
        self.cap = load_cap
        self._stamp: dict[tuple[int, bytes], int] = {}   # (replica, hash) -> latest send time
        self._routed = 0                                # successful route calls
        self._total = [0] * num_replicas                # all reservations ever made, per replica
        self._where: dict[str, tuple[int, int]] = {}    # request_id -> (replica, _total after it)
        self._report: dict[int, tuple[int, int]] = {}   # replica -> (outstanding, _total covered)
        self._last_now: int | None = None

    # -- validation --------------------------------------------------------------------
    def _check_replica(self, replica: object) -> None:
        if not _is_int(replica) or not 0 <= replica < self.n:
            raise ValueError(f"replica index out of range: {replica!r}")

    # -- the view ----------------------------------------------------------------------
    def _walk(self, replica: int, hashes: list[bytes], length: int) -> int:
        limit = (length - 1) // self.bs
        k = 0
        while k < limit and (replica, hashes[k]) in self._stamp:
            k += 1
        return k

    def matched_blocks(self, replica: int, tokens: list[int]) -> int:
        self._check_replica(replica)
        _check_tokens(tokens)
        return self._walk(replica, block_hashes(tokens, self.bs), len(tokens))

    def _load(self, replica: int) -> int:
        outstanding, covered = self._report.get(replica, (0, 0))
        return outstanding + self._total[replica] - covered

    def estimated_load(self, replica: int) -> int:
        self._check_replica(replica)
        return self._load(replica)

    # -- routing -----------------------------------------------------------------------
    def route(self, request_id: str, tokens: list[int], now: int) -> int:
        if not isinstance(request_id, str) or request_id in self._where:
            raise ValueError(f"request_id must be a new str, got {request_id!r}")
        _check_tokens(tokens)
        _check_nonneg("now", now)
        if self._last_now is not None and now <= self._last_now:
            raise ValueError(f"now {now} is not after the previous route's {self._last_now}")
        hashes = block_hashes(tokens, self.bs)
        L = len(tokens)
        matched = [self._walk(r, hashes, L) for r in range(self.n)]
        loads = [self._load(r) for r in range(self.n)]
        uncached = [L - self.bs * m for m in matched]

        if self.policy == "round_robin":
            choice = self._routed % self.n
        elif self.policy == "affinity":
            choice = None
            for r in range(self.n):
                if loads[r] > self.cap:
                    continue
                if (choice is None or matched[r] > matched[choice]
                        or (matched[r] == matched[choice] and loads[r] < loads[choice])):
                    choice = r
            if choice is None:  # affinity yields
                choice = 0
                for r in range(1, self.n):
                    if loads[r] < loads[choice]:
                        choice = r
        else:  # predicted_finish
            choice = 0
            for r in range(1, self.n):
                fr, fc = loads[r] + uncached[r], loads[choice] + uncached[choice]
                if fr < fc or (fr == fc and matched[r] > matched[choice]):
                    choice = r

        # record: nothing above changed any state
        assert choice is not None
        for h in hashes:
            self._stamp[(choice, h)] = now
        self._total[choice] += uncached[choice]
        self._where[request_id] = (choice, self._total[choice])
        self._routed += 1
        self._last_now = now
        return choice

    # -- notices and reports -----------------------------------------------------------
    def on_eviction(self, replica: int, hashes: list[bytes], evicted_at: int) -> None:
        self._check_replica(replica)
        if not isinstance(hashes, list) or not all(isinstance(h, bytes) for h in hashes):
            raise ValueError("hashes must be a list of bytes")
        _check_nonneg("evicted_at", evicted_at)
        for h in hashes:
            key = (replica, h)
            sent = self._stamp.get(key)
            if sent is not None and sent <= evicted_at:
                del self._stamp[key]

    def on_report(self, replica: int, outstanding_tokens: int,
                  last_request_id: str | None) -> None:
        self._check_replica(replica)
        _check_nonneg("outstanding_tokens", outstanding_tokens)
        if last_request_id is None:
            covered = 0
        else:
            hit = None
            if isinstance(last_request_id, str):
                hit = self._where.get(last_request_id)
            if hit is None or hit[0] != replica:
                raise KeyError(last_request_id)
            covered = hit[1]
        self._report[replica] = (outstanding_tokens, covered)
