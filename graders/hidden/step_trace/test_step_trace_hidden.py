"""Hidden tests for step_trace: brute force over every time unit, planted answers, each trap."""

from __future__ import annotations

import copy
import random
from fractions import Fraction

import hypothesis.strategies as st
import pytest
from hypothesis import given

from graders.hidden.step_trace import oracle
from graders.impl import kata_impl
from tests.step_trace.helpers import as_fraction, cause, example, exact, gpu, handoff_trace, step

m = kata_impl("step_trace")


# ================================================================== busy time
@pytest.mark.rubric("busy_union")
@given(oracle.traces())
def test_busy_matches_brute_force(trace):
    """Rules: Busy time; Half-open intervals"""
    want = oracle.busy(trace)
    got = m.gpu_busy(copy.deepcopy(trace))
    assert got == want, f"gpu_busy({trace}): counting instant by instant gives {want}, got {got}"


@pytest.mark.rubric("busy_union")
def test_nested_and_chained_intervals():
    """Rules: Busy time; Half-open intervals"""
    trace = [step(3, 0, 100), gpu(10, 90, stream=0), gpu(20, 30, stream=1),
             gpu(30, 40, stream=1), gpu(90, 95, stream=2, kind="memcpy"), gpu(95, 95, stream=3),
             gpu(96, 97, stream=0), gpu(99, 120, stream=0)]
    assert m.gpu_busy(trace) == {3: 87}, (
        "[10, 90) holds two kernels of another stream, [90, 95) touches it: [10, 95) + "
        "[96, 97) + [99, 100) clipped = 87")


@pytest.mark.rubric("busy_union")
def test_sum_of_durations_is_not_busy_time():
    """Rule: Busy time"""
    trace = [step(0, 0, 50)] + [gpu(0, 50, stream=s) for s in range(4)]
    assert m.gpu_busy(trace) == {0: 50}, "four streams busy at once is still 50 units"


@pytest.mark.rubric("busy_union")
def test_every_step_reported_even_when_idle():
    """Rule: Half-open intervals"""
    trace = [step(5, 0, 10), step(2, 20, 30), step(9, 30, 30), gpu(10, 20)]
    assert m.gpu_busy(trace) == {5: 0, 2: 0, 9: 0}, (
        "a kernel exactly in the gap between two steps counts for neither")


@pytest.mark.rubric("busy_union")
def test_no_steps_gives_an_empty_result():
    """Rule: Half-open intervals"""
    assert m.gpu_busy([gpu(0, 10)]) == {}
    assert m.gpu_busy([]) == {}
    assert m.idle_breakdown([cause("host", "h", 0, 4)]) == {}


# ================================================================== idle attribution
@pytest.mark.rubric("idle_attribution")
@given(oracle.traces())
def test_idle_matches_brute_force(trace):
    """Rules: Idle attribution; Half-open intervals"""
    want = oracle.idle(trace)
    got = m.idle_breakdown(copy.deepcopy(trace))
    assert got == want, (f"idle_breakdown({trace}): labelling every idle instant gives {want}, "
                         f"got {got}")
    busy = m.gpu_busy(copy.deepcopy(trace))
    for sid, (lo, hi) in oracle.windows(trace).items():
        assert busy[sid] + sum(got[sid].values()) == hi - lo, (
            f"step {sid}: busy {busy[sid]} + idle {got[sid]} is not the window {hi - lo}")


@pytest.mark.rubric("idle_attribution")
def test_every_blocking_name_and_only_those():
    """Rule: Idle attribution"""
    for name in oracle.BLOCKING:
        trace = [step(0, 0, 10), cause("runtime", "cudaLaunchKernel", 0, 10),
                 cause("runtime", name, 0, 10)]
        assert m.idle_breakdown(trace) == {0: {name: 10}}, f"{name} is a blocking call"
    for name in ("cudaMemcpyAsync", "cudaStreamWaitEvent", "cudamemcpy", "cudaMemcpy2D"):
        trace = [step(0, 0, 10), cause("runtime", name, 0, 10),
                 cause("runtime", "cudaLaunchKernel", 0, 10)]
        assert m.idle_breakdown(trace) == {0: {"cudaLaunchKernel": 10}}, (
            f"{name!r} is not one of the four blocking names: two plain runtime calls over the "
            f"same interval tie to the smaller name")


