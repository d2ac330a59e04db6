"""Public tests for prefix_routing: the prompt's example and the basic behaviours.

Run: nox -s kata -- prefix_routing
"""

from fractions import Fraction

import pytest

from graders.impl import kata_impl
from graders.support.prefix_routing import block_hashes
from tests.prefix_routing.helpers import replay, requests, show

m = kata_impl("prefix_routing")

S = [1, 2, 3, 4, 5, 6, 7, 8]  # a shared system prompt: two blocks of 4


# -- the prefix-boundary check -------------------------------------------------------
@pytest.mark.rubric("boundary")
def test_template_change_shifts_every_block_boundary():
    """Rule: Prefix boundary"""
    old = S + [20, 21, 22]
    new = [1, 2, 3, 99] + S[3:] + [20, 21, 22]  # one token inserted at position 3
    assert tuple(m.prefix_boundary(old, new, 4)) == (3, 0, 0, 2), (
        "the inserted token is at position 3, inside block 0: every block of the new "
        "prompt hashes differently, so none of old's 2 cached blocks is reused")
    assert tuple(m.prefix_boundary(old, old, 4)) == (11, 2, 2, 0)


@pytest.mark.rubric("boundary")
def test_boundary_caps_the_reuse_at_the_last_token():
    """Rule: Prefix boundary"""
    assert tuple(m.prefix_boundary(S + [9], S, 4)) == (8, 2, 1, 0), (
        "new = the 8 shared tokens: both blocks are cached but the last token must be "
        "computed, so only 1 block is reused; no cached block of old is lost")
    assert tuple(m.prefix_boundary(S, S + [9, 9, 9, 9], 4)) == (8, 2, 2, 0)
    assert tuple(m.prefix_boundary(S, [1, 2, 3, 4, 5, 0, 0, 0], 4)) == (5, 1, 1, 1)


@pytest.mark.rubric("boundary")
def test_diagnosing_a_drop_in_cache_hit_tokens():
    """Rule: Prefix boundary"""
    system = list(range(100, 132))                  # 32 tokens: 8 blocks of 4
    old_a, old_b = system + [1, 2, 3], system + [4, 5]
    # the new template puts a per-request id after the first 10 system tokens
    new_a = system[:10] + [7001] + system[10:] + [1, 2, 3]
    new_b = system[:10] + [7002] + system[10:] + [4, 5]
    before = m.prefix_boundary(old_a, old_b, 4)[2]
    after = m.prefix_boundary(new_a, new_b, 4)[2]
    assert (before, after) == (8, 2), (before, after)
    # the hit counter falls by (8 - 2) * 4 = 24 tokens per request: that is the evidence
    assert (before - after) * 4 == 24


# -- round robin ---------------------------------------------------------------------
@pytest.mark.rubric("round_robin")
def test_round_robin_cycles_whatever_the_cache_holds():
    """Rule: Round robin"""
    r = m.Router(3, 4, "round_robin")
    got = [r.route(f"q{i}", S + [i], i) for i in range(7)]
    assert got == [0, 1, 2, 0, 1, 2, 0], got


# -- the view ------------------------------------------------------------------------
@pytest.mark.rubric("view")
def test_route_adds_the_prompts_full_blocks_to_the_view():
    """Rules: The view; Matched blocks"""
    r = m.Router(2, 4, "round_robin")
    assert r.route("a", S + [9], 0) == 0
    assert r.matched_blocks(0, S + [10]) == 2
    assert r.matched_blocks(1, S + [10]) == 0, "replica 1 was sent nothing"
    assert r.matched_blocks(0, S) == 1, "capped: the last prompt token must be computed"
    assert r.matched_blocks(0, [1, 2, 3, 0, 5, 6, 7, 8, 9]) == 0, (
        "block 1 holds the same tokens but block 0 differs: hashes are chained")


@pytest.mark.rubric("view")
def test_matched_blocks_stops_at_the_first_missing_block():
    """Rule: Matched blocks"""
    r = m.Router(1, 2, "round_robin")
    r.route("a", [1, 2, 3, 4, 5, 6, 7], 0)
    r.on_eviction(0, block_hashes([1, 2, 3, 4], 2)[1:], 0)
    assert r.matched_blocks(0, [1, 2, 3, 4, 5, 6, 7]) == 1, (
        "block 1 was evicted: block 2 is still in the view but cannot be reached")


