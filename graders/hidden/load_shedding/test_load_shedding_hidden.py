"""Hidden tests for load_shedding: each rule and each trap, exact against independent oracles.

The estimates are checked against the prompt's formulas evaluated in exact fractions (the
logarithm aside); the controller and the replay against tests/load_shedding/sim.py, an
event-driven simulator that decides each arrival by replaying the admitted requests with it.
Every generated time is a multiple of 1/8 s below 2^12, so float sums of them are exact.
"""

from __future__ import annotations

import math
from fractions import Fraction

import hypothesis.strategies as st
import pytest
from hypothesis import assume, example, given, settings
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from graders.impl import kata_impl
from tests.load_shedding import sim

ls = kata_impl("load_shedding")

BAD = [True, False, float("nan"), float("inf"), -float("inf"), "1", None]


def close(got, want, what, rel=1e-7):
    assert isinstance(got, (int, float)) and not isinstance(got, bool), f"{what}: got {got!r}"
    assert math.isclose(got, float(want), rel_tol=rel, abs_tol=1e-9), (
        f"{what}: expected {float(want)!r}, got {got!r}")


# ================================================================== service statistics
@st.composite
def mixes(draw):
    n = draw(st.integers(1, 5), label="lengths")
    lengths = draw(st.lists(st.integers(0, 200_000), min_size=n, max_size=n), label="lengths")
    weights = draw(st.lists(st.integers(1, 20), min_size=n, max_size=n), label="weights")
    probs = [w / sum(weights) for w in weights]
    fixed = draw(st.sampled_from([0.0, 0.005, 0.02, 0.5, 3.0]), label="fixed_s")
    per_token = draw(st.sampled_from([1e-6, 2.5e-5, 5e-5, 1e-4, 0.0]), label="per_token_s")
    assume(fixed + per_token * min(lengths) > 0 or fixed > 0 or per_token * max(lengths) > 0)
    return lengths, probs, fixed, per_token


def _stats_oracle(lengths, probs, fixed, per_token):
    p = [Fraction(x) for x in probs]
    total = sum(p)
    p = [x / total for x in p]
    times = [Fraction(fixed) + Fraction(per_token) * n for n in lengths]
    mean = sum(a * t for a, t in zip(p, times))
    second = sum(a * t * t for a, t in zip(p, times))
    return mean, (second - mean * mean) / (mean * mean)


@pytest.mark.rubric("service_stats")
@given(mixes())
@example(([1000, 32000], [0.9, 0.1], 0.02, 5e-5))
def test_service_stats_match_the_moments(mix):
    """Rule: Service statistics"""
    lengths, probs, fixed, per_token = mix
    mean, scv = _stats_oracle(*mix)
    got = ls.service_stats(lengths, probs, fixed, per_token)
    assert len(got) == 2, f"service_stats returns (mean, scv), got {got!r}"
    close(got[0], mean, f"mean service of {mix}")
    assert math.isclose(got[1], float(scv), rel_tol=1e-7, abs_tol=1e-9), (
        f"scv of the service time (Var / S^2) of {mix}: expected {float(scv)!r}, got {got[1]!r}")


@pytest.mark.rubric("service_stats")
def test_service_stats_fixed_part_dilutes_the_variance():
    """Rule: Service statistics"""
    _, bare = ls.service_stats([100, 300], [0.5, 0.5], 0.0, 0.01)
    close(bare, 0.25, "lengths 100 and 300, no fixed part: scv of the length itself")
    mean, diluted = ls.service_stats([100, 300], [0.5, 0.5], 2.0, 0.01)
    close(mean, 4.0, "2 s fixed + 1 or 3 s")
    close(diluted, 1.0 / 16.0, "Var 1 over S^2 16: the fixed part is part of the mean")
    _, ints = ls.service_stats((1, 3), (0.25, 0.75), 1, 1)
    close(ints, 0.75 / 3.5 ** 2, "times 2 and 4 s: Var 0.75 over S^2 12.25 (ints and tuples are fine)")


