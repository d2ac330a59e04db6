"""Hidden tests for token_bucket: adversarial schedules aimed at the traps of KATAS.md §3.

Each rubric item is checked in a way that does not depend on the others where possible:
- reserve_refund: an exact model of the balance (forward time only);
- conservation: the prompt's three bounds, from the test's own ledger (no model);
- wait_time: each wait against the bucket's own balance, and the retry at now + wait;
- time_monotonic and bad_input: twin buckets of the same implementation, one of which also
  gets calls at earlier times (or bad calls); they must agree;
- fail_fast: oversize requests at any state.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (RuleBasedStateMachine, initialize, invariant, precondition,
                                 rule)

from graders.hidden.token_bucket.strategies import (BACK, CAPACITIES, DT, ID, NEED_KIND, RATES,
                                                    STARTS, pick_need, split)
from graders.impl import kata_impl
from tests.token_bucket.helpers import LATE, TOK, Model, drain, history, outcome

tb = kata_impl("token_bucket")

SHARE = st.sampled_from([0.0, 0.3, 0.5, 1.0])
FRACTION = st.floats(0, 1)
GEN_PART = st.sampled_from([0.0, 0.25, 1.0])


def late_slack(rate: float) -> float:
    """How late a wait may be: the stated 1e-6 s, plus the token slack's worth of refill."""
    return LATE + TOK / rate


# ===================================================================== reserve_refund

class ReserveRefundMachine(RuleBasedStateMachine):
    """Forward time only; the balance must match the exact model after every call.

    Rules: Balance; Reserve; Refund; Wait and reject reserve nothing
    """

    @initialize(cap=CAPACITIES, rate=RATES, start=STARTS)
    def setup(self, cap: int, rate: float, start: float) -> None:
        self.cap, self.rate, self.now = cap, rate, start
        self.bucket = tb.TokenBucket(cap, rate, start)
        self.model = Model(cap, rate, start)
        self.log = [f"b = TokenBucket({cap}, {rate!r}, {start!r})"]

    @rule(dt=DT)
    def forward(self, dt: float) -> None:
        self.now += dt

    @rule(rid=ID, kind=NEED_KIND, fraction=FRACTION, share=SHARE)
    def admit(self, rid: str, kind: str, fraction: float, share: float) -> None:
        if rid in self.model.live:
            return
        bal = self.model.balance(self.now)
        prompt, max_new = split(pick_need(kind, float(bal), self.cap, fraction), share)
        need = prompt + max_new
        result = self.bucket.admit(rid, prompt, max_new, self.now)
        self.log.append(f"b.admit({rid!r}, {prompt}, {max_new}, {self.now!r}) -> {result!r}")
        status, _ = outcome(result)
        if status == "rejected" and need == self.cap:
            self.model.move(self.now)     # wrong, but fail_fast grades it
            return
        where = (f"balance {float(bal)!r} (exact), need {need}.\n    {history(self.log)}")
        if bal >= need + TOK:
            assert status == "admitted", f"the request fits and must be admitted: {where}"
        elif bal < need - TOK:
            assert status == "wait", f"the request does not fit now and must wait: {where}"
        assert status != "rejected", f"need {need} <= capacity {self.cap} is never rejected"
        if status == "admitted":
            self.model.admit(rid, prompt, max_new, self.now)
        else:
            self.model.move(self.now)

    @rule(rid=ID, part=GEN_PART)
    def finish(self, rid: str, part: float) -> None:
        if rid not in self.model.live:
            return
        max_new = self.model.live[rid][1]
        generated = round(part * max_new)
        self.bucket.finish(rid, generated, self.now)
        self.log.append(f"b.finish({rid!r}, {generated}, {self.now!r})")
        self.model.finish(rid, generated, self.now)

    @rule(rid=ID)
    def finish_again(self, rid: str) -> None:
        """Finishing a request that is not live must raise KeyError and refund nothing."""
        if rid in self.model.live:
            return
        with pytest.raises(KeyError):
            self.bucket.finish(rid, 0, self.now)
        self.log.append(f"b.finish({rid!r}, 0, {self.now!r}) -> KeyError (not live)")

    @invariant()
    def balance_matches_the_ledger(self) -> None:
        if not hasattr(self, "bucket"):
            return
        got = self.bucket.available(self.now)
        self.model.move(self.now)
        want = self.model.balance(self.now)
        assert abs(got - want) <= TOK, (
            f"available({self.now!r}) = {got!r}, but reserving prompt + max_new at admission and "
            f"refunding max_new - generated once at finish (capped at capacity) gives "
            f"{float(want)!r}.\n    {history(self.log)}")


TestReserveRefund = pytest.mark.rubric("reserve_refund")(ReserveRefundMachine.TestCase)


