"""Public tests for token_bucket: the prompt's example and the basic behaviours.

Run: nox -s kata -- token_bucket
"""

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graders.impl import kata_impl
from tests.token_bucket.helpers import (LATE, TOK, Model, bound_test_file, outcome,
                                        run_bound_test, tail)

tb = kata_impl("token_bucket")


def close(a, b, tol=TOK):
    return abs(a - b) <= tol


# ------------------------------------------------------------------ reserve_refund

@pytest.mark.rubric("reserve_refund")
def test_prompt_example():
    """Rules: Balance; Reserve; Refund"""
    b = tb.TokenBucket(capacity=100, refill_per_s=10.0)
    assert outcome(b.admit("a", 30, 50, now=0.0)) == ("admitted", 0.0)
    assert close(b.available(0.0), 20.0), f"admitting 30 + 50 from 100 leaves 20, got {b.available(0.0)}"
    status, wait = outcome(b.admit("b", 40, 10, now=1.0))
    assert status == "wait", f"balance 30 < need 50 at t=1: expected a wait, got {status}"
    b.finish("a", 20, now=1.0)
    assert close(b.available(1.0), 60.0), (
        f"finish('a', 20) refunds 50 - 20 = 30 on top of 30: expected 60, got {b.available(1.0)}")
    assert outcome(b.admit("b", 40, 10, now=1.0)) == ("admitted", 0.0)
    with pytest.raises(KeyError):
        b.finish("a", 0, now=2.0)


@pytest.mark.rubric("reserve_refund")
def test_admission_reserves_the_worst_case():
    """Rule: Reserve"""
    b = tb.TokenBucket(1000, 1.0)
    assert outcome(b.admit("r", 100, 400, 0.0))[0] == "admitted"
    assert close(b.available(0.0), 500.0), (
        f"admit(prompt=100, max_new=400) must reserve 500 of 1000, balance {b.available(0.0)}")


@pytest.mark.rubric("reserve_refund")
def test_finish_refunds_the_unused_part_once():
    """Rule: Refund"""
    b = tb.TokenBucket(1000, 1.0)
    b.admit("r", 100, 400, 0.0)
    b.finish("r", 150, 0.0)
    assert close(b.available(0.0), 750.0), (
        f"generated 150 of max_new 400: refund 250, balance 500 + 250 = 750, got {b.available(0.0)}")
    with pytest.raises(KeyError):
        b.finish("r", 150, 0.0)
    assert close(b.available(0.0), 750.0), "a second finish must raise and refund nothing"


@pytest.mark.rubric("reserve_refund")
def test_refund_is_capped_at_capacity():
    b = tb.TokenBucket(100, 10.0)
    b.admit("r", 10, 50, 0.0)          # balance 40
    b.admit("s", 10, 10, 0.0)          # balance 20
    b.finish("s", 0, 8.0)              # 20 + 80 refill -> 100 (capped), refund 10: still 100
    assert close(b.available(8.0), 100.0), f"the balance never exceeds capacity, got {b.available(8.0)}"


@pytest.mark.rubric("reserve_refund")
def test_id_can_be_reused_after_finish():
    b = tb.TokenBucket(100, 1.0)
    b.admit("x", 10, 10, 0.0)
    b.finish("x", 10, 0.0)             # used everything: no refund
    assert close(b.available(0.0), 80.0), f"generated == max_new refunds 0: got {b.available(0.0)}"
    assert outcome(b.admit("x", 10, 10, 0.0))[0] == "admitted"


# ------------------------------------------------------------------ fail_fast

@pytest.mark.rubric("fail_fast")
def test_larger_than_capacity_is_rejected_even_when_full():
    """Rules: Fail fast; Wait and reject reserve nothing"""
    b = tb.TokenBucket(100, 1.0)
    assert outcome(b.admit("big", 60, 41, 0.0)) == ("rejected", math.inf), (
        "need 101 > capacity 100 can never fit: ('rejected', inf)")
    assert close(b.available(0.0), 100.0), "a rejection reserves nothing"
    assert outcome(b.admit("big", 60, 40, 0.0)) == ("admitted", 0.0), (
        "need == capacity fits a full bucket; the rejected id was never recorded")