@pytest.mark.rubric("service_stats")
@pytest.mark.parametrize("args", [
    ([], [], 0.1, 0.0), ([1], [], 0.1, 0.0), ([1, 2], [1.0], 0.1, 0.0),
    ([1, 2], [0.5, 0.5 + 2e-9], 0.1, 0.0), ([1], [1.0000001], 0.1, 0.0),
    ([1, 2], [1.5, -0.5], 0.1, 0.0), ([1.0], [1.0], 0.1, 0.0), ([False], [1.0], 0.1, 0.0),
    ([-1], [1.0], 0.1, 0.0), ([1], [True], 0.1, 0.0), ([1], [1.0], True, 0.0),
    ([1], [1.0], 0.1, float("nan")), ([1], [1.0], float("inf"), 0.0), ([1], [1.0], -0.1, 1.0),
    ([0, 0], [0.5, 0.5], 0.0, 1.0), ([5], [1.0], 0.0, 0.0), ("12", [1.0], 0.1, 0.0),
    ([1], 1.0, 0.1, 0.0), ([1, -1], [1.0, 0.0], 0.1, 0.0), ([1, 2.5], [1.0, 0.0], 0.1, 0.0)])
def test_service_stats_bad_input(args):
    """Rule: Bad input"""
    with pytest.raises(ValueError):
        ls.service_stats(*args)


# ================================================================== latency and ceiling
def _p99_oracle(lam, s, c2, q):
    lam, s, c2 = Fraction(lam), Fraction(s), Fraction(c2)
    rho = lam * s
    if rho >= 1:
        return math.inf
    wait = rho * s * (1 + c2) / (2 * (1 - rho))
    return math.log(1 / (1 - q)) * float(s + wait)


QUANTILES = st.sampled_from([0.99, 0.9, 0.5, 0.999, 0.95])
SCVS = st.sampled_from([0.0, 1.0, 0.25, 2.0, 4.271111111111111, 9.0, 0.5])


@pytest.mark.rubric("latency_ceiling")
@given(st.floats(0.001, 10.0), st.floats(0.0, 1.2), SCVS, QUANTILES)
@example(0.225, 0.5, 1.0, 0.99)
def test_p99_latency_matches_pk_rule(s, rho, c2, q):
    """Rule: Latency quantile"""
    lam = rho / s
    assume(abs(Fraction(lam) * Fraction(s) - 1) > 1e-6)  # float and exact rho agree on the side of 1
    want = _p99_oracle(lam, s, c2, q)
    got = ls.p99_latency_s(lam, s, c2, q)
    if want == math.inf:
        assert got == math.inf, f"rho = {lam * s!r} >= 1: the queue never settles, got {got!r}"
    else:
        close(got, want, f"p99_latency_s({lam!r}, {s!r}, {c2!r}, {q!r})", rel=1e-7)


@pytest.mark.rubric("latency_ceiling")
@given(st.floats(0.01, 5.0), st.floats(0.0, 0.99))
def test_p99_latency_is_mm1_at_scv_one(s, rho):
    """Rule: Latency quantile"""
    lam = rho / s
    assume(1 / s - lam > 1e-9)
    close(ls.p99_latency_s(lam, s, 1.0), math.log(100) / (1 / s - lam),
          f"M/M/1: ln(100) / (mu - lambda) at S={s!r}, lambda={lam!r}", rel=1e-7)


@pytest.mark.rubric("latency_ceiling")
def test_p99_latency_default_quantile_and_saturation():
    """Rule: Latency quantile"""
    close(ls.p99_latency_s(2, 0.25, 3), math.log(100) * (0.25 + 0.5 * 0.25 * 4 / (2 * 0.5)),
          "ints are numbers; the quantile defaults to 0.99")
    assert ls.p99_latency_s(4.0, 0.25, 0.0) == math.inf, "rho exactly 1 is inf, even at scv 0"
    assert ls.p99_latency_s(40.0, 0.25, 1.0) == math.inf, "rho 10 is inf, not negative"


@pytest.mark.rubric("latency_ceiling")
@given(st.floats(0.01, 5.0), SCVS, st.floats(1.05, 60.0), QUANTILES)
@example(0.225, 4.271111111111111, 3.5 / (math.log(100) * 0.225), 0.99)
def test_ceiling_meets_the_target_exactly(s, c2, ratio, q):
    """Rules: Utilisation ceiling; Latency quantile"""
    target = ratio * s * math.log(1 / (1 - q))
    got = ls.utilisation_ceiling(s, c2, target, q)
    a = Fraction(target) / (Fraction(math.log(1 / (1 - q))) * Fraction(s)) - 1
    want = 2 * a / (2 * a + 1 + Fraction(c2))
    close(got, want, f"utilisation_ceiling({s!r}, {c2!r}, {target!r}, {q!r})", rel=1e-7)
    close(_p99_oracle(got / s, s, c2, q), target, "the p99 at the ceiling is the target", rel=1e-6)
    assert 0 < got < 1