@pytest.mark.rubric("reserve_refund")
@given(cap=CAPACITIES.filter(lambda c: c > 1), share=SHARE, part=GEN_PART)
def test_refund_is_exact_and_once(cap, share, part):
    """Rule: Refund"""
    b = tb.TokenBucket(cap, 1.0)
    prompt, max_new = split(cap - 1, share)
    assert outcome(b.admit("r", prompt, max_new, 0.0))[0] == "admitted"
    assert outcome(b.admit("pad", 1, 0, 0.0))[0] == "admitted"
    generated = round(part * max_new)
    b.finish("r", generated, 0.0)
    want = max_new - generated
    assert abs(b.available(0.0) - want) <= TOK, (
        f"capacity {cap}: admit({prompt}, {max_new}) and admit(1, 0) empty the bucket; finish(generated="
        f"{generated}) must refund {want}, balance {b.available(0.0)!r}")
    for _ in range(2):
        with pytest.raises(KeyError):
            b.finish("r", 0, 0.0)
    assert abs(b.available(0.0) - want) <= TOK, "a finished request is refunded exactly once"
    if want < cap:
        assert outcome(b.admit("r", 0, want + 1, 0.0))[0] == "wait", (
            "a second refund must not have happened: the balance is short of want + 1")


# ===================================================================== conservation

class ConservationMachine(RuleBasedStateMachine):
    """Time moves forward (often in tiny steps) and back; the three bounds must hold.

    Rules: Tokens are conserved; Balance in range; Used plus reserved; Window bound
    """

    @initialize(cap=CAPACITIES, rate=RATES, start=STARTS)
    def setup(self, cap: int, rate: float, start: float) -> None:
        self.cap, self.rate, self.start, self.now = cap, rate, start, start
        self.bucket = tb.TokenBucket(cap, rate, start)
        self.clock = start
        self.live: dict[str, tuple[int, int]] = {}
        self.used = self.admitted = self.refunded = 0
        self.marks: list[tuple[float, float, int, int]] = []
        self.most = float(cap)       # the most the ledger allows the bucket to hold, at clock
        self.log = [f"b = TokenBucket({cap}, {rate!r}, {start!r})"]

    def _moved(self) -> None:
        if self.now > self.clock:
            self.most = min(self.cap, self.most + (self.now - self.clock) * self.rate)
            self.clock = self.now

    @rule(dt=DT)
    def forward(self, dt: float) -> None:
        self.now += dt

    @rule(back=BACK)
    def backward(self, back: float) -> None:
        self.now -= back

    @rule(n=st.integers(2, 30), dt=st.sampled_from([1e-3, 0.01, 0.07, 1 / 3]))
    def many_small_refills(self, n: int, dt: float) -> None:
        for _ in range(n):
            self.now += dt
            self.bucket.available(self.now)
        self.log.append(f"{n} x (now += {dt!r}; b.available(now))  -> now {self.now!r}")
        self._moved()

    @rule(rid=ID, kind=NEED_KIND, fraction=FRACTION, share=SHARE)
    def admit(self, rid: str, kind: str, fraction: float, share: float) -> None:
        if rid in self.live:
            return
        bal = self.bucket.available(self.now)
        self._moved()
        prompt, max_new = split(pick_need(kind, bal, self.cap, fraction), share)
        status, _ = outcome(self.bucket.admit(rid, prompt, max_new, self.now))
        self.log.append(f"b.admit({rid!r}, {prompt}, {max_new}, {self.now!r}) -> {status}")
        if status == "admitted":
            self.live[rid] = (prompt, max_new)
            self.admitted += prompt + max_new
            self.most -= prompt + max_new

    @rule(rid=ID, part=GEN_PART)
    def finish(self, rid: str, part: float) -> None:
        if rid in self.live:
            prompt, max_new = self.live.pop(rid)
            generated = round(part * max_new)
            self.bucket.finish(rid, generated, self.now)
            self.log.append(f"b.finish({rid!r}, {generated}, {self.now!r})")
            self._moved()
            self.used += prompt + generated
            self.refunded += max_new - generated
            self.most = min(self.cap, self.most + (max_new - generated))
        else:
            # Not live: the bucket owes nothing. Whatever it does (it should raise KeyError;
            # bad_input grades that), the ledger records no refund.
            try:
                self.bucket.finish(rid, 0, self.now)
                self.log.append(f"b.finish({rid!r}, 0, {self.now!r}) [not live; no error]")
            except KeyError:
                self.log.append(f"b.finish({rid!r}, 0, {self.now!r}) -> KeyError")

    @invariant()
    def bounds_hold(self) -> None:
        if not hasattr(self, "bucket"):
            return
        balance = self.bucket.available(self.now)
        self._moved()
        calls = history(self.log)
        assert -TOK <= balance <= self.cap + TOK, (
            f"bound 1: available({self.now!r}) = {balance!r} is outside [0, {self.cap}].\n    {calls}")
        reserved = sum(p + m for p, m in self.live.values())
        limit = self.cap + self.rate * (self.clock - self.start)
        assert self.used + reserved <= limit + TOK, (
            f"bound 2: used {self.used} + reserved {reserved} exceeds capacity + refill since "
            f"the start = {limit!r} (clock {self.clock!r}).\n    {calls}")
        for clock_i, balance_i, admitted_i, refunded_i in self.marks:
            allowed = balance_i + self.rate * (self.clock - clock_i) + (self.refunded - refunded_i)
            assert self.admitted - admitted_i <= allowed + TOK, (
                f"bound 3: since clock {clock_i!r} (balance {balance_i!r}) the bucket admitted "
                f"{self.admitted - admitted_i} tokens, but balance + refill + refunds allow "
                f"only {allowed!r}.\n    {calls}")
        assert balance <= self.most + TOK and self.most >= -TOK, (
            f"tokens from nowhere: refill since the start (capped at capacity), refunds "
            f"(capped) and admissions leave at most {self.most!r} tokens at clock "
            f"{self.clock!r}, but the bucket reports {balance!r}"
            f"{' and admitted beyond it' if self.most < -TOK else ''}.\n    {calls}")
        self.marks.append((self.clock, balance, self.admitted, self.refunded))


