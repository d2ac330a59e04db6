"""Hidden tests for spec_decode's acceptance_report.

Oracle: ``Engine``, a simulated engine (greedy speculative steps with EOS and budgets, idle
stretches without drafts, restarts) that knows the true number of verification steps and
where the restarts happened. Hand-made series hit the exact corner cases: a restart in the
first window, restarts that only some counters reveal, back-to-back restarts.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graders.impl import kata_impl
from tests.spec_decode.helpers import COUNTER_KEYS, Engine, snapshot

sd = kata_impl("spec_decode")

METRICS = ("acceptance_rate", "mean_acceptance_length", "per_position", "steps")
OPS = st.lists(st.sampled_from(["step", "step", "step", "idle", "snap", "snap", "restart"]),
               min_size=2, max_size=30)


@st.composite
def series(draw: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Snapshots of a simulated engine and the truth for each window."""
    engine = Engine(K=draw(st.integers(1, 5)), num_requests=draw(st.integers(1, 4)),
                    seed=draw(st.integers(0, 2**32 - 1)))
    for _ in range(draw(st.integers(0, 3))):          # the process ran before the first look
        engine.step()
    snaps, truths = [engine.snapshot()[0]], []
    for op in draw(OPS) + ["snap"]:
        if op == "step":
            engine.step()
        elif op == "idle":
            engine.step(zero_drafts=True)
        elif op == "restart":
            engine.restart()
        else:
            snap, truth = engine.snapshot()
            snaps.append(snap)
            truths.append(truth)
    return snaps, truths


def deltas(a: dict[str, Any], b: dict[str, Any]) -> tuple[dict[str, int], list[int]]:
    return ({k: b[k] - a[k] for k in COUNTER_KEYS},
            [y - x for x, y in zip(a["accepted_per_pos"], b["accepted_per_pos"])])