@pytest.mark.rubric("latency_ceiling")
@given(st.floats(0.01, 5.0), st.floats(1.5, 40.0))
def test_ceiling_falls_with_variance(s, ratio):
    """Rule: Utilisation ceiling"""
    target = ratio * s * math.log(100)
    got = [ls.utilisation_ceiling(s, c2, target) for c2 in (0.0, 0.5, 1.0, 2.0, 4.0)]
    assert all(x > y for x, y in zip(got, got[1:])), f"more variance, lower ceiling: {got}"
    close(got[2], 1 - math.log(100) * s / target, "scv 1: 1 - ln(100) S / T", rel=1e-7)


@pytest.mark.rubric("latency_ceiling")
@pytest.mark.parametrize("s,c2,target,q", [(1.0, 1.0, 4.0, 0.99), (1.0, 0.0, 0.5, 0.99),
                                           (2.0, 9.0, 1.0, 0.9), (0.5, 1.0, 0.3, 0.5)])
def test_ceiling_is_zero_when_even_idle_misses(s, c2, target, q):
    """Rule: Utilisation ceiling"""
    got = ls.utilisation_ceiling(s, c2, target, q)
    assert got == 0.0, f"an idle server's quantile ln(1/(1-q)) S exceeds {target}: 0.0, got {got!r}"


@pytest.mark.rubric("latency_ceiling")
@pytest.mark.parametrize("fn,args", [
    ("p99_latency_s", (-1.0, 0.1, 1.0)), ("p99_latency_s", (1.0, -0.1, 1.0)),
    ("p99_latency_s", (1.0, 0.1, 1.0, 0.0)), ("p99_latency_s", (1.0, 0.1, 1.0, 1.5)),
    ("p99_latency_s", (1.0, 0.1, 1.0, True)), ("p99_latency_s", (float("nan"), 0.1, 1.0)),
    ("p99_latency_s", (1.0, 0.1, None)), ("utilisation_ceiling", (0.0, 1.0, 1.0)),
    ("utilisation_ceiling", (0.1, -1.0, 1.0)), ("utilisation_ceiling", (0.1, 1.0, -2.0)),
    ("utilisation_ceiling", (0.1, 1.0, float("inf"))), ("utilisation_ceiling", (0.1, 1.0, 1.0, 1.0)),
    ("utilisation_ceiling", (True, 1.0, 1.0)), ("utilisation_ceiling", (0.1, "1", 1.0))])
def test_latency_and_ceiling_bad_input(fn, args):
    """Rule: Bad input"""
    with pytest.raises(ValueError):
        getattr(ls, fn)(*args)


# ================================================================== spike, fluid
def _fluid_oracle(mu, base, spike, length, timeout):
    mu, base, spike, length, timeout = map(Fraction, (mu, base, spike, length, timeout))
    backlog = max(Fraction(0), spike - mu) * length
    drain = backlog / (mu - base)
    # the backlog after the spike: backlog - (mu - base) t; dead while backlog / mu > timeout
    last = (backlog - mu * timeout) / (mu - base)  # the arrival whose wait is the timeout
    dead = last + timeout if last > 0 else Fraction(0)
    return {"backlog": backlog, "drain_s": drain, "dead_window_s": dead}


@pytest.mark.rubric("spike_fluid")
@given(st.integers(1, 64).map(lambda x: x / 4), st.integers(0, 63), st.integers(0, 400),
       st.integers(1, 600), st.integers(1, 400).map(lambda x: x / 8))
@example(10.0, 48, 80, 60, 40.0)
def test_spike_fluid_matches_the_fluid_queue(mu, base_share, spike_share, length, timeout):
    """Rule: Spike, fluid"""
    base = mu * base_share / 64
    spike = mu * spike_share / 100
    want = _fluid_oracle(mu, base, spike, length, timeout)
    got = ls.spike_fluid(mu, base, spike, length, timeout)
    for key in ("backlog", "drain_s", "dead_window_s"):
        close(got[key], want[key], f"spike_fluid({mu}, {base}, {spike}, {length}, {timeout})[{key!r}]",
              rel=1e-7)
    assert got["dead_window_s"] <= got["drain_s"] + timeout + 1e-9


