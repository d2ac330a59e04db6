"""Property test of the token bucket's conservation bound (item your_bound_test).

The test keeps its own exact ledger (fractions) of what was admitted, used, reserved and
refunded, plus an exact model of the balance the rules define, follows the bucket's own
admit outcomes, and after every call checks:

1. 0 <= available(now) <= capacity (within 1e-6 tokens), and the reading equals the ledger's;
2. used + reserved <= capacity + refill_per_s * (clock - start);
3. for every window between two calls: need admitted in it <= balance at its start
   + refill_per_s * its length + refunds made in it.

Schedules mix admits, finishes, second finishes (which must raise KeyError), calls with an
earlier ``now``, long idles that refill the bucket, and runs of tiny steps while it is full.
A few fixed scenarios pin each way the bound can break, independent of the random draws.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graders.impl import kata_impl

tb = kata_impl("token_bucket")

TOK = 1e-6                      # the prompt's tolerance on balances and on the bound
SLACK = Fraction(TOK)


class Ledger:
    """What the rules say the bucket holds, from our own record of the calls."""

    def __init__(self, cap: int, rate: float, start: float) -> None:
        self.cap = Fraction(cap)
        self.rate = Fraction(rate)
        self.start = Fraction(start)
        self.clock = self.start
        self.anchor = self.start
        self.bal = self.cap
        self.live: dict[str, tuple[int, int]] = {}     # id -> (prompt, max_new)
        self.done: set[str] = set()
        self.used = Fraction(0)                        # prompt + generated of finished ones
        self.admitted_need = Fraction(0)               # cumulative need admitted
        self.refunded = Fraction(0)                    # cumulative nominal refunds
        # one entry per call: (clock, balance reading, cumulative need, cumulative refunds)
        self.marks: list[tuple[Fraction, Fraction, Fraction, Fraction]] = []

    @property
    def reserved(self) -> Fraction:
        return Fraction(sum(p + m for p, m in self.live.values()))

    def balance(self, now: float) -> Fraction:
        t = max(Fraction(now), self.clock)
        return min(self.cap, self.bal + (t - self.anchor) * self.rate)

    def move(self, now: float) -> None:
        b = self.balance(now)
        self.clock = max(Fraction(now), self.clock)
        self.anchor, self.bal = self.clock, b

    def admitted(self, rid: str, prompt: int, max_new: int) -> None:
        self.bal -= prompt + max_new
        self.live[rid] = (prompt, max_new)
        self.done.discard(rid)
        self.admitted_need += prompt + max_new

    def finished(self, rid: str, generated: int) -> None:
        prompt, max_new = self.live.pop(rid)
        self.done.add(rid)
        self.used += prompt + generated
        self.refunded += max_new - generated
        self.bal = min(self.cap, self.bal + (max_new - generated))


def _check(bucket, led: Ledger, what: str, log: list[str]) -> None:
    """Read the balance at the ledger's clock and check the three parts of the bound."""
    now = float(led.clock)
    reading = bucket.available(now)
    led.move(now)
    hist = "\n  ".join(log[-20:])
    assert isinstance(reading, (int, float)) and not isinstance(reading, bool), (
        f"available() must return a number, got {reading!r}")
    r = Fraction(reading) if math.isfinite(reading) else None
    assert r is not None, f"available() returned {reading!r} after {what}\n  {hist}"
    # 1. the balance stays in [0, capacity] and is what the calls so far leave
    assert -SLACK <= r <= led.cap + SLACK, (
        f"balance {reading!r} outside [0, {led.cap}] after {what}\n  {hist}")
    expected = led.balance(now)
    assert abs(r - expected) <= SLACK, (
        f"balance {reading!r} after {what}, but the calls so far leave {float(expected)!r}"
        f"\n  {hist}")
    # 2. used + reserved never exceeds capacity plus the refill since the start
    limit = led.cap + led.rate * (led.clock - led.start)
    assert led.used + led.reserved <= limit + SLACK, (
        f"used {led.used} + reserved {led.reserved} > capacity + refill = {float(limit)} "
        f"after {what}\n  {hist}")
    # 3. every window ending now: need admitted <= start balance + refill + refunds
    mark = (led.clock, r, led.admitted_need, led.refunded)
    for t0, b0, a0, f0 in led.marks:
        room = b0 + led.rate * (led.clock - t0) + (led.refunded - f0)
        assert led.admitted_need - a0 <= room + SLACK, (
            f"window from t={float(t0)} to t={float(led.clock)} admitted "
            f"{led.admitted_need - a0} tokens of need, but its start balance {float(b0)} "
            f"+ refill + refunds is only {float(room)}\n  {hist}")
    led.marks.append(mark)