@pytest.mark.rubric("idle_attribution")
def test_class_beats_innermost():
    """Rule: Idle attribution"""
    trace = [step(0, 0, 20), cause("runtime", "cudaStreamSynchronize", 0, 20),
             cause("runtime", "cudaLaunchKernel", 5, 10), cause("host", "py", 6, 8)]
    assert m.idle_breakdown(trace) == {0: {"cudaStreamSynchronize": 20}}, (
        "an outer blocking call beats an inner launch and an innermost host span")
    trace = [step(0, 0, 20), cause("host", "py", 5, 6), cause("runtime", "cudaLaunchKernel", 0, 20)]
    assert m.idle_breakdown(trace) == {0: {"cudaLaunchKernel": 20}}


@pytest.mark.rubric("idle_attribution")
def test_latest_start_then_earliest_end_then_name():
    """Rule: Idle attribution"""
    trace = [step(0, 0, 12), cause("host", "z", 2, 12), cause("host", "y", 0, 5),
             cause("host", "x", 2, 8), cause("host", "w", 2, 8), cause("host", "v", 1, 3)]
    assert m.idle_breakdown(trace) == {0: {"y": 1, "v": 1, "w": 6, "z": 4}}, (
        "[0,1) y; [1,2) v (starts later than y); [2,8) w: x and w start last and end first, "
        "w < x; [8,12) z")


@pytest.mark.rubric("idle_attribution")
def test_zero_length_causes_and_gpu_events_cover_nothing():
    """Rules: Idle attribution; Half-open intervals"""
    trace = [step(0, 0, 10), cause("runtime", "cudaStreamSynchronize", 4, 4),
             cause("host", "py", 0, 10), gpu(5, 5)]
    assert m.idle_breakdown(trace) == {0: {"py": 10}}


@pytest.mark.rubric("idle_attribution")
def test_causes_across_window_edges_are_clipped():
    """Rules: Idle attribution; Half-open intervals"""
    trace = [step(0, 10, 20), step(1, 20, 30), cause("host", "spill", 0, 25), gpu(12, 14)]
    assert m.idle_breakdown(trace) == {0: {"spill": 8}, 1: {"spill": 5, "unattributed": 5}}


@pytest.mark.rubric("idle_attribution")
def test_the_launch_of_a_kernel_does_not_make_the_gpu_busy():
    """Rule: Idle attribution"""
    trace = [step(0, 0, 10), cause("runtime", "cudaLaunchKernel", 0, 6, correlation=1),
             gpu(6, 10, correlation=1)]
    assert m.idle_breakdown(trace) == {0: {"cudaLaunchKernel": 6}}
    assert m.gpu_busy(trace) == {0: 4}


@pytest.mark.rubric("idle_attribution")
def test_idle_breakdown_of_the_example_shuffled():
    """Rule: Idle attribution"""
    trace = example()
    random.Random(35).shuffle(trace)
    assert m.idle_breakdown(trace) == oracle.idle(trace)


# ================================================================== MBU
@pytest.mark.rubric("mbu")
@given(st.integers(1, 10**6), st.integers(0, 10**6), st.integers(0, 10**12),
       st.integers(0, 10**10), st.integers(1, 10**13), st.data())
def test_mbu_exact(lo_len, busy_len, weight, kv, bandwidth, data):
    """Rule: Decode floor and MBU"""
    busy_len = min(busy_len, lo_len) or 1
    start = data.draw(st.integers(0, 1000), label="start")
    offset = data.draw(st.integers(0, lo_len - busy_len), label="offset")
    trace = [step(4, start, start + lo_len), step(5, start + lo_len, start + 2 * lo_len),
             gpu(start + offset, start + offset + busy_len),
             gpu(start + lo_len + 1, start + 2 * lo_len + 7, stream=1)]
    got = m.decode_mbu(trace, 4, weight, kv, bandwidth)
    floor = Fraction(weight + kv, bandwidth) * 10**6
    exact(got["floor_us"], floor, f"floor_us of {weight} + {kv} bytes at {bandwidth} B/s")
    exact(got["mbu"], floor / lo_len, f"mbu: floor over the window of {lo_len} us")
    exact(got["busy_mbu"], floor / busy_len, f"busy_mbu: floor over {busy_len} us busy")