TestConservation = pytest.mark.rubric("conservation")(ConservationMachine.TestCase)


@pytest.mark.rubric("conservation")
@given(cap=CAPACITIES, rate=RATES, start=STARTS,
       steps=st.lists(st.sampled_from([1e-3, 0.01, 0.1, 1 / 3, 0.7]), min_size=1, max_size=60))
def test_full_bucket_never_creeps_above_capacity(cap, rate, start, steps):
    """Rules: Balance; Balance in range"""
    b = tb.TokenBucket(cap, rate, start)
    now = start
    for i, dt in enumerate(steps):
        now += dt
        got = b.available(now)
        assert got <= cap + TOK, (
            f"TokenBucket({cap}, {rate!r}, {start!r}) stays full, but after {i + 1} small refills "
            f"(now {now!r}) available = {got!r} > capacity")


# ===================================================================== wait_time

def _check_wait(bucket, clock, rid, prompt, max_new, now, rate, retry, log):
    """Ask; if told to wait, check the answer against the bucket's own balance and, when
    ``retry``, make the same call at now + wait. Returns (status, clock after)."""
    need = prompt + max_new
    result = bucket.admit(rid, prompt, max_new, now)
    log.append(f"b.admit({rid!r}, {prompt}, {max_new}, {now!r}) -> {result!r}")
    status, wait = outcome(result)
    clock = max(clock, now)
    if status != "wait":
        return status, clock
    balance = bucket.available(now)          # read at the clock: the balance admit saw
    expected = (clock - now) + (need - balance) / rate
    where = (f"balance {balance!r} at clock {clock!r}, need {need}, rate {rate!r}: the exact "
             f"wait from now={now!r} is {expected!r}, got {wait!r}.\n    {history(log)}")
    assert wait <= expected + late_slack(rate), f"the wait is too long: {where}"
    assert wait >= expected - late_slack(rate), f"the wait is too short: {where}"
    if retry:
        again = bucket.admit(rid, prompt, max_new, now + wait)
        log.append(f"b.admit({rid!r}, {prompt}, {max_new}, {now + wait!r}) -> {again!r}")
        assert outcome(again)[0] == "admitted", (
            f"told to wait {wait!r} s from {now!r}; the same call at now + wait = "
            f"{now + wait!r} must be admitted, got {again!r}.\n    {history(log)}")
        return "admitted", max(clock, now + wait)
    return status, clock


@pytest.mark.rubric("wait_time")
@given(cap=CAPACITIES, rate=RATES, start=STARTS, used=FRACTION,
       queries=st.lists(st.tuples(FRACTION, st.sampled_from([0.0, 1e-3, 0.1, 0.2, 1 / 3, 0.7, 1.9]),
                                  st.integers(0, 12)), min_size=1, max_size=12))
def test_wait_is_never_early_and_never_late(cap, rate, start, used, queries):
    """Fresh buckets, one query each: the retry at now + wait must be admitted.

    Rule: Wait
    """
    first = max(1, round(used * cap))
    for fraction, unit, k in queries:
        need = max(1, round(fraction * cap))
        now = start + unit * k
        b = tb.TokenBucket(cap, rate, start)
        log = [f"b = TokenBucket({cap}, {rate!r}, {start!r})"]
        assert outcome(b.admit("first", first, 0, start))[0] == "admitted"
        log.append(f"b.admit('first', {first}, 0, {start!r}) -> admitted")
        _check_wait(b, start, "q", need, 0, now, rate, True, log)