@pytest.mark.rubric("fail_fast")
def test_exactly_capacity_waits_rather_than_rejected():
    """Rule: Fail fast"""
    b = tb.TokenBucket(100, 4.0)
    b.admit("a", 1, 0, 0.0)
    status, wait = outcome(b.admit("b", 50, 50, 0.0))
    assert status == "wait" and close(wait, 0.25, LATE), (
        f"need 100 == capacity, balance 99, rate 4/s: expected ('wait', 0.25), got {(status, wait)}")


# ------------------------------------------------------------------ wait_time

@pytest.mark.rubric("wait_time")
def test_wait_is_exact_for_the_example():
    """Rules: Wait; Wait and reject reserve nothing"""
    b = tb.TokenBucket(100, 10.0)
    b.admit("a", 30, 50, 0.0)
    status, wait = outcome(b.admit("b", 40, 10, 1.0))
    assert status == "wait" and close(wait, 2.0, LATE), (
        f"balance 30 at t=1, need 50, 10 tokens/s: expected ('wait', 2.0), got {(status, wait)}")
    assert close(b.available(1.0), 30.0), "a wait reserves nothing"
    assert outcome(b.admit("b", 40, 10, 1.0 + wait)) == ("admitted", 0.0), (
        f"at now + wait = {1.0 + wait!r} the same call must be admitted")


@pytest.mark.rubric("wait_time")
@given(rate=st.sampled_from([0.1, 1 / 3, 0.7, 3.3, 10 / 7, 123.456]),
       used=st.integers(1, 99), need=st.integers(1, 100),
       now=st.floats(0, 1000, allow_nan=False).map(lambda x: round(x, 3)))
def test_wait_is_never_early(rate, used, need, now):
    """Rule: Wait"""
    b = tb.TokenBucket(100, rate)
    b.admit("a", used, 0, 0.0)
    b.available(now)
    status, wait = outcome(b.admit("b", need, 0, now))
    model = Model(100, rate)
    model.admit("a", used, 0, 0.0)
    exact = model.wait(need, now)
    if exact <= 0:
        assert status == "admitted", f"balance {float(model.balance(now))} >= need {need} at {now}"
        return
    assert status == "wait", f"balance {float(model.balance(now))} < need {need} at t={now}"
    assert wait <= exact + LATE + TOK / rate, f"wait {wait!r} is late: exact {float(exact)!r}"
    result = b.admit("b", need, 0, now + wait)
    assert outcome(result)[0] == "admitted", (
        f"capacity 100, rate {rate!r}, admitted {used} at 0, then need {need} at t={now!r}: "
        f"'wait' said {wait!r} s, but at now + wait = {now + wait!r} admit answered {result!r}")


@pytest.mark.rubric("wait_time")
def test_wait_counts_from_the_now_passed():
    """Rules: Wait; Time never runs backwards"""
    b = tb.TokenBucket(100, 10.0)
    b.admit("a", 90, 0, 5.0)           # clock 5, balance 10
    status, wait = outcome(b.admit("b", 30, 0, 3.0))   # earlier now: acts at the clock
    assert status == "wait" and close(wait, 4.0, LATE), (
        f"from t=3: 2 s until the clock (5), then 20 tokens at 10/s: expected 4.0, got {(status, wait)}")


# ------------------------------------------------------------------ time_monotonic

@pytest.mark.rubric("time_monotonic")
def test_prompt_example_earlier_read():
    b = tb.TokenBucket(capacity=100, refill_per_s=10.0)
    b.admit("a", 30, 50, now=0.0)
    b.available(1.0)                   # clock 1.0, balance 30
    assert close(b.available(0.5), 30.0), "an earlier now is read at the clock (1.0): 30 tokens"


@pytest.mark.rubric("time_monotonic")
def test_earlier_now_mints_and_destroys_nothing():
    """Rule: Time never runs backwards"""
    b = tb.TokenBucket(100, 1.0)
    b.admit("a", 50, 0, 10.0)          # balance 50 at 10
    assert close(b.available(4.0), 50.0), f"read at the clock (10): 50, got {b.available(4.0)}"
    assert close(b.available(10.0), 50.0), (
        f"going back to 4 and forward to 10 again must not mint 6 tokens: got {b.available(10.0)}")
    assert close(b.available(12.0), 52.0), f"2 s later, 2 tokens more: got {b.available(12.0)}"


# ------------------------------------------------------------------ conservation