@pytest.mark.rubric("mbu")
def test_mbu_busy_time_is_the_clipped_union():
    """Rule: Decode floor and MBU"""
    trace = [step(0, 100, 200), gpu(50, 150), gpu(140, 160, stream=1), gpu(190, 300, stream=2)]
    got = m.decode_mbu(trace, 0, 30, 0, 10**6)
    exact(got["busy_mbu"], Fraction(30, 70), "busy time [100, 160) + [190, 200) = 70")
    exact(got["mbu"], Fraction(30, 100), "the window is 100 us")


@pytest.mark.rubric("mbu")
def test_mbu_large_values_stay_exact():
    """Rule: Decode floor and MBU"""
    trace = [step(0, 0, 3), gpu(0, 3)]
    got = m.decode_mbu(trace, 0, 10**18 + 1, 0, 3 * 10**12 + 1)
    exact(got["floor_us"], Fraction((10**18 + 1) * 10**6, 3 * 10**12 + 1), "no float rounding")


@pytest.mark.rubric("mbu")
def test_mbu_refusals():
    """Rule: Decode floor and MBU"""
    trace = [step(0, 0, 10), step(1, 10, 20), step(2, 20, 20), gpu(0, 10), gpu(25, 30)]
    for sid in (1, 2, 3):
        with pytest.raises(ValueError):
            m.decode_mbu(trace, sid, 1, 1, 1)


# ================================================================== periodic stalls
@pytest.mark.rubric("periodic_stalls")
@given(st.integers(1, 12), st.data())
def test_planted_period_is_found(p, data):
    """Rule: Periodic stalls"""
    residues = data.draw(st.sets(st.integers(0, p - 1), min_size=1), label="residues")
    n = data.draw(st.integers(2 * p, 6 * p + 3), label="steps")
    threshold = data.draw(st.integers(10, 50), label="threshold")
    noise = data.draw(st.lists(st.integers(0, 60), min_size=n, max_size=n), label="noise")
    durations = [threshold + 1 + x if i % p in residues else x % (threshold + 1)
                 for i, x in enumerate(noise)]
    want = oracle.period(durations, threshold)
    assert want is not None and p % want[0] == 0
    got = m.stall_period(durations, threshold)
    assert got is not None and tuple(got[0:1]) == (want[0],) and list(got[1]) == want[1], (
        f"stall_period({durations}, {threshold}) planted period {p} residues "
        f"{sorted(residues)}: the smallest period is {want}, got {got}")


@pytest.mark.rubric("periodic_stalls")
@given(st.lists(st.integers(0, 3), max_size=14), st.integers(0, 3))
def test_period_matches_the_definition(durations, threshold):
    """Rule: Periodic stalls"""
    want = oracle.period(durations, threshold)
    got = m.stall_period(list(durations), threshold)
    if want is None:
        assert got is None, f"stall_period({durations}, {threshold}): None, got {got}"
    else:
        assert got is not None and got[0] == want[0] and list(got[1]) == want[1], (
            f"stall_period({durations}, {threshold}): {want}, got {got}")


@pytest.mark.rubric("periodic_stalls")
def test_period_traps():
    """Rule: Periodic stalls"""
    assert m.stall_period([9, 1, 9, 1, 9, 1, 9, 1], 5) == (2, [0]), "residues {0, 2} of 4 is 2"
    assert m.stall_period([1, 9, 1, 1, 9, 1], 5) == (3, [1])
    assert m.stall_period([1, 9, 1, 1, 9], 5) is None, "period 3 needs 6 steps to be seen twice"
    assert m.stall_period([1, 9, 1, 1, 9, 1, 1], 5) == (3, [1])
    assert m.stall_period([9], 5) is None
    assert m.stall_period([], 5) is None
    assert m.stall_period([5, 5, 5, 5], 5) is None, "equal to the threshold is not slow"
    assert m.stall_period((6, 6), 5) == (1, [0]), "a tuple of durations is fine"


@pytest.mark.rubric("periodic_stalls")
@given(st.integers(1, 16), st.data())
def test_exposure_exact(period_, data):
    """Rule: Stall exposure"""
    residues = sorted(data.draw(st.sets(st.integers(0, period_ - 1)), label="residues"))
    n = data.draw(st.integers(0, 40), label="n")
    want = oracle.exposure(period_, residues, n)
    got = m.stall_exposure(period_, data.draw(st.permutations(residues)), n)
    for key in ("independent", "periodic"):
        exact(got[key], want[key], f"stall_exposure({period_}, {residues}, {n})[{key!r}]")


