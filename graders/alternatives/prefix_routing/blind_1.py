"""prefix_routing: an alternative written blind.

Written blind from the prompt, the stub and the public tests only (2026-12-05), by a
helper session (a blind tester); kept unchanged apart from this docstring: it scored
100/100 in the isolated grade as written.

How it is built (on purpose not the hints' shape):

- The view is an inverted index, block hash -> {replica: time of the latest route that
  sent it there}, rather than one dict per replica.
- Loads are per-replica cumulative reservation totals; each request remembers the total
  right after it, and a report stores (outstanding, total covered), so the load is
  outstanding + total - covered.
- The policies are explicit strict-improvement loops in ascending index, not ``min`` over
  key tuples.
"""

from __future__ import annotations

from graders.support.prefix_routing import block_hashes

__all__ = ["POLICIES", "Router", "block_hashes", "prefix_boundary"]

POLICIES = ("round_robin", "affinity", "predicted_finish")
_TOKEN_LIMIT = 1 << 32


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _check_pos_int(name: str, x: object) -> None:
    if not _is_int(x) or x < 1:  # type: ignore[operator]
        raise ValueError(f"{name} must be a positive int, got {x!r}")


def _check_nonneg_int(name: str, x: object) -> None:
    if not _is_int(x) or x < 0:  # type: ignore[operator]
        raise ValueError(f"{name} must be an int >= 0, got {x!r}")


def _check_tokens(name: str, tokens: object) -> None:
    if not isinstance(tokens, list) or not tokens:
        raise ValueError(f"{name} must be a non-empty list of token ids")
    for t in tokens:
        if not _is_int(t) or not 0 <= t < _TOKEN_LIMIT:
            raise ValueError(f"{name}: bad token id {t!r}")


def prefix_boundary(old: list[int], new: list[int],
                    block_size: int) -> tuple[int, int, int, int]:
    _check_tokens("old", old)
    _check_tokens("new", new)
    _check_pos_int("block_size", block_size)
    limit = min(len(old), len(new))
    first_diff = limit
    i = 0
    while i < limit:
        if old[i] != new[i]:
            first_diff = i
            break
        i += 1
    fdb, _ = divmod(first_diff, block_size)
    reused = min(fdb, (len(new) - 1) // block_size)
    lost = len(old) // block_size - fdb
    return (first_diff, fdb, reused, lost)


class Router:
    def __init__(self, num_replicas: int, block_size: int, policy: str,
                 load_cap: int = 0) -> None:
        _check_pos_int("num_replicas", num_replicas)
        _check_pos_int("block_size", block_size)
        if not isinstance(policy, str) or policy not in POLICIES:
            raise ValueError(f"unknown policy {policy!r}")
        _check_nonneg_int("load_cap", load_cap)
        self._n = num_replicas
        self._bs = block_size
        self._policy = policy
        self._cap = load_cap
        # inverted view: hash -> {replica: time of the latest route sending it there}
        self._where: dict[bytes, dict[int, int]] = {}
        # loads: cumulative reservations per replica; request -> (replica, total after it)
        self._total = [0] * num_replicas
        self._sent: dict[str, tuple[int, int]] = {}
        self._report: list[tuple[int, int]] = [(0, 0)] * num_replicas  # (outstanding, covered total)
        self._calls = 0
        self._last_now: int | None = None

    # -- helpers ---------------------------------------------------------------------
    def _check_replica(self, replica: object) -> None:
        if not _is_int(replica) or not 0 <= replica < self._n:  # type: ignore[operator]
            raise ValueError(f"replica index out of range: {replica!r}")

    def _match(self, replica: int, hashes: list[bytes], length: int) -> int:
        cap = (length - 1) // self._bs
        k = 0
        while k < cap:
            holders = self._where.get(hashes[k])
            if holders is None or replica not in holders:
                break
            k += 1
        return k

    def _load(self, replica: int) -> int:
        outstanding, covered = self._report[replica]
        return outstanding + (self._total[replica] - covered)

    # -- API -------------------------------------------------------------------------
    def route(self, request_id: str, tokens: list[int], now: int) -> int:
        if not isinstance(request_id, str) or request_id in self._sent:
            raise ValueError(f"request_id must be a new str, got {request_id!r}")
        _check_tokens("tokens", tokens)
        _check_nonneg_int("now", now)
        if self._last_now is not None and now <= self._last_now:
            raise ValueError(f"now must increase: {now} after {self._last_now}")
        hashes = block_hashes(tokens, self._bs)
        L = len(tokens)
        matched = [self._match(r, hashes, L) for r in range(self._n)]
        loads = [self._load(r) for r in range(self._n)]
        uncached = [L - self._bs * m for m in matched]

        if self._policy == "round_robin":
            choice = self._calls % self._n
        elif self._policy == "affinity":
            eligible = [r for r in range(self._n) if loads[r] <= self._cap]
            choice = -1
            if eligible:
                for r in eligible:  # ascending index: strict improvements only
                    if choice < 0 or matched[r] > matched[choice] or (
                            matched[r] == matched[choice] and loads[r] < loads[choice]):
                        choice = r
            else:
                for r in range(self._n):
                    if choice < 0 or loads[r] < loads[choice]:
                        choice = r
        else:
            choice = 0
            for r in range(1, self._n):
                fr, fc = loads[r] + uncached[r], loads[choice] + uncached[choice]
                if fr < fc or (fr == fc and matched[r] > matched[choice]):
                    choice = r

        # record (nothing above mutated state)
        for h in hashes:
            self._where.setdefault(h, {})[choice] = now
        self._total[choice] += uncached[choice]
        self._sent[request_id] = (choice, self._total[choice])
        self._calls += 1
        self._last_now = now
        return choice

    def on_eviction(self, replica: int, hashes: list[bytes], evicted_at: int) -> None:
        self._check_replica(replica)
        if not isinstance(hashes, list) or not all(isinstance(h, bytes) for h in hashes):
            raise ValueError("hashes must be a list of bytes")
        _check_nonneg_int("evicted_at", evicted_at)
        for h in hashes:
            holders = self._where.get(h)
            if holders is None or replica not in holders:
                continue
            if holders[replica] <= evicted_at:
                del holders[replica]
                if not holders:
                    del self._where[h]

    def on_report(self, replica: int, outstanding_tokens: int,
                  last_request_id: str | None) -> None:
        self._check_replica(replica)
        _check_nonneg_int("outstanding_tokens", outstanding_tokens)
        if last_request_id is None:
            covered = 0
        else:
            try:
                where = self._sent.get(last_request_id)
            except TypeError:
                where = None
            if where is None or where[0] != replica:
                raise KeyError(last_request_id)
            covered = where[1]
        self._report[replica] = (outstanding_tokens, covered)

    def matched_blocks(self, replica: int, tokens: list[int]) -> int:
        self._check_replica(replica)
        _check_tokens("tokens", tokens)
        return self._match(replica, block_hashes(tokens, self._bs), len(tokens))

    def estimated_load(self, replica: int) -> int:
        self._check_replica(replica)
        return self._load(replica)
