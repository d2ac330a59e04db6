"""Hidden targeted tests for radix_cache: one or more per trap of KATAS.md section 1."""

from __future__ import annotations

import pytest

from graders.impl import kata_impl
from tests.radix_cache.helpers import KV, stats_ok

rc = kata_impl("radix_cache")


class Driver:
    """A cache plus the KV-content model, with the checks every step needs."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.cache = rc.RadixCache(n)
        self.kv = KV()
        self.seqs: dict[int, list[int]] = {}
        self.slots: dict[int, list[int]] = {}

    def acquire(self, tokens: list[int]) -> tuple[int, int, list[int]]:
        lease, m, slots = self.cache.acquire(list(tokens))
        self.kv.check_hit(slots, tokens, m, f"acquire({tokens})")
        for i in range(m, len(tokens)):
            self.kv.write(slots[i], tokens[: i + 1])
        self.seqs[lease], self.slots[lease] = list(tokens), list(slots)
        stats_ok(self.cache, self.n)
        return lease, m, slots

    def extend(self, lease: int, new_tokens: list[int]) -> list[int]:
        fresh = self.cache.extend(lease, len(new_tokens))
        for t, s in zip(new_tokens, fresh):
            self.seqs[lease].append(t)
            self.slots[lease].append(s)
            self.kv.write(s, self.seqs[lease])
        stats_ok(self.cache, self.n)
        return fresh

    def commit(self, lease: int, upto: int | None = None) -> list[int]:
        tokens = self.seqs[lease][: upto if upto is not None else len(self.seqs[lease])]
        ret = self.cache.commit(lease, tokens)
        self.kv.check_hit(ret, tokens, len(tokens), f"commit({tokens})")
        self.slots[lease][: len(ret)] = ret
        stats_ok(self.cache, self.n)
        return ret

    def release(self, lease: int) -> None:
        self.cache.release(lease, self.seqs.pop(lease))
        self.slots.pop(lease)
        stats_ok(self.cache, self.n)

    def cached_len(self, tokens: list[int]) -> int:
        """How many leading tokens of ``tokens`` are cached (probe with one extra token)."""
        lease, m, _ = self.acquire(tokens + [999])
        self.cache.abort(lease)
        self.seqs.pop(lease)
        self.slots.pop(lease)
        return m

    def cache_seq(self, tokens: list[int]) -> None:
        lease, _, _ = self.acquire(tokens)
        self.release(lease)


# -- prefix_match ---------------------------------------------------------------------

@pytest.mark.rubric("prefix_match")
def test_single_token_prompt_is_never_a_hit():
    """Rule: Acquire"""
    d = Driver(8)
    d.cache_seq([4])
    _, m, _ = d.acquire([4])
    assert m == 0, f"a one-token prompt must compute its token: num_cached={m}"


@pytest.mark.rubric("prefix_match")
def test_fully_cached_prompt_at_a_node_boundary_leaves_one_token():
    """Rule: Acquire"""
    d = Driver(16)
    d.cache_seq([1, 2])
    d.cache_seq([1, 2, 3, 4])  # node boundary after [1, 2]
    _, m, _ = d.acquire([1, 2, 3, 4])
    assert m == 3, f"prompt [1,2,3,4] fully cached: expected num_cached=3, got {m}"
    _, m, _ = d.acquire([1, 2])
    assert m == 1, f"prompt [1,2] fully cached: expected num_cached=1, got {m}"


@pytest.mark.rubric("prefix_match")
def test_longest_of_several_branches():
    """Rule: Acquire"""
    d = Driver(32)
    d.cache_seq([1, 2, 3])
    d.cache_seq([1, 2, 4, 5, 6])
    d.cache_seq([1, 7])
    _, m, _ = d.acquire([1, 2, 4, 5, 9])
    assert m == 4, f"[1,2,4,5] is cached: expected num_cached=4, got {m}"
    _, m, _ = d.acquire([2, 1])
    assert m == 0, f"no cached prefix starts with 2: got num_cached={m}"


@pytest.mark.rubric("prefix_match")
def test_generated_tokens_become_hits_after_release():
    d = Driver(16)
    lease, _, _ = d.acquire([1, 2])
    d.extend(lease, [3, 4])
    d.release(lease)
    assert d.cached_len([1, 2, 3, 4]) == 4


# -- edge_split -----------------------------------------------------------------------

@pytest.mark.rubric("edge_split")
def test_split_keeps_both_halves_and_their_kv():
    """Rule: Edge splits"""
    d = Driver(32)
    d.cache_seq([1, 2, 3, 4, 5, 6])
    d.cache_seq([1, 2, 3, 7, 8])      # splits after [1, 2, 3]
    d.cache_seq([1, 9])               # splits after [1]
    assert d.cached_len([1, 2, 3, 4, 5, 6]) == 6
    assert d.cached_len([1, 2, 3, 7, 8]) == 5
    assert d.cached_len([1, 9]) == 2
    assert stats_ok(d.cache, 32)["cached"] == 9


@pytest.mark.rubric("edge_split")
def test_split_of_a_pinned_edge_inherits_its_pins():
    """Rule: Edge splits"""
    d = Driver(16)
    d.cache_seq([1, 2, 3, 4])
    holder, m, _ = d.acquire([1, 2, 3, 4, 5])     # pins [1, 2, 3, 4]
    assert m == 4
    other, m2, _ = d.acquire([1, 2, 8])           # match ends inside the pinned edge
    assert m2 == 2
    d.release(other)
    s = stats_ok(d.cache, 16)
    assert s["pinned"] == 4, f"the first request still pins [1, 2, 3, 4]: {s}"
    d.cache.evict(16)
    s = stats_ok(d.cache, 16)
    assert s["cached"] == 4 and s["pinned"] == 4, (
        f"after the split both halves of the pinned edge must stay pinned: {s}")
    d.release(holder)
    s = stats_ok(d.cache, 16)
    assert s["pinned"] == 0, f"all unpinned after release: {s}"
    assert d.cache.evict(16) == s["cached"]
    assert stats_ok(d.cache, 16)["free"] == 16


@pytest.mark.rubric("edge_split")
def test_partial_match_pins_only_the_matched_tokens():
    """Rules: Acquire; Edge splits"""
    d = Driver(16)
    d.cache_seq([1, 2, 3, 4, 5])
    lease, m, _ = d.acquire([1, 2, 6])
    s = stats_ok(d.cache, 16)
    assert m == 2 and s["pinned"] == 2, (
        f"only the 2 matched tokens are pinned, not the whole edge: num_cached={m}, {s}")
    assert d.cache.evict(16) == 3, "the unmatched rest of the split edge is evictable"


# -- pinning --------------------------------------------------------------------------

@pytest.mark.rubric("pinning")
def test_shared_prefix_pinned_by_two_counts_once_and_survives_one_release():
    """Rules: Pinning; Slot states"""
    d = Driver(16)
    d.cache_seq([1, 2, 3])
    a, _, _ = d.acquire([1, 2, 3, 4])
    b, _, _ = d.acquire([1, 2, 3, 5])
    s = stats_ok(d.cache, 16)
    assert s["pinned"] == 3, f"two leases pin the same 3 slots: pinned counts them once: {s}"
    d.cache.abort(a)
    d.cache.evict(16)
    assert stats_ok(d.cache, 16)["pinned"] == 3, "b still pins [1, 2, 3]"
    lease, m, _ = d.acquire([1, 2, 3, 9])
    assert m == 3, "[1, 2, 3] is pinned by b: eviction must not have taken it"
    d.cache.abort(b)


@pytest.mark.rubric("pinning")
def test_committed_slots_stay_pinned_while_running():
    """Rules: Pinning; Commit"""
    d = Driver(12)
    lease, _, _ = d.acquire([1, 2, 3])
    d.extend(lease, [4, 5])
    d.commit(lease)
    s = stats_ok(d.cache, 12)
    assert s["pinned"] == 5 and s["cached"] == 5 and s["leased"] == 0, s
    assert d.cache.evict(12) == 0, "a running request's committed slots are pinned"
    d.extend(lease, [6])
    d.release(lease)
    s = stats_ok(d.cache, 12)
    assert s["pinned"] == 0 and s["cached"] == 6, s


@pytest.mark.rubric("pinning")
def test_commit_of_fewer_tokens_keeps_every_committed_slot_pinned():
    """Review: a commit shorter than what the lease committed moved its pin back up.
    Rules: Commit; Pinning"""
    d = Driver(12)
    lease, _, _ = d.acquire([1, 2, 3])
    d.extend(lease, [4, 5])
    first = d.commit(lease)
    assert d.commit(lease, 2) == first[:2]
    s = stats_ok(d.cache, 12)
    assert s == {"free": 7, "cached": 5, "pinned": 5, "leased": 0}, (
        f"a commit of fewer tokens than already committed changes nothing: all 5 committed "
        f"slots stay cached and pinned while the request runs: {s}")
    assert d.cache.evict(12) == 0, "a running request's committed slots are pinned"
    d.release(lease)
    assert stats_ok(d.cache, 12) == {"free": 7, "cached": 5, "pinned": 0, "leased": 0}


@pytest.mark.rubric("pinning")
def test_abort_unpins_the_whole_path():
    """Rules: Pinning; Release and abort"""
    d = Driver(12)
    d.cache_seq([1, 2, 3, 4])
    d.cache_seq([1, 2, 5])
    lease, m, _ = d.acquire([1, 2, 3, 4, 6])
    assert m == 4
    d.cache.abort(lease)
    assert stats_ok(d.cache, 12)["pinned"] == 0
    assert d.cache.evict(12) == 5, "everything is unpinned after the abort"


# -- eviction -------------------------------------------------------------------------

@pytest.mark.rubric("eviction")
def test_lru_by_last_use_not_by_insertion():
    """Rule: Eviction"""
    d = Driver(12)
    d.cache_seq([1, 1, 1])      # inserted first
    d.cache_seq([2, 2, 2])      # inserted second
    d.cache_seq([3, 3, 3])
    lease, m, _ = d.acquire([1, 1, 1, 5])   # [1,1,1] used most recently
    assert m == 3
    d.cache.abort(lease)
    freed = d.cache.evict(3)
    assert freed == 3
    assert d.cached_len([1, 1, 1]) == 3, "[1,1,1] was used last: it must not go first"
    assert d.cached_len([3, 3, 3]) == 3, "[3,3,3] is more recent than [2,2,2]"
    assert d.cached_len([2, 2, 2]) == 0, "[2,2,2] was least recently used: it goes first"


@pytest.mark.rubric("eviction")
def test_parents_that_become_leaves_go_in_the_same_call():
    """Rule: Eviction"""
    d = Driver(16)
    d.cache_seq([1, 2, 3, 4])
    d.cache_seq([1, 2, 5, 6])   # tree: [1,2] -> {[3,4], [5,6]}
    freed = d.cache.evict(6)
    assert freed == 6, f"evict(6) with 6 unpinned cached slots must free all 6, freed {freed}"
    assert stats_ok(d.cache, 16) == {"free": 16, "cached": 0, "pinned": 0, "leased": 0}


@pytest.mark.rubric("eviction")
def test_acquire_evicts_through_the_parents_when_short():
    """Rule: Eviction"""
    d = Driver(6)
    d.cache_seq([1, 2, 3])
    d.cache_seq([1, 2, 4])      # cached: [1,2], [3], [4] = 4 slots
    assert stats_ok(d.cache, 6)["cached"] == 4
    _, m, slots = d.acquire([7, 7, 7, 7, 7, 7])
    assert m == 0 and len(set(slots)) == 6


@pytest.mark.rubric("eviction")
def test_acquire_and_extend_evict_only_the_shortfall():
    """Review: evicting all the slots a call needs, not just what the free pool lacks.
    Rule: Eviction"""
    d = Driver(6)
    d.cache_seq([1, 1])
    d.cache_seq([2, 2])                     # free 2, cached 4; [1, 1] least recently used
    lease, m, _ = d.acquire([3, 3, 3])      # one slot short: only [1, 1] (or its tail) goes
    assert m == 0
    d.cache.abort(lease)
    assert d.cached_len([2, 2]) == 2, (
        "acquire needed one slot more than the free pool had: it must evict only that "
        "shortfall (least recently used first), yet [2, 2] was evicted too")
    d = Driver(8)
    d.cache_seq([1, 1])
    d.cache_seq([2, 2])                     # free 4, cached 4; [1, 1] least recently used
    lease, _, _ = d.acquire([3])            # free 3
    d.extend(lease, [3, 3, 3, 3])           # one slot short again
    assert d.cached_len([2, 2]) == 2, (
        "extend needed one slot more than the free pool had: it must evict only that "
        "shortfall, yet [2, 2] was evicted too")


@pytest.mark.rubric("eviction")
def test_commit_or_release_that_finds_its_tokens_cached_is_a_use():
    """Review: only inserting refreshed the last-used time, not matching at commit/release.
    Rule: Eviction"""
    d = Driver(12)
    a, _, _ = d.acquire([1, 1])
    b, _, _ = d.acquire([1, 1])              # nothing cached yet: computed twice
    d.release(a)                             # [1, 1] cached
    d.cache_seq([2, 2])                      # used after [1, 1]
    d.release(b)                             # matches [1, 1]: now the most recent
    assert d.cache.evict(2) >= 2
    assert d.cached_len([1, 1]) == 2, (
        "releasing [1, 1] matched the cached [1, 1] (a use), so [2, 2] was the least "
        "recently used and had to go first")


@pytest.mark.rubric("eviction")
def test_evict_zero_and_more_than_evictable():
    """Rule: Eviction"""
    d = Driver(8)
    d.cache_seq([1, 2, 3])
    assert d.cache.evict(0) == 0
    assert d.cache.evict(100) == 3


# -- slot_accounting ------------------------------------------------------------------

@pytest.mark.rubric("slot_accounting")
def test_abort_after_commit_keeps_committed_slots_cached():
    """Rule: Release and abort"""
    d = Driver(10)
    lease, _, _ = d.acquire([1, 2, 3])
    d.extend(lease, [4, 5])
    d.commit(lease, 4)
    d.cache.abort(lease)
    s = stats_ok(d.cache, 10)
    assert s == {"free": 6, "cached": 4, "pinned": 0, "leased": 0}, (
        f"abort keeps the 4 committed slots cached and frees the 1 uncommitted one: {s}")
    d.acquire([9, 9, 9, 9, 9])          # takes the 5 free slots, no cached one
    assert d.cached_len([1, 2, 3, 4]) == 4, "no committed slot may be handed out again"


@pytest.mark.rubric("slot_accounting")
def test_release_with_fewer_tokens_frees_the_rest():
    """Rule: Release and abort"""
    d = Driver(10)
    lease, _, _ = d.acquire([1, 2, 3])
    d.extend(lease, [4, 5, 6])
    d.cache.release(lease, [1, 2, 3, 4])
    s = stats_ok(d.cache, 10)
    assert s == {"free": 6, "cached": 4, "pinned": 0, "leased": 0}, s


@pytest.mark.rubric("slot_accounting")
def test_release_shorter_than_the_commit_keeps_committed_slots_cached():
    """Review: release freed every slot past its tokens, committed ones included.
    Rules: Release and abort; Slot states"""
    d = Driver(12)
    lease, _, _ = d.acquire([1, 2, 3])
    d.extend(lease, [4, 5])
    d.commit(lease)
    d.cache.release(lease, [1, 2, 3])
    s = stats_ok(d.cache, 12)
    assert s == {"free": 7, "cached": 5, "pinned": 0, "leased": 0}, (
        f"the 5 committed slots stay cached; a release of 3 tokens frees only slots that "
        f"are not cached: {s}")
    d.acquire([9] * 6)                       # 6 of the 7 free slots, no eviction
    assert d.cached_len([1, 2, 3, 4, 5]) == 5, "a cached slot was handed out again"


@pytest.mark.rubric("slot_accounting")
def test_every_slot_handed_out_exactly_once_under_pressure():
    """Rule: Slot states"""
    d = Driver(8)
    held = []
    for t in range(4):
        lease, _, slots = d.acquire([t, t])
        held += slots
    assert sorted(held) == list(range(8)), f"8 slots for 8 tokens: {sorted(held)}"
    with pytest.raises(rc.OutOfSlots):
        d.cache.acquire([9])


# -- atomic_failure -------------------------------------------------------------------

@pytest.mark.rubric("atomic_failure")
def test_failed_acquire_evicts_nothing():
    """Rule: Failure is atomic"""
    d = Driver(8)
    d.cache_seq([1, 2, 3])
    d.cache_seq([4, 5, 6])
    pin, _, _ = d.acquire([4, 5, 6, 7])     # pins [4,5,6] + leases 1
    before = stats_ok(d.cache, 8)
    with pytest.raises(rc.OutOfSlots):
        d.cache.acquire([8, 8, 8, 8, 8, 8])  # needs 6: 1 free + 3 evictable
    assert stats_ok(d.cache, 8) == before, "a failed acquire must change nothing"
    assert d.cached_len([1, 2, 3]) == 3, "a failed acquire must not evict"


@pytest.mark.rubric("atomic_failure")
def test_slots_the_call_itself_pins_are_not_evictable():
    """Found by a blind solution: counting the request's own matched prefix as evictable
    lets the check pass, then eviction runs, then the shortfall shows.
    Rule: Failure is atomic"""
    d = Driver(6)
    d.cache_seq([0, 1])
    d.cache_seq([7, 8])                      # free 2, cached 4
    before = stats_ok(d.cache, 6)
    with pytest.raises(rc.OutOfSlots):
        d.cache.acquire([0, 1, 3, 4, 5, 6, 9])  # pins [0, 1]; needs 5 > 2 free + 2 evictable
    assert stats_ok(d.cache, 6) == before, "a failed acquire must change nothing"
    assert d.cached_len([7, 8]) == 2, "a failed acquire must not evict"


@pytest.mark.rubric("atomic_failure")
def test_failed_acquire_is_not_a_use():
    """Review: the match was touched before the pool check, so a failure reordered LRU.
    Rule: Failure is atomic"""
    d = Driver(6)
    d.cache_seq([1, 1])
    d.cache_seq([2, 2])                       # free 2, cached 4; [1, 1] least recently used
    with pytest.raises(rc.OutOfSlots):
        d.cache.acquire([1, 1, 5, 5, 5, 5, 5])  # pins [1, 1], needs 5 > 2 free + 2 evictable
    lease, _, _ = d.acquire([3, 3, 3])        # one short: the least recently used goes
    d.cache.abort(lease)
    assert d.cached_len([2, 2]) == 2, (
        "a failed acquire changes nothing, not even which prefix was used last: [1, 1] "
        "was still the least recently used and had to go first")


@pytest.mark.rubric("atomic_failure")
def test_failed_extend_changes_nothing():
    """Rule: Failure is atomic"""
    d = Driver(6)
    d.cache_seq([1, 2])
    lease, _, _ = d.acquire([3, 3, 3])
    before = stats_ok(d.cache, 6)
    with pytest.raises(rc.OutOfSlots):
        d.cache.extend(lease, 4)           # 1 free + 2 evictable
    assert stats_ok(d.cache, 6) == before
    assert d.cached_len([1, 2]) == 2
    d.extend(lease, [3, 3, 3])             # exactly fits: 1 free + 2 evicted


@pytest.mark.rubric("atomic_failure")
@pytest.mark.parametrize("call", [
    "init_zero", "init_negative", "acquire_empty", "acquire_str", "acquire_float",
    "extend_negative", "evict_negative", "commit_unknown", "release_unknown",
    "abort_unknown", "abort_twice", "commit_too_long", "commit_wrong_prompt",
    "release_wrong_prompt", "extend_unknown", "release_too_long", "abort_released",
    "release_released", "commit_released",
])
def test_bad_input_raises_and_changes_nothing(call):
    """Rule: Bad input"""
    if call == "init_zero":
        with pytest.raises(ValueError):
            rc.RadixCache(0)
        return
    if call == "init_negative":
        with pytest.raises(ValueError):
            rc.RadixCache(-3)
        return
    d = Driver(10)
    d.cache_seq([1, 2, 3])
    lease, _, _ = d.acquire([1, 2, 3, 4])
    d.extend(lease, [5])
    ended, _, _ = d.acquire([6, 6])
    d.cache.abort(ended)
    released, _, _ = d.acquire([7, 7])
    d.release(released)
    before = stats_ok(d.cache, 10)
    expect = {
        "acquire_empty": (ValueError, lambda: d.cache.acquire([])),
        "acquire_str": (ValueError, lambda: d.cache.acquire([1, "2"])),
        "acquire_float": (ValueError, lambda: d.cache.acquire([1, 2.0])),
        "extend_negative": (ValueError, lambda: d.cache.extend(lease, -1)),
        "evict_negative": (ValueError, lambda: d.cache.evict(-1)),
        "commit_unknown": (KeyError, lambda: d.cache.commit(987654, [1])),
        "release_unknown": (KeyError, lambda: d.cache.release(987654, [1])),
        "abort_unknown": (KeyError, lambda: d.cache.abort(987654)),
        "abort_twice": (KeyError, lambda: d.cache.abort(ended)),
        "extend_unknown": (KeyError, lambda: d.cache.extend(ended, 1)),
        "commit_too_long": (ValueError, lambda: d.cache.commit(lease, [1, 2, 3, 4, 5, 6])),
        "commit_wrong_prompt": (ValueError, lambda: d.cache.commit(lease, [1, 9, 3, 4])),
        "release_wrong_prompt": (ValueError, lambda: d.cache.release(lease, [1, 2, 3, 7, 5])),
        "release_too_long": (ValueError, lambda: d.cache.release(lease, [1, 2, 3, 4, 5, 6])),
        "abort_released": (KeyError, lambda: d.cache.abort(released)),
        "release_released": (KeyError, lambda: d.cache.release(released, [7, 7])),
        "commit_released": (KeyError, lambda: d.cache.commit(released, [7, 7])),
    }[call]
    with pytest.raises(expect[0]):
        expect[1]()
    assert stats_ok(d.cache, 10) == before, f"{call}: a rejected call changed the stats"
    assert d.cached_len([1, 2, 3]) == 3
    d.release(lease)   # the lease still works after the rejected call


# -- dedup ----------------------------------------------------------------------------

@pytest.mark.rubric("dedup")
def test_release_of_a_prefix_cached_meanwhile_frees_duplicates_once():
    """Rules: Commit; Release and abort"""
    d = Driver(12)
    a, _, sa = d.acquire([1, 2, 3, 4])
    b, _, sb = d.acquire([1, 2, 3, 4, 5])
    d.release(a)
    d.release(b)
    s = stats_ok(d.cache, 12)
    assert s == {"free": 7, "cached": 5, "pinned": 0, "leased": 0}, (
        f"b's 4 duplicate slots must be freed exactly once: {s}")
    lease, m, slots = d.acquire([1, 2, 3, 4, 5, 6])
    assert m == 5 and slots[:4] == sa[:4], "the tree keeps a's slots for [1,2,3,4]"


@pytest.mark.rubric("dedup")
def test_commit_adopts_the_tree_slots_that_others_pin():
    """Rule: Commit"""
    d = Driver(16)
    a, _, sa = d.acquire([1, 2, 3])
    b, _, sb = d.acquire([1, 2, 3])
    d.commit(a)
    c, m, sc = d.acquire([1, 2, 3, 4])       # pins a's committed slots
    assert m == 3 and sc[:3] == sa
    got = d.commit(b)
    assert got == sa, f"b must adopt the tree's slots {sa}, got {got}"
    d.release(a)
    d.release(b)
    s = stats_ok(d.cache, 16)
    assert s["pinned"] == 3 and s["leased"] == 1, f"c pins [1,2,3] and leases 1 slot: {s}"
    d.cache.evict(16)
    lease, m, _ = d.acquire([1, 2, 3, 9])
    assert m == 3


@pytest.mark.rubric("dedup")
def test_commit_twice_is_idempotent():
    """Rule: Commit"""
    d = Driver(12)
    a, _, _ = d.acquire([1, 2, 3])
    d.extend(a, [4])
    first = d.commit(a)
    second = d.commit(a)
    assert first == second
    assert stats_ok(d.cache, 12) == {"free": 8, "cached": 4, "pinned": 4, "leased": 0}
    shorter = d.commit(a, 2)
    assert shorter == first[:2]
