"""Public tests for block_hash: the prompt's example and the basic behaviours.

Run: nox -s kata -- block_hash
"""

import pytest

from graders.impl import kata_impl
from graders.support import block_hash as hashes
from tests.block_hash.helpers import KVRecord

bh = kata_impl("block_hash")


# -- encoding -----------------------------------------------------------------------
@pytest.mark.rubric("encoding")
def test_one_hash_per_full_block():
    """Rule: Hashing"""
    hs = bh.block_hashes([1, 2, 3, 4, 5], 2)
    assert len(hs) == 2, f"5 tokens in blocks of 2: 2 full blocks, so 2 hashes; got {len(hs)}"
    assert all(isinstance(h, bytes) for h in hs), f"hashes must be bytes: {hs!r}"
    assert bh.block_hashes([1], 2) == [], "a partial block has no hash"


@pytest.mark.rubric("encoding")
def test_hashes_are_chained():
    """Rules: Hashing; Content"""
    a = bh.block_hashes([1, 2, 7, 7], 2)
    b = bh.block_hashes([1, 3, 7, 7], 2)
    assert a[0] != b[0]
    assert a[1] != b[1], ("block 1 holds [7, 7] in both, but block 0 differs: block 1's hash "
                          "must cover block 0's hash")
    assert bh.block_hashes([1, 2, 7, 7, 9], 2)[:2] == a, "same prefix, same hashes"


@pytest.mark.rubric("encoding")
def test_namespace_changes_every_hash():
    """Rule: Hashing"""
    a = bh.block_hashes([1, 2, 3, 4], 2, namespace="lora-a")
    b = bh.block_hashes([1, 2, 3, 4], 2, namespace="lora-b")
    assert a[0] != b[0] and a[1] != b[1], "different namespaces must never share a block hash"


@pytest.mark.rubric("encoding")
def test_hash_fn_is_applied():
    """Rule: Hashing"""
    hs = bh.block_hashes([1, 2, 3, 4], 2, hash_fn=hashes.constant)
    assert hs == [b"\x00", b"\x00"], (
        f"each block hash is hash_fn's output; hashes.constant returns b'\\x00', got {hs!r}")


# -- the pool -----------------------------------------------------------------------
@pytest.mark.rubric("chaining")
def test_prompt_example():
    """Rules: Allocate; Caching; Free and lazy eviction"""
    pool = bh.BlockPool(num_blocks=4, block_size=2)
    table_a, computed = pool.allocate("a", [1, 2, 3, 4, 5])
    assert computed == 0 and len(table_a) == 3 and len(set(table_a)) == 3, (table_a, computed)
    assert sorted(pool.cached_blocks()) == sorted(table_a[:2]), (
        "the prompt's two full blocks become cached at allocate")
    pool.free("a")
    assert pool.num_free_blocks() == 4
    table_b, computed = pool.allocate("b", [1, 2, 3, 4, 9])
    assert computed == 4 and table_b[:2] == table_a[:2], (
        f"[1, 2] and [3, 4] are cached: expected ({table_a[:2]} + 1 fresh block, 4), "
        f"got ({table_b}, {computed})")
    pool.free("b")
    table_c, computed = pool.allocate("c", [1, 2, 3, 4])
    assert computed == 2 and table_c[0] == table_a[0], (
        f"the last prompt token is always computed: expected 2 computed tokens, got {computed}")


@pytest.mark.rubric("chaining")
def test_same_block_after_a_different_prefix_is_a_miss():
    """Rule: Content"""
    pool = bh.BlockPool(8, 2)
    pool.allocate("a", [1, 2, 7, 7, 0])
    _, computed = pool.allocate("b", [5, 6, 7, 7, 0])
    assert computed == 0, "block 1 holds [7, 7] in both prompts, but block 0 differs: no hit"


@pytest.mark.rubric("chaining")
def test_namespaces_do_not_share():
    """Rule: Content"""
    pool = bh.BlockPool(8, 2)
    pool.allocate("a", [1, 2, 3, 4, 5], namespace="adapter-1")
    _, computed = pool.allocate("b", [1, 2, 3, 4, 5], namespace="adapter-2")
    assert computed == 0, "a different namespace (LoRA adapter / cache salt) never shares KV"
    _, computed = pool.allocate("c", [1, 2, 3, 4, 5], namespace="adapter-1")
    assert computed == 4


@pytest.mark.rubric("last_token_rule")
def test_last_token_is_always_computed():
    """Rule: Allocate"""
    pool = bh.BlockPool(16, 4)
    pool.allocate("a", list(range(12)))
    _, computed = pool.allocate("b", list(range(12)))
    assert computed == 8, f"12 tokens = 3 full blocks, all cached: reuse 2 (8 tokens), got {computed}"
    _, computed = pool.allocate("c", list(range(12)) + [1, 1, 1, 1, 1])
    assert computed == 12, f"3 blocks + 5 tokens: reuse all 3 (12 tokens), got {computed}"