@pytest.mark.rubric("spike_fluid")
def test_spike_fluid_boundaries():
    """Rule: Spike, fluid"""
    got = ls.spike_fluid(4, 2, 8, 10, 10)  # backlog 40 = 4 x 10: the last wait is exactly 10 s
    assert got["dead_window_s"] == 0.0, f"a wait of exactly the timeout is not dead, got {got}"
    got = ls.spike_fluid(4, 2, 8, 10, 5)   # (40 - 20) / 2 + 5
    close(got["dead_window_s"], 15.0, "dead until the backlog falls to 20, plus the 5 s wait")
    got = ls.spike_fluid(4, 0, 8, 10, 5)   # no base load: drains at the full rate
    close(got["drain_s"], 10.0, "40 requests at 4 per second")
    close(got["dead_window_s"], 10.0, "(40 - 20) / 4 + 5")
    for args in [(4, 2, 1, 10, 5), (4, 2, 8, 0, 5), (4, 2, 0, 0, 0.5)]:  # no backlog: valid, all 0
        got = ls.spike_fluid(*args)
        assert [got[k] for k in ("backlog", "drain_s", "dead_window_s")] == [0, 0, 0], (
            f"spike_fluid{args}: a spike below the base load or of 0 s leaves no backlog, got {got}")


@pytest.mark.rubric("spike_fluid")
@pytest.mark.parametrize("args", [(10, 10, 20, 60, 40), (10, 12, 20, 60, 40), (0, 0, 1, 1, 1),
                                  (10, 5, 20, 60, 0), (10, -1, 20, 60, 40), (10, 5, -20, 60, 40),
                                  (10, 5, 20, -1, 40), (True, 5, 20, 60, 40),
                                  (10, 5, float("nan"), 60, 40), (10, 5, 20, 60, float("inf"))])
def test_spike_fluid_bad_input(args):
    """Rule: Bad input"""
    with pytest.raises(ValueError):
        ls.spike_fluid(*args)


# ================================================================== admission
EIGHTHS = st.integers(1, 96).map(lambda x: x / 8)


@st.composite
def traces(draw, max_len=16):
    """Offers built to hit the traps: bursts at one instant, idle gaps that free slots,
    timeouts that land exactly on a finish, services longer than timeouts."""
    servers = draw(st.sampled_from([1, 1, 2, 3]), label="servers")
    n = draw(st.integers(1, max_len), label="n")
    rows, t = [], 0.0
    for _ in range(n):
        t += draw(st.sampled_from([0.0, 0.0, 0.5, 1.0]) | EIGHTHS, label="gap")
        service = draw(st.sampled_from([1.0, 2.0, 4.0]) | EIGHTHS, label="service")
        timeout = draw(st.sampled_from([service, 2 * service, 4.0, 8.0, 10.0]) | EIGHTHS
                       | EIGHTHS.map(lambda x, s=service: x + s), label="timeout")
        rows.append((t, service, timeout))
    return servers, rows


def _oracle_decisions(servers, rows):
    admitted, out = [], []
    for at, s, t in sim.exact(rows):
        ok, after = sim.decide(admitted, servers, at, s, t)
        out.append((ok, after))
        if ok:
            admitted.append((at, s))
    return out


FIVE_THEN_WAIT = (2, [(0.0, 4.0, 10.0), (0.0, 4.0, 10.0), (0.0, 4.0, 8.0), (0.0, 4.0, 8.0),
                      (0.0, 4.0, 12.0), (1.0, 1.0, 9.0)])


@pytest.mark.rubric("admission")
def test_a_rejected_offer_moves_the_clock_too():
    """Rules: Admission; Bad input"""
    c = ls.AdmissionController(1)
    assert c.offer(0.0, 10.0, 10.0)[0] is True
    assert c.offer(5.0, 10.0, 10.0)[0] is False
    with pytest.raises(ValueError):
        c.offer(3.0, 1.0, 100.0)  # earlier than the rejected offer at 5
    assert c.offer(5.0, 1.0, 6.0)[0] is True, "the failed offer changed nothing: 10 + 1 <= 11"