# -- eviction notices ----------------------------------------------------------------
@pytest.mark.rubric("late_notices")
def test_a_notice_removes_blocks_from_the_view():
    """Rule: Eviction notices"""
    r = m.Router(2, 4, "round_robin")
    r.route("a", S + [9], 0)
    r.on_eviction(0, block_hashes(S, 4)[::-1], 0)
    assert r.matched_blocks(0, S + [9]) == 0
    r.on_eviction(1, block_hashes(S, 4), 0)  # a block the view does not hold: ignored
    r.on_eviction(0, block_hashes(S, 4), 0)  # twice: ignored
    assert r.matched_blocks(0, S + [9]) == 0


@pytest.mark.rubric("late_notices")
def test_a_late_notice_does_not_undo_a_later_route():
    """Rule: Eviction notices"""
    r = m.Router(1, 4, "round_robin")
    r.route("a", S + [9], 0)
    r.route("b", S + [10], 5)        # the replica re-caches S at time 5
    r.on_eviction(0, block_hashes(S, 4), 3)  # evicted at 3, delivered after time 5
    assert r.matched_blocks(0, S + [11]) == 2, (
        "the blocks were evicted at time 3 but routed to the replica again at 5: it holds "
        "them again, so the late notice must not remove them")
    r.on_eviction(0, block_hashes(S, 4), 5)
    assert r.matched_blocks(0, S + [11]) == 0, "a notice stamped 5 covers the route at 5"


# -- load ----------------------------------------------------------------------------
@pytest.mark.rubric("load_estimate")
def test_reservations_and_reports():
    """Rules: Reservations; Load reports"""
    r = m.Router(2, 4, "round_robin")
    r.route("a", S + [9], 0)          # replica 0: nothing cached, reserves 9
    r.route("b", [5, 5], 1)           # replica 1: reserves 2
    r.route("c", S + [10, 11], 2)     # replica 0: 2 blocks in the view, reserves 2
    assert [r.estimated_load(0), r.estimated_load(1)] == [11, 2]
    r.on_report(0, 4, "a")            # a is accounted for by the report, c is not
    assert r.estimated_load(0) == 4 + 2
    r.on_report(0, 0, "c")
    assert r.estimated_load(0) == 0
    r.on_report(1, 7, None)           # taken before b arrived: b still counts
    assert r.estimated_load(1) == 7 + 2


# -- the policies --------------------------------------------------------------------
@pytest.mark.rubric("affinity")
def test_affinity_prefers_the_longest_match_then_the_load_cap_yields():
    """Rule: Affinity"""
    r = m.Router(2, 4, "affinity", load_cap=20)
    assert r.route("a", S + [9], 0) == 0, "no match anywhere, equal loads: lowest index"
    assert r.route("b", [7, 7, 7], 1) == 1, "no match anywhere: less load (0 < 9)"
    assert r.route("c", S + [10], 2) == 0, "2 blocks matched on replica 0 (load 9 <= 20)"
    assert r.route("d", S + [11] * 12, 3) == 0, "load 10 <= 20, still the longest match"
    assert r.estimated_load(0) == 9 + 1 + 12
    assert r.route("e", S + [12], 4) == 1, (
        "replica 0's load 22 is over the cap of 20: affinity yields to replica 1")


@pytest.mark.rubric("predicted_finish")
def test_predicted_finish_adds_the_uncached_work_to_the_load():
    """Rule: Predicted finish"""
    r = m.Router(2, 4, "predicted_finish")
    assert r.route("a", S + [9], 0) == 0, "finish 0 + 9 on both: lowest index"
    assert r.route("b", S + [10], 1) == 1, (
        "replica 0: 9 queued + 1 uncached = 10; replica 1: 0 + 9 = 9 (the cache hit does "
        "not pay for the queue)")
    assert r.route("c", S + [11], 2) == 0, "10 on both, 2 blocks matched on both: lowest index"
    assert r.route("d", [5, 5, 5], 3) == 1, "replica 0: 10 + 3; replica 1: 9 + 3"


