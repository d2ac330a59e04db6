"""An alternative prefix_routing solution in a different style from the reference.

Who and how: written by the kata's author after the reference, from the prompt and the stub
only, deliberately in another shape: the view is one flat dict keyed by (replica, hash), the
load is recomputed from a per-replica list of (request id, reservation) pairs by scanning
back to the report's request, and each policy sorts candidate tuples instead of taking a
``min`` with a key. Token validation and hashing go through the given ``block_hashes``
(which rejects bad tokens itself); the prefix-boundary check compares block hashes rather
than counting tokens first.
"""

from __future__ import annotations

from graders.support.prefix_routing import block_hashes

POLICIES = ("round_robin", "affinity", "predicted_finish")


def _int(x: object, low: int) -> bool:
    return type(x) is int and x >= low


def _prompt(tokens: object) -> list[int]:
    if type(tokens) is not list or len(tokens) == 0:
        raise ValueError("tokens must be a non-empty list")
    block_hashes(tokens, 1)  # raises ValueError for any bad token
    return tokens


def prefix_boundary(old: list[int], new: list[int],
                    block_size: int) -> tuple[int, int, int, int]:
    if not _int(block_size, 1):
        raise ValueError("block_size must be a positive int")
    _prompt(old)
    _prompt(new)
    n = min(len(old), len(new))
    first = n
    for i in range(n):
        if old[i] != new[i]:
            first = i
            break
    old_blocks = block_hashes(old, block_size)
    new_blocks = block_hashes(new, block_size)
    shared = 0
    while (shared < len(old_blocks) and shared < len(new_blocks)
           and old_blocks[shared] == new_blocks[shared]):
        shared += 1
    reused = min(shared, (len(new) - 1) // block_size)
    return first, first // block_size, reused, len(old_blocks) - shared


class Router:
    def __init__(self, num_replicas: int, block_size: int, policy: str,
                 load_cap: int = 0) -> None:
        if not _int(num_replicas, 1) or not _int(block_size, 1):
            raise ValueError("num_replicas and block_size must be positive ints")
        if policy not in POLICIES or type(policy) is not str:
            raise ValueError(f"unknown policy {policy!r}")
        if not _int(load_cap, 0):
            raise ValueError("load_cap must be an int >= 0")
        self.n, self.bs, self.policy, self.cap = num_replicas, block_size, policy, load_cap
        self.sent: dict[tuple[int, bytes], int] = {}     # (replica, hash) -> last send time
        self.queue: list[list[tuple[str, int]]] = [[] for _ in range(num_replicas)]
        self.report: list[tuple[int, str | None]] = [(0, None)] * num_replicas
        self.owner: dict[str, int] = {}
        self.last_now: int | None = None
        self.routes = 0

    def _rep(self, replica: object) -> int:
        if type(replica) is not int or not 0 <= replica < self.n:
            raise ValueError(f"no replica {replica!r}")
        return replica

    def _hits(self, r: int, hashes: list[bytes], length: int) -> int:
        usable = (length - 1) // self.bs
        count = 0
        for h in hashes[:usable]:
            if (r, h) not in self.sent:
                break
            count += 1
        return count

    def _load(self, r: int) -> int:
        reported, last = self.report[r]
        total = reported
        for rid, tokens in reversed(self.queue[r]):
            if rid == last:
                break
            total += tokens
        return total

    def matched_blocks(self, replica: int, tokens: list[int]) -> int:
        r = self._rep(replica)
        t = _prompt(tokens)
        return self._hits(r, block_hashes(t, self.bs), len(t))

    def estimated_load(self, replica: int) -> int:
        return self._load(self._rep(replica))

    def route(self, request_id: str, tokens: list[int], now: int) -> int:
        if type(request_id) is not str or request_id in self.owner:
            raise ValueError("request_id must be a new str")
        t = _prompt(tokens)
        if not _int(now, 0) or (self.last_now is not None and now <= self.last_now):
            raise ValueError("now must increase")
        hashes = block_hashes(t, self.bs)
        rows = []
        for r in range(self.n):
            hit = self._hits(r, hashes, len(t))
            rows.append((r, hit, self._load(r), len(t) - hit * self.bs))
        if self.policy == "round_robin":
            choice = rows[self.routes % self.n]
        elif self.policy == "affinity":
            ok = [row for row in rows if row[2] <= self.cap]
            if ok:
                ok.sort(key=lambda row: (-row[1], row[2], row[0]))
                choice = ok[0]
            else:
                choice = sorted(rows, key=lambda row: (row[2], row[0]))[0]
        else:
            choice = sorted(rows, key=lambda row: (row[2] + row[3], -row[1], row[0]))[0]
        r = choice[0]
        self.routes += 1
        self.last_now = now
        self.owner[request_id] = r
        self.queue[r].append((request_id, choice[3]))
        for h in hashes:
            self.sent[(r, h)] = now
        return r

    def on_eviction(self, replica: int, hashes: list[bytes], evicted_at: int) -> None:
        r = self._rep(replica)
        if type(hashes) is not list or any(type(h) is not bytes for h in hashes):
            raise ValueError("hashes must be a list of bytes")
        if not _int(evicted_at, 0):
            raise ValueError("evicted_at must be an int >= 0")
        for h in hashes:
            when = self.sent.get((r, h))
            if when is not None and when <= evicted_at:
                del self.sent[(r, h)]

    def on_report(self, replica: int, outstanding_tokens: int,
                  last_request_id: str | None) -> None:
        r = self._rep(replica)
        if last_request_id is not None and type(last_request_id) is not str:
            raise KeyError(last_request_id)   # never routed: no request has that id
        if not _int(outstanding_tokens, 0):
            raise ValueError("outstanding_tokens must be an int >= 0")
        if last_request_id is not None and self.owner.get(last_request_id, -1) != r:
            raise KeyError(last_request_id)
        self.report[r] = (outstanding_tokens, last_request_id)