@pytest.mark.rubric("admission")
@given(traces())
@example(FIVE_THEN_WAIT)
@example((1, [(0.0, 3.0, 3.0), (0.0, 1.0, 4.0), (0.0, 1.0, 4.5), (10.0, 5.0, 5.0)]))
@example((3, [(0.0, 6.0, 6.0), (0.0, 1.0, 1.0), (0.0, 1.0, 1.0), (0.0, 1.0, 1.0), (0.5, 1.0, 1.5)]))
def test_admission_decisions_match_the_simulator(trace):
    """Rules: Admission; The server"""
    servers, rows = trace
    want = _oracle_decisions(servers, rows)
    c = ls.AdmissionController(servers)
    for i, ((at, s, t), (ok, _)) in enumerate(zip(rows, want)):
        got = c.offer(at, s, t)
        assert got[0] == ok, (
            f"{servers} slot(s), offers {rows[:i + 1]}: offer {i} ({at}, {s}, {t}) should be "
            f"{'admitted' if ok else 'rejected'} (the simulator says it would "
            f"{'finish in time' if ok else 'finish after now + timeout'}), got {got!r}")


@pytest.mark.rubric("admission")
def test_admission_counts_its_own_service():
    """Rule: Admission"""
    c = ls.AdmissionController(1)
    assert c.offer(0.0, 5.0, 6.0)[0] is True
    assert c.offer(0.0, 2.0, 6.0)[0] is False, "starts at 5 (within 6 s) but finishes at 7 > 6"
    assert c.offer(0.0, 1.0, 6.0)[0] is True, "starts at 5 and finishes at 6 == 6: in time"


@pytest.mark.rubric("admission")
def test_admission_uses_the_earliest_free_slot_not_the_average():
    """Rules: Admission; The server"""
    c = ls.AdmissionController(2)
    assert c.offer(0.0, 10.0, 10.0)[0] and c.offer(0.0, 1.0, 10.0)[0]
    # slots free at 10 and 1; the backlog over two slots would say 5.5
    assert c.offer(0.0, 2.0, 3.0)[0] is True, "the second slot frees at 1: finishes at 3"
    assert c.offer(0.0, 2.0, 5.0)[0] is True, "slots free at 3 and 10: starts at 3, finishes at 5"
    assert c.offer(0.0, 1.0, 5.0)[0] is False, "slots free at 5 and 10: finishes at 6 > 5"


@pytest.mark.rubric("admission")
def test_admission_time_passes_and_slots_free():
    """Rules: Admission; The server"""
    c = ls.AdmissionController(1)
    assert c.offer(0.0, 8.0, 8.0)[0] is True
    assert c.offer(7.0, 2.0, 2.0)[0] is False, "the slot frees at 8: finishes at 10 > 9"
    assert c.offer(8.0, 2.0, 2.0)[0] is True, "a slot that frees as a request arrives serves it"
    assert c.offer(100.0, 3.0, 3.0)[0] is True, "an idle server starts at once, not at its last finish"
    assert c.offer(100.0, 1.0, 3.0)[0] is False, "behind the one just admitted: 104 > 103"


@pytest.mark.rubric("admission")
def test_rejections_leave_the_model_alone():
    """Rule: Admission"""
    c = ls.AdmissionController(1)
    assert c.offer(0.0, 4.0, 4.0)[0] is True
    for _ in range(5):
        assert c.offer(1.0, 4.0, 4.0)[0] is False
    assert c.offer(1.0, 3.0, 6.0)[0] is True, "five rejected requests booked no work: 4 + 3 <= 7"


@pytest.mark.rubric("admission")
@given(traces(max_len=12), st.data())
def test_failed_offers_change_nothing(trace, data):
    """Rule: Bad input

    A controller that was sent bad offers in between answers every good offer exactly as a
    twin that never saw them (whether those answers are right is the other tests' business),
    and its clock stays at the last offer that returned: a raising offer from the past must
    not move it back.
    """
    servers, rows = trace
    c, twin = ls.AdmissionController(servers), ls.AdmissionController(servers)
    prev = -1.0
    for i, (at, s, t) in enumerate(rows):
        if data.draw(st.booleans(), label="poke"):
            bad = data.draw(st.sampled_from([
                (prev - 0.125, s, t) if prev > 0 else (-1.0, s, t), (at, 0.0, t), (at, s, 0.0),
                (at, -s, t), (at, s, True), (True, s, t), (at, float("nan"), t),
                (float("inf"), s, t), (at, s, "1"), (at, None, t)]), label="bad offer")
            with pytest.raises(ValueError):
                c.offer(*bad)
            if prev > 0:  # the clock still stands at prev: any earlier offer raises
                with pytest.raises(ValueError):
                    c.offer(prev - 1 / 64, s, t)
        prev = at
        want = tuple(twin.offer(at, s, t))
        got = tuple(c.offer(at, s, t))
        assert got == want, (
            f"{servers} slot(s), offer {i} of {rows[:i + 1]}: {got!r} after failed offers, "
            f"{want!r} without them: the failed calls must change nothing")


