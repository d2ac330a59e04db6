"""The trusted side of the prefix_routing replay: replicas, their caches, the clock, and
the delivery of eviction notices and load reports to the router under test.

A replica (see the prompt's "The replay"):
- holds at most ``capacity`` full blocks, keyed by ``block_hashes``;
- on admitting a request at time t it hits its leading cached full blocks (capped so the
  last prompt token is computed), queues the rest of the prompt (one token per unit of
  time, first come first served), then marks every full block of the prompt most recently
  used, last block first (so block 0 is the most recent), and evicts least recently used
  blocks until at most ``capacity`` remain; the evicted hashes go out in one notice
  stamped t, delivered ``notice_delay`` later;
- its load report taken at time g (before any arrival at g) says ``max(0, free_at - g)``
  tokens are outstanding and names the last request it received before g; it is
  delivered ``report_delay`` later.
At equal times, deliveries come before the arrival: notices first, then reports, each in
the order they were made (reports of one time in replica order).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from graders.support.prefix_routing import block_hashes


@dataclass(frozen=True)
class Request:
    rid: str
    tokens: tuple[int, ...]
    at: int


@dataclass
class Replica:
    capacity: int
    block_size: int
    lru: OrderedDict[bytes, None] = field(default_factory=OrderedDict)
    free_at: int = 0
    last_rid: str | None = None

    def admit(self, req: Request) -> tuple[int, int, list[bytes]]:
        """(hit tokens, TTFT, evicted hashes in eviction order)."""
        hashes = block_hashes(req.tokens, self.block_size)
        cap = (len(req.tokens) - 1) // self.block_size
        hit = 0
        while hit < cap and hashes[hit] in self.lru:
            hit += 1
        uncached = len(req.tokens) - hit * self.block_size
        self.free_at = max(req.at, self.free_at) + uncached
        for h in reversed(hashes):
            self.lru[h] = None
            self.lru.move_to_end(h)
        evicted = []
        while len(self.lru) > self.capacity:
            evicted.append(self.lru.popitem(last=False)[0])
        self.last_rid = req.rid
        return hit * self.block_size, self.free_at - req.at, evicted


@dataclass
class Replay:
    decisions: list[int]
    hit_tokens: list[int]
    ttft: list[int]
    prompt_tokens: int
    calls: list[str]  # what the router was told, in order (for failure messages)

    @property
    def hit_rate(self) -> Fraction:
        return Fraction(sum(self.hit_tokens), self.prompt_tokens)

    @property
    def mean_ttft(self) -> Fraction:
        return Fraction(sum(self.ttft), len(self.ttft))


def requests(burst: list[tuple[int, list[int]]]) -> list[Request]:
    """(time, tokens) pairs in time order -> requests named q0, q1, ..."""
    return [Request(f"q{i}", tuple(toks), t) for i, (t, toks) in enumerate(burst)]


def replay(router: Any, num_replicas: int, block_size: int, capacity: int,
           burst: list[Request], notice_delay: int = 0, report_every: int = 0,
           report_delay: int = 0) -> Replay:
    """Drive ``router`` through ``burst``; reports are taken every ``report_every`` time
    units from time ``report_every`` on (never when 0), up to the last arrival."""
    reps = [Replica(capacity, block_size) for _ in range(num_replicas)]
    pending: list[tuple[int, int, int, str, tuple[Any, ...]]] = []  # (due, kind, seq, ...)
    seq = 0
    report_at = report_every
    out = Replay([], [], [], sum(len(q.tokens) for q in burst), [])

    def deliver(upto: int) -> None:
        pending.sort(key=lambda p: (p[0], p[1], p[2]))
        while pending and pending[0][0] <= upto:
            _, _, _, kind, args = pending.pop(0)
            out.calls.append(f"{kind}{args!r}")
            getattr(router, kind)(*args)

    for q in burst:
        while report_every and report_at <= q.at:
            for i, rep in enumerate(reps):
                pending.append((report_at + report_delay, 1, seq, "on_report",
                                (i, max(0, rep.free_at - report_at), rep.last_rid)))
                seq += 1
            report_at += report_every
        deliver(q.at)
        out.calls.append(f"route({q.rid!r}, {list(q.tokens)}, {q.at})")
        r = router.route(q.rid, list(q.tokens), q.at)
        assert type(r) is int and 0 <= r < num_replicas, f"route returned {r!r}"
        out.decisions.append(r)
        hit, ttft, evicted = reps[r].admit(q)
        out.hit_tokens.append(hit)
        out.ttft.append(ttft)
        if evicted:
            pending.append((q.at + notice_delay, 0, seq, "on_eviction", (r, evicted, q.at)))
            seq += 1
    return out


def show(calls: list[str], last: int = 30) -> str:
    return "\n  ".join(calls[-last:])
