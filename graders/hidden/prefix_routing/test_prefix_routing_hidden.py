"""Hidden tests for prefix_routing: the traps of each rule as fixed cases, the boundary check
against a brute force over block hashes, and whole replays through the trusted replica
simulator compared with the log-based model (graders/hidden/prefix_routing/model.py).
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graders.hidden.prefix_routing.model import ModelRouter
from graders.impl import kata_impl
from graders.support.prefix_routing import block_hashes
from tests.prefix_routing.helpers import Request, replay, show

m = kata_impl("prefix_routing")

S = [1, 2, 3, 4, 5, 6, 7, 8]
HS = block_hashes(S, 4)


# == view ===========================================================================
@pytest.mark.rubric("view")
def test_the_capped_last_block_still_joins_the_view():
    """Rules: The view; Matched blocks"""
    r = m.Router(2, 4, "round_robin")
    r.route("a", S, 0)                  # 2 full blocks, the second capped away from the hit
    assert r.matched_blocks(0, S) == 1
    assert r.matched_blocks(0, S + [0]) == 2, (
        "a prompt that is exactly 2 blocks still sends both blocks to the replica")


@pytest.mark.rubric("view")
def test_short_prompts_and_partial_blocks():
    """Rules: Blocks; Matched blocks"""
    r = m.Router(1, 4, "round_robin")
    r.route("a", [1, 2, 3], 0)
    assert r.matched_blocks(0, [1, 2, 3, 4, 5]) == 0, "a partial block is never cached"
    r.route("b", [1, 2, 3, 4, 5], 1)
    assert r.matched_blocks(0, [1, 2, 3, 4]) == 0, "capped at (4 - 1) // 4 = 0"
    assert r.matched_blocks(0, [1, 2, 3, 4, 0]) == 1
    assert r.matched_blocks(0, [7]) == 0


@pytest.mark.rubric("view")
def test_matched_blocks_asks_without_changing_the_view():
    """Rules: The view; Matched blocks"""
    r = m.Router(2, 2, "affinity", load_cap=100)
    r.matched_blocks(1, [5, 5, 5, 5, 5])
    assert r.matched_blocks(1, [5, 5, 5, 5, 5]) == 0
    assert r.route("a", [5, 5, 5, 5, 5], 0) == 0, "nothing was cached on replica 1"


@pytest.mark.rubric("view")
def test_blocks_are_chained_not_matched_alone():
    """Rules: Blocks; Matched blocks"""
    r = m.Router(1, 2, "round_robin")
    r.route("a", [1, 2, 3, 4, 5, 6, 0], 0)
    assert r.matched_blocks(0, [9, 9, 3, 4, 5, 6, 0]) == 0
    assert r.matched_blocks(0, [1, 2, 9, 9, 5, 6, 0]) == 1
    assert r.matched_blocks(0, [1, 2, 3, 4, 5, 6, 9]) == 3


# == late notices ===================================================================
@pytest.mark.rubric("late_notices")
def test_a_stale_notice_keeps_blocks_another_request_sent_again():
    """Rule: Eviction notices"""
    r = m.Router(1, 4, "round_robin")
    r.route("a", S + [9], 0)
    r.route("b", S[:4] + [0, 0, 0, 0, 1], 4)   # sends block 0 of S again at 4, not block 1
    r.on_eviction(0, HS[::-1], 2)
    assert r.matched_blocks(0, S + [9]) == 1, (
        "block 0 was sent again at 4 > 2 and stays; block 1 was last sent at 0 and goes")


@pytest.mark.rubric("late_notices")
def test_a_notice_at_the_time_of_the_last_send_removes():
    """Rule: Eviction notices"""
    r = m.Router(1, 4, "round_robin")
    r.route("a", S + [9], 3)
    r.on_eviction(0, [HS[0]], 3)
    assert r.matched_blocks(0, S + [9]) == 0, (
        "evicted at 3, last sent at 3: 'later than evicted_at' is false, the block goes")


@pytest.mark.rubric("late_notices")
def test_notices_are_per_replica():
    """Rule: Eviction notices"""
    r = m.Router(2, 4, "round_robin")
    r.route("a", S + [9], 0)
    r.route("b", S + [9, 9], 1)
    r.on_eviction(1, HS, 5)
    assert r.matched_blocks(0, S + [1]) == 2 and r.matched_blocks(1, S + [1]) == 0
    r2 = m.Router(2, 4, "round_robin")
    r2.route("a", S + [9], 0)
    r2.route("b", S + [9], 5)
    r2.on_eviction(0, HS, 3)
    assert r2.matched_blocks(0, S + [1]) == 0, (
        "S was last sent to replica 0 at 0 <= 3: it goes there, whatever was sent to 1 at 5")
    assert r2.matched_blocks(1, S + [1]) == 2


@pytest.mark.rubric("late_notices")
def test_a_notice_older_than_every_send_removes_nothing():
    """Rule: Eviction notices"""
    r = m.Router(1, 4, "round_robin")
    r.route("a", S + [9], 10)
    r.on_eviction(0, HS, 2)         # an eviction of an earlier copy, delivered very late
    assert r.matched_blocks(0, S + [9]) == 2
    r.on_eviction(0, [b"\x00" * 32, b"", b"x", HS[1]], 12)
    assert r.matched_blocks(0, S + [9]) == 1, (
        "unknown hashes (of any length) are ignored, known ones go")


@pytest.mark.rubric("late_notices")
def test_a_block_sent_again_after_its_notice_is_back():
    """Rules: Eviction notices; The view"""
    r = m.Router(1, 4, "round_robin")
    r.route("a", S + [9], 0)
    r.on_eviction(0, HS, 1)
    r.route("b", S + [9, 9], 2)
    assert r.matched_blocks(0, S + [1]) == 2
    r.on_eviction(0, HS, 1)          # the same notice delivered twice
    assert r.matched_blocks(0, S + [1]) == 2


# == load estimate ==================================================================
@pytest.mark.rubric("load_estimate")
def test_the_reservation_is_the_uncached_part_seen_before_the_route():
    """Rule: Reservations"""
    r = m.Router(1, 4, "round_robin")
    r.route("a", S + [9], 0)
    assert r.estimated_load(0) == 9
    r.route("b", S + [1, 2, 3], 1)
    assert r.estimated_load(0) == 9 + 3, "b hits S's 2 blocks: it reserves 3 tokens"
    r.route("c", [5, 5, 5, 5, 5, 5, 5, 5], 2)
    assert r.estimated_load(0) == 12 + 8, (
        "c's own blocks do not count as hits: it reserves all 8 tokens")
    r.route("d", [5, 5, 5, 5, 5, 5, 5, 5], 3)
    assert r.estimated_load(0) == 20 + 4, (
        "d's 2 blocks are both in the view, but its match is capped at (8 - 1) // 4 = 1: "
        "it reserves 8 - 4 = 4 tokens")


@pytest.mark.rubric("load_estimate")
def test_a_report_replaces_the_previous_one():
    """Rule: Load reports"""
    r = m.Router(1, 4, "round_robin")
    for i, toks in enumerate([[1] * 5, [2] * 6, [3] * 7]):
        r.route(f"q{i}", toks, i)
    r.on_report(0, 4, "q1")
    assert r.estimated_load(0) == 4 + 7
    r.on_report(0, 10, "q0")          # an older report: replaces, so q1 counts again
    assert r.estimated_load(0) == 10 + 6 + 7
    r.on_report(0, 1, None)
    assert r.estimated_load(0) == 1 + 5 + 6 + 7
    r.on_report(0, 0, "q2")
    assert r.estimated_load(0) == 0


@pytest.mark.rubric("load_estimate")
def test_reports_and_reservations_are_per_replica():
    """Rules: Reservations; Load reports"""
    r = m.Router(2, 4, "round_robin")
    r.route("a", [1] * 5, 0)   # replica 0
    r.route("b", [2] * 6, 1)   # replica 1
    r.route("c", [3] * 7, 2)   # replica 0
    r.on_report(1, 3, "b")
    assert (r.estimated_load(0), r.estimated_load(1)) == (12, 3)
    r.on_report(0, 2, "a")
    assert (r.estimated_load(0), r.estimated_load(1)) == (9, 3)
    with pytest.raises(KeyError):
        r.on_report(1, 0, "c")
    assert r.estimated_load(1) == 3


@pytest.mark.rubric("load_estimate")
def test_time_alone_changes_no_estimate():
    """Rule: Load reports"""
    r = m.Router(2, 4, "round_robin")
    r.route("a", [1] * 5, 0)
    r.route("b", [1] * 5 + [2], 1000)
    assert (r.estimated_load(0), r.estimated_load(1)) == (5, 6), (
        "no report came: 1000 time units later the reservations still stand")


# == round robin ====================================================================
@pytest.mark.rubric("round_robin")
def test_round_robin_ignores_load_and_cache():
    """Rule: Round robin"""
    r = m.Router(2, 4, "round_robin", load_cap=0)
    r.route("a", S + [1], 0)
    r.on_report(0, 100, "a")
    assert [r.route(f"q{i}", S + [i], i + 1) for i in range(4)] == [1, 0, 1, 0]
    one = m.Router(1, 4, "round_robin")
    assert [one.route(f"q{i}", [i], i) for i in range(3)] == [0, 0, 0]


# == affinity =======================================================================
@pytest.mark.rubric("affinity")
def test_the_cap_is_inclusive():
    """Rule: Affinity"""
    r = m.Router(2, 4, "affinity", load_cap=9)
    assert r.route("a", S + [9], 0) == 0     # load 9 on replica 0
    assert r.route("b", S + [8], 1) == 0, "load 9 is at most the cap of 9: still eligible"
    assert r.route("c", S + [7], 2) == 1, "load 10 is over the cap"


@pytest.mark.rubric("affinity")
def test_when_every_replica_is_over_the_cap_the_least_loaded_wins():
    """Rule: Affinity"""
    r = m.Router(3, 4, "affinity", load_cap=0)
    assert r.route("a", S + [9], 0) == 0
    assert r.route("b", [5] * 20, 1) == 1
    assert r.route("c", [6] * 4, 2) == 2
    assert r.route("d", S + [1], 3) == 2, (
        "all over the cap 0 (loads 9, 20, 4): least load wins, not the best match")
    r2 = m.Router(2, 4, "affinity", load_cap=0)
    r2.route("a", [1] * 5, 0)
    r2.route("b", [2] * 5, 1)
    assert r2.route("c", [1] * 9, 2) == 0, "equal loads 5 and 5: lower index"


@pytest.mark.rubric("affinity")
def test_match_ties_go_to_the_lower_load_then_the_lower_index():
    """Rule: Affinity"""
    r = m.Router(3, 4, "affinity", load_cap=100)
    r.route("a", S + [1, 1, 1], 0)     # 0 (all tied at 0)
    r.route("b", [7] * 5, 1)           # 1 (least load)
    r.route("c", [8] * 6, 2)           # 2 (least load)
    r.on_report(0, 40, "a")            # replica 0 now loaded 40
    assert r.route("d", S + [2], 3) == 0, "2 blocks matched beats 0, whatever the load"
    r.on_report(0, 0, "d")
    assert r.route("e", [9] * 4, 4) == 0, "all match 0; loads 0, 5, 6: replica 0"
    r.on_report(0, 5, "e")
    assert r.route("f", [9] * 3, 5) == 0, "all match 0; loads 5, 5, 6: the lower index"
    assert r.route("g", [4] * 3, 6) == 1, "all match 0; loads 8, 5, 6"


@pytest.mark.rubric("affinity")
def test_an_eligible_miss_beats_an_ineligible_hit():
    """Rule: Affinity"""
    r = m.Router(2, 4, "affinity", load_cap=5)
    r.route("a", S + [9], 0)
    assert r.route("b", S + [8], 1) == 1, "replica 0 holds S but its load 9 is over 5"
    assert r.route("c", S + [7], 2) == 0, (
        "both over the cap with loads 9 and 9: affinity yields to the lower index")


@pytest.mark.rubric("affinity")
def test_affinity_trusts_a_stale_view():
    """Rules: Affinity; Eviction notices"""
    r = m.Router(2, 4, "affinity", load_cap=100)
    r.route("a", S + [9], 0)
    r.route("b", [5] * 9, 1)
    assert r.route("c", S + [1], 2) == 0, "the view says replica 0 holds S (no notice yet)"
    r.on_eviction(0, HS, 1)
    assert r.route("d", S + [2], 3) == 0, "c sent S to replica 0 again at 2 > 1: it stays"
    r.on_eviction(0, HS, 3)
    assert r.route("e", S + [3], 4) == 1, "S gone: no match anywhere; loads 9 + 1 + 1 vs 9"


# == predicted finish ===============================================================
@pytest.mark.rubric("predicted_finish")
def test_finish_ties_go_to_more_matched_blocks():
    """Rule: Predicted finish"""
    r = m.Router(2, 4, "predicted_finish")
    r.route("a", [7] * 8 + [1], 0)     # 0: load 9
    r.route("b", S + [9], 1)           # 1: load 9 (0 + 9 < 9 + 9)
    r.on_report(0, 1, "a")             # replica 0: load 1
    # S + [2]: replica 0 1 + 9 = 10; replica 1 9 + 1 = 10: tie, replica 1 matched 2 blocks
    assert r.route("c", S + [2], 2) == 1


@pytest.mark.rubric("predicted_finish")
def test_finish_uses_load_plus_uncached_tokens_not_either_alone():
    """Rule: Predicted finish"""
    r = m.Router(2, 4, "predicted_finish")
    r.route("a", S + [9], 0)           # 0
    r.on_report(0, 3, "a")
    assert r.route("b", S + [1], 1) == 0, "3 + 1 < 0 + 9"
    r.on_report(0, 8, "b")
    assert r.route("c", S + [2], 2) == 0, "8 + 1 = 0 + 9: a tie, replica 0 matched more"
    r.on_report(0, 9, "c")
    assert r.route("d", S + [3], 3) == 1, "9 + 1 > 0 + 9"


@pytest.mark.rubric("predicted_finish")
def test_finish_full_ties_go_to_the_lower_index():
    """Rule: Predicted finish"""
    r = m.Router(3, 2, "predicted_finish")
    assert r.route("a", [1, 1, 1], 0) == 0
    assert r.route("b", [2, 2, 2], 1) == 1
    assert r.route("c", [3, 3, 3], 2) == 2
    r.on_report(2, 0, "c")
    r.on_report(1, 0, "b")
    assert r.route("d", [1, 1, 2], 3) == 1, (
        "replica 0: 3 + 1 = 4 with 1 block; replicas 1 and 2: 0 + 3 = 3 with 0: lower index")


# == boundary =======================================================================
def _brute_boundary(old: list[int], new: list[int], bs: int) -> tuple[int, int, int, int]:
    first = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
    old_h, new_h = block_hashes(old, bs), set()
    shared = 0
    for h in block_hashes(new, bs):
        if h not in old_h:
            break
        shared += 1
    new_h = shared
    reused = min(new_h, (len(new) - 1) // bs)
    lost = sum(1 for h in old_h if h not in set(block_hashes(new, bs)))
    return first, first // bs, reused, lost


@pytest.mark.rubric("boundary")
@given(old=st.lists(st.integers(0, 1), min_size=1, max_size=14),
       edit=st.lists(st.integers(0, 1), max_size=4), at=st.integers(0, 14),
       drop=st.integers(0, 3), bs=st.integers(1, 4))
def test_boundary_matches_the_block_hashes(old, edit, at, drop, bs):
    """Rule: Prefix boundary"""
    new = (old[:at] + edit + old[at + drop:]) or [0]
    got = tuple(m.prefix_boundary(old, new, bs))
    want = _brute_boundary(old, new, bs)
    assert got[0] == want[0], f"first_diff of {old} and {new}: {got[0]}, expected {want[0]}"
    assert got == want, f"prefix_boundary({old}, {new}, {bs}) = {got}, expected {want}"


@pytest.mark.rubric("boundary")
def test_boundary_edges():
    """Rule: Prefix boundary"""
    assert tuple(m.prefix_boundary([5], [5], 1)) == (1, 1, 0, 0)
    assert tuple(m.prefix_boundary([5, 6, 7], [5], 1)) == (1, 1, 0, 2)
    assert tuple(m.prefix_boundary([1, 2], [3, 4, 5, 6, 7], 2)) == (0, 0, 0, 1)
    assert tuple(m.prefix_boundary(S, S + S, 4)) == (8, 2, 2, 0)
    assert tuple(m.prefix_boundary(S + S, S, 4)) == (8, 2, 1, 2)
    assert tuple(m.prefix_boundary([0, 1, 2], [0, 1, 2], 8)) == (3, 0, 0, 0)


# == errors =========================================================================
@pytest.mark.rubric("errors")
@pytest.mark.parametrize("args", [
    (0, 4, "round_robin"), (2, 0, "affinity"), (True, 4, "affinity"), (2, 4.0, "affinity"),
    (2, 4, "Affinity"), (2, 4, None), (2, 4, "affinity", -1), (2, 4, "affinity", True),
    (2, 4, "affinity", 1.5), (-1, 4, "round_robin"), (2, 4, "round_robin", -1),
    (2, 4, "predicted_finish", True)])
def test_bad_constructor_arguments(args):
    """Rule: Errors"""
    with pytest.raises(ValueError):
        m.Router(*args)


@pytest.mark.rubric("errors")
def test_bad_calls_change_nothing():
    """Rule: Errors"""
    r = m.Router(2, 4, "round_robin")
    r.route("a", S + [9], 3)
    r.on_report(0, 2, None)
    before = (r.matched_blocks(0, S + [1]), r.estimated_load(0), r.estimated_load(1))
    bad_routes = [(7, S, 4), ("b", S, 3), ("b", S, 2), ("b", S, -1), ("b", S, 4.0),
                  ("b", S, True), ("b", [], 4), ("b", (1, 2), 4), ("b", [1, 2**32], 4),
                  ("b", [1.0], 4), ("b", [False], 4), ("a", S, 4), ("b", "abc", 4)]
    for args in bad_routes:
        with pytest.raises(ValueError):
            r.route(*args)
    for args in [(2, HS, 5), (-1, HS, 5), (True, HS, 5), (0, HS, -1), (0, HS, 1.0),
                 (0, [HS[0], "x"], 5), (0, HS[0], 5)]:
        with pytest.raises(ValueError):
            r.on_eviction(*args)
    for args in [(2, 0, None), (0, -1, None), (0, 1.5, None), (0, True, None)]:
        with pytest.raises(ValueError):
            r.on_report(*args)
    for args in [(0, 0, "zzz"), (1, 0, "a"), (0, 0, 7), (0, 0, ["a"])]:
        with pytest.raises(KeyError):
            r.on_report(*args)
    for args in [(2, S), (0, []), (0, [-1])]:
        with pytest.raises(ValueError):
            r.matched_blocks(*args)
    with pytest.raises(ValueError):
        r.estimated_load(2)
    after = (r.matched_blocks(0, S + [1]), r.estimated_load(0), r.estimated_load(1))
    assert after == before, f"a failed call changed the view: {before} -> {after}"
    assert r.route("b", S + [1], 4) == 1, "failed calls must not advance round robin"


@pytest.mark.rubric("errors")
def test_bad_boundary_arguments():
    """Rule: Errors"""
    for args in [([], [1], 2), ([1], [], 2), ([1], [1], 0), ([1], [1], True), ([1], [-1], 2),
                 ([1], [2**32], 2), ([True], [1], 2), ((1, 2), [1, 2], 2), ([1], (1,), 2)]:
        with pytest.raises(ValueError):
            m.prefix_boundary(*args)


# == replays ========================================================================
@st.composite
def bursts(draw: st.DrawFn) -> dict:
    """A burst around a few hot prefixes, sized so the caches evict and queues build."""
    bs = draw(st.integers(1, 4))
    n = draw(st.integers(2, 4))
    heads = [draw(st.lists(st.integers(0, 1), min_size=bs, max_size=3 * bs)) for _ in range(3)]
    hot = draw(st.integers(0, 2))
    t, reqs = 0, []
    for i in range(draw(st.integers(3, 12))):
        which = draw(st.sampled_from([hot, hot, hot, 0, 1, 2]))
        toks = heads[which] + draw(st.lists(st.integers(0, 3), min_size=1, max_size=2 * bs))
        t += draw(st.integers(1, 6))
        reqs.append(Request(f"q{i}", tuple(toks), t))
    return dict(num_replicas=n, block_size=bs, capacity=draw(st.integers(2, 6)), burst=reqs,
                notice_delay=draw(st.sampled_from([0, 0, 1, 3, 10, 100])),
                report_every=draw(st.sampled_from([0, 2, 5])),
                report_delay=draw(st.sampled_from([0, 1, 4])),
                cap=draw(st.integers(0, 30)))


def _check_replay(policy: str, case: dict) -> None:
    cap = case.pop("cap")
    n, bs = case["num_replicas"], case["block_size"]
    got = replay(m.Router(n, bs, policy, cap), **case)
    want = replay(ModelRouter(n, bs, policy, cap), **case)
    head = f"Router({n}, {bs}, {policy!r}, {cap}), capacity {case['capacity']}"
    for i, (g, w) in enumerate(zip(got.decisions, want.decisions)):
        assert g == w, (f"{head}: request {i} went to {g}, the rules send it to {w}; "
                        f"calls:\n  {show(got.calls)}")
    assert got.hit_rate == want.hit_rate and got.mean_ttft == want.mean_ttft
    assert isinstance(got.hit_rate, Fraction)


@pytest.mark.rubric("replay")
@pytest.mark.parametrize("policy", ["round_robin", "affinity", "predicted_finish"])
@settings(max_examples=max(8, settings.default.max_examples // 3))
@given(case=bursts())
def test_replayed_bursts_match_the_model(policy, case):
    """Rules: Round robin; Affinity; Predicted finish; Eviction notices; Reservations; Load reports"""
    _check_replay(policy, case)


@pytest.mark.rubric("replay")
def test_an_overloaded_hot_prefix_spills_at_the_cap():
    """Rules: Affinity; Reservations"""
    hot = [4, 4, 4, 4, 4, 4, 4, 4]
    burst = [Request(f"q{i}", tuple(hot + [i]), i) for i in range(8)]
    got = replay(m.Router(3, 4, "affinity", 12), 3, 4, 16, burst)
    # q0 -> 0 (load 9), q1..q4 hit there (1 token each: load 10, 11, 12, 13: q4 still
    # goes, at load 12 <= 12); then replica 0 is over the cap: q5 -> 1 (a miss, load 9),
    # q6 and q7 -> 1 (hits, load 10, 11)
    assert got.decisions == [0, 0, 0, 0, 0, 1, 1, 1], f"calls:\n  {show(got.calls)}"
    assert got.hit_tokens == [0, 8, 8, 8, 8, 0, 8, 8]
    assert got.hit_rate == Fraction(6 * 8, 8 * 9)