@pytest.mark.rubric("admission")
@pytest.mark.parametrize("servers", [0, -1, True, 1.0, "2", None])
def test_admission_bad_servers(servers):
    """Rule: Bad input"""
    with pytest.raises(ValueError):
        ls.AdmissionController(servers)


# ================================================================== retry-after
@pytest.mark.rubric("retry_after")
@given(traces())
@example(FIVE_THEN_WAIT)
@example((1, [(0.0, 8.0, 8.0), (0.0, 2.0, 4.0), (0.5, 2.0, 4.0), (0.75, 9.0, 8.0)]))
def test_retry_after_matches_the_simulator(trace):
    """Rule: Retry-After"""
    servers, rows = trace
    want = _oracle_decisions(servers, rows)
    c = ls.AdmissionController(servers)
    for i, ((at, s, t), (ok, after)) in enumerate(zip(rows, want)):
        got = tuple(c.offer(at, s, t))
        if got[0] != ok:
            assume(False)  # the admission item's tests report a wrong decision
        if not ok:
            assert after is None or (isinstance(got[1], int) and not isinstance(got[1], bool)), (
                f"Retry-After is an int, got {got[1]!r}")
            assert got[1] == after and (after is None) == (got[1] is None), (
                f"{servers} slot(s), offers {rows[:i + 1]}: offer {i} rejected; "
                + ("its service exceeds its timeout: Retry-After None" if after is None else
                   f"offered again {after} s later it fits and {after - 1} s later it does not: "
                   f"Retry-After {after}") + f", got {got[1]!r}")
        else:
            assert got[1] is None, f"an admitted request returns (True, None), got {got!r}"


@pytest.mark.rubric("retry_after")
def test_retry_after_exact_integers_stay():
    """Rule: Retry-After"""
    c = ls.AdmissionController(1)
    c.offer(0.0, 10.0, 10.0)
    assert tuple(c.offer(0.0, 2.0, 4.0)) == (False, 8), "needs now + d >= 10 + 2 - 4 = 8: exactly 8"
    assert tuple(c.offer(0.25, 2.0, 4.0)) == (False, 8), "7.75 rounds up to 8"
    assert tuple(c.offer(0.75, 2.0, 4.0)) == (False, 8), "7.25 rounds up to 8"
    assert tuple(c.offer(1.0, 2.0, 4.0)) == (False, 7), "exactly 7"


@pytest.mark.rubric("retry_after")
def test_retry_after_uses_the_earliest_slot():
    """Rule: Retry-After"""
    c = ls.AdmissionController(2)
    c.offer(0.0, 20.0, 20.0)
    c.offer(0.0, 6.0, 6.0)
    got = tuple(c.offer(0.0, 3.0, 3.0))
    assert got == (False, 6), f"the slot that frees at 6 serves it from a retry at 6, got {got}"


@pytest.mark.rubric("retry_after")
def test_retry_after_none_only_when_it_never_fits():
    """Rule: Retry-After"""
    c = ls.AdmissionController(1)
    assert tuple(c.offer(0.0, 3.0, 2.0)) == (False, None), "3 s of work never fits in 2 s"
    assert tuple(c.offer(0.0, 2.0, 2.0)) == (True, None), "2 s in 2 s fits an idle slot"
    got = tuple(c.offer(0.0, 2.0, 2.0))
    assert got == (False, 2), f"equal service and timeout fits once the slot is free: got {got}"