class WaitMachine(RuleBasedStateMachine):
    """Schedules with refunds and time going backwards; every wait is checked.

    Rule: Wait
    """

    @initialize(cap=CAPACITIES, rate=RATES, start=STARTS)
    def setup(self, cap: int, rate: float, start: float) -> None:
        self.cap, self.rate, self.now, self.clock = cap, rate, start, start
        self.bucket = tb.TokenBucket(cap, rate, start)
        self.live: dict[str, int] = {}
        self.log = [f"b = TokenBucket({cap}, {rate!r}, {start!r})"]

    @rule(dt=DT)
    def forward(self, dt: float) -> None:
        self.now += dt

    @rule(back=BACK)
    def backward(self, back: float) -> None:
        self.now -= back

    @rule(rid=ID, kind=NEED_KIND, fraction=FRACTION, share=SHARE, retry=st.booleans())
    def admit(self, rid: str, kind: str, fraction: float, share: float, retry: bool) -> None:
        if rid in self.live:
            return
        balance = self.bucket.available(self.now)
        self.clock = max(self.clock, self.now)
        prompt, max_new = split(pick_need(kind, balance, self.cap, fraction), share)
        status, self.clock = _check_wait(self.bucket, self.clock, rid, prompt, max_new,
                                         self.now, self.rate, retry, self.log)
        if status == "admitted":
            self.live[rid] = max_new
            self.now = max(self.now, self.clock) if retry else self.now

    @rule(rid=ID, part=GEN_PART)
    def finish(self, rid: str, part: float) -> None:
        if rid not in self.live:
            return
        generated = round(part * self.live.pop(rid))
        self.bucket.finish(rid, generated, self.now)
        self.log.append(f"b.finish({rid!r}, {generated}, {self.now!r})")
        self.clock = max(self.clock, self.now)


TestWait = pytest.mark.rubric("wait_time")(WaitMachine.TestCase)


@pytest.mark.rubric("wait_time")
@given(rate=RATES, back=st.sampled_from([0.5, 2.0, 100.0]), deficit=st.integers(1, 50))
def test_wait_counts_from_an_earlier_now(rate, back, deficit):
    """Rules: Wait; Time never runs backwards"""
    b = tb.TokenBucket(100, rate)
    empty = drain(b, 100, 1000.0, rate)    # empty at clock 1000 (a rounding hair later at most)
    status, wait = outcome(b.admit("q", deficit, 0, 1000.0 - back))
    expected = back + Fraction(deficit) / Fraction(rate) + Fraction(empty - 1000.0)
    assert status == "wait" and abs(wait - expected) <= late_slack(rate), (
        f"empty bucket at clock 1000, rate {rate!r}, need {deficit}, asked at now={1000 - back}: "
        f"the wait counts from the now passed: expected {float(expected)!r}, got {(status, wait)}")
    assert outcome(b.admit("q", deficit, 0, 1000.0 - back + wait))[0] == "admitted"


@pytest.mark.rubric("wait_time")
@given(cap=CAPACITIES.filter(lambda c: c > 1), rate=RATES)
def test_long_wait_from_empty(cap, rate):
    """Rule: Wait"""
    b = tb.TokenBucket(cap, rate, 5.0)
    empty = drain(b, cap, 5.0, rate)
    need = cap - 1
    status, wait = outcome(b.admit("again", need, 0, 5.0))
    expected = Fraction(need) / Fraction(rate) + Fraction(empty - 5.0)
    assert status == "wait" and abs(wait - expected) <= late_slack(rate), (
        f"empty bucket of {cap}, need {need}, rate {rate!r}: expected ('wait', "
        f"{float(expected)!r}), got {(status, wait)}")
    assert outcome(b.admit("again", need, 0, 5.0 + wait))[0] == "admitted"


@pytest.mark.rubric("wait_time")
@pytest.mark.parametrize("rate", [0.1, 0.3, 1 / 3, 0.7])
@pytest.mark.parametrize("start, used, need, dt", [
    (0.0, 500, 600, 0.0), (12345.678, 999, 1000, 2.5), (987654.0, 1, 1000, 1 / 3)])
def test_wait_is_at_most_a_microsecond_late_at_slow_rates(rate, start, used, need, dt):
    """The prompt: the wait is "at most 1e-6 s late". At a slow rate a token margin is many
    microseconds: 1e-6 tokens at 0.1 tokens/s is 1e-5 s.

    Rule: Wait
    """
    b = tb.TokenBucket(1000, rate, start)
    assert outcome(b.admit("a", used, 0, start))[0] == "admitted"
    model = Model(1000, rate, start)
    model.admit("a", used, 0, start)
    now = start + dt
    exact = model.wait(need, now)
    status, wait = outcome(b.admit("b", need, 0, now))
    assert status == "wait" and wait <= exact + LATE, (
        f"TokenBucket(1000, {rate!r}, {start!r}); admit('a', {used}, 0, {start!r}); "
        f"admit('b', {need}, 0, {now!r}) must wait {float(exact)!r} s, at most 1e-6 s "
        f"more; got {(status, wait)}")


