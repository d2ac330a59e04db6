"""Hidden tests for spec_decode's greedy verification: the traps of KATAS.md section 8.

Oracle: ``greedy_row``, a plain token-by-token model of the prompt's rules. Strategies use a
tiny alphabet so drafts match the target often, fill the padding with values that would
change the answer if read (tokens equal to the target's, EOS, ids outside any vocabulary),
and draw budgets near the number of tokens a row could emit.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from graders.impl import kata_impl
from graders.support import inputs
from tests.spec_decode.helpers import EOS, as_row, greedy_row

sd = kata_impl("spec_decode")

NO_EOS = 99          # an eos_id that never occurs: isolates verification from truncation
TOKENS = [5, 6, 7]


@st.composite
def batches(draw: Any, with_eos: bool = True, tight_budget: bool = True) -> dict[str, Any]:
    """A ragged batch and its padding, built to hit the traps."""
    K = draw(st.integers(0, 6))
    B = draw(st.integers(1, 6))
    alphabet = st.sampled_from(TOKENS + [EOS] if with_eos else TOKENS)
    padding = draw(st.sampled_from(["match", "eos", "junk"]))
    draft = np.zeros((B, K), dtype=np.int64)
    target = np.zeros((B, K + 1), dtype=np.int64)
    num = np.zeros(B, dtype=np.int64)
    remaining = np.zeros(B, dtype=np.int64)
    rows = []
    for b in range(B):
        n = draw(st.integers(0, K))
        d = draw(st.lists(alphabet, min_size=n, max_size=n))
        t = [d[i] if i < n and draw(st.sampled_from([True, True, True, False])) else draw(alphabet)
             for i in range(n + 1)]
        fill = {"match": 5, "eos": EOS, "junk": -(10**9)}[padding]
        draft[b] = fill
        target[b] = fill if padding != "junk" else 10**9
        draft[b, :n] = d
        target[b, :n + 1] = t
        num[b] = n
        remaining[b] = (draw(st.integers(1, K + 3)) if tight_budget
                        else draw(st.integers(K + 2, 1000)))
        rows.append((d, t))
    return {"draft": draft, "num": num, "target": target, "remaining": remaining,
            "rows": rows, "eos_id": EOS if with_eos else NO_EOS}


def run(batch: dict[str, Any]) -> list[dict[str, Any]]:
    out = sd.verify_greedy(batch["draft"].copy(), batch["num"].copy(), batch["target"].copy(),
                           batch["eos_id"], batch["remaining"].copy())
    assert len(out) == len(batch["rows"]), f"one dict per row: got {len(out)} dicts"
    return [as_row(r) for r in out]


def describe(batch: dict[str, Any], b: int) -> str:
    d, t = batch["rows"][b]
    return (f"row {b}: drafts={d} (num_draft={len(d)}, K={batch['draft'].shape[1]}, padded "
            f"draft row {batch['draft'][b].tolist()}), target={t} (padded "
            f"{batch['target'][b].tolist()}), eos_id={batch['eos_id']}, "
            f"remaining={int(batch['remaining'][b])}")


def check(batch: dict[str, Any], keys: tuple[str, ...]) -> None:
    out = run(batch)
    for b, (d, t) in enumerate(batch["rows"]):
        want = greedy_row(d, t, batch["eos_id"], int(batch["remaining"][b]))
        got = {k: out[b][k] for k in keys}
        exp = {k: want[k] for k in keys}
        assert got == exp, f"{describe(batch, b)}\nexpected {exp}\ngot      {got}"


def one(drafts: list[int], target: list[int], K: int | None = None, remaining: int = 100,
        eos_id: int = EOS, pad: int = -1, target_pad: int | None = None) -> dict[str, Any]:
    K = len(drafts) if K is None else K
    draft = np.full((1, K), pad, dtype=np.int64)
    tgt = np.full((1, K + 1), pad if target_pad is None else target_pad, dtype=np.int64)
    draft[0, :len(drafts)] = drafts
    tgt[0, :len(target)] = target
    [r] = sd.verify_greedy(draft, np.array([len(drafts)]), tgt, eos_id, np.array([remaining]))
    return as_row(r)


# -- greedy_accept -----------------------------------------------------------------------

@pytest.mark.rubric("greedy_accept")
@pytest.mark.parametrize("j", range(5))
def test_rejection_at_every_position(j):
    """Rules: Leading run; Emit"""
    drafts = [5, 6, 7, 5, 6]
    target = drafts[:j] + [9] + drafts[j + 1:] + [8]
    r = one(drafts, target, eos_id=NO_EOS)
    assert r["accepted"] == j and r["emitted"] == drafts[:j] + [9], (
        f"drafts={drafts} target={target}: first mismatch at {j}: expected accepted={j}, "
        f"emitted={drafts[:j] + [9]}; got {r}")


@pytest.mark.rubric("greedy_accept")
def test_matches_after_a_rejection_are_not_accepted():
    """Rule: Leading run"""
    drafts, target = [5, 6, 7, 5, 6, 7], [9, 6, 7, 5, 6, 7, 8]
    r = one(drafts, target, eos_id=NO_EOS)
    assert r["accepted"] == 0 and r["emitted"] == [9], (
        f"drafts={drafts} target={target}: mismatch at 0, five matches after it do not count: "
        f"got {r}")


@pytest.mark.rubric("greedy_accept")
def test_padding_that_matches_the_target_is_never_read():
    """Rules: Padding; Leading run"""
    # Row 0 has 1 draft of K=4; the padding of draft and target agree everywhere.
    draft = np.array([[5, 6, 6, 6], [5, 6, 7, 8]])
    target = np.array([[5, 6, 6, 6, 6], [5, 6, 7, 8, 9]])
    out = [as_row(r) for r in sd.verify_greedy(draft, np.array([1, 4]), target, NO_EOS,
                                               np.array([100, 100]))]
    assert out[0]["accepted"] == 1 and out[0]["emitted"] == [5, 6], (
        "row 0 has num_draft=1: drafts [5], target [5, 6]; the padding [6, 6, 6] must not be "
        f"read: expected accepted=1, emitted=[5, 6]; got {out[0]}")
    assert out[1]["accepted"] == 4 and out[1]["emitted"] == [5, 6, 7, 8, 9], f"row 1: {out[1]}"


@pytest.mark.rubric("greedy_accept")
def test_padding_outside_any_vocabulary_is_harmless():
    """Rule: Padding"""
    draft = np.array([[5, -1, -1], [-(2**40), -(2**40), -(2**40)]])
    target = np.array([[5, 6, 2**40, 2**40], [7, 2**40, 2**40, 2**40]])
    out = [as_row(r) for r in sd.verify_greedy(draft, np.array([1, 0]), target, EOS,
                                               np.array([5, 5]))]
    assert out[0]["emitted"] == [5, 6] and out[1]["emitted"] == [7], (
        f"padding holds ids outside any vocabulary; rows [5]->[5, 6] and []->[7]: got {out}")


@pytest.mark.rubric("greedy_accept")
def test_inputs_are_not_modified():
    draft, num, target = np.array([[5, 6, 7]]), np.array([2]), np.array([[5, 9, 7, 8]])
    rem = np.array([3])
    copies = [a.copy() for a in (draft, num, target, rem)]
    sd.verify_greedy(draft, num, target, EOS, rem)
    for a, c in zip((draft, num, target, rem), copies):
        assert np.array_equal(a, c), "verify_greedy must not modify its input arrays"


@pytest.mark.rubric("greedy_accept")
@pytest.mark.parametrize("case", ["num_draft>K", "num_draft<0", "target width", "rows"])
def test_bad_shapes_and_counts_raise_value_error(case):
    """Rule: Bad arrays"""
    draft, num, target, rem = np.array([[5, 6]]), np.array([2]), np.array([[5, 6, 7]]), np.array([4])
    if case == "num_draft>K":
        num = np.array([3])
    elif case == "num_draft<0":
        num = np.array([-1])
    elif case == "target width":
        target = np.array([[5, 6]])
    else:
        rem = np.array([4, 4])
    with pytest.raises(ValueError):
        sd.verify_greedy(draft, num, target, EOS, rem)


# -- bonus_token -------------------------------------------------------------------------

@pytest.mark.rubric("bonus_token")
def test_bonus_comes_from_the_rows_own_position_not_k():
    """Rules: Emit; Padding"""
    # Row 0: 2 of K=4 drafts, both accepted: the bonus is target[0, 2], not target[0, 4].
    draft = np.array([[5, 6, 0, 0], [5, 6, 7, 8]])
    target = np.array([[5, 6, 7, 8, 9], [5, 6, 7, 8, 9]])
    out = [as_row(r) for r in sd.verify_greedy(draft, np.array([2, 4]), target, NO_EOS,
                                               np.array([100, 100]))]
    assert out[0]["emitted"] == [5, 6, 7], (
        "row 0: drafts [5, 6] of K=4, target [5, 6, 7, ...]: the bonus is the target's token at "
        f"position num_draft=2 (7): expected [5, 6, 7]; got {out[0]['emitted']}")
    assert out[1]["emitted"] == [5, 6, 7, 8, 9], f"row 1: got {out[1]['emitted']}"


@pytest.mark.rubric("bonus_token")
@pytest.mark.parametrize("j", range(4))
def test_no_bonus_after_a_rejection_at_any_position(j):
    """Rule: Emit"""
    drafts = [5, 6, 7, 5]
    target = drafts[:j] + [9] + drafts[j + 1:] + [8]
    r = one(drafts, target, eos_id=NO_EOS)
    assert r["emitted"] == drafts[:j] + [9], (
        f"drafts={drafts} target={target}: rejected at {j}; the correction 9 ends the output, "
        f"no bonus after it: expected {drafts[:j] + [9]}; got {r['emitted']}")


@pytest.mark.rubric("bonus_token")
def test_zero_drafts_in_a_batch_with_k_zero():
    """Rule: Emit"""
    draft = np.zeros((3, 0), dtype=np.int64)
    target = np.array([[7], [8], [2]])
    out = [as_row(r) for r in sd.verify_greedy(draft, np.zeros(3, dtype=np.int64), target, EOS,
                                               np.array([5, 1, 5]))]
    assert [r["emitted"] for r in out] == [[7], [8], [2]], f"K=0: one token per row; got {out}"
    assert [r["accepted"] for r in out] == [0, 0, 0], f"got {out}"


@pytest.mark.rubric("bonus_token")
def test_zero_drafts_next_to_full_rows():
    """Rules: Emit; Padding"""
    draft = np.array([[6, 6, 6], [5, 6, 7]])
    target = np.array([[6, 6, 6, 6], [5, 6, 7, 8]])
    out = [as_row(r) for r in sd.verify_greedy(draft, np.array([0, 3]), target, NO_EOS,
                                               np.array([100, 100]))]
    assert out[0]["emitted"] == [6] and out[0]["accepted"] == 0, (
        f"row 0 has no drafts (its padding matches the target): it emits only target[0]: {out[0]}")


# -- rollback ----------------------------------------------------------------------------

@pytest.mark.rubric("rollback")
def test_rollback_uses_the_rows_count_not_k():
    """Rule: Counts"""
    draft = np.array([[5, 9, 0, 0, 0, 0], [5, 6, 7, 8, 5, 6]])
    target = np.array([[5, 6, 0, 0, 0, 0, 0], [5, 6, 7, 0, 0, 0, 0]])
    out = [as_row(r) for r in sd.verify_greedy(draft, np.array([2, 6]), target, NO_EOS,
                                               np.array([100, 100]))]
    assert (out[0]["computed"], out[0]["rollback"]) == (3, 1), (
        f"row 0: 2 drafts of K=6, 1 accepted: computed 3, rollback 1; got {out[0]}")
    assert (out[1]["computed"], out[1]["rollback"]) == (7, 3), (
        f"row 1: 6 drafts, 3 accepted: computed 7, rollback 3; got {out[1]}")


@pytest.mark.rubric("rollback")
@pytest.mark.parametrize("case", [
    # (drafts, target, remaining, rollback): the output keeps the KV of its accepted drafts
    ([5, 2, 7, 8], [5, 2, 7, 8, 9], 100, 2),     # EOS accepted at 1: drafts 7, 8 discarded
    ([5, 6, 7, 8], [5, 6, 7, 8, 9], 2, 2),       # budget 2: drafts 7, 8 cut
    ([5, 6, 7, 8], [5, 6, 7, 8, 9], 4, 0),       # budget 4: every draft emitted, bonus cut
    ([5, 6, 7, 8], [5, 6, 2, 0, 0], 100, 2),     # EOS corrects draft 7
    ([5, 6], [5, 6, 2], 100, 0),                 # EOS as the bonus
    ([], [2], 100, 0),
])
def test_rollback_of_finishing_rows(case):
    """Rule: Counts"""
    drafts, target, remaining, rollback = case
    r = one(drafts, target, remaining=remaining)
    assert r["rollback"] == rollback and r["computed"] == len(drafts) + 1, (
        f"drafts={drafts} target={target} remaining={remaining} eos_id={EOS}: the computed "
        f"positions whose tokens are not in the output are rolled back: expected rollback="
        f"{rollback}, computed={len(drafts) + 1}; got {r}")


# -- eos_and_cap -------------------------------------------------------------------------

@pytest.mark.rubric("eos_and_cap")
@pytest.mark.parametrize("case", [
    # (drafts, target, remaining, emitted, finish, accepted)
    ([2, 5, 6], [2, 5, 6, 7], 100, [2], "eos", 1),              # EOS as the first draft
    ([5, 6, 2], [5, 6, 2, 7], 100, [5, 6, 2], "eos", 3),        # EOS as the last draft
    ([5, 6, 7], [5, 6, 7, 2], 100, [5, 6, 7, 2], "eos", 3),     # EOS as the bonus
    ([5, 6, 7], [5, 2, 7, 4], 100, [5, 2], "eos", 1),           # EOS as the correction
    ([5, 2, 7], [5, 6, 7, 4], 100, [5, 6], None, 1),            # a rejected EOS draft is no EOS
    ([5, 6, 7], [5, 6, 7, 8], 1, [5], "length", 1),             # budget 1
    ([5, 6, 7], [5, 6, 7, 8], 3, [5, 6, 7], "length", 3),       # budget cuts the bonus
    ([5, 6, 7], [5, 6, 7, 8], 4, [5, 6, 7, 8], "length", 3),    # budget exactly used
    ([5, 6, 2], [5, 6, 2, 8], 3, [5, 6, 2], "eos", 3),          # EOS exactly at the budget
    ([5, 6, 7], [5, 6, 7, 2], 4, [5, 6, 7, 2], "eos", 3),       # EOS bonus at the budget
    ([5, 6, 2], [5, 6, 2, 8], 2, [5, 6], "length", 2),          # EOS past the budget
    ([5, 6, 7], [5, 9, 7, 8], 2, [5, 9], "length", 1),          # correction at the budget
    ([5, 6, 7], [5, 9, 2, 2], 100, [5, 9], None, 1),            # EOS after the correction
    ([], [2], 1, [2], "eos", 0),                                 # zero drafts, EOS and budget
])
def test_eos_and_budget_cases(case):
    """Rules: Truncate; Counts"""
    drafts, target, remaining, emitted, finish, accepted = case
    r = one(drafts, target, remaining=remaining)
    got = (r["emitted"], r["finish"], r["accepted"])
    assert got == (emitted, finish, accepted), (
        f"drafts={drafts} target={target} remaining={remaining} eos_id={EOS}: expected "
        f"emitted={emitted}, finish={finish!r}, accepted={accepted}; got {got}")


@pytest.mark.rubric("eos_and_cap")
def test_eos_in_the_targets_padding_is_ignored():
    """Rules: Truncate; Padding"""
    r = one([5, 6], [5, 9], K=4, target_pad=EOS, pad=EOS)
    assert r["emitted"] == [5, 9] and r["finish"] is None, (
        f"drafts [5, 6] of K=4, target [5, 9, pad...] with EOS in the padding: got {r}")


@pytest.mark.rubric("eos_and_cap")
@pytest.mark.parametrize("bad", [0, -3])
def test_remaining_below_one_raises(bad):
    """Rule: Bad arrays"""
    with pytest.raises(ValueError):
        sd.verify_greedy(np.array([[5]]), np.array([1]), np.array([[5, 6]]), EOS,
                         np.array([bad]))


# -- properties against the model (last: shrinking a failure takes a few seconds) -----

@pytest.mark.rubric("greedy_accept")
@given(batches(with_eos=False, tight_budget=False))
def test_accepted_and_emitted_match_a_token_by_token_model(batch):
    """Rules: Leading run; Emit; Padding"""
    check(batch, ("accepted", "emitted"))


@pytest.mark.rubric("bonus_token")
@given(batches(with_eos=False, tight_budget=False))
def test_the_targets_own_token_ends_every_row(batch):
    """Rule: Emit"""
    out = run(batch)
    for b, (d, t) in enumerate(batch["rows"]):
        want = greedy_row(d, t, NO_EOS, 10**6)
        got = out[b]["emitted"]
        assert len(got) == want["accepted"] + 1 and got[-1:] == want["emitted"][-1:], (
            f"{describe(batch, b)}\nexpected {want['emitted']} (the accepted drafts, then the "
            f"target's token at position {want['accepted']}); got {got}")


@pytest.mark.rubric("rollback")
@given(batches())
def test_computed_and_rollback_match_the_model(batch):
    """Rule: Counts"""
    check(batch, ("computed", "rollback"))


@pytest.mark.rubric("rollback")
@given(batches())
def test_counts_add_up(batch):
    for b, r in enumerate(run(batch)):
        n = len(batch["rows"][b][0])
        assert r["computed"] == n + 1 and r["accepted"] + r["rollback"] == n, (
            f"{describe(batch, b)}: computed must be num_draft + 1 = {n + 1} and kept drafts + "
            f"rollback = num_draft; got {r}")


@pytest.mark.rubric("eos_and_cap")
@given(batches())
def test_truncation_and_finish_match_the_model(batch):
    """Rules: Truncate; Counts"""
    check(batch, ("emitted", "finish", "accepted"))


@pytest.mark.rubric("greedy_accept")
def test_inputs_are_not_modified_where_the_implementation_runs():
    # The arrays reach the implementation read-only in both modes: a write raises there.
    args = (np.array([[5, 6, 7], [1, 2, 3]]), np.array([2, 3]), np.array([[5, 9, 7, 8], [1, 2, 3, 4]]),
            EOS, np.array([3, 2]))
    inputs.leaves_inputs_alone(sd.verify_greedy, *args, what="verify_greedy")
