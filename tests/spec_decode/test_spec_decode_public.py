"""Public tests for spec_decode: the prompt's examples and the basic behaviours.

Run: nox -s kata -- spec_decode
"""

import numpy as np
import pytest

from graders.impl import kata_impl
from tests.spec_decode.helpers import EOS, as_row, greedy_row, pack, snapshot

sd = kata_impl("spec_decode")


DEFAULT_REMAINING = 100   # a budget no example reaches


def budgets(rows, remaining=None):
    """Each row's remaining budget as the test passes it: ``remaining`` or the default."""
    return [DEFAULT_REMAINING] * len(rows) if remaining is None else list(remaining)


def greedy(rows, K, remaining=None, eos_id=EOS, pad=-1):
    draft, num, target = pack(rows, K, pad=pad)
    rem = np.asarray(budgets(rows, remaining))
    out = sd.verify_greedy(draft, num, target, eos_id, rem)
    assert len(out) == len(rows), f"one dict per row expected: got {len(out)} for {len(rows)}"
    return [as_row(r) for r in out]


def show(rows, remaining=None):
    """The inputs as the test passed them (the default budget included, never None)."""
    return f"rows (drafts, target) = {rows}, remaining = {budgets(rows, remaining)}, eos_id = {EOS}"


# -- the prompt's examples -------------------------------------------------------------

@pytest.mark.rubric("greedy_accept")
def test_prompt_example_rejection():
    """Rules: Leading run; Emit"""
    rows = [([5, 6, 7], [5, 6, 9, 4])]
    [r] = greedy(rows, 3)
    assert r["accepted"] == 2 and r["emitted"] == [5, 6, 9], (
        f"{show(rows)}: expected 2 accepted, emitted [5, 6, 9] (9 corrects the rejected 7); got {r}")


@pytest.mark.rubric("bonus_token")
def test_prompt_example_full_acceptance_gets_the_bonus():
    """Rule: Emit"""
    rows = [([5, 6, 7], [5, 6, 7, 4])]
    [r] = greedy(rows, 3)
    assert r["accepted"] == 3 and r["emitted"] == [5, 6, 7, 4], (
        f"{show(rows)}: all drafts accepted, then the bonus token 4; got {r}")


@pytest.mark.rubric("rollback")
def test_prompt_example_rollback():
    """Rule: Counts"""
    rows = [([5, 6, 7], [5, 6, 9, 4]), ([5, 6, 7], [5, 6, 7, 4])]
    r1, r2 = greedy(rows, 3)
    assert (r1["computed"], r1["rollback"]) == (4, 1), (
        f"{show(rows[:1])}: the pass computed 4 positions, the KV of the rejected draft 7 goes: "
        f"expected computed=4, rollback=1; got {r1}")
    assert (r2["computed"], r2["rollback"]) == (4, 0), (
        f"{show(rows[1:])}: nothing rejected: expected computed=4, rollback=0; got {r2}")


@pytest.mark.rubric("eos_and_cap")
def test_prompt_example_eos_inside_the_drafts():
    """Rules: Truncate; Counts"""
    rows = [([5, 2, 7], [5, 2, 7, 4])]
    [r] = greedy(rows, 3)
    assert r == {"accepted": 2, "emitted": [5, 2], "finish": "eos", "computed": 4,
                 "rollback": 1}, f"{show(rows)}: output ends at the EOS; got {r}"


# -- basic behaviours ------------------------------------------------------------------

@pytest.mark.rubric("greedy_accept")
def test_a_match_after_the_first_mismatch_does_not_count():
    """Rule: Leading run"""
    rows = [([5, 6, 7, 8], [5, 9, 7, 8, 1])]
    [r] = greedy(rows, 4)
    assert r["accepted"] == 1 and r["emitted"] == [5, 9], (
        f"{show(rows)}: only the leading run of matches is accepted; got {r}")


@pytest.mark.rubric("greedy_accept")
def test_ragged_rows_each_use_their_own_count():
    """Rules: Leading run; Padding"""
    rows = [([5, 6], [5, 6, 8]), ([], [9]), ([5, 6, 7, 8], [5, 6, 7, 8, 3])]
    out = greedy(rows, 4)
    for (d, t), r in zip(rows, out):
        want = greedy_row(d, t, EOS, DEFAULT_REMAINING)
        assert r == want, f"row drafts={d} target={t}: expected {want}, got {r}"


@pytest.mark.rubric("bonus_token")
def test_zero_drafts_emit_one_token():
    """Rule: Emit"""
    rows = [([], [7])]
    [r] = greedy(rows, 3)
    assert r["emitted"] == [7] and r["accepted"] == 0, (
        f"{show(rows)}: no drafts: the target's token at position 0 is emitted; got {r}")


@pytest.mark.rubric("bonus_token")
def test_no_bonus_after_a_rejection():
    """Rule: Emit"""
    rows = [([5, 6], [9, 6, 4])]
    [r] = greedy(rows, 2)
    assert r["emitted"] == [9], f"{show(rows)}: rejected at 0: emit only the correction 9; got {r}"


@pytest.mark.rubric("rollback")
def test_rollback_of_a_continuing_row_is_the_rejected_drafts():
    """Rule: Counts"""
    rows = [([5, 6, 7, 8], [5, 9, 0, 0, 0])]
    [r] = greedy(rows, 4)
    assert r["rollback"] == 3 and r["computed"] == 5, (
        f"{show(rows)}: 1 draft accepted of 4: 3 positions of KV to discard; got {r}")