def _admit(bucket, led: Ledger, rid: str, prompt: int, max_new: int, now: float,
           log: list[str]) -> str:
    before = led.balance(now)
    result = bucket.admit(rid, prompt, max_new, now)
    assert isinstance(result, tuple) and len(result) == 2, f"admit returned {result!r}"
    status, seconds = result
    log.append(f"admit({rid!r}, {prompt}, {max_new}, now={now!r}) -> {result!r}")
    need = prompt + max_new
    led.move(now)
    if status == "admitted":
        assert need <= led.cap and before + SLACK >= need, (
            f"admitted need {need} with a balance of {float(before)}\n  " + "\n  ".join(log))
        led.admitted(rid, prompt, max_new)
    elif status == "wait":
        assert need <= led.cap and before < need + SLACK and 0 < seconds < math.inf, (
            f"wait answer {result!r} for need {need}, balance {float(before)}")
    else:
        assert status == "rejected" and need > led.cap, (
            f"{result!r} for need {need} <= capacity {led.cap}")
    return status


def _finish(bucket, led: Ledger, rid: str, generated: int, now: float, log: list[str]) -> None:
    bucket.finish(rid, generated, now)
    log.append(f"finish({rid!r}, {generated}, now={now!r})")
    led.move(now)
    led.finished(rid, generated)


# --------------------------------------------------------------------------------- schedules

CAPS = st.sampled_from([1, 7, 100, 1000])
RATES = st.sampled_from([0.1, 1 / 3, 2.5, 7.0, 1000.0])
STARTS = st.sampled_from([0.0, 3.25, 1000.0])
# time steps as fractions of the time to refill the whole bucket
STEPS = st.sampled_from([0.0, 0.0, 1e-4, 0.01, 0.2, 0.6, 1.5])
OPS = st.tuples(
    st.sampled_from(["admit", "admit", "admit", "finish", "finish", "refinish", "earlier",
                     "idle", "tiny"]),
    st.integers(0, 4),                    # which id
    st.floats(0, 1),                      # prompt share of capacity
    st.floats(0, 1),                      # max_new share of capacity
    st.floats(0, 1),                      # generated share of max_new
    STEPS,
    st.floats(0.01, 2),                   # how far back an earlier call goes (share of refill time)
)


@settings(deadline=None, suppress_health_check=list(HealthCheck))
@given(cap=CAPS, rate=RATES, start=STARTS, ops=st.lists(OPS, min_size=1, max_size=40))
def test_conservation_bound(cap, rate, start, ops) -> None:
    bucket = tb.TokenBucket(cap, rate, start)
    led = Ledger(cap, rate, start)
    log: list[str] = [f"TokenBucket({cap}, {rate!r}, {start!r})"]
    full_s = cap / rate                   # seconds to refill an empty bucket
    now = float(start)
    _check(bucket, led, "construction", log)
    for kind, idx, ps, ms, gs, step, back in ops:
        rid = f"r{idx}"
        now = now + step * full_s
        # a prompt/max_new split that sometimes oversteps capacity (a rejection)
        prompt = int(ps * cap * 0.7)
        max_new = int(ms * cap * 0.7)
        if kind == "admit":
            if rid in led.live:
                with pytest.raises(ValueError):
                    bucket.admit(rid, prompt, max_new, now)
                log.append(f"admit({rid!r}, ...) of a live id -> ValueError")
            else:
                _admit(bucket, led, rid, prompt, max_new, now, log)
        elif kind == "finish":
            if rid in led.live:
                gen = int(gs * led.live[rid][1])
                _finish(bucket, led, rid, gen, now, log)
            else:
                _admit(bucket, led, rid, prompt, max_new, now, log)
        elif kind == "refinish":
            # a finished (or never admitted) id is not live: finishing it must raise
            target = next(iter(led.done), None) if rid in led.live else rid
            if target is not None and target not in led.live:
                with pytest.raises(KeyError):
                    bucket.finish(target, 0, now)
                log.append(f"finish({target!r}, 0, now={now!r}) of a dead id -> KeyError")
        elif kind == "earlier":
            # a call with an earlier now: handled at the clock, mints and destroys nothing
            then = float(led.clock) - back * full_s
            if rid in led.live:
                gen = int(gs * led.live[rid][1])
                _finish(bucket, led, rid, gen, then, log)
            elif ps < 0.5:
                _admit(bucket, led, rid, prompt, max_new, then, log)
            else:
                got = bucket.available(then)
                log.append(f"available({then!r}) -> {got!r}")
                assert abs(Fraction(got) - led.balance(then)) <= SLACK, (
                    f"available({then!r}) with the clock at {float(led.clock)!r} read "
                    f"{got!r}, expected {float(led.balance(then))!r}\n  " + "\n  ".join(log))
        elif kind == "idle":
            now = now + 1.25 * full_s     # long enough to fill up
            got = bucket.available(now)
            log.append(f"available({now!r}) -> {got!r}")
            led.move(now)
        else:  # "tiny": many small refills, the bucket full or nearly so
            now = now + 1.25 * full_s
            dt = max(0.003 / rate, 1e-6)  # about 0.003 tokens per step
            for k in range(60):
                now = now + dt
                if k % 20 == 19 and f"z{k}" not in led.live:
                    _admit(bucket, led, f"z{k}", 0, 0, now, log)
                    _finish(bucket, led, f"z{k}", 0, now, log)
                got = bucket.available(now)
                led.move(now)
                assert got <= cap + TOK, (
                    f"a full bucket read {got!r} > capacity {cap} after {k + 1} small steps "
                    f"of {dt!r} s at {rate!r}/s\n  " + "\n  ".join(log))
            log.append(f"60 small steps of {dt!r} s, to now={now!r}")
        now = max(now, float(led.clock))
        _check(bucket, led, log[-1] if log else "?", log)


