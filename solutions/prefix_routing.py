"""Reference solution for prefix_routing: three routing policies over a router's view of
each replica (blocks it believes cached, prefill tokens it believes queued)."""

from __future__ import annotations

from graders.support.prefix_routing import TOKEN_LIMIT, block_hashes

__all__ = ["POLICIES", "Router", "block_hashes", "prefix_boundary"]

POLICIES = ("round_robin", "affinity", "predicted_finish")


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _check_tokens(tokens: object) -> list[int]:
    if not isinstance(tokens, list) or not tokens:
        raise ValueError(f"tokens must be a non-empty list of ints, got {tokens!r}")
    for t in tokens:
        if not _is_int(t) or not 0 <= t < TOKEN_LIMIT:
            raise ValueError(f"token ids must be ints in [0, 2**32), got {t!r}")
    return list(tokens)


def _check_positive(name: str, x: object) -> int:
    if not _is_int(x) or x < 1:  # type: ignore[operator]
        raise ValueError(f"{name} must be a positive int, got {x!r}")
    return x  # type: ignore[return-value]


def prefix_boundary(old: list[int], new: list[int],
                    block_size: int) -> tuple[int, int, int, int]:
    """(first_diff, first_diff_block, reused_blocks, lost_blocks); see the stub."""
    bs = _check_positive("block_size", block_size)
    a, b = _check_tokens(old), _check_tokens(new)
    first = 0
    for x, y in zip(a, b):
        if x != y:
            break
        first += 1
    block = first // bs
    return first, block, min(block, (len(b) - 1) // bs), len(a) // bs - block


class Router:
    """Routes requests under one policy; keeps the view the policies read."""

    def __init__(self, num_replicas: int, block_size: int, policy: str,
                 load_cap: int = 0) -> None:
        self._n = _check_positive("num_replicas", num_replicas)
        self._bs = _check_positive("block_size", block_size)
        if not isinstance(policy, str) or policy not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
        if not _is_int(load_cap) or load_cap < 0:
            raise ValueError(f"load_cap must be an int >= 0, got {load_cap!r}")
        self._policy, self._cap = policy, load_cap
        self._now = -1
        self._count = 0
        # view: per replica, block hash -> time of the latest route that sent it there
        self._cached: list[dict[bytes, int]] = [{} for _ in range(num_replicas)]
        # where[request_id] = (replica, position among the requests routed to it)
        self._where: dict[str, tuple[int, int]] = {}
        # prefix sums of reservations per replica: _sums[r][k] = first k requests' total
        self._sums: list[list[int]] = [[0] for _ in range(num_replicas)]
        self._reported: list[tuple[int, int]] = [(0, 0)] * num_replicas  # (tokens, covered)

    # -- the view ----------------------------------------------------------------------
    def _replica(self, replica: object) -> int:
        if not _is_int(replica) or not 0 <= replica < self._n:  # type: ignore[operator]
            raise ValueError(f"replica must be an int in [0, {self._n}), got {replica!r}")
        return replica  # type: ignore[return-value]

    def _match(self, r: int, hashes: list[bytes], length: int) -> int:
        cap = (length - 1) // self._bs
        cached = self._cached[r]
        k = 0
        while k < cap and hashes[k] in cached:
            k += 1
        return k

    def _load(self, r: int) -> int:
        tokens, covered = self._reported[r]
        sums = self._sums[r]
        return tokens + sums[-1] - sums[covered]

    def matched_blocks(self, replica: int, tokens: list[int]) -> int:
        r = self._replica(replica)
        toks = _check_tokens(tokens)
        return self._match(r, block_hashes(toks, self._bs), len(toks))

    def estimated_load(self, replica: int) -> int:
        return self._load(self._replica(replica))

    # -- routing -----------------------------------------------------------------------
    def route(self, request_id: str, tokens: list[int], now: int) -> int:
        if not isinstance(request_id, str) or request_id in self._where:
            raise ValueError(f"request_id must be a new str, got {request_id!r}")
        toks = _check_tokens(tokens)
        if not _is_int(now) or now < 0 or now <= self._now:
            raise ValueError(f"now must be an int >= 0 after {self._now}, got {now!r}")
        hashes = block_hashes(toks, self._bs)
        match = [self._match(r, hashes, len(toks)) for r in range(self._n)]
        load = [self._load(r) for r in range(self._n)]
        r = self._choose(match, load, len(toks))
        self._now, self._count = now, self._count + 1
        for h in hashes:
            self._cached[r][h] = now
        sums = self._sums[r]
        self._where[request_id] = (r, len(sums) - 1)
        sums.append(sums[-1] + len(toks) - match[r] * self._bs)
        return r

    def _choose(self, match: list[int], load: list[int], length: int) -> int:
        everyone = range(self._n)
        if self._policy == "round_robin":
            return self._count % self._n
        if self._policy == "affinity":
            eligible = [r for r in everyone if load[r] <= self._cap]
            if not eligible:
                return min(everyone, key=lambda r: (load[r], r))
            return min(eligible, key=lambda r: (-match[r], load[r], r))
        finish = [load[r] + length - match[r] * self._bs for r in everyone]
        return min(everyone, key=lambda r: (finish[r], -match[r], r))

    # -- what the replicas tell the router ---------------------------------------------
    def on_eviction(self, replica: int, hashes: list[bytes], evicted_at: int) -> None:
        r = self._replica(replica)
        if not isinstance(hashes, list) or not all(isinstance(h, bytes) for h in hashes):
            raise ValueError(f"hashes must be a list of bytes, got {hashes!r}")
        if not _is_int(evicted_at) or evicted_at < 0:
            raise ValueError(f"evicted_at must be an int >= 0, got {evicted_at!r}")
        cached = self._cached[r]
        for h in hashes:
            stamp = cached.get(h)
            if stamp is not None and stamp <= evicted_at:
                del cached[h]

    def on_report(self, replica: int, outstanding_tokens: int,
                  last_request_id: str | None) -> None:
        r = self._replica(replica)
        if not _is_int(outstanding_tokens) or outstanding_tokens < 0:
            raise ValueError(f"outstanding_tokens must be an int >= 0, got {outstanding_tokens!r}")
        covered = 0
        if last_request_id is not None:
            where = self._where.get(last_request_id) if isinstance(last_request_id, str) else None
            if where is None or where[0] != r:
                raise KeyError(f"{last_request_id!r} was never routed to replica {r}")
            covered = where[1] + 1
        self._reported[r] = (outstanding_tokens, covered)
