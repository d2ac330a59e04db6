"""An independent model of the prefix_routing router, for the hidden tests.

It keeps the log of everything the router was told and recomputes the view and the loads
from the log on every question (brute force, no incremental state), so it shares no
structure with the reference:

- a block h is in replica r's view iff some route sent h to r, and no notice received
  after the *last* such route names (r, h) with ``evicted_at`` >= that route's time;
- the load of r is its latest report's tokens plus the reservations of the routes to r
  that come after the report's ``last_request_id`` in the log;
- the policies are written as explicit scans with the prompt's tie-breaks.
"""

from __future__ import annotations

from dataclasses import dataclass

from graders.support.prefix_routing import block_hashes


@dataclass
class Route:
    rid: str
    replica: int
    hashes: list[bytes]
    now: int
    reservation: int


@dataclass
class Notice:
    replica: int
    hashes: list[bytes]
    evicted_at: int


Event = Route | Notice


class ModelRouter:
    def __init__(self, num_replicas: int, block_size: int, policy: str, load_cap: int = 0):
        self.n, self.bs, self.policy, self.cap = num_replicas, block_size, policy, load_cap
        self.log: list[Event] = []
        self.reports: dict[int, tuple[int, str | None]] = {}

    # -- the view, from the log --------------------------------------------------------
    def holds(self, r: int, h: bytes) -> bool:
        last = None
        for i, e in enumerate(self.log):
            if isinstance(e, Route) and e.replica == r and h in e.hashes:
                last = i
        if last is None:
            return False
        t = self.log[last].now  # type: ignore[union-attr]
        for e in self.log[last + 1:]:
            if isinstance(e, Notice) and e.replica == r and h in e.hashes and e.evicted_at >= t:
                return False
        return True

    def matched(self, r: int, tokens: list[int]) -> int:
        hs = block_hashes(tokens, self.bs)
        k = 0
        for h in hs[:(len(tokens) - 1) // self.bs]:
            if not self.holds(r, h):
                break
            k += 1
        return k

    def load(self, r: int) -> int:
        routes = [e for e in self.log if isinstance(e, Route) and e.replica == r]
        tokens, last = self.reports.get(r, (0, None))
        ids = [e.rid for e in routes]
        after = routes[ids.index(last) + 1:] if last is not None else routes
        return tokens + sum(e.reservation for e in after)

    # -- the calls ---------------------------------------------------------------------
    def route(self, rid: str, tokens: list[int], now: int) -> int:
        n = self.n
        match = [self.matched(r, tokens) for r in range(n)]
        load = [self.load(r) for r in range(n)]
        uncached = [len(tokens) - self.bs * match[r] for r in range(n)]
        if self.policy == "round_robin":
            best = sum(isinstance(e, Route) for e in self.log) % n
        elif self.policy == "affinity":
            eligible = [r for r in range(n) if load[r] <= self.cap]
            if eligible:
                best = eligible[0]
                for r in eligible[1:]:
                    if (match[r] > match[best]
                            or (match[r] == match[best] and load[r] < load[best])):
                        best = r
            else:
                best = 0
                for r in range(1, n):
                    if load[r] < load[best]:
                        best = r
        else:
            best = 0
            for r in range(1, n):
                a, b = load[r] + uncached[r], load[best] + uncached[best]
                if a < b or (a == b and match[r] > match[best]):
                    best = r
        self.log.append(Route(rid, best, block_hashes(tokens, self.bs), now, uncached[best]))
        return best

    def on_eviction(self, r: int, hashes: list[bytes], evicted_at: int) -> None:
        self.log.append(Notice(r, list(hashes), evicted_at))

    def on_report(self, r: int, tokens: int, last: str | None) -> None:
        self.reports[r] = (tokens, last)

    def matched_blocks(self, r: int, tokens: list[int]) -> int:
        return self.matched(r, tokens)

    def estimated_load(self, r: int) -> int:
        return self.load(r)