# ------------------------------------------------------------------------- fixed scenarios

def test_second_finish_refunds_nothing() -> None:
    b = tb.TokenBucket(1000, 1.0)
    led, log = Ledger(1000, 1.0, 0.0), []
    _admit(b, led, "r", 100, 400, 0.0, log)
    _finish(b, led, "r", 150, 0.0, log)
    with pytest.raises(KeyError):
        b.finish("r", 150, 0.0)
    with pytest.raises(KeyError):
        b.finish("r", 0, 1.0)
    _check(b, led, "a second finish", log)


def test_refund_never_lifts_the_balance_past_capacity() -> None:
    b = tb.TokenBucket(100, 10.0)
    led, log = Ledger(100, 10.0, 0.0), []
    _admit(b, led, "r", 10, 50, 0.0, log)
    _admit(b, led, "s", 10, 30, 0.0, log)
    _check(b, led, "two admissions", log)
    for t, rid in ((3.0, "s"), (100.0, "r")):        # the second refund lands on a full bucket
        led.clock = max(led.clock, Fraction(t))
        _finish(b, led, rid, 0, t, log)
        _check(b, led, f"finish({rid!r})", log)


def test_admission_reserves_the_worst_case() -> None:
    b = tb.TokenBucket(100, 1.0)
    led, log = Ledger(100, 1.0, 0.0), []
    for i in range(3):
        _admit(b, led, f"r{i}", 5, 25, 0.0, log)
        _check(b, led, f"admit r{i}", log)
    assert _admit(b, led, "r3", 5, 25, 0.0, log) == "wait", "only 10 tokens are left"
    _check(b, led, "admit r3", log)


def test_earlier_now_mints_and_destroys_nothing() -> None:
    b = tb.TokenBucket(100, 1.0)
    led, log = Ledger(100, 1.0, 0.0), []
    _admit(b, led, "a", 50, 40, 10.0, log)           # balance 10 at t=10
    for now in (4.0, 10.0, 2.0, 11.0, 6.0, 12.0):
        got = b.available(now)
        assert abs(Fraction(got) - led.balance(now)) <= SLACK, (
            f"available({now}) = {got}, expected {float(led.balance(now))}")
        led.move(now)
    _admit(b, led, "b", 1, 0, 5.0, log)              # handled at the clock (12)
    _finish(b, led, "a", 10, 7.0, log)               # handled at the clock (12)
    _check(b, led, "calls with earlier times", log)
    led.clock = Fraction(13)
    _check(b, led, "one second later", log)


@pytest.mark.parametrize("cap,rate", [(10, 1.0), (100, 3.0), (1000, 0.1), (5, 1000.0)])
def test_full_bucket_does_not_creep_over_capacity(cap, rate) -> None:
    b = tb.TokenBucket(cap, rate)
    _ = b.admit("x", cap // 2, 0, 0.0)
    now = 0.0
    dt = 0.01 / rate                                  # 0.01 tokens a step
    for k in range(2000):
        now += dt if k else 2 * cap / rate            # first refill it, then tiny steps
        got = b.available(now)
        assert got <= cap + TOK, f"step {k}: a full bucket of {cap} reads {got!r}"
        if k % 100 == 50:
            assert b.admit(f"z{k}", 0, 0, now) == ("admitted", 0.0)
            b.finish(f"z{k}", 0, now)
    assert abs(b.available(now) - cap) <= TOK
