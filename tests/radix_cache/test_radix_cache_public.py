"""Public tests for radix_cache: the prompt's examples and the basic behaviours.

Run: nox -s kata -- radix_cache
"""

import pytest

from graders.impl import kata_impl

rc = kata_impl("radix_cache")


def check_stats(cache, num_slots):
    s = cache.stats()
    assert set(s) == {"free", "cached", "pinned", "leased"}, f"stats keys: {sorted(s)}"
    assert s["free"] + s["cached"] + s["leased"] == num_slots, (
        f"free + cached + leased must equal num_slots={num_slots}: {s}")
    assert 0 <= s["pinned"] <= s["cached"], f"pinned must be within cached: {s}"
    return s


@pytest.mark.rubric("prefix_match")
def test_first_request_gets_fresh_distinct_slots():
    """Rules: Acquire; Slot states"""
    cache = rc.RadixCache(16)
    lease, cached, slots = cache.acquire([1, 2, 3, 4])
    assert cached == 0, "nothing is cached yet"
    assert len(slots) == 4 and len(set(slots)) == 4, f"4 distinct slots expected, got {slots}"
    assert all(0 <= s < 16 for s in slots), f"slots must lie in 0..15: {slots}"
    assert check_stats(cache, 16) == {"free": 12, "cached": 0, "pinned": 0, "leased": 4}


@pytest.mark.rubric("prefix_match")
def test_released_prefix_is_reused_with_its_slots():
    """Rule: Acquire"""
    cache = rc.RadixCache(16)
    lease, _, slots = cache.acquire([1, 2, 3, 4])
    cache.release(lease, [1, 2, 3, 4])
    lease2, cached, slots2 = cache.acquire([1, 2, 3, 9, 9])
    assert cached == 3, f"[1, 2, 3] is cached: expected num_cached=3, got {cached}"
    assert slots2[:3] == slots[:3], "the cached tokens must come back with the slots that hold their KV"
    assert len(set(slots2)) == 5


@pytest.mark.rubric("prefix_match")
def test_whole_prompt_cached_still_computes_the_last_token():
    """Rule: Acquire"""
    cache = rc.RadixCache(16)
    lease, _, slots = cache.acquire([5, 6, 7])
    cache.release(lease, [5, 6, 7])
    _, cached, slots2 = cache.acquire([5, 6, 7])
    assert cached == 2, ("the last prompt token must be computed to produce logits: "
                         f"expected num_cached=2 for a fully cached 3-token prompt, got {cached}")
    assert slots2[:2] == slots[:2] and slots2[2] != slots[2]


@pytest.mark.rubric("edge_split")
def test_match_inside_an_edge_splits_it():
    """Rule: Edge splits"""
    cache = rc.RadixCache(16)
    lease, _, slots = cache.acquire([1, 2, 3, 4, 5])
    cache.release(lease, [1, 2, 3, 4, 5])
    lease2, cached, slots2 = cache.acquire([1, 2, 8])
    assert cached == 2 and slots2[:2] == slots[:2]
    s = check_stats(cache, 16)
    assert s["pinned"] == 2, f"only the two matched tokens are pinned, got {s}"
    cache.release(lease2, [1, 2, 8])
    _, cached, slots3 = cache.acquire([1, 2, 3, 4, 5, 6])
    assert cached == 5 and slots3[:5] == slots[:5], "the split must keep the rest of the edge cached"


@pytest.mark.rubric("pinning")
def test_pinned_prefix_survives_eviction():
    """Rule: Pinning"""
    cache = rc.RadixCache(8)
    lease, _, _ = cache.acquire([1, 2, 3])
    cache.release(lease, [1, 2, 3])
    reader, cached, _ = cache.acquire([1, 2, 3, 4])
    assert cached == 3
    freed = cache.evict(8)
    assert freed == 0, f"every cached slot is pinned by the running request, yet {freed} were evicted"


@pytest.mark.rubric("eviction")
def test_evict_frees_unpinned_cached_slots():
    """Rule: Eviction"""
    cache = rc.RadixCache(8)
    lease, _, _ = cache.acquire([1, 2, 3, 4])
    cache.release(lease, [1, 2, 3, 4])
    assert check_stats(cache, 8)["cached"] == 4
    freed = cache.evict(4)
    assert freed == 4
    assert check_stats(cache, 8) == {"free": 8, "cached": 0, "pinned": 0, "leased": 0}


@pytest.mark.rubric("eviction")
def test_acquire_evicts_when_the_pool_is_short():
    """Rules: Acquire; Eviction"""
    cache = rc.RadixCache(4)
    lease, _, _ = cache.acquire([1, 2, 3, 4])
    cache.release(lease, [1, 2, 3, 4])
    _, cached, slots = cache.acquire([7, 8, 9])
    assert cached == 0 and len(set(slots)) == 3


@pytest.mark.rubric("slot_accounting")
def test_abort_returns_uncached_slots():
    """Rules: Release and abort; Slot states"""
    cache = rc.RadixCache(8)
    lease, _, _ = cache.acquire([1, 2, 3])
    cache.extend(lease, 2)
    assert check_stats(cache, 8)["leased"] == 5
    cache.abort(lease)
    assert check_stats(cache, 8) == {"free": 8, "cached": 0, "pinned": 0, "leased": 0}


@pytest.mark.rubric("atomic_failure")
def test_short_pool_raises_and_changes_nothing():
    """Rule: Failure is atomic"""
    cache = rc.RadixCache(4)
    lease, _, _ = cache.acquire([1, 2, 3])
    before = cache.stats()
    with pytest.raises(rc.OutOfSlots):
        cache.acquire([4, 5])
    assert cache.stats() == before


@pytest.mark.rubric("atomic_failure")
def test_bad_input_is_rejected():
    """Rule: Bad input"""
    cache = rc.RadixCache(4)
    with pytest.raises(ValueError):
        cache.acquire([])
    with pytest.raises(KeyError):
        cache.abort(12345)
    assert cache.stats() == {"free": 4, "cached": 0, "pinned": 0, "leased": 0}


@pytest.mark.rubric("dedup")
def test_two_requests_computing_the_same_prefix():
    """Rule: Commit"""
    cache = rc.RadixCache(16)
    a, _, slots_a = cache.acquire([1, 2, 3, 4])
    b, _, slots_b = cache.acquire([1, 2, 3, 4])  # nothing cached yet: computed twice
    cache.release(a, [1, 2, 3, 4])
    kept = cache.commit(b, [1, 2, 3, 4])
    assert kept == slots_a, f"commit must adopt the tree's slots {slots_a}, got {kept}"
    s = check_stats(cache, 16)
    assert s == {"free": 12, "cached": 4, "pinned": 4, "leased": 0}, (
        f"b's four duplicate slots must be freed exactly once: {s}")
