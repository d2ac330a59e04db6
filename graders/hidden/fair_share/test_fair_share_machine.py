"""Hidden stateful tests for the fair_share scheduler.

A hypothesis state machine enqueues requests for a few tenants (costs near multiples of a
small quantum, so a head request that exactly fits, or just misses, is common; tenants that
send one request and go idle, so credit would be banked) and calls next_request, one or many
times. After every step it checks what the scheduler returned:

- deficit_counter: every record and stats() equal the prompt's DRR (graders/hidden/
  fair_share/model.py), bad input raises ValueError and changes nothing;
- work_conserving: None only when nothing waits, every record is the head of its tenant's
  queue (the test's own bookkeeping of what it enqueued and what came back);
- bounded_unfairness: for every pair of tenants, over every run of calls in which both stay
  backlogged, the served costs differ by at most quantum + 2 x Max;
- no_banking: a tenant with nothing waiting has deficit 0.

The same machine runs once per rubric item; each run enforces the checks of its item.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from graders.hidden.fair_share.model import DRR, Fairness
from graders.impl import kata_impl

fs_mod = kata_impl("fair_share")

TENANTS = st.sampled_from(["a", "b", "c", "d"])


class Checks:
    def __init__(self, item: str) -> None:
        self.item = item

    def __call__(self, items: set[str], ok: bool, message: str) -> None:
        if not ok and self.item in items:
            raise AssertionError(message)


class FairMachine(RuleBasedStateMachine):
    """Random enqueues and calls against the DRR model and the invariants.

    Rules: The round; Visits; No banking; Work conservation; Bounded unfairness; Stats
    Rule: Bad input
    """

    ITEM = ""

    def __init__(self) -> None:
        super().__init__()
        self.check = Checks(self.ITEM)
        self.fs: Any = None
        self.model = DRR(1)
        self.queues: dict[str, deque[tuple[str, int]]] = {}
        self.fair = Fairness()
        self.max_cost = 0
        self.n = 0
        self.wp = self.wd = self.quantum = 1
        self.log: list[str] = []
        self.served: list[str] = []

    def backlogged(self) -> set[str]:
        return {t for t, q in self.queues.items() if q}

    def where(self) -> str:
        return (f"FairShare({self.wp}, {self.wd}, {self.quantum}); calls so far: "
                + "; ".join(self.log[-14:]))

    @initialize(wp=st.integers(1, 3), wd=st.integers(1, 4), quantum=st.sampled_from([1, 4, 7, 20]))
    def start(self, wp: int, wd: int, quantum: int) -> None:
        self.wp, self.wd, self.quantum = wp, wd, quantum
        self.fs = fs_mod.FairShare(wp, wd, quantum)
        self.model = DRR(quantum)

    @rule(tenant=TENANTS, p=st.one_of(st.integers(0, 2), st.integers(0, 12)), d=st.integers(0, 4),
          burst=st.integers(1, 3), reuse=st.booleans())
    def enqueue(self, tenant: str, p: int, d: int, burst: int, reuse: bool) -> None:
        """An id may be reused once served: ``reuse`` sends the oldest served id again."""
        if p + d == 0:
            p = 1
        for _ in range(burst):
            waiting = {r for q in self.queues.values() for r, _ in q}
            again = [r for r in self.served if r not in waiting]
            if reuse and again:
                rid = again[0]
                self.served.remove(rid)
            else:
                self.n += 1
                rid = f"r{self.n}"
            cost = self.fs.enqueue(tenant, rid, p, d)
            want = self.wp * p + self.wd * d
            self.log.append(f"enqueue({tenant!r}, {rid!r}, {p}, {d}) -> {cost}")
            self.check({"deficit_counter"}, cost == want,
                       f"enqueue cost {cost!r}, expected {want}: {self.where()}")
            self.queues.setdefault(tenant, deque()).append((rid, want))
            self.model.enqueue(tenant, rid, want)
            self.max_cost = max(self.max_cost, want)

    @rule(tenant=TENANTS, kind=st.integers(0, 3))
    def bad_enqueue(self, tenant: str, kind: int) -> None:
        waiting = [rid for q in self.queues.values() for rid, _ in q]
        args: tuple[Any, ...]
        if kind == 0 and waiting:
            args = (tenant, waiting[0], 1, 1)             # id already waiting
        elif kind == 1:
            args = ("e", "fresh", 0, 0)                    # no tokens; "e" never seen
        elif kind == 2:
            args = (tenant, "fresh", 2, -1)
        else:
            args = ("", "fresh", 1, 0)
        before = self.fs.stats()
        try:
            self.fs.enqueue(*args)
        except ValueError:
            pass
        else:
            self.check({"deficit_counter"}, False,
                       f"enqueue{args} must raise ValueError: {self.where()}")
        after = self.fs.stats()
        self.check({"deficit_counter"}, after == before,
                   f"enqueue{args} failed but stats went {before} -> {after}: {self.where()}")

    @rule(calls=st.integers(1, 6))
    def serve(self, calls: int) -> None:
        c = self.check
        for _ in range(calls):
            waiting = bool(self.backlogged())
            self.fair.before_call(self.backlogged())
            got = self.fs.next_request()
            want = self.model.next_request()
            self.log.append(f"next_request() -> {got!r}")
            c({"deficit_counter"}, (None if got is None else tuple(got)) == want,
              f"next_request() returned {got!r}, the DRR rules serve {want!r}: {self.where()}")
            if got is None:
                c({"work_conserving", "bounded_unfairness"}, not waiting,
                  f"next_request() returned None while requests wait: {self.where()}")
                self.fair.after_call(None, 0, self.backlogged())
                continue
            tenant, rid, cost = got
            queue = self.queues.get(tenant)
            found = [i for i, (r, _) in enumerate(queue or ()) if r == rid]
            c({"work_conserving", "bounded_unfairness", "no_banking", "deficit_counter"},
              bool(found), f"next_request() served {got!r}, which is not waiting: {self.where()}")
            if not found:
                continue
            assert queue is not None
            c({"work_conserving"}, found[0] == 0,
              f"next_request() served {rid!r} ahead of {queue[0][0]!r}, which {tenant!r} "
              f"enqueued first: {self.where()}")
            _, real = queue[found[0]]
            del queue[found[0]]
            self.served.append(rid)
            c({"work_conserving", "deficit_counter"}, cost == real,
              f"next_request() reports cost {cost}, the request costs {real}: {self.where()}")
            bound = self.quantum + 2 * self.max_cost
            for a, b, spread in self.fair.after_call(tenant, real, self.backlogged()):
                c({"bounded_unfairness"}, spread <= bound,
                  f"tenants {a!r} and {b!r}, both backlogged throughout, got weighted service "
                  f"differing by {spread} > quantum + 2 x Max = {bound}: {self.where()}")

    @invariant()
    def stats_agree(self) -> None:
        if self.fs is None:
            return
        s = self.fs.stats()
        c = self.check
        for tenant, queue in self.queues.items():
            c({"no_banking", "deficit_counter"}, tenant in s,
              f"stats() lacks tenant {tenant!r}: {s}")
            if tenant in s and not queue:
                c({"no_banking"}, s[tenant].get("deficit") == 0,
                  f"tenant {tenant!r} has nothing waiting, so its deficit must be 0, got "
                  f"{s[tenant]}: {self.where()}")
        want = self.model.stats()
        c({"deficit_counter"}, s == want, f"stats() = {s}, expected {want}: {self.where()}")


def _machine(item: str) -> Any:
    cls = type(f"Fair_{item}", (FairMachine,), {"ITEM": item})
    case = cls.TestCase
    case.settings = settings(stateful_step_count=30,
                             max_examples=min(40, settings.default.max_examples))
    return pytest.mark.rubric(item)(case)


TestMachineDeficitCounter = _machine("deficit_counter")
TestMachineWorkConserving = _machine("work_conserving")
TestMachineBoundedUnfairness = _machine("bounded_unfairness")
TestMachineNoBanking = _machine("no_banking")
