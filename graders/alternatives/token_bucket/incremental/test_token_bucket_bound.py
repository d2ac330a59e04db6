"""Bound test written as a candidate might: one @given over a list of drawn operations.

The ledger keeps the most a correct bucket could hold (refill and refunds capped at
capacity, admissions subtracted), plus used and reserved tokens; after every operation the
bucket's reported balance must be within [0, capacity] and at most the ledger's most, and
used + reserved must stay within capacity + rate * elapsed.
"""

from hypothesis import given
from hypothesis import strategies as st

from graders.impl import kata_impl

tb = kata_impl("token_bucket")
EPS = 1e-6

ops = st.lists(
    st.one_of(
        st.tuples(st.just("tick"), st.sampled_from([0.0, 0.01, 0.25, 1.0, 7.5, 100.0])),
        st.tuples(st.just("rewind"), st.sampled_from([0.5, 5.0])),
        st.tuples(st.just("admit"), st.sampled_from("xyz"), st.integers(0, 40), st.integers(0, 40)),
        st.tuples(st.just("finish"), st.sampled_from("xyz"), st.floats(0, 1)),
    ),
    max_size=40,
)


@given(cap=st.sampled_from([5, 40, 80]), rate=st.sampled_from([0.3, 1.0, 3.7]), steps=ops)
def test_bound(cap, rate, steps):
    b = tb.TokenBucket(cap, rate, 0.0)
    now = clock = 0.0
    most = float(cap)
    used = 0
    live = {}
    for step in steps:
        kind = step[0]
        if kind == "tick":
            now += step[1]
        elif kind == "rewind":
            now -= step[1]
        if now > clock:
            most = min(cap, most + (now - clock) * rate)
            clock = now
        if kind == "admit":
            _, rid, p, m = step
            if rid in live:
                continue
            if b.admit(rid, p, m, now)[0] == "admitted":
                live[rid] = (p, m)
                most -= p + m
        elif kind == "finish":
            _, rid, frac = step
            if rid not in live:
                try:
                    b.finish(rid, 0, now)
                except KeyError:
                    pass
                continue
            p, m = live.pop(rid)
            g = int(frac * m)
            b.finish(rid, g, now)
            used += p + g
            most = min(cap, most + (m - g))
        bal = b.available(now)
        assert -EPS <= bal <= cap + EPS, (steps, bal)
        assert bal <= most + EPS and most >= -EPS, (steps, bal, most)
        reserved = sum(p + m for p, m in live.values())
        assert used + reserved <= cap + rate * clock + EPS, (steps, used, reserved)
