"""Public tests for step_trace: the prompt's examples and one check per rule."""

from __future__ import annotations

from fractions import Fraction

import pytest

from graders.impl import kata_impl
from tests.step_trace.helpers import (EXAMPLE_BUSY, EXAMPLE_IDLE, H100_SXM_BANDWIDTH, HANDOFF_WANT,
                                      LLAMA8_WEIGHT_BYTES, cause, exact, example, gpu,
                                      handoff_trace, step)

m = kata_impl("step_trace")


# ------------------------------------------------------------------ busy time
@pytest.mark.rubric("busy_union")
def test_busy_time_of_the_example():
    """Rule: Busy time"""
    assert m.gpu_busy(example()) == EXAMPLE_BUSY, (
        "step 0: gemm [25, 60) and attn [40, 70) overlap on two streams, the copy [70, 74) "
        "touches attn: one run [25, 74) = 49; step 1: [140, 150) + [160, 190) = 40; the kernel "
        "at 250 is in no step")


@pytest.mark.rubric("busy_union")
def test_overlapping_streams_count_once():
    """Rule: Busy time"""
    trace = [step(0, 0, 100), gpu(10, 60, stream=1), gpu(30, 80, stream=2),
             gpu(40, 50, stream=3, kind="memcpy")]
    assert m.gpu_busy(trace) == {0: 70}, "the union [10, 80), not the sum 50 + 50 + 10"


@pytest.mark.rubric("busy_union")
def test_half_open_intervals_touching_and_zero_length():
    """Rules: Half-open intervals; Busy time"""
    trace = [step(0, 0, 10), step(1, 10, 20), gpu(5, 10), gpu(10, 10, stream=1), gpu(10, 12)]
    assert m.gpu_busy(trace) == {0: 5, 1: 2}, (
        "[5, 10) ends where step 1 starts; the zero-length kernel covers nothing")


@pytest.mark.rubric("busy_union")
def test_events_are_clipped_to_the_window():
    """Rules: Half-open intervals; Busy time"""
    trace = [gpu(50, 150), step(1, 100, 200), step(0, 0, 100), gpu(300, 400), step(2, 500, 500)]
    assert m.gpu_busy(trace) == {0: 50, 1: 50, 2: 0}, (
        "a kernel across a step edge counts in both steps, clipped; one outside every step in "
        "none; a zero-length step has no busy time")


# ------------------------------------------------------------------ idle attribution
@pytest.mark.rubric("idle_attribution")
def test_idle_breakdown_of_the_example():
    """Rule: Idle attribution"""
    assert m.idle_breakdown(example()) == EXAMPLE_IDLE


@pytest.mark.rubric("idle_attribution")
def test_blocking_call_beats_launch_beats_host():
    """Rule: Idle attribution"""
    trace = [step(0, 0, 30), cause("host", "python", 0, 30),
             cause("runtime", "cudaLaunchKernel", 0, 20),
             cause("runtime", "cudaStreamSynchronize", 5, 10),
             cause("runtime", "cudaMemcpyAsync", 25, 27)]
    assert m.idle_breakdown(trace) == {0: {"cudaLaunchKernel": 15, "cudaStreamSynchronize": 5,
                                           "python": 8, "cudaMemcpyAsync": 2}}, (
        "a blocking call first, then any runtime call (cudaMemcpyAsync is not blocking), then "
        "a host span")


@pytest.mark.rubric("idle_attribution")
def test_innermost_host_span_then_name():
    """Rule: Idle attribution"""
    trace = [step(0, 0, 40), cause("host", "outer", 0, 40), cause("host", "inner", 10, 30),
             cause("host", "b_same", 12, 20), cause("host", "a_same", 12, 20),
             cause("host", "longer", 10, 35)]
    got = m.idle_breakdown(trace)
    assert got == {0: {"outer": 15, "inner": 12, "a_same": 8, "longer": 5}}, (
        "latest start wins, then earliest end, then the smallest name: [0, 10) outer, "
        "[10, 12) inner (ends before longer), [12, 20) a_same, [20, 30) inner, [30, 35) longer, "
        "[35, 40) outer")


@pytest.mark.rubric("idle_attribution")
def test_busy_plus_idle_is_the_window():
    """Rules: Idle attribution; Busy time"""
    trace = example()
    busy, idle = m.gpu_busy(trace), m.idle_breakdown(trace)
    for sid, length in {0: 100, 1: 100}.items():
        assert busy[sid] + sum(idle[sid].values()) == length