# ===================================================================== fail_fast

@pytest.mark.rubric("fail_fast")
@given(cap=CAPACITIES, rate=RATES, used=FRACTION, over=st.sampled_from([1, 2, 1000, 10**12]),
       share=SHARE, dt=DT)
def test_oversize_is_rejected_in_any_state(cap, rate, used, over, share, dt):
    """Rules: Fail fast; Wait and reject reserve nothing"""
    b = tb.TokenBucket(cap, rate)
    taken = round(used * cap)
    b.admit("a", taken, 0, 0.0)
    before = b.available(dt)
    prompt, max_new = split(cap + over, share)
    result = b.admit("big", prompt, max_new, dt)
    assert outcome(result) == ("rejected", math.inf), (
        f"capacity {cap}, balance {before!r}: need {prompt} + {max_new} = {cap + over} can never "
        f"fit and must be ('rejected', inf) at once, got {result!r}")
    assert abs(b.available(dt) - before) <= TOK, "a rejection reserves nothing"
    status, _ = outcome(b.admit("big", 0, 0, dt))
    assert status == "admitted", "a rejected id is not recorded: it can be admitted afterwards"


@pytest.mark.rubric("fail_fast")
@given(cap=CAPACITIES, rate=RATES, used=FRACTION, share=SHARE, dt=DT)
def test_exactly_capacity_is_never_rejected(cap, rate, used, share, dt):
    """Rule: Fail fast"""
    b = tb.TokenBucket(cap, rate)
    b.admit("a", round(used * cap), 0, 0.0)
    prompt, max_new = split(cap, share)
    status, wait = outcome(b.admit("full", prompt, max_new, dt))
    assert status != "rejected", (
        f"need = capacity {cap} fits a full bucket: it may wait, never be rejected")
    if status == "wait":
        assert wait < math.inf


@pytest.mark.rubric("fail_fast")
def test_rejection_comes_first_even_for_an_empty_bucket_far_in_the_past():
    """Rule: Fail fast"""
    b = tb.TokenBucket(10, 0.5, 100.0)
    b.admit("a", 10, 0, 100.0)
    assert outcome(b.admit("b", 6, 5, 50.0)) == ("rejected", math.inf)
    assert outcome(b.admit("b", 0, 11, 100.0)) == ("rejected", math.inf)


# ===================================================================== time_monotonic

OP = st.tuples(st.sampled_from(["admit", "finish", "read"]), ID, NEED_KIND, FRACTION, SHARE,
               GEN_PART)


@pytest.mark.rubric("time_monotonic")
@given(cap=CAPACITIES, rate=RATES, start=STARTS,
       steps=st.lists(st.tuples(DT, OP, st.one_of(st.none(), BACK), st.one_of(st.none(), BACK)),
                      min_size=1, max_size=25))
def test_earlier_now_is_handled_at_the_clock(cap, rate, start, steps):
    """Twin buckets get the same calls; the second also gets reads at earlier times, and
    calls made at the clock's own time are passed to it with an earlier now. Both must
    agree on every answer and every balance.

    Rule: Time never runs backwards
    """
    a = tb.TokenBucket(cap, rate, start)
    b = tb.TokenBucket(cap, rate, start)
    now = clock = start
    live: dict[str, int] = {}
    log = [f"a, b = TokenBucket({cap}, {rate!r}, {start!r}) twice"]
    for dt, (op, rid, kind, fraction, share, part), early, read_back in steps:
        now += dt
        # b gets the call at an earlier now only when a acts at the clock anyway.
        b_now = now - early if (early is not None and now <= clock) else now
        if op == "admit" and rid not in live:
            balance = a.available(now)
            b.available(now)                      # the twins see the same reads
            prompt, max_new = split(pick_need(kind, balance, cap, fraction), share)
            ra, rb = outcome(a.admit(rid, prompt, max_new, now)), outcome(
                b.admit(rid, prompt, max_new, b_now))
            log.append(f"admit({rid!r}, {prompt}, {max_new}): a at {now!r} -> {ra}; "
                       f"b at {b_now!r} -> {rb}")
            assert ra[0] == rb[0], f"the twins must agree.\n    {history(log)}"
            if ra[0] == "wait":
                assert abs((rb[1] - ra[1]) - (now - b_now)) <= 2 * late_slack(rate), (
                    f"asked {now - b_now!r} s earlier, the wait must be that much longer.\n"
                    f"    {history(log)}")
            if ra[0] == "admitted":
                live[rid] = max_new
        elif op == "finish" and rid in live:
            generated = round(part * live.pop(rid))
            a.finish(rid, generated, now)
            b.finish(rid, generated, b_now)
            log.append(f"finish({rid!r}, {generated}): a at {now!r}, b at {b_now!r}")
        clock = max(clock, now)
        got_a, got_b = a.available(now), b.available(now)
        assert abs(got_a - got_b) <= TOK, (
            f"calls with an earlier now must neither mint nor destroy tokens: at {now!r} "
            f"the twin without them has {got_a!r}, the one with them {got_b!r}.\n    {history(log)}")
        if read_back is not None:
            got = b.available(now - read_back)
            log.append(f"b.available({now - read_back!r}) -> {got!r} (clock {clock!r})")
            assert abs(got - got_a) <= TOK, (
                f"an earlier now reads the balance at the clock {clock!r}: {got_a!r}, "
                f"got {got!r}.\n    {history(log)}")