@pytest.mark.rubric("predicted_finish")
def test_without_reservations_a_burst_would_pile_onto_one_replica():
    """Rules: Reservations; Predicted finish"""
    r = m.Router(3, 4, "predicted_finish")
    got = [r.route(f"q{i}", [100 + i] * 6, i) for i in range(3)]
    assert got == [0, 1, 2], (
        f"got {got}: no report has arrived yet, so only the router's own reservations "
        "tell it that replica 0 already has 6 tokens queued")


# -- the replay ----------------------------------------------------------------------
BURST = [(0, S + [10]), (1, [9] * 5), (2, S + [11]), (3, S + [12]), (4, S + [13]),
         (5, [9] * 5 + [1])]


@pytest.mark.rubric("replay")
@pytest.mark.parametrize("policy, cap, decisions, hits, ttft", [
    ("round_robin", 0, [0, 1, 0, 1, 0, 1], [0, 0, 8, 0, 8, 4], [9, 5, 8, 12, 7, 12]),
    ("affinity", 20, [0, 1, 0, 0, 0, 1], [0, 0, 8, 8, 8, 4], [9, 5, 8, 8, 8, 3]),
    ("predicted_finish", 0, [0, 1, 0, 0, 0, 1], [0, 0, 8, 8, 8, 4], [9, 5, 8, 8, 8, 3]),
])
def test_the_prompts_burst(policy, cap, decisions, hits, ttft):
    """Rules: Round robin; Affinity; Predicted finish; Reservations"""
    got = replay(m.Router(2, 4, policy, cap), 2, 4, 8, requests(BURST), report_every=3)
    assert got.decisions == decisions, f"calls:\n  {show(got.calls)}"
    assert (got.hit_tokens, got.ttft) == (hits, ttft)
    assert got.hit_rate == Fraction(sum(hits), 47)


@pytest.mark.rubric("replay")
def test_a_delayed_notice_sends_a_request_to_a_replica_that_lost_the_prefix():
    """Rules: Eviction notices; Affinity"""
    A, C = [1, 1, 1, 1, 2, 2, 2, 2], [3, 3, 3, 3, 4, 4, 4, 4]
    burst = requests([
        (0, A + [5]),                   # -> 0 (nothing anywhere, equal loads)
        (1, A[:4] + [9, 9, 9, 9, 6]),   # -> 1: replica 0's load 9 is over the cap of 8
        (20, C + [7]),                  # -> 0 (reports say both idle): evicts A from it
        (40, A + [8]),                  # where does A go now?
    ])
    on_time = replay(m.Router(2, 4, "affinity", 8), 2, 4, 2, burst, report_every=10)
    late = replay(m.Router(2, 4, "affinity", 8), 2, 4, 2, burst, report_every=10,
                  notice_delay=100)
    assert on_time.decisions == [0, 1, 0, 1], f"calls:\n  {show(on_time.calls)}"
    assert on_time.hit_tokens[-1] == 4, "replica 1 holds A's first block"
    assert late.decisions == [0, 1, 0, 0], (
        f"the notice that A left replica 0 has not arrived, so the view still matches 2 "
        f"blocks there; calls:\n  {show(late.calls)}")
    assert late.hit_tokens[-1] == 0 and late.ttft[-1] == 9


# -- errors --------------------------------------------------------------------------
@pytest.mark.rubric("errors")
def test_bad_calls_raise_and_change_nothing():
    """Rule: Errors"""
    with pytest.raises(ValueError):
        m.Router(0, 4, "affinity")
    with pytest.raises(ValueError):
        m.Router(2, 4, "least_loaded")
    with pytest.raises(ValueError):
        m.Router(2, True, "affinity")
    r = m.Router(2, 4, "round_robin")
    r.route("a", S, 5)
    for bad in [("b", [], 6), ("b", [1, -1], 6), ("b", [1, True], 6), ("a", S, 6),
                ("b", S, 5), ("b", S, 4)]:
        with pytest.raises(ValueError):
            r.route(*bad)
    with pytest.raises(KeyError):
        r.on_report(1, 3, "a")       # a went to replica 0
    with pytest.raises(ValueError):
        r.on_eviction(2, [], 0)
    assert r.route("b", S, 6) == 1, "the failed calls must not have advanced round robin"
    assert r.estimated_load(1) == 8