@pytest.mark.rubric("eos_and_cap")
def test_budget_cuts_the_output_and_finishes_with_length():
    """Rule: Truncate"""
    rows = [([5, 6, 7], [5, 6, 7, 8])]
    [r] = greedy(rows, 3, remaining=[2])
    assert r["emitted"] == [5, 6] and r["finish"] == "length" and r["accepted"] == 2, (
        f"{show(rows, [2])}: only 2 tokens fit; got {r}")


@pytest.mark.rubric("eos_and_cap")
def test_eos_as_the_bonus_token():
    """Rule: Truncate"""
    rows = [([5, 6], [5, 6, 2])]
    [r] = greedy(rows, 2)
    assert r["emitted"] == [5, 6, 2] and r["finish"] == "eos", f"{show(rows)}: got {r}"


@pytest.mark.rubric("eos_and_cap")
def test_a_row_that_continues_has_no_finish():
    """Rule: Truncate"""
    rows = [([5, 6], [5, 7, 8])]
    [r] = greedy(rows, 2, remaining=[10])
    assert r["finish"] is None, f"{show(rows, [10])}: the request continues; got {r}"


@pytest.mark.rubric("sampled_distribution")
def test_sampled_accept_rule_and_bonus():
    """Rules: Accept or reject; Residual or bonus; Result"""
    # V = 3; one row, two drafts: token 1 then token 0.
    q = np.array([[[0.0, 1.0, 0.0], [0.5, 0.5, 0.0]]])
    p = np.array([[[0.25, 0.5, 0.25], [0.5, 0.25, 0.25], [0.0, 0.0, 1.0]]])
    draft, num = np.array([[1, 0]]), np.array([2])
    # u * q(d) < p(d): 0.4 * 1.0 < 0.5 accepts, 0.9 * 0.5 < 0.5 accepts; bonus from p[2] -> 2.
    out = sd.verify_sampled(draft, num, q, p, np.array([[0.4, 0.9]]), np.array([0.3]))
    accepted, emitted = out[0]
    assert (int(accepted), [int(t) for t in emitted]) == (2, [1, 0, 2]), (
        f"both drafts pass u * q(d) < p(d), the bonus comes from p at position 2: got {out[0]}")


@pytest.mark.rubric("sampled_distribution")
def test_sampled_rejection_draws_from_the_residual():
    """Rules: Residual or bonus; Draw"""
    q = np.array([[[0.0, 1.0, 0.0]]])
    p = np.array([[[0.25, 0.5, 0.25], [1.0, 0.0, 0.0]]])
    # 0.6 * 1.0 >= 0.5: rejected. Residual max(p - q, 0) = [0.25, 0, 0.25]; u = 0.7 -> token 2.
    out = sd.verify_sampled(np.array([[1]]), np.array([1]), q, p,
                            np.array([[0.6]]), np.array([0.7]))
    accepted, emitted = out[0]
    assert (int(accepted), [int(t) for t in emitted]) == (0, [2]), (
        f"rejected at 0; residual [0.25, 0, 0.25] with u=0.7 draws token 2: got {out[0]}")


@pytest.mark.rubric("metrics")
def test_report_of_one_window():
    """Rules: Windows; Acceptance rate; Mean acceptance length; Per position; Step bounds"""
    s0 = snapshot(10.0)
    s1 = snapshot(20.0, drafts=4, draft_tokens=12, accepted=6, per_pos=[3, 2, 1], emitted=10,
                  finished=0)
    [w] = sd.acceptance_report([s0, s1])
    assert w["valid"] is True and (w["start"], w["end"]) == (10.0, 20.0), f"got {w}"
    assert w["acceptance_rate"] == pytest.approx(0.5), f"6 accepted / 12 draft tokens: got {w}"
    assert w["mean_acceptance_length"] == pytest.approx(2.5), f"1 + 6 / 4 drafts: got {w}"
    assert w["per_position"] == pytest.approx([0.75, 0.5, 0.25]), f"[3, 2, 1] / 4: got {w}"
    assert tuple(w["steps"]) == (4, 4), f"10 emitted - 6 accepted, nobody finished: got {w}"


@pytest.mark.rubric("metrics")
def test_idle_window_has_no_rates():
    """Rule: Idle windows"""
    s0 = snapshot(1.0, 4, 12, 6, [3, 2, 1], 10, 0)
    s1 = snapshot(2.0, 4, 12, 6, [3, 2, 1], 10, 0)
    [w] = sd.acceptance_report([s0, s1])
    assert w["valid"] is True and w["acceptance_rate"] is None and \
        w["mean_acceptance_length"] is None and w["per_position"] is None, (
            f"no drafts in the window: no rates (and no division by zero); got {w}")


@pytest.mark.rubric("counter_resets")
def test_window_across_a_restart_is_rejected():
    """Rule: Restarts"""
    s0 = snapshot(1.0, 40, 120, 60, [30, 20, 10], 100, 5)
    s1 = snapshot(2.0, 2, 6, 3, [2, 1, 0], 5, 0)
    s2 = snapshot(3.0, 6, 18, 9, [5, 3, 1], 15, 1)
    w1, w2 = sd.acceptance_report([s0, s1, s2])
    assert w1["valid"] is False and w1["acceptance_rate"] is None and w1["steps"] is None, (
        f"counters went down between t=1 and t=2: a restart; the window must be rejected: {w1}")
    assert w2["valid"] is True and w2["acceptance_rate"] == pytest.approx(6 / 12), (
        f"the window after the restart is fine: 6 accepted / 12 draft tokens; got {w2}")
