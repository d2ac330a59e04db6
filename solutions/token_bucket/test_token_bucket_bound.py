"""The reference's own property test of the conservation bound (what a candidate writes in
katas/token_bucket/test_token_bucket_bound.py).

A state machine drives a bucket through admit / finish / available calls while time moves
forward in tiny and large steps and sometimes backwards, and keeps its own ledger: the need
of every admission, the refund every finish is owed, the tokens finished requests used.
After every step it checks the prompt's three bounds against that ledger:

1. 0 <= available <= capacity;
2. used + reserved <= capacity + rate * (clock - start);
3. for every earlier step i: admitted since i <= balance at i + rate * (clock - clock_i)
   + refunds owed since i;

and the tightest form of the bound: the most a correct bucket can hold, ``most``, follows
from the ledger alone (refill capped at capacity, plus refunds capped at capacity, minus
admissions), and the bucket may never report more than that.
"""

from __future__ import annotations

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from graders.impl import kata_impl

tb = kata_impl("token_bucket")

TOL = 1e-6
IDS = ["a", "b", "c"]


class BoundMachine(RuleBasedStateMachine):
    @initialize(capacity=st.sampled_from([1, 7, 50, 1000]),
                rate=st.sampled_from([0.1, 1 / 3, 0.7, 2.5, 64.0]),
                start=st.sampled_from([0.0, 12.25]))
    def setup(self, capacity: int, rate: float, start: float) -> None:
        self.cap, self.rate, self.start = capacity, rate, start
        self.bucket = tb.TokenBucket(capacity, rate, start)
        self.now = start
        self.clock = start                      # the latest now passed
        self.live: dict[str, tuple[int, int]] = {}
        self.used = 0                           # prompt + generated of finished requests
        self.admitted = 0                       # total need admitted
        self.refunded = 0                       # total refunds owed
        self.marks: list[tuple[float, float, int, int]] = []   # (clock, balance, admitted, refunded)
        self.most = float(capacity)             # the ledger's balance, as of self.clock
        self.log: list[str] = [f"TokenBucket({capacity}, {rate!r}, {start!r})"]

    def _at(self, now: float) -> None:
        if now > self.clock:
            self.most = min(self.cap, self.most + (now - self.clock) * self.rate)
            self.clock = now
        self.now = now

    @rule(dt=st.one_of(st.sampled_from([0.0, 1e-3, 0.05, 0.3, 1.0, 10.0]),
                       st.floats(0, 5, allow_nan=False)))
    def forward(self, dt: float) -> None:
        self.now += dt

    @rule()
    def fill_up(self) -> None:
        """Wait long enough for the bucket to be full again (live requests stay live)."""
        self.now = max(self.now, self.clock) + self.cap / self.rate + 1.0

    @rule(back=st.sampled_from([0.5, 3.0, 100.0]))
    def backward(self, back: float) -> None:
        self.now -= back

    @rule(rid=st.sampled_from(IDS), size=st.sampled_from(["fit", "fit+1", "fraction"]),
          frac=st.sampled_from([0.1, 0.5, 0.9, 1.0]), split=st.floats(0, 1))
    def admit(self, rid: str, size: str, frac: float, split: float) -> None:
        """Sizes next to what the ledger says is left find a bucket that has too much."""
        if rid in self.live:
            return
        if size == "fraction":
            need = round(frac * self.cap)
        else:
            reserved = sum(p + m for p, m in self.live.values())
            left = self.cap + self.rate * (max(self.now, self.clock) - self.start) \
                - self.used - reserved
            need = int(min(left, self.cap)) + (size == "fit+1")
        need = max(1, min(self.cap, need))
        prompt = round(need * split)
        status, _ = self.bucket.admit(rid, prompt, need - prompt, self.now)
        self.log.append(f"admit({rid!r}, {prompt}, {need - prompt}, now={self.now!r}) -> {status}")
        self._at(self.now)
        if status == "admitted":
            self.live[rid] = (prompt, need - prompt)
            self.admitted += need
            self.most -= need

    @rule(rid=st.sampled_from(IDS), part=st.sampled_from([0.0, 0.0, 0.5, 1.0]))
    def finish(self, rid: str, part: float) -> None:
        if rid not in self.live:
            with pytest.raises(KeyError):
                self.bucket.finish(rid, 0, self.now)
            self.log.append(f"finish({rid!r}, 0, now={self.now!r}) -> KeyError")
            return
        prompt, max_new = self.live.pop(rid)
        generated = round(part * max_new)
        self.bucket.finish(rid, generated, self.now)
        self.log.append(f"finish({rid!r}, {generated}, now={self.now!r})")
        self._at(self.now)
        self.used += prompt + generated
        self.refunded += max_new - generated
        self.most = min(self.cap, self.most + max_new - generated)

    @invariant()
    def bound_holds(self) -> None:
        if not hasattr(self, "bucket"):
            return
        balance = self.bucket.available(self.now)
        self._at(self.now)
        calls = "\n  ".join(self.log[-20:])
        assert -TOL <= balance <= self.cap + TOL, (
            f"bound 1: balance {balance!r} outside [0, {self.cap}] at t={self.now!r} after\n  {calls}")
        reserved = sum(p + m for p, m in self.live.values())
        limit = self.cap + self.rate * (self.clock - self.start)
        assert self.used + reserved <= limit + TOL, (
            f"bound 2: used {self.used} + reserved {reserved} > capacity + refill = {limit!r} "
            f"at clock {self.clock!r} after\n  {calls}")
        for clock_i, balance_i, admitted_i, refunded_i in self.marks:
            allowed = (balance_i + self.rate * (self.clock - clock_i)
                       + (self.refunded - refunded_i))
            assert self.admitted - admitted_i <= allowed + TOL, (
                f"bound 3: {self.admitted - admitted_i} tokens admitted since clock {clock_i!r} "
                f"(balance {balance_i!r} then) but only {allowed!r} could be, after\n  {calls}")
        assert balance <= self.most + TOL and self.most >= -TOL, (
            f"tight bound: the ledger allows at most {self.most!r} tokens at clock {self.clock!r}, "
            f"the bucket reports {balance!r} and has admitted down to {self.most!r}, after\n  {calls}")
        self.marks.append((self.clock, balance, self.admitted, self.refunded))


TestBound = BoundMachine.TestCase