@pytest.mark.rubric("periodic_stalls")
def test_exposure_traps():
    """Rule: Stall exposure"""
    got = m.stall_exposure(64, [0], 200)
    exact(got["periodic"], Fraction(1), "a request longer than the period always meets it")
    assert 0.95 < float(as_fraction(got["independent"], "independent")) < 0.96
    got = m.stall_exposure(100, [7], 1)
    exact(got["independent"], Fraction(1, 100), "n = 1: the rate itself")
    got = m.stall_exposure(5, [], 9)
    exact(got["independent"], Fraction(0), "no residues")
    exact(got["periodic"], Fraction(0), "no residues")
    got = m.stall_exposure(5, [1, 3], 0)
    exact(got["periodic"], Fraction(0), "n = 0 meets nothing")
    exact(got["independent"], Fraction(0), "n = 0 meets nothing")
    got = m.stall_exposure(10, [0, 1], 2)
    exact(got["periodic"], Fraction(3, 10), "adjacent residues: phases 9, 0 and 1")


# ================================================================== handoff
@st.composite
def handoffs(draw):
    """A request's chain with decoys: another request, a memcpy under a prefill call, a kernel
    under a transfer call, orphans whose runtime call is missing, untagged runtime calls."""
    r = draw(st.integers(0, 5))
    arrive = draw(st.integers(0, 10))
    trace = [cause("host", "arrive", arrive, arrive + draw(st.integers(0, 5)), request=r),
             cause("host", "arrive", 0, 1, request=r + 1)]
    corr = iter(range(1, 10**6, draw(st.integers(1, 3))))
    f_starts = draw(st.lists(st.integers(arrive, arrive + 30), min_size=1, max_size=3))
    prefill = [(s, s + draw(st.integers(0, 15))) for s in f_starts]
    f = max(e for _, e in prefill)
    transfer = [(s, s + draw(st.integers(0, 20)))
                for s in draw(st.lists(st.integers(arrive, f + 10), min_size=1, max_size=3))]
    ready = max(f, max(e for _, e in transfer))
    d0 = ready + draw(st.integers(0, 10))
    decode = [(s, s + draw(st.integers(0, 10)))
              for s in draw(st.lists(st.integers(d0, d0 + 8), min_size=1, max_size=3))]
    for ph, kind, spans in (("prefill", "kernel", prefill), ("transfer", "memcpy", transfer),
                            ("decode", "kernel", decode)):
        for s, e in spans:
            c = next(corr)
            trace.append(cause("runtime", "cudaLaunchKernel", max(0, s - 2), max(0, s - 1),
                               correlation=c, request=r, phase=ph))
            trace.append(gpu(s, e, stream=draw(st.integers(0, 2)), kind=kind, correlation=c))
    # decoys
    c = next(corr)
    trace.append(cause("runtime", "cudaLaunchKernel", 0, 1, correlation=c, request=r + 1,
                       phase="prefill"))
    trace.append(gpu(0, 200, correlation=c))
    c = next(corr)
    trace.append(cause("runtime", "cudaMemcpyAsync", 0, 1, correlation=c, request=r,
                       phase="prefill"))
    trace.append(gpu(0, 300, kind="memcpy", correlation=c))
    c = next(corr)
    trace.append(cause("runtime", "cudaLaunchKernel", 0, 1, correlation=c, request=r,
                       phase="transfer"))
    trace.append(gpu(0, 300, correlation=c))
    c = next(corr)
    trace.append(cause("runtime", "cudaLaunchKernel", 0, 1, correlation=c, request=r))
    trace.append(gpu(0, 400, correlation=c))
    trace.append(gpu(0, 500, correlation=next(corr)))
    trace.append(gpu(0, 500, kind="memcpy"))
    return r, draw(st.permutations(trace))


@pytest.mark.rubric("handoff")
@given(handoffs())
def test_handoff_matches_the_chain(case):
    """Rule: Handoff chain"""
    r, trace = case
    want = oracle.handoff(trace, r)
    got = m.handoff(copy.deepcopy(trace), r)
    assert got == want, f"handoff({trace}, {r}): the chain gives {want}, got {got}"
    assert got["ttft_via_decode"] == (got["ttft_via_prefill"] + got["transfer_exposed"]
                                      + got["admission_wait"])