@pytest.mark.rubric("time_monotonic")
@given(rate=RATES, gap=st.sampled_from([1e-3, 0.1, 0.7, 2.5, 40.0]),
       frac=st.sampled_from([0.0, 0.25, 0.5, 0.999]),
       kind=st.sampled_from(["rejected", "wait", "admitted"]))
def test_every_admit_outcome_moves_the_clock(rate, gap, frac, kind):
    """The prompt: the clock is the latest ``now`` any successful call has passed, "admit
    of any outcome" included. So after an admit at t1 (admitted, told to wait, or
    rejected), a read at an earlier time is handled at t1: it sees the balance of t1.

    Rules: Time never runs backwards; Wait and reject reserve nothing
    """
    cap = 1000
    empty_at = drain(tb.TokenBucket(cap, rate, 10.0), cap, 10.0, rate)
    b = tb.TokenBucket(cap, rate, 10.0)
    drain(b, cap, 10.0, rate)
    t1 = empty_at + gap
    at_t1 = min(float(cap), rate * gap)        # what refill brought by t1
    prompt = {"rejected": cap + 1, "wait": min(cap, math.floor(at_t1) + 2), "admitted": 0}[kind]
    assume(kind != "wait" or prompt > at_t1 + 2 * TOK)
    got = outcome(b.admit("probe", prompt, 0, t1))
    assert got[0] == kind, f"admit({prompt}, 0) at {t1!r} with {at_t1!r} tokens: {got}"
    earlier = empty_at + gap * frac
    seen = b.available(earlier)
    assert abs(seen - at_t1) <= TOK + rate * 1e-9 * gap, (
        f"TokenBucket({cap}, {rate!r}, 10.0) drained at {empty_at!r}; admit({prompt}, 0) at "
        f"{t1!r} answered {got[0]!r}, so the clock is {t1!r} and available({earlier!r}) must "
        f"read the balance at {t1!r}: {at_t1!r}, got {seen!r} (a {got[0]!r} admit moves the "
        "clock too)")


@pytest.mark.rubric("time_monotonic")
def test_finish_and_available_move_the_clock():
    """The clock is the latest now of any successful call: finish and available included.

    Rule: Time never runs backwards
    """
    b = tb.TokenBucket(100, 1.0)
    b.admit("a", 50, 0, 0.0)                 # 50 left at 0
    b.finish("a", 0, 10.0)                   # clock 10: 60
    got = b.available(5.0)
    assert abs(got - 60.0) <= TOK, (
        f"admit('a', 50, 0, 0.0); finish('a', 0, 10.0) moves the clock to 10, so "
        f"available(5.0) reads the balance at 10: 60.0, got {got!r}")
    b.admit("b", 60, 0, 10.0)                # empty at 10
    b.available(20.0)                        # clock 20: 10
    got = b.available(15.0)
    assert abs(got - 10.0) <= TOK, (
        f"available(20.0) moved the clock to 20, so available(15.0) reads 10.0, got {got!r}")


@pytest.mark.rubric("time_monotonic")
@pytest.mark.parametrize("first", ["available", "admit", "wait"])
def test_a_call_before_start_is_handled_at_start(first):
    """A new bucket's clock reads start: a call with an earlier now is handled at start.

    Rule: Time never runs backwards
    """
    b = tb.TokenBucket(100, 1.0, 100.0)
    if first == "available":
        got = b.available(40.0)
        assert abs(got - 100.0) <= TOK, f"TokenBucket(100, 1.0, 100.0).available(40.0) is full: {got!r}"
    elif first == "admit":
        assert outcome(b.admit("a", 70, 0, 40.0))[0] == "admitted"
    else:
        b.admit("a", 70, 0, 100.0)
        status, wait = outcome(b.admit("b", 50, 0, 40.0))
        assert status == "wait" and abs(wait - 80.0) <= late_slack(1.0), (
            f"TokenBucket(100, 1.0, 100.0); admit('a', 70, 0, 100.0); admit('b', 50, 0, 40.0) "
            f"waits 60 s until the clock (100) and 20 s of refill: 80.0, got {(status, wait)}")
        return
    got = b.available(100.0)
    want = 100.0 if first == "available" else 30.0
    assert abs(got - want) <= TOK, (
        f"TokenBucket(100, 1.0, 100.0): a first {first} at now=40.0 is handled at start (100), "
        f"so available(100.0) is {want}, got {got!r}")