def report(snaps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = sd.acceptance_report([dict(s, accepted_per_pos=list(s["accepted_per_pos"]))
                                for s in snaps])
    assert isinstance(out, list) and len(out) == max(len(snaps) - 1, 0), (
        f"one dict per window: {len(snaps)} snapshots give {max(len(snaps) - 1, 0)} windows, "
        f"got {len(out) if isinstance(out, list) else out!r}")
    return out


def short(s: dict[str, Any]) -> str:
    return ("{" + ", ".join(f"{k}: {s[k]}" for k in ("time",) + COUNTER_KEYS) +
            f", accepted_per_pos: {s['accepted_per_pos']}" + "}")


def window_text(snaps: list[dict[str, Any]], i: int) -> str:
    return f"window {i}: from {short(snaps[i])}\n            to {short(snaps[i + 1])}"


def steps_of(w: dict[str, Any]) -> tuple[int, int] | None:
    return None if w["steps"] is None else (int(w["steps"][0]), int(w["steps"][1]))


def approx_equal(got: Any, want: float) -> bool:
    return got is not None and math.isclose(float(got), want, rel_tol=1e-9, abs_tol=1e-12)


# -- counter_resets ----------------------------------------------------------------------

@pytest.mark.rubric("counter_resets")
def test_restart_in_the_first_window():
    """Rule: Restarts"""
    s0 = snapshot(5.0, 50, 150, 90, [40, 30, 20], 200, 7)
    s1 = snapshot(9.0, 3, 9, 5, [3, 1, 1], 12, 0)
    s2 = snapshot(12.0, 7, 19, 9, [6, 2, 1], 25, 1)
    w0, w1 = report([s0, s1, s2])
    assert w0["valid"] is False and all(w0[k] is None for k in METRICS), (
        f"the first window spans a restart (every counter fell): reject it; got {w0}")
    assert w1["valid"] is True and approx_equal(w1["acceptance_rate"], 4 / 10), (
        f"the second window is after the restart: 4 accepted / 10 draft tokens; got {w1}")
    assert steps_of(w1) == (9, 10), f"13 emitted - 4 accepted, 1 finished: (9, 10); got {w1}"


@pytest.mark.rubric("counter_resets")
@pytest.mark.parametrize("key", list(COUNTER_KEYS) + ["accepted_per_pos"])
def test_a_restart_that_only_one_counter_reveals(key):
    """Rule: Restarts"""
    # After the restart, busy traffic pushed every counter above its old value but one.
    s0 = snapshot(1.0, 10, 30, 15, [8, 5, 2], 25, 3)
    big = snapshot(2.0, 100, 300, 150, [80, 50, 20], 250, 30)
    if key == "accepted_per_pos":
        big["accepted_per_pos"] = [80, 50, 1]
    else:
        big[key] = s0[key] - 1
    [w] = report([s0, big])
    assert w["valid"] is False and all(w[k] is None for k in METRICS), (
        f"{key} fell from {s0[key]} to {big[key]} while the others grew: any counter that "
        f"decreases means a restart; the window must be rejected; got {w}")


@pytest.mark.rubric("counter_resets")
def test_back_to_back_restarts():
    s = [snapshot(1.0, 20, 60, 30, [15, 10, 5], 50, 2),
         snapshot(2.0, 5, 15, 8, [4, 3, 1], 13, 0),
         snapshot(3.0, 1, 3, 1, [1, 0, 0], 2, 0),
         snapshot(4.0, 4, 12, 7, [4, 2, 1], 11, 1)]
    out = report(s)
    assert [w["valid"] for w in out] == [False, False, True], (
        f"restarts inside windows 0 and 1, window 2 is clean: got {[w['valid'] for w in out]}")
    assert approx_equal(out[2]["acceptance_rate"], 6 / 9), f"got {out[2]}"


@pytest.mark.rubric("counter_resets")
def test_restart_to_all_zero_counters():
    """Rule: Restarts"""
    s0 = snapshot(1.0, 2, 6, 3, [2, 1, 0], 5, 0)
    s1 = snapshot(2.0)
    [w] = report([s0, s1])
    assert w["valid"] is False and w["steps"] is None, (
        f"counters back to zero: a restart, not an idle window; got {w}")


@pytest.mark.rubric("counter_resets")
@pytest.mark.parametrize("case", ["time equal", "time back", "missing key", "missing time",
                                  "missing accepted_per_pos", "negative", "negative per_pos",
                                  "per_pos lengths"])
def test_bad_snapshots_raise_value_error(case):
    """Rule: Bad snapshots"""
    s0 = snapshot(1.0, 2, 6, 3, [2, 1, 0], 5, 0)
    s1 = snapshot(2.0, 4, 12, 7, [4, 2, 1], 11, 1)
    if case == "time equal":
        s1["time"] = 1.0
    elif case == "time back":
        s1["time"] = 0.5
    elif case == "missing key":
        del s1["finished"]
    elif case == "missing time":
        del s1["time"]
    elif case == "missing accepted_per_pos":
        del s0["accepted_per_pos"]
    elif case == "negative":
        s1["emitted"] = -1
    elif case == "negative per_pos":
        s1["accepted_per_pos"] = [4, -1, 1]
    else:
        s1["accepted_per_pos"] = [4, 2]
    with pytest.raises(ValueError):
        sd.acceptance_report([s0, s1])


@pytest.mark.rubric("counter_resets")
@pytest.mark.parametrize("case", ["missing key", "negative", "no time"])
def test_a_single_bad_snapshot_still_raises(case):
    """Every snapshot is checked, even when there are too few for a window.

    Rules: Bad snapshots; Short series
    """
    s = snapshot(1.0, 2, 6, 3, [2, 1, 0], 5, 0)
    if case == "missing key":
        del s["accepted"]
    elif case == "negative":
        s["accepted_per_pos"] = [2, -1, 0]
    else:
        del s["time"]
    with pytest.raises(ValueError):
        sd.acceptance_report([s])


@pytest.mark.rubric("counter_resets")
@given(series())
def test_windows_across_restarts_are_rejected_and_nothing_is_negative(data):
    """Rule: Restarts"""
    snaps, truths = data
    out = report(snaps)
    for i, (w, truth) in enumerate(zip(out, truths)):
        d, per_pos = deltas(snaps[i], snaps[i + 1])
        decreased = min(d.values()) < 0 or min(per_pos, default=0) < 0
        where = window_text(snaps, i)
        assert w["valid"] is (not decreased), (
            f"{where}\n{'a counter decreased: a restart, valid must be False' if decreased else 'no counter decreased: valid must be True'}; got {w}")
        if decreased:
            assert all(w[k] is None for k in METRICS), (
                f"{where}\na rejected window reports no metric (all None); got {w}")
        elif truth["restarts"] == 0:        # an undetectable restart may leave odd deltas
            for k in ("acceptance_rate", "mean_acceptance_length"):
                assert w[k] is None or 0 <= w[k] <= 1 + len(snaps[0]["accepted_per_pos"]), (
                    f"{where}\n{k} out of range: {w}")
            lo, hi = steps_of(w) or (0, 0)
            assert 0 <= lo <= hi, f"{where}\nsteps must be 0 <= low <= high: {w}"
        if truth["restarts"] == 0:
            assert w["valid"] is True, f"{where}\nno restart in this window; got {w}"


# -- metrics -----------------------------------------------------------------------------

@pytest.mark.rubric("metrics")
def test_rate_is_per_draft_token_and_length_per_draft():
    """Rules: Acceptance rate; Mean acceptance length; Per position"""
    s0 = snapshot(0.0, per_pos=[0, 0, 0, 0])
    s1 = snapshot(1.0, drafts=2, draft_tokens=8, accepted=4, per_pos=[2, 1, 1, 0],
                  emitted=7, finished=0)       # 2 draft steps (4 + 2 tokens), 1 without drafts
    [w] = report([s0, s1])
    assert approx_equal(w["acceptance_rate"], 0.5), (
        f"4 accepted of 8 draft tokens: 0.5 (not 4 / 2 drafts); got {w}")
    assert approx_equal(w["mean_acceptance_length"], 3.0), (
        f"1 + 4 / 2 drafts = 3 (not 7 emitted / 2 drafts: a step without drafts emitted one); "
        f"got {w}")
    assert [float(x) for x in w["per_position"]] == [1.0, 0.5, 0.5, 0.0], (
        f"per position: [2, 1, 1, 0] / 2 drafts (not / 8 draft tokens); got {w}")


@pytest.mark.rubric("metrics")
def test_zero_draft_window_still_has_steps():
    """Rules: Idle windows; Step bounds"""
    s0 = snapshot(0.0, 4, 12, 6, [3, 2, 1], 10, 0)
    s1 = snapshot(1.0, 4, 12, 6, [3, 2, 1], 17, 2)
    [w] = report([s0, s1])
    assert w["valid"] is True and all(w[k] is None for k in METRICS[:3]), (
        f"no drafts: no rates; got {w}")
    assert steps_of(w) == (7, 7), (
        f"7 tokens emitted without drafts, 0 accepted, 2 finished: no step emitted an accepted "
        f"draft, so none can hide: steps (7, 7); got {w}")


@pytest.mark.rubric("metrics")
def test_steps_bounds_account_for_finished_requests():
    """Rule: Step bounds"""
    # 3 steps: [5, 6, 7 | bonus 8] continuing, then a request whose last step accepted 3 drafts
    # but stopped at an EOS draft (emits 2: both accepted drafts), then one that ends with
    # EOS as the correction (emits 1 accepted + EOS).
    s0 = snapshot(0.0)
    s1 = snapshot(1.0, drafts=3, draft_tokens=9, accepted=3 + 2 + 1, per_pos=[3, 2, 1],
                  emitted=4 + 2 + 2, finished=2)
    [w] = report([s0, s1])
    assert steps_of(w) == (2, 4), (
        f"8 emitted - 6 accepted = 2, up to one more step per finished request (2): (2, 4); "
        f"the true count here is 3; got {w['steps']}")


@pytest.mark.rubric("metrics")
@pytest.mark.parametrize(("finished", "reached0", "want_high"), [
    (5, 1, 4 + 1), (5, 0, 4), (2, 3, 4 + 2), (0, 3, 4), (3, 3, 4 + 3)])
def test_hidden_steps_need_an_accepted_draft(finished, reached0, want_high):
    """The prompt: a step hides only if it is a finishing request's last step and emitted
    accepted drafts but no target token, so high = low + min(Δfinished,
    Δaccepted_per_pos[0]).

    Rule: Step bounds
    """
    s0 = snapshot(0.0, per_pos=[0, 0])
    s1 = snapshot(1.0, drafts=max(reached0, 1), draft_tokens=2 * max(reached0, 1),
                  accepted=reached0, per_pos=[reached0, 0], emitted=4 + reached0,
                  finished=finished)
    [w] = report([s0, s1])
    assert steps_of(w) == (4, want_high), (
        f"{4 + reached0} emitted - {reached0} accepted = 4; {finished} finished, "
        f"{reached0} steps emitted an accepted draft: at most min({finished}, {reached0}) "
        f"steps hide, so steps = (4, {want_high}); got {w['steps']}")


@pytest.mark.rubric("metrics")
def test_k_zero_has_no_hidden_steps():
    """With K = 0 (empty accepted_per_pos) no step emits an accepted draft: none hides, so
    high = low even when requests finished.

    Rules: Step bounds; Idle windows
    """
    s0 = snapshot(0.0, per_pos=[], emitted=3, finished=1)
    s1 = snapshot(2.0, per_pos=[], emitted=10, finished=4)
    [w] = report([s0, s1])
    assert w["valid"] is True and all(w[k] is None for k in METRICS[:3]), (
        f"K = 0: a valid window without drafts, so no rates; got {w}")
    assert steps_of(w) == (7, 7), (
        f"K = 0: 7 tokens emitted, none accepted, 3 finished but no step can hide: steps "
        f"(7, 7); got {w['steps']}")


@pytest.mark.rubric("metrics")
@pytest.mark.parametrize("n", [0, 1])
def test_fewer_than_two_snapshots_give_an_empty_report(n):
    """Rule: Short series"""
    assert report([snapshot(1.0)] * n) == []


@pytest.mark.rubric("metrics")
@given(series())
def test_metrics_match_the_simulated_engine(data):
    """Rules: Windows; Acceptance rate; Mean acceptance length; Per position; Step bounds; Idle windows"""
    snaps, truths = data
    out = report(snaps)
    for i, (w, truth) in enumerate(zip(out, truths)):
        if w["valid"] is not True or truth["restarts"]:
            continue            # an undetected restart leaves deltas no engine could produce
        d, per_pos = deltas(snaps[i], snaps[i + 1])
        where = window_text(snaps, i)
        assert (float(w["start"]), float(w["end"])) == (snaps[i]["time"], snaps[i + 1]["time"]), (
            f"{where}\nstart and end are the two snapshot times; got {w}")
        low = d["emitted"] - d["accepted"]
        high = low + min(d["finished"], per_pos[0] if per_pos else 0)
        assert steps_of(w) == (low, high), (
            f"{where}\nevery step emits its accepted drafts + 1 token except a finished "
            f"request's last step, which may emit only accepted drafts (so it emitted one): "
            f"steps = ({low}, {high}); got {w['steps']}")
        assert low <= truth["steps"] <= high, (
            f"{where}\nthe engine ran {truth['steps']} steps: outside the bounds {w['steps']}")
        if d["drafts"] == 0:
            assert all(w[k] is None for k in METRICS[:3]), (
                f"{where}\nno drafts in the window: the three rates are None; got {w}")
            continue
        want_rate = d["accepted"] / d["draft_tokens"]
        want_len = 1 + d["accepted"] / d["drafts"]
        want_pos = [n / d["drafts"] for n in per_pos]
        assert approx_equal(w["acceptance_rate"], want_rate), (
            f"{where}\nacceptance rate = {d['accepted']} accepted / {d['draft_tokens']} draft "
            f"tokens = {want_rate}; got {w['acceptance_rate']}")
        assert approx_equal(w["mean_acceptance_length"], want_len), (
            f"{where}\nmean acceptance length = 1 + {d['accepted']} / {d['drafts']} drafts = "
            f"{want_len}; got {w['mean_acceptance_length']}")
        got_pos = w["per_position"]
        assert got_pos is not None and len(got_pos) == len(want_pos) and all(
            approx_equal(g, x) for g, x in zip(got_pos, want_pos)), (
            f"{where}\nper-position rates = accepted at i / {d['drafts']} drafts = {want_pos}; "
            f"got {got_pos}")
        assert all(a >= b for a, b in zip(got_pos, got_pos[1:])), (
            f"{where}\nper-position rates must not increase with i: {got_pos}")