# ------------------------------------------------------------------ MBU
@pytest.mark.rubric("mbu")
def test_decode_floor_and_mbu_llama8_h100():
    """Rule: Decode floor and MBU"""
    trace = [step(0, 0, 7000), gpu(1000, 6000)]
    got = m.decode_mbu(trace, 0, LLAMA8_WEIGHT_BYTES, 2**30, H100_SXM_BANDWIDTH)
    floor = Fraction((LLAMA8_WEIGHT_BYTES + 2**30) * 10**6, H100_SXM_BANDWIDTH)
    exact(got["floor_us"], floor, "floor_us")
    exact(got["mbu"], floor / 7000, "mbu: the floor over the step window")
    exact(got["busy_mbu"], floor / 5000, "busy_mbu: the floor over the GPU busy time")
    assert 4800 < float(floor) < 4801


@pytest.mark.rubric("mbu")
def test_decode_mbu_refuses_unknown_or_empty_steps():
    """Rule: Decode floor and MBU"""
    trace = [step(0, 0, 100), step(1, 100, 200), gpu(10, 20)]
    with pytest.raises(ValueError):
        m.decode_mbu(trace, 5, 1, 1, 1)
    with pytest.raises(ValueError):
        m.decode_mbu(trace, 1, 1, 1, 1)


# ------------------------------------------------------------------ stalls
@pytest.mark.rubric("periodic_stalls")
def test_periodic_stall_example():
    """Rule: Periodic stalls"""
    durations = [20] * 3 + [95] + [20] * 7 + [95] + [20] * 4
    assert m.stall_period(durations, 30) == (8, [3])


@pytest.mark.rubric("periodic_stalls")
def test_no_period_cases():
    """Rule: Periodic stalls"""
    assert m.stall_period([20] * 10, 30) is None, "no slow step"
    assert m.stall_period([20, 20, 30, 20], 30) is None, "slow means strictly above"
    assert m.stall_period([50, 20, 20, 20, 20], 30) is None, "seen once: no period <= 5 // 2"
    assert m.stall_period([50] * 4, 30) == (1, [0])
    assert m.stall_period([50, 20, 50, 50, 20, 50], 30) == (3, [0, 2])


@pytest.mark.rubric("periodic_stalls")
def test_stall_exposure_example():
    """Rule: Stall exposure"""
    got = m.stall_exposure(8, [3], 4)
    exact(got["independent"], 1 - Fraction(7, 8) ** 4, "independent, n = 4")
    exact(got["periodic"], Fraction(1, 2), "periodic, n = 4: phases 0..3 meet residue 3")
    got = m.stall_exposure(8, [3], 8)
    exact(got["periodic"], Fraction(1), "every request of 8 steps meets a period-8 stall")
    exact(got["independent"], 1 - Fraction(7, 8) ** 8, "independent, n = 8")


# ------------------------------------------------------------------ handoff
@pytest.mark.rubric("handoff")
def test_handoff_example():
    """Rule: Handoff chain"""
    assert m.handoff(handoff_trace(), 7) == HANDOFF_WANT


@pytest.mark.rubric("handoff")
def test_handoff_refuses_decode_before_kv():
    """Rule: Handoff chain"""
    trace = handoff_trace()
    for ev in trace:
        if ev.get("correlation") == 14 and ev["kind"] == "kernel":
            ev["start"] = 55
    with pytest.raises(ValueError):
        m.handoff(trace, 7)
    with pytest.raises(ValueError):
        m.handoff(handoff_trace(), 8)


# ------------------------------------------------------------------ bad input
@pytest.mark.rubric("bad_input")
@pytest.mark.parametrize("bad", [
    {"kind": "kernel", "name": "k", "start": 0, "end": 1},                       # no stream
    {"kind": "kernel", "name": "k", "stream": 0, "start": 5, "end": 4},          # reversed
    {"kind": "host", "name": "h", "start": True, "end": 4},                      # a bool
    {"kind": "gpu", "name": "k", "start": 0, "end": 1},                          # unknown kind
    {"kind": "step", "name": "s", "step": 0, "start": 50, "end": 150},           # overlaps
])
def test_bad_events_raise(bad):
    """Rule: Bad input"""
    with pytest.raises(ValueError):
        m.gpu_busy(example() + [bad])