@pytest.mark.rubric("time_monotonic")
@pytest.mark.parametrize("back", [0.5, 6.0, 1e4])
@pytest.mark.parametrize("rate", [1.0, 1 / 3])
def test_an_admit_with_an_earlier_now_is_charged_at_the_clock(back, rate):
    """The prompt: a call with an earlier now "is handled at the clock's time: it neither
    mints tokens nor destroys them". An admission charged at the earlier instant gets the
    refill between that instant and the clock for free.

    Rule: Time never runs backwards
    """
    b = tb.TokenBucket(100, rate, 0.0)
    b.available(500.0)                              # full, clock at 500
    got = outcome(b.admit("x", 50, 0, 500.0 - back))
    assert got[0] == "admitted", f"a full bucket of 100 admits 50, got {got}"
    left = b.available(500.0)
    assert abs(left - 50.0) <= TOK, (
        f"TokenBucket(100, {rate!r}, 0.0); available(500.0) (full, clock 500); "
        f"admit('x', 50, 0, now={500.0 - back!r}) is handled at the clock, so 50 tokens are "
        f"left at 500.0, got {left!r}")


@pytest.mark.rubric("time_monotonic")
@given(rate=RATES, back=BACK, rounds=st.integers(1, 20))
def test_back_and_forth_mints_nothing(rate, back, rounds):
    """Rule: Time never runs backwards"""
    b = tb.TokenBucket(1000, rate, 50.0)
    drain(b, 1000, 50.0, rate)             # empty at t = 50 (or a rounding hair later)
    for _ in range(rounds):
        b.available(50.0 - back)
        b.available(50.0)
    got = b.available(50.0)
    assert abs(got) <= TOK, (
        f"empty at t=50; reading at {50.0 - back!r} and at 50 again {rounds} times must leave "
        f"it empty, got {got!r}")
    assert abs(b.available(50.0 - back)) <= TOK, "an earlier read does not drain below 0 either"


# ===================================================================== bad_input

def _bad_calls(rid_live: str, max_new_live: int, t_far: float):
    """(description, call on a bucket, accepted exception types)."""
    nan, inf = math.nan, math.inf
    te = (TypeError, ValueError)
    return [
        ("admit with negative prompt", lambda b: b.admit("x", -1, 3, t_far), te),
        ("admit with negative max_new", lambda b: b.admit("x", 3, -1, t_far), te),
        ("admit with float prompt", lambda b: b.admit("x", 2.0, 3, t_far), te),
        ("admit with bool max_new", lambda b: b.admit("x", 2, True, t_far), te),
        ("admit with int id", lambda b: b.admit(5, 1, 1, t_far), te),
        ("admit with None id", lambda b: b.admit(None, 1, 1, t_far), te),
        ("admit at NaN", lambda b: b.admit("x", 1, 1, nan), te),
        ("admit at +inf", lambda b: b.admit("x", 1, 1, inf), te),
        ("admit at -inf", lambda b: b.admit("x", 1, 1, -inf), te),
        ("admit at a bool time", lambda b: b.admit("x", 1, 1, True), te),
        ("admit at a str time", lambda b: b.admit("x", 1, 1, "5"), te),
        ("oversize admit at NaN", lambda b: b.admit("x", 10**9, 0, nan), te),
        ("oversize admit at +inf", lambda b: b.admit("x", 0, 10**9, inf), te),
        ("oversize admit at a str time", lambda b: b.admit("x", 10**9, 1, "5"), te),
        ("admit of a live id", lambda b: b.admit(rid_live, 0, 0, t_far), (ValueError,)),
        ("admit of a live id (oversize)", lambda b: b.admit(rid_live, 10**9, 0, t_far),
         (ValueError,)),
        ("finish of an unknown id", lambda b: b.finish("nobody", 0, t_far), (KeyError,)),
        ("finish with generated > max_new",
         lambda b: b.finish(rid_live, max_new_live + 1, t_far), te),
        ("finish with negative generated", lambda b: b.finish(rid_live, -1, t_far), te),
        ("finish with float generated", lambda b: b.finish(rid_live, 0.0, t_far), te),
        ("finish with bool generated", lambda b: b.finish(rid_live, False, t_far), te),
        ("finish at NaN", lambda b: b.finish(rid_live, 0, nan), te),
        ("finish at +inf", lambda b: b.finish(rid_live, 0, inf), te),
        ("available at NaN", lambda b: b.available(nan), te),
        ("available at +inf", lambda b: b.available(inf), te),
        ("available at None", lambda b: b.available(None), te),
    ]


@pytest.mark.rubric("bad_input")
@given(cap=st.sampled_from([10, 100, 1000]), rate=RATES, used=st.floats(0.05, 0.5),
       max_new=st.integers(0, 5), picks=st.lists(st.integers(0, 25), min_size=1, max_size=6),
       far=st.sampled_from([1.0, 50.0, 1e5]))