@pytest.mark.rubric("handoff")
def test_handoff_transfer_hidden_is_a_union_before_prefill_end():
    """Rule: Handoff chain"""
    trace = handoff_trace() + [
        cause("runtime", "cudaMemcpyAsync", 20, 21, request=7, phase="transfer", correlation=30),
        gpu(30, 50, stream=4, kind="memcpy", correlation=30)]
    got = m.handoff(trace, 7)
    assert got["transfer_hidden"] == 23, (
        "the union of [22, 38), [30, 50) and [44, 60) before F = 45 is [22, 45) = 23, "
        f"got {got['transfer_hidden']}")


@pytest.mark.rubric("handoff")
def test_handoff_kv_ready_before_prefill_end():
    """Rule: Handoff chain"""
    trace = handoff_trace()
    for ev in trace:
        if ev.get("correlation") == 13 and ev["kind"] == "memcpy":
            ev["start"], ev["end"] = 30, 39
    got = m.handoff(trace, 7)
    assert got["transfer_exposed"] == 0 and got["admission_wait"] == 30, (
        f"all KV is on the decode side before F = 45: nothing exposed, decode waited 75 - 45; "
        f"got {got}")
    assert got["transfer_hidden"] == 17


@pytest.mark.rubric("handoff")
@pytest.mark.parametrize("change", ["no_arrive", "two_arrives", "no_prefill", "no_transfer",
                                    "no_decode", "prefill_before_arrive", "decode_before_prefill",
                                    "other_request"])
def test_handoff_refusals(change):
    """Rule: Handoff chain"""
    trace = handoff_trace()
    corr_of = {"no_prefill": (10, 11), "no_transfer": (12, 13), "no_decode": (14,)}
    r = 7
    if change == "no_arrive":
        trace = [e for e in trace if e["name"] != "arrive"]
    elif change == "two_arrives":
        trace.append(cause("host", "arrive", 1, 1, request=7))
    elif change in corr_of:
        trace = [e for e in trace if e["kind"] == "runtime"
                 or e.get("correlation") not in corr_of[change]]
    elif change == "prefill_before_arrive":
        trace[0]["start"] = trace[0]["end"] = 6
    elif change == "decode_before_prefill":
        for ev in trace:
            if ev.get("correlation") == 13 and ev["kind"] == "memcpy":
                ev["start"], ev["end"] = 30, 39
            if ev.get("correlation") == 14 and ev["kind"] == "kernel":
                ev["start"] = 44
    else:
        r = 3
    with pytest.raises(ValueError):
        m.handoff(trace, r)


# ================================================================== bad input
GOOD = [step(0, 0, 10), gpu(0, 5, correlation=1),
        cause("runtime", "cudaLaunchKernel", 0, 1, correlation=1)]
BAD_EVENTS = [
    "not a dict",
    {"kind": "kernel", "name": "k", "stream": 0, "start": 0},
    {"kind": "kernel", "name": "k", "stream": 0, "start": -1, "end": 4},
    {"kind": "kernel", "name": "k", "stream": 0, "start": 5, "end": 4},
    {"kind": "kernel", "name": "k", "stream": 0, "start": 0.0, "end": 4},
    {"kind": "kernel", "name": "k", "stream": 0, "start": 0, "end": True},
    {"kind": "kernel", "name": "k", "stream": -1, "start": 0, "end": 4},
    {"kind": "kernel", "name": "k", "stream": False, "start": 0, "end": 4},
    {"kind": "memcpy", "name": "k", "start": 0, "end": 4},
    {"kind": "kernel", "name": 3, "stream": 0, "start": 0, "end": 4},
    {"kind": "Kernel", "name": "k", "stream": 0, "start": 0, "end": 4},
    {"name": "k", "stream": 0, "start": 0, "end": 4},
    {"kind": "kernel", "name": "k", "stream": 0, "start": 0, "end": 4, "correlation": -2},
    {"kind": "kernel", "name": "k", "stream": 0, "start": 0, "end": 4, "correlation": "7"},
    {"kind": "host", "name": "h", "start": 0, "end": 4, "request": 1.5},
    {"kind": "runtime", "name": "r", "start": 0, "end": 4, "phase": "Decode"},
    {"kind": "runtime", "name": "r", "start": 0, "end": 4, "correlation": 1},
    {"kind": "step", "name": "s", "start": 10, "end": 20},
    {"kind": "step", "name": "s", "step": 0, "start": 10, "end": 20},
    {"kind": "step", "name": "s", "step": 1, "start": 9, "end": 20},
    {"kind": "step", "name": "s", "step": True, "start": 10, "end": 20},
    {"kind": "step", "name": "s", "step": 2, "start": 2, "end": 3},
]


