"""Public tests for load_shedding: the prompt's examples and one check per rule."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from graders.impl import kata_impl
from tests.load_shedding import sim

ls = kata_impl("load_shedding")


def close(got, want, what, rel=1e-7):
    assert isinstance(got, (int, float)) and not isinstance(got, bool), f"{what}: got {got!r}"
    assert math.isclose(got, want, rel_tol=rel, abs_tol=1e-9), f"{what}: expected {want!r}, got {got!r}"


# ------------------------------------------------------------------ estimates
@pytest.mark.rubric("service_stats")
def test_service_stats_example():
    """Rule: Service statistics"""
    mean, scv = ls.service_stats([1000, 32000], [0.9, 0.1], 0.02, 5e-5)
    close(mean, 0.225, "mean prefill of the 90/10 mix")
    close(scv, 4.271111111111111, "scv of the service time: Var = 0.2162, / S^2")


@pytest.mark.rubric("service_stats")
def test_service_stats_of_one_length_has_no_variance():
    """Rule: Service statistics"""
    mean, scv = ls.service_stats([2048], [1.0], 0.01, 1e-4)
    close(mean, 0.2148, "one length: its service time")
    assert scv == 0.0 or abs(scv) < 1e-12, f"one length has scv 0, got {scv!r}"


@pytest.mark.rubric("service_stats")
def test_service_stats_bad_input():
    """Rule: Bad input"""
    for args in [([], [], 0.0, 1.0), ([1, 2], [0.5], 0.0, 1.0), ([1, 2], [0.5, 0.6], 0.0, 1.0),
                 ([1.5], [1.0], 0.0, 1.0), ([True], [1.0], 0.0, 1.0), ([1], [1.0], -1.0, 1.0),
                 ([0], [1.0], 0.0, 1.0), ([1], [1.0], 0.0, float("nan"))]:
        with pytest.raises(ValueError):
            ls.service_stats(*args)


@pytest.mark.rubric("latency_ceiling")
def test_seventy_percent_rule_and_variance():
    """Rules: Utilisation ceiling; Latency quantile"""
    close(ls.utilisation_ceiling(0.225, 1.0, 3.5), 1 - math.log(100) * 0.225 / 3.5,
          "exponential service: 1 - ln(100) S / T")
    close(ls.utilisation_ceiling(0.225, 1.0, 3.5), 0.7039533451864799, "the 70% rule")
    close(ls.utilisation_ceiling(0.225, 0.0, 3.5), 0.8262589432687073, "constant service")
    rho = ls.utilisation_ceiling(0.225, 4.271111111111111, 3.5)
    close(rho, 0.4742979308694074, "the same mean with the mix's variance")
    close(ls.p99_latency_s(rho / 0.225, 0.225, 4.271111111111111), 3.5,
          "at the ceiling the p99 is the target")


@pytest.mark.rubric("latency_ceiling")
def test_latency_quantile_is_mm1_at_scv_one():
    """Rule: Latency quantile"""
    close(ls.p99_latency_s(3.0, 0.25, 1.0), math.log(100) / (4.0 - 3.0),
          "M/M/1 sojourn p99 = ln(100) / (mu - lambda)")
    close(ls.p99_latency_s(0.0, 0.5, 2.0, 0.9), math.log(10) * 0.5, "idle server: only service")
    assert ls.p99_latency_s(4.0, 0.25, 1.0) == math.inf, "rho = 1 never settles: inf"


@pytest.mark.rubric("latency_ceiling")
def test_utilisation_ceiling_at_another_quantile():
    """Rules: Utilisation ceiling; Latency quantile"""
    rho = ls.utilisation_ceiling(0.5, 2.0, 3.0, 0.9)   # a = 3 / (ln(10) x 0.5) - 1
    a = 3.0 / (math.log(10) * 0.5) - 1
    close(rho, 2 * a / (2 * a + 3.0), "the quantile's ln(1 / (1 - q)), not ln(100)")
    close(ls.p99_latency_s(rho / 0.5, 0.5, 2.0, 0.9), 3.0, "the p90 at the ceiling is the target")


@pytest.mark.rubric("latency_ceiling")
def test_utilisation_ceiling_zero_when_even_idle_misses():
    """Rule: Utilisation ceiling"""
    assert ls.utilisation_ceiling(1.0, 1.0, 4.6) == 0.0, "p99 of an idle server is ln(100) S > 4.6"
    assert ls.utilisation_ceiling(1.0, 0.0, 2.0) == 0.0


@pytest.mark.rubric("latency_ceiling")
def test_latency_bad_input():
    """Rule: Bad input"""
    for fn, args in [(ls.p99_latency_s, (1.0, 0.0, 1.0)), (ls.p99_latency_s, (1.0, 0.1, -1.0)),
                     (ls.p99_latency_s, (True, 0.1, 1.0)), (ls.p99_latency_s, (1.0, 0.1, 1.0, 1.0)),
                     (ls.utilisation_ceiling, (0.1, 1.0, 0.0)),
                     (ls.utilisation_ceiling, (0.1, 1.0, 1.0, 0.0)),
                     (ls.utilisation_ceiling, (0.1, float("inf"), 1.0))]:
        with pytest.raises(ValueError):
            fn(*args)


@pytest.mark.rubric("spike_fluid")
def test_spike_fluid_example():
    """Rule: Spike, fluid"""
    got = ls.spike_fluid(10, 7.5, 20, 60, 40)
    for key, want in {"backlog": 600.0, "drain_s": 240.0, "dead_window_s": 120.0}.items():
        close(got[key], want, f"spike_fluid(10, 7.5, 20, 60, 40)[{key!r}]")


@pytest.mark.rubric("spike_fluid")
def test_spike_fluid_no_dead_window_when_timeout_covers_backlog():
    """Rule: Spike, fluid"""
    got = ls.spike_fluid(10, 5, 15, 60, 30)  # backlog 300 = 10 x 30: the last wait is exactly 30 s
    close(got["backlog"], 300.0, "backlog")
    close(got["drain_s"], 60.0, "drain")
    assert got["dead_window_s"] == 0.0, "a wait of exactly the timeout is not dead"
    assert ls.spike_fluid(10, 5, 8, 60, 1)["backlog"] == 0.0, "a spike under capacity queues nothing"
    with pytest.raises(ValueError):
        ls.spike_fluid(10, 10, 20, 60, 40)


# ------------------------------------------------------------------ admission
EXAMPLE = [(0.0, 4.0, 10.0), (1.0, 4.0, 10.0), (2.0, 4.0, 10.0), (3.0, 4.0, 10.0),
           (3.5, 12.0, 10.0), (12.0, 4.0, 5.0)]


@pytest.mark.rubric("admission")
def test_admission_example_one_slot():
    """Rules: Admission; The server"""
    c = ls.AdmissionController(1)
    got = [c.offer(*o)[0] for o in EXAMPLE]
    assert got == [True, True, True, False, False, True], (
        f"one slot, the prompt's offers {EXAMPLE}: admitted {got}")


@pytest.mark.rubric("admission")
def test_admission_example_two_slots():
    """Rules: Admission; The server"""
    c = ls.AdmissionController(2)
    got = [c.offer(*o)[0] for o in EXAMPLE]
    assert got == [True, True, True, True, False, True], f"two slots: admitted {got}"


@pytest.mark.rubric("admission")
def test_admission_bad_input_changes_nothing():
    """Rule: Bad input"""
    with pytest.raises(ValueError):
        ls.AdmissionController(0)
    with pytest.raises(ValueError):
        ls.AdmissionController(True)
    c = ls.AdmissionController(1)
    assert tuple(c.offer(5.0, 4.0, 10.0)) == (True, None)
    for args in [(4.0, 1.0, 10.0), (6.0, 0.0, 10.0), (6.0, 1.0, -1.0), (6.0, True, 10.0),
                 (float("nan"), 1.0, 10.0)]:
        with pytest.raises(ValueError):
            c.offer(*args)
    assert tuple(c.offer(5.0, 6.0, 10.0)) == (True, None), "the failed offers changed the controller"


@pytest.mark.rubric("admission")
def test_a_rejected_offer_moves_the_clock():
    """Rules: Admission; Bad input"""
    c = ls.AdmissionController(1)
    assert tuple(c.offer(0.0, 6.0, 6.0)) == (True, None)
    assert c.offer(2.0, 6.0, 6.0)[0] is False, "would finish at 12 > 8"
    with pytest.raises(ValueError):
        c.offer(1.0, 1.0, 10.0)  # earlier than the rejected offer's now = 2


@pytest.mark.rubric("retry_after")
def test_retry_after_example():
    """Rule: Retry-After"""
    c = ls.AdmissionController(1)
    got = [tuple(c.offer(*o)) for o in EXAMPLE]
    assert got[3] == (False, 3), f"would start at 12: retry at 3 + 3 = 6 fits exactly; got {got[3]}"
    assert got[4] == (False, None), f"12 s of service in a 10 s timeout never fits; got {got[4]}"


@pytest.mark.rubric("retry_after")
def test_retry_after_rounds_up():
    """Rule: Retry-After"""
    c = ls.AdmissionController(1)
    assert tuple(c.offer(0.0, 10.0, 10.0)) == (True, None)
    got = tuple(c.offer(0.0, 2.5, 3.0))   # starts 10, needs now + d >= 10 + 2.5 - 3 = 9.5
    assert got == (False, 10), f"9.5 s rounds up to 10, got {got}"
    assert isinstance(got[1], int) and not isinstance(got[1], bool)


# ------------------------------------------------------------------ replay
def _same(got, want, what):
    assert list(got["accepted"]) == want["accepted"], f"{what}: accepted differs"
    assert list(got["retry_after"]) == want["retry_after"], f"{what}: retry_after differs"
    for i, (g, w) in enumerate(zip(got["finish"], want["finish"])):
        assert (g is None) == (w is None) and (w is None or Fraction(g) == w), (
            f"{what}: arrival {i} finishes at {g!r}, expected {None if w is None else float(w)!r}")
    assert Fraction(got["dead_work_s"]) == want["dead_work_s"], f"{what}: dead_work_s"
    assert got["goodput"] == want["goodput"], f"{what}: goodput"
    assert Fraction(got["recovery_s"]) == want["recovery_s"], f"{what}: recovery_s"


@pytest.mark.rubric("replay")
@pytest.mark.parametrize("shed", [False, True])
def test_replay_seeded_spike(shed):
    """Rules: Replay; The server; Admission"""
    rows = sim.spike(1)
    want = sim.oracle_replay(sim.exact(rows), 1, shed, Fraction(50))
    got = ls.replay(rows, 1, shed, 50.0)
    _same(got, want, f"seed 1, one slot, shed={shed}")
    if not shed:
        assert (got["goodput"], len(rows)) == (63, 165)
    else:
        assert got["goodput"] == 138 and got["dead_work_s"] == 0.0 and got["recovery_s"] == 0.0


@pytest.mark.rubric("replay")
def test_replay_small_by_hand():
    """Rules: Replay; The server"""
    rows = [(0.0, 4.0, 10.0), (0.0, 4.0, 3.0), (1.0, 4.0, 10.0)]
    got = ls.replay(rows, 1, False, 0.0)
    assert list(got["finish"]) == [4.0, 8.0, 12.0] and list(got["accepted"]) == [True] * 3
    assert list(got["retry_after"]) == [None] * 3
    assert got["dead_work_s"] == 8.0 and got["goodput"] == 1 and got["recovery_s"] == 12.0