# ================================================================== replay
def _check_replay(got, want, what):
    n = len(want["accepted"])
    for key in ("accepted", "retry_after", "finish"):
        assert len(got[key]) == n, f"{what}: {key} has {len(got[key])} entries for {n} arrivals"
    assert list(got["accepted"]) == want["accepted"], f"{what}: accepted {list(got['accepted'])}"
    assert list(got["retry_after"]) == want["retry_after"], (
        f"{what}: retry_after {list(got['retry_after'])}, expected {want['retry_after']}")
    assert all(x is None or (isinstance(x, int) and not isinstance(x, bool))
               for x in got["retry_after"]), f"{what}: Retry-After values are ints or None"
    for key, value in [("finish", x) for x in got["finish"] if x is not None] + [
            (k, got[k]) for k in ("dead_work_s", "goodput", "recovery_s")]:
        assert isinstance(value, (int, float)) and not isinstance(value, bool), (
            f"{what}: {key} holds {value!r}: numbers are ints or floats")
    for i, (g, w) in enumerate(zip(got["finish"], want["finish"])):
        assert (g is None) == (w is None) and (w is None or Fraction(g) == w), (
            f"{what}: arrival {i} finishes at {g!r}, expected {None if w is None else float(w)!r}")
    assert Fraction(got["dead_work_s"]) == want["dead_work_s"], (
        f"{what}: dead_work_s {got['dead_work_s']!r}, expected {float(want['dead_work_s'])!r} "
        f"(service of admitted requests that finished after arrival + timeout)")
    assert got["goodput"] == want["goodput"], (
        f"{what}: goodput {got['goodput']!r}, expected {want['goodput']} served in time")
    assert Fraction(got["recovery_s"]) == want["recovery_s"], (
        f"{what}: recovery_s {got['recovery_s']!r}, expected {float(want['recovery_s'])!r} (the "
        f"latest finish of a dead request minus spike_end, at least 0)")


@pytest.mark.rubric("replay")
@given(traces(), st.booleans(), st.integers(0, 160).map(lambda x: x / 8))
@example((1, [(0.0, 4.0, 10.0), (0.0, 4.0, 3.0), (1.0, 4.0, 10.0)]), False, 0.0)
@example((1, [(0.0, 4.0, 2.0), (0.0, 8.0, 20.0)]), False, 1.0)
@example((2, [(0.0, 4.0, 2.0), (0.0, 1.0, 20.0), (0.0, 2.0, 1.0)]), False, 20.0)
def test_replay_matches_the_simulator(trace, shed, spike_end):
    """Rules: Replay; The server; Admission"""
    servers, rows = trace
    want = sim.oracle_replay(sim.exact(rows), servers, shed, Fraction(spike_end))
    got = ls.replay(rows, servers, shed, spike_end)
    _check_replay(got, want, f"replay({rows}, {servers}, shed={shed}, spike_end={spike_end})")


@pytest.mark.rubric("replay")
@given(traces(), st.integers(0, 80).map(lambda x: x / 4))
def test_shedding_never_serves_fewer_in_time(trace, spike_end):
    """Rule: Replay"""
    servers, rows = trace
    plain = ls.replay(rows, servers, False, spike_end)
    shed = ls.replay(rows, servers, True, spike_end)
    assert shed["dead_work_s"] == 0 and shed["recovery_s"] == 0, (
        f"shedding admits only requests that finish in time: no dead work, got {shed}")
    assert shed["goodput"] >= plain["goodput"], (
        f"{rows} on {servers} slot(s): shedding served {shed['goodput']} in time, accepting all "
        f"{plain['goodput']}")
    assert all(x is None for x in plain["retry_after"]) and all(plain["accepted"])


@pytest.mark.rubric("replay")
@pytest.mark.parametrize("seed,servers", [(2, 1), (3, 2)])
def test_replay_seeded_spikes(seed, servers):
    """Rules: Replay; The server; Admission"""
    rows = sim.spike(seed, base_rate=0.8 * servers, spike_rate=2.4 * servers, length=20.0,
                     horizon=55.0)
    for shed in (False, True):
        want = sim.oracle_replay(sim.exact(rows), servers, shed, Fraction(40))
        _check_replay(ls.replay(rows, servers, shed, 40.0), want,
                      f"seeded spike {seed}, {servers} slot(s), shed={shed}")


@pytest.mark.rubric("replay")
@pytest.mark.parametrize("args", [
    ([(1.0, 1.0, 1.0), (0.5, 1.0, 1.0)], 1, False, 0.0), ([(1.0, 1.0)], 1, False, 0.0),
    ([(1.0, 0.0, 1.0)], 1, True, 0.0), ([(1.0, 1.0, 1.0)], 0, True, 0.0),
    ([(1.0, 1.0, 1.0)], 1, 1, 0.0), ([(1.0, 1.0, 1.0)], 1, False, float("nan")),
    ([(True, 1.0, 1.0)], 1, False, 0.0), ("abc", 1, False, 0.0), ([(1.0, 1.0, -1.0)], 1, False, 0.0),
    ([(1.0, 0.0, 1.0)], 1, False, 0.0), ([(1.0, 1.0, 1.0)], 1, False, -0.5),
    ([(1.0, 1.0, 1.0)], 1, True, -0.5), ([1.0], 1, False, 0.0), ([(1.0, 1.0, 0.0)], 1, False, 0.0),
    ([(1.0, 1.0, 1.0, 1.0)], 1, False, 0.0), ([], 0, False, 0.0), ([], 1.0, True, 0.0),
    ([], 1, False, -1.0), ([], 1, None, 0.0), ([], True, False, 0.0)])