@pytest.mark.rubric("lazy_eviction")
def test_freed_blocks_stay_hittable():
    """Rules: Free and lazy eviction; Fresh blocks and eviction"""
    pool = bh.BlockPool(5, 2)
    table, _ = pool.allocate("a", [1, 2, 3, 4, 5])
    pool.free("a")
    assert sorted(pool.cached_blocks()) == sorted(table[:2]), "freeing keeps the content cached"
    pool.allocate("b", [9, 9, 9])   # 2 blocks out of the 3 empty ones: no eviction needed
    _, computed = pool.allocate("c", [1, 2, 3, 4, 5])
    assert computed == 4, "the freed blocks were still cached: the empty blocks go first"


@pytest.mark.rubric("lazy_eviction")
def test_decode_blocks_are_cached():
    """Rule: Caching"""
    pool = bh.BlockPool(8, 2)
    table, _ = pool.allocate("a", [1, 2, 3])
    new = pool.append("a", [4, 5])
    assert len(new) == 1, f"[1,2][3,4][5]: one block added, got {new}"
    pool.free("a")
    _, computed = pool.allocate("b", [1, 2, 3, 4, 6])
    assert computed == 4, "the block filled by decoding ([3, 4]) is cached too"


@pytest.mark.rubric("eviction_order")
def test_tail_is_evicted_before_head():
    """Rule: Free and lazy eviction"""
    pool = bh.BlockPool(3, 2)
    table, _ = pool.allocate("a", [1, 2, 3, 4, 5, 6])
    pool.free("a")
    pool.allocate("b", [9])   # needs 1 block, none empty: evicts the tail [5, 6]
    pool.free("b")
    _, computed = pool.allocate("c", [1, 2, 3, 4, 9])
    assert computed == 4, ("the tail block ([5, 6]) must be evicted first; [1,2][3,4] "
                           f"should still hit, got {computed} computed tokens")


@pytest.mark.rubric("collision_safety")
def test_constant_hash_never_shares_wrong_kv():
    """Rule: Collisions"""
    pool = bh.BlockPool(6, 2, hashes.constant)
    kv = KVRecord(2)
    table, computed = pool.allocate("a", [1, 2, 3, 4, 5])
    kv.write(table, computed // 2, "", [1, 2, 3, 4, 5])
    for rid, tokens in (("b", [1, 2, 9, 9, 5]), ("c", [3, 4, 3, 4, 5]), ("d", [1, 2, 3, 4, 5])):
        table, computed = pool.allocate(rid, tokens)
        kv.check_hits(table, computed // 2, "", tokens, f"allocate({rid!r}, {tokens}): ")
        kv.write(table, computed // 2, "", tokens)
        pool.free(rid)


@pytest.mark.rubric("refcount")
def test_shared_blocks_are_freed_by_the_last_holder():
    """Rule: Free and lazy eviction"""
    pool = bh.BlockPool(6, 2)
    pool.allocate("a", [1, 2, 3, 4, 5])
    pool.allocate("b", [1, 2, 3, 4, 6])
    assert pool.num_free_blocks() == 2, "b shares a's two full blocks: 3 + 1 blocks held"
    pool.free("a")
    assert pool.num_free_blocks() == 3, "the shared blocks are still held by b"
    pool.free("b")
    assert pool.num_free_blocks() == 6


@pytest.mark.rubric("refcount")
def test_double_free_is_an_error():
    """Rule: Errors"""
    pool = bh.BlockPool(4, 2)
    pool.allocate("a", [1, 2, 3])
    pool.free("a")
    with pytest.raises(KeyError):
        pool.free("a")
    assert pool.num_free_blocks() == 4


@pytest.mark.rubric("refcount")
def test_a_chat_turn_after_a_fully_cached_prompt_is_cached():
    """The capped last block of a fully cached prompt is computed again into a fresh block:
    a duplicate, cached as a second copy; the answer's blocks are cached after it as usual.
    Rule: Caching"""
    pool = bh.BlockPool(8, 2)
    t_a, _ = pool.allocate("a", [1, 2, 3, 4])
    pool.free("a")
    t_b, computed = pool.allocate("b", [1, 2, 3, 4])     # reuses [1,2]; [3,4] computed again
    assert computed == 2 and t_b[1] != t_a[1]
    new = pool.append("b", [5, 6, 7])                     # the answer fills [5,6]
    assert sorted(pool.cached_blocks()) == sorted(t_a + [t_b[1], new[0]]), (
        f"a's blocks {t_a}, b's duplicate {t_b[1]} and the answer's block {new[0]} are all "
        f"cached; got {pool.cached_blocks()}")
    pool.free("b")
    _, computed = pool.allocate("c", [1, 2, 3, 4, 5, 6, 0])
    assert computed == 6, "the next turn reuses the answer's block too"