@pytest.mark.rubric("bad_input")
@pytest.mark.parametrize("bad", BAD_EVENTS, ids=range(len(BAD_EVENTS)))
@pytest.mark.parametrize("fn", ["gpu_busy", "idle_breakdown", "decode_mbu", "handoff"])
def test_bad_events_raise_in_every_function(bad, fn):
    """Rule: Bad input"""
    trace = handoff_trace() + [step(0, 200, 210), gpu(200, 205)] \
        if fn == "handoff" else copy.deepcopy(GOOD)
    if fn == "handoff" and isinstance(bad, dict) and bad.get("kind") == "step":
        bad = dict(bad, start=bad["start"] + 200, end=bad["end"] + 200)
    if fn == "handoff" and isinstance(bad, dict) and bad.get("correlation") == 1:
        bad = dict(bad, correlation=10)
    args = {"gpu_busy": (), "idle_breakdown": (), "decode_mbu": (0, 1, 1, 1), "handoff": (7,)}[fn]
    with pytest.raises(ValueError):
        getattr(m, fn)(trace + [bad], *args)


@pytest.mark.rubric("bad_input")
@pytest.mark.parametrize("trace", [None, "trace", {"kind": "step"}, 5])
def test_a_trace_is_a_list(trace):
    """Rule: Bad input"""
    with pytest.raises(ValueError):
        m.gpu_busy(trace)


@pytest.mark.rubric("bad_input")
def test_good_traces_with_optional_keys_are_accepted():
    """Rule: Bad input"""
    trace = [step(0, 0, 10), step(1, 10, 20),
             gpu(0, 5, correlation=None, args={"x": 1}),
             cause("runtime", "cudaLaunchKernel", 0, 1, correlation=None, phase=None,
                   request=None),
             cause("host", "h", 0, 10, request=None, tid=3), gpu(5, 5, stream=0)]
    assert m.gpu_busy(tuple(trace)) == {0: 5, 1: 0}


@pytest.mark.rubric("bad_input")
@pytest.mark.parametrize("args", [
    (0, -1, 1, 1), (0, 1, -1, 1), (0, 1, 1, 0), (0, 1.0, 1, 1), (0, 1, 1, True), (True, 1, 1, 1),
    (0, 1, 1, 1.5), (-1, 1, 1, 1), ("0", 1, 1, 1)])
def test_mbu_bad_arguments(args):
    """Rule: Bad input"""
    with pytest.raises(ValueError):
        m.decode_mbu([step(0, 0, 10), gpu(0, 5)], *args)


@pytest.mark.rubric("bad_input")
@pytest.mark.parametrize("args", [
    ([1, 2], -1), ([1, 2], 1.0), ([1, 2], True), ([1, -2], 1), ([1, 2.5], 1), ([1, True], 1),
    ("12", 1), (None, 1), ({1: 2}, 1)])
def test_stall_period_bad_arguments(args):
    """Rule: Bad input"""
    with pytest.raises(ValueError):
        m.stall_period(*args)


@pytest.mark.rubric("bad_input")
@pytest.mark.parametrize("args", [
    (0, [], 1), (-1, [], 1), (4, [4], 1), (4, [-1], 1), (4, [1, 1], 2), (4, [1], -1),
    (4, [1], 1.0), (True, [0], 1), (4, [True], 1), (4, "1", 1), (4, None, 1), (4.0, [1], 1)])
def test_stall_exposure_bad_arguments(args):
    """Rule: Bad input"""
    with pytest.raises(ValueError):
        m.stall_exposure(*args)


@pytest.mark.rubric("bad_input")
@pytest.mark.parametrize("request_id", [-1, True, 7.0, "7", None])
def test_handoff_bad_request(request_id):
    """Rule: Bad input"""
    with pytest.raises(ValueError):
        m.handoff(handoff_trace(), request_id)