def test_replay_bad_input(args):
    """Rule: Bad input"""
    with pytest.raises(ValueError):
        ls.replay(*args)


@pytest.mark.rubric("replay")
def test_replay_empty():
    """Rule: Replay"""
    got = ls.replay([], 3, True, 5.0)
    assert list(got["accepted"]) == [] and got["goodput"] == 0
    assert got["dead_work_s"] == 0 and got["recovery_s"] == 0


# ================================================================== a controller, step by step
class AdmissionMachine(RuleBasedStateMachine):
    """Time moves forward by steps; offers come with timeouts cut to land exactly on, just
    before or just after the finish the simulator predicts, and bad offers come in between.

    Rules: Admission; The server; Bad input
    """

    check_retry = False

    @initialize(servers=st.sampled_from([1, 2, 3]))
    def setup(self, servers: int) -> None:
        self.servers, self.now, self.last = servers, Fraction(0), 0.0
        self.c = ls.AdmissionController(servers)
        self.admitted: list[tuple[Fraction, Fraction]] = []
        self.log = [f"c = AdmissionController({servers})"]

    @rule(dt=st.sampled_from([0, 0, 1, 2]).map(Fraction) | EIGHTHS.map(Fraction))
    def wait(self, dt: Fraction) -> None:
        self.now += dt

    @rule(service=st.sampled_from([1, 2, 3]).map(Fraction) | EIGHTHS.map(Fraction),
          cut=st.sampled_from([0, 0, Fraction(-1, 8), Fraction(1, 8), 1, -1]))
    def offer(self, service: Fraction, cut: Fraction) -> None:
        finish = sim.finishes([*self.admitted, (self.now, service)], self.servers)[-1]
        timeout = max(Fraction(1, 8), finish - self.now + cut)
        want = sim.decide(self.admitted, self.servers, self.now, service, timeout)
        got = tuple(self.c.offer(float(self.now), float(service), float(timeout)))
        self.last = float(self.now)
        self.log.append(f"c.offer({float(self.now)}, {float(service)}, {float(timeout)}) -> {got}")
        story = "\n    ".join(self.log[-12:])
        if self.check_retry:
            assume(got[0] == want[0])
            assert got[1] == want[1], (
                f"Retry-After should be {want[1]} (the smallest whole seconds after which the "
                f"same request fits, None if never), got {got[1]!r}:\n    {story}")
        else:
            assert got[0] == want[0], (
                f"the request would finish at {float(finish)}, its client leaves at "
                f"{float(self.now + timeout)}: it must be {'admitted' if want[0] else 'rejected'}"
                f", got {got!r}:\n    {story}")
        if want[0]:
            self.admitted.append((self.now, service))

    @rule(kind=st.sampled_from(["past", "zero service", "bool", "nan", "negative timeout"]),
          ahead=st.sampled_from([0.0, 4.0]))
    def bad_offer(self, kind: str, ahead: float) -> None:
        now = float(self.now) + ahead  # a failed offer from the future must not move the clock
        past = self.last - 0.5 if self.last >= 0.5 else -0.5
        args = {"past": (past, 1.0, 5.0),
                "zero service": (now, 0.0, 5.0), "bool": (now, True, 5.0),
                "nan": (now, 1.0, float("nan")), "negative timeout": (now, 1.0, -5.0)}[kind]
        with pytest.raises(ValueError):
            self.c.offer(*args)
        self.log.append(f"c.offer{args} -> ValueError (changes nothing)")


class RetryMachine(AdmissionMachine):
    """Rules: Retry-After; The server"""

    check_retry = True


# each step replays the admitted requests in the simulator: fewer, shorter runs than the profile
AdmissionMachine.TestCase.settings = settings(
    max_examples=min(30, settings.default.max_examples), stateful_step_count=20)
RetryMachine.TestCase.settings = AdmissionMachine.TestCase.settings
TestAdmissionMachine = pytest.mark.rubric("admission")(AdmissionMachine.TestCase)
TestRetryMachine = pytest.mark.rubric("retry_after")(RetryMachine.TestCase)