def test_bad_calls_raise_and_change_nothing(cap, rate, used, max_new, picks, far):
    """Twin buckets get the same valid calls; one also gets bad calls, at a later now.
    Each must raise the stated error, and afterwards the twins must agree.

    Rule: Bad input
    """
    a = tb.TokenBucket(cap, rate, 10.0)
    b = tb.TokenBucket(cap, rate, 10.0)
    # "live" must fit after "gone" used its one token: prompt + max_new <= cap - 1
    prompt = max(1, min(round(used * cap), cap - 1 - max_new))
    for x in (a, b):
        x.admit("gone", 0, 1, 10.0)
        x.finish("gone", 1, 10.0)
        assert outcome(x.admit("live", prompt, max_new, 10.0))[0] == "admitted"
    calls = _bad_calls("live", max_new, 10.0 + far)
    done = []
    for i in picks:
        what, call, errors = calls[i]
        done.append(what)
        with pytest.raises(errors):
            call(b)
        if what.startswith("finish of an unknown"):
            with pytest.raises(KeyError):
                b.finish("gone", 0, 10.0 + far)      # finished already: not live either
    for t in (10.0, 10.0 + far / 2, 10.0 + far):
        assert abs(a.available(t) - b.available(t)) <= TOK, (
            f"after failed calls ({done}) at now={10.0 + far!r}, the balance at {t!r} must be "
            f"as if they never happened (not even the clock moves): {a.available(t)!r} vs "
            f"{b.available(t)!r}")
    for x in (a, b):
        x.finish("live", max_new, 10.0 + far)
    assert abs(a.available(10.0 + far) - b.available(10.0 + far)) <= TOK, (
        f"after failed calls ({done}), the live request must still finish normally")


@pytest.mark.rubric("bad_input")
def test_failed_calls_do_not_move_the_clock():
    """Rule: Bad input"""
    a = tb.TokenBucket(100, 1.0)
    a.admit("x", 99, 0, 0.0)
    with pytest.raises(ValueError):
        a.admit("x", 1, 1, 60.0)                 # duplicate live id, at t=60
    with pytest.raises(KeyError):
        a.finish("y", 0, 70.0)
    with pytest.raises((TypeError, ValueError)):
        a.finish("x", 1, 80.0)                   # generated > max_new = 0
    got = a.available(30.0)
    assert abs(got - 31.0) <= TOK, (
        f"the clock is at 0 (failed calls at 60-80 must not move it): available(30) is 1 + 30, "
        f"got {got!r}")


@pytest.mark.rubric("bad_input")
@pytest.mark.parametrize("args", [
    (0, 1.0), (-1, 1.0), (1.0, 1.0), (True, 1.0), ("10", 1.0), (None, 1.0),
    (10, 0), (10, 0.0), (10, -0.5), (10, math.inf), (10, math.nan), (10, True), (10, "1"),
    (10, 1.0, math.nan), (10, 1.0, math.inf), (10, 1.0, "0"), (10, 1.0, None),
])
def test_bad_constructor_arguments(args):
    """Rule: Bad input"""
    with pytest.raises((TypeError, ValueError)):
        tb.TokenBucket(*args)


@pytest.mark.rubric("bad_input")
def test_duplicate_live_id_is_refused_but_a_finished_one_is_not():
    """Rule: Bad input"""
    b = tb.TokenBucket(100, 1.0)
    b.admit("r", 10, 10, 0.0)
    with pytest.raises(ValueError):
        b.admit("r", 10, 10, 0.0)
    b.finish("r", 0, 0.0)
    assert outcome(b.admit("r", 10, 10, 0.0))[0] == "admitted"
    with pytest.raises(ValueError):
        b.admit("r", 200, 0, 0.0)           # live and oversize: the duplicate is the error


@pytest.mark.rubric("bad_input")
@settings(max_examples=min(20, settings.default.max_examples))
@given(st.sampled_from([0.0, 1e-3, 5.0]))
def test_valid_edge_values_are_accepted(t):
    """Rule: Bad input"""
    b = tb.TokenBucket(1, 1e-1, -5)            # int start, negative start: fine
    assert outcome(b.admit("z", 0, 0, t))[0] == "admitted"   # a request of 0 tokens
    b.finish("z", 0, t)
    assert outcome(b.admit("", 1, 0, t))[0] == "admitted"    # the empty string is an id
    b.finish("", 0, 7)                          # int now
    b = tb.TokenBucket(10, 2)                   # an int rate is a positive finite number
    b.admit("a", 10, 0, 0)
    status, wait = outcome(b.admit("b", 4, 0, 0))
    assert status == "wait" and abs(wait - 2.0) <= LATE, f"TokenBucket(10, 2): 4 tokens take 2 s, got {(status, wait)}"