@pytest.mark.rubric("conservation")
@settings(max_examples=min(30, settings.default.max_examples))
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(0, 60),
                          st.integers(0, 60), st.sampled_from([0.0, 0.05, 0.5, 3.0]),
                          st.booleans()), max_size=30))
def test_balance_stays_within_limits_and_tokens_are_conserved(steps):
    """Rules: Tokens are conserved; Balance in range; Used plus reserved"""
    cap, rate = 100, 2.5
    b = tb.TokenBucket(cap, rate)
    now, used, reserved, live = 0.0, 0, 0, {}
    log = []
    for rid, prompt, max_new, dt, end in steps:
        now += dt
        if end and rid in live:
            p, m = live.pop(rid)
            gen = m // 2
            b.finish(rid, gen, now)
            log.append(f"finish({rid!r}, {gen}, {now})")
            used += p + gen
            reserved -= p + m
        elif rid not in live:
            status, _ = outcome(b.admit(rid, prompt, max_new, now))
            log.append(f"admit({rid!r}, {prompt}, {max_new}, {now}) -> {status}")
            if status == "admitted":
                live[rid] = (prompt, max_new)
                reserved += prompt + max_new
        bal = b.available(now)
        assert -TOK <= bal <= cap + TOK, f"balance {bal} outside [0, {cap}] after {log}"
        assert used + reserved <= cap + rate * now + TOK, (
            f"used {used} + reserved {reserved} > capacity + refill = {cap + rate * now} after {log}")


# ------------------------------------------------------------------ bad_input

@pytest.mark.rubric("bad_input")
def test_bad_constructor_arguments():
    """Rule: Bad input"""
    for args in [(0, 1.0), (-5, 1.0), (10.5, 1.0), (True, 1.0), (10, 0.0), (10, -1.0),
                 (10, math.inf), (10, math.nan), (10, 1.0, math.nan)]:
        with pytest.raises((TypeError, ValueError)):
            tb.TokenBucket(*args)


@pytest.mark.rubric("bad_input")
def test_bad_calls_raise_and_change_nothing():
    """Twin buckets get the same good calls; one also gets bad ones. They must agree.

    Rule: Bad input
    """
    a, b = tb.TokenBucket(100, 1.0), tb.TokenBucket(100, 1.0)
    for x in (a, b):
        x.admit("a", 10, 20, 0.0)
    for call in [lambda: b.admit("x", -1, 5, 50.0), lambda: b.admit("x", 5, 2.5, 50.0),
                 lambda: b.admit(7, 5, 5, 50.0), lambda: b.admit("x", 5, 5, math.nan),
                 lambda: b.finish("a", 21, 50.0), lambda: b.finish("a", -1, 50.0),
                 lambda: b.available(math.inf)]:
        with pytest.raises((TypeError, ValueError)):
            call()
    with pytest.raises(ValueError):
        b.admit("a", 1, 1, 50.0)       # "a" is live
    with pytest.raises(KeyError):
        b.finish("nobody", 0, 50.0)
    assert close(a.available(20.0), b.available(20.0)), (
        f"failed calls at t=50 must change nothing, not even the clock: at t=20 the bucket "
        f"without them has {a.available(20.0)}, the one with them {b.available(20.0)}")
    for x in (a, b):
        x.finish("a", 5, 20.0)
    assert close(a.available(20.0), b.available(20.0)), (
        "the live request must still be intact after the errors")


# ------------------------------------------------------------------ your_bound_test

@pytest.mark.rubric("your_bound_test")
def test_your_bound_test_fails_on_a_broken_bucket(request):
    """Runs your test file in a separate process against a bucket that refunds generated
    tokens (handed to it as the module kata_impl("token_bucket") returns).

    Rule: Fails on every breaker
    """
    path = bound_test_file()
    assert path.is_file(), f"your bound test {path} is missing"
    broken = Path(__file__).with_name("broken_refund_used.py")
    run = run_bound_test(path, broken, request.config.getoption("hypothesis_profile", None))
    if run.stub:
        raise NotImplementedError(f"{path} still raises NotImplementedError: write your property test")
    assert run.caught, (
        f"{path} must fail against tests/token_bucket/broken_refund_used.py, a bucket that "
        f"refunds the generated tokens too, but no test failed ({run.summary()}; a collection "
        f"or usage error does not count).\n{tail(run.output)}")
