"""Hidden tests for block_hash: the traps of KATAS.md section 2, one scenario at a time,
plus hypothesis properties built to hit them (small alphabets, shared prefixes, prompts
near a block boundary, namespaces that look like tokens)."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from graders.impl import kata_impl
from graders.support import block_hash as hashes
from tests.block_hash.helpers import KVRecord

bh = kata_impl("block_hash")

ALL_HASHES = [hashes.sha256, hashes.exact, hashes.tiny, hashes.constant]
STRONG = [hashes.sha256, hashes.exact]
hash_ids = [f.__name__ for f in ALL_HASHES]


def state(pool):
    return pool.num_free_blocks(), sorted(pool.cached_blocks())


# =====================================================================================
# encoding: block_hashes
# =====================================================================================
namespaces = st.sampled_from(["", "1", "12", "a", "a,", ",", "\x00", "\x01", "é", "1,2"])
trap_tokens = st.sampled_from([0, 1, 2, 3, 12, 21, 23, 44, 255, 256, 65535, 65536,
                               2**31, 2**32 - 1])


@pytest.mark.rubric("encoding")
@pytest.mark.parametrize("hash_fn", STRONG, ids=lambda f: f.__name__)
@given(seqs=st.lists(st.tuples(namespaces, st.lists(trap_tokens, max_size=8)),
                     min_size=2, max_size=6),
       bs=st.integers(1, 3))
def test_equal_hash_iff_equal_content(hash_fn, seqs, bs):
    """With a collision-free hash_fn, two blocks (at any depths) get equal hashes exactly
    when they have the same namespace and the same tokens from position 0.
    Rule: Hashing"""
    seen: dict[bytes, tuple[str, tuple[int, ...]]] = {}
    for ns, toks in seqs:
        hs = bh.block_hashes(toks, bs, ns, hash_fn)
        assert len(hs) == len(toks) // bs, (
            f"block_hashes({toks}, {bs}, {ns!r}): expected {len(toks) // bs} hashes, got {len(hs)}")
        for i, h in enumerate(hs):
            content = (ns, tuple(toks[:(i + 1) * bs]))
            other = seen.setdefault(h, content)
            assert other == content, (
                f"block_size={bs}, hash_fn={hash_fn.__name__}: the block for namespace="
                f"{content[0]!r} tokens={list(content[1])} and the block for namespace="
                f"{other[0]!r} tokens={list(other[1])} get the same hash {h!r}: the encoding "
                "(or the chaining) is ambiguous")
    # determinism and prefix stability
    ns, toks = seqs[0]
    assert bh.block_hashes(toks, bs, ns, hash_fn) == bh.block_hashes(toks + [7], bs, ns, hash_fn)[:len(toks) // bs]


@pytest.mark.rubric("encoding")
@pytest.mark.parametrize("hash_fn", STRONG, ids=lambda f: f.__name__)
@pytest.mark.parametrize("a, b", [
    (("1", [2, 3]), ("", [12, 3])),
    (("", [1, 23]), ("", [12, 3])),
    (("12", [3, 4]), ("1", [23, 4])),
    (("a,", [1, 2]), ("a", [1, 2])),
    (("", [256, 0]), ("", [1, 0])),
    (("", [65536, 1]), ("", [1, 65537])),
    (("\x00", [0, 0]), ("", [0, 0])),
    (("", [0, 0]), ("\x00\x00\x00\x00", [0, 0])),
])
def test_look_alike_inputs_get_different_hashes(hash_fn, a, b):
    """Rule: Hashing"""
    ha = bh.block_hashes(a[1], 2, a[0], hash_fn)
    hb = bh.block_hashes(b[1], 2, b[0], hash_fn)
    assert ha[0] != hb[0], (
        f"namespace={a[0]!r} tokens={a[1]} and namespace={b[0]!r} tokens={b[1]} are different "
        f"blocks but hash alike under {hash_fn.__name__}: the encoding is ambiguous")


def _exact_encodings(ns: str, toks: list[int], bs: int) -> dict[bytes, tuple]:
    """{the bytes hashed for a block: its input (parent, namespace, block tokens)} for
    every full block of one call; under ``exact`` a block's hash IS those bytes."""
    out: dict[bytes, tuple] = {}
    parent = None
    for i, h in enumerate(bh.block_hashes(toks, bs, ns, hashes.exact)):
        out[h] = (parent, ns, tuple(toks[i * bs:(i + 1) * bs]))
        parent = h
    return out


def _utf8_pieces(data: bytes, longest: int = 16) -> set[str]:
    """Every non-empty substring of ``data`` that is valid UTF-8, as a str."""
    return {piece for piece, _ in _utf8_pieces_at(data, longest)}


def _utf8_pieces_at(data: bytes, longest: int = 16) -> set[tuple[str, int]]:
    """(piece, where it ends) for every non-empty substring of ``data`` that is valid UTF-8."""
    pieces = set()
    for i in range(len(data)):
        for j in range(i + 1, min(len(data), i + longest) + 1):
            try:
                pieces.add((data[i:j].decode("utf-8"), j))
            except UnicodeDecodeError:
                continue
    return pieces


def _as_tokens(rest: bytes) -> list[list[int]]:
    """``rest`` read as 4-byte tokens, big- and little-endian (none if it does not divide)."""
    if not rest or len(rest) % 4:
        return []
    return [[int.from_bytes(rest[k:k + 4], order) for k in range(0, len(rest), 4)]
            for order in ("big", "little")]


ENCODING_SEEDS = [("a", [1, 2], 1), ("a", [1, 2], 2), ("", [12, 3], 1), ("", [12, 3], 2),
                  ("", [65536, 1], 1), ("\x00", [0, 0], 1), ("é", [2**32 - 1, 0], 1)]


@pytest.mark.rubric("encoding")
@pytest.mark.parametrize("seed", ENCODING_SEEDS, ids=lambda s: f"{s[0]!r}-{s[1]}-bs{s[2]}")
def test_the_encoding_is_injective_against_inputs_built_from_it(seed):
    """The prompt: "two different (parent, namespace, tokens) inputs never give the same
    bytes". Under ``exact`` the hash is the encoding itself, so the test sees it and builds
    look-alike inputs from it: every UTF-8 piece of an encoding becomes a namespace, with
    every tail of the block's tokens as the tokens, as one block (any block size) or one
    block per token (so a parent comes first). Any separator that can occur inside a
    namespace, a boundary between parent and namespace or between namespace and tokens that
    can shift, or a block size that is not told apart shows up as two different inputs with
    the same bytes.
    Rule: Hashing"""
    ns, toks, bs = seed
    seen: dict[bytes, tuple] = {}

    def add(found: dict[bytes, tuple]) -> None:
        for data, key in found.items():
            other = seen.setdefault(data, key)
            assert other == key, (
                f"two different inputs give the same bytes {data!r}: (parent, namespace, "
                f"tokens) = {other!r} and {key!r}; the encoding is ambiguous (a separator that "
                "can occur inside a field, a boundary that can shift, or block sizes that are "
                "not told apart)")

    add(_exact_encodings(ns, toks, bs))
    for data in list(seen):
        tails = {tuple(toks[i:]) for i in range(len(toks))}
        for piece, end in _utf8_pieces_at(data):
            for tail in tails:
                add(_exact_encodings(piece, list(tail), len(tail)))
                if len(tail) > 1:
                    add(_exact_encodings(piece, list(tail), 1))
            # the piece as a first block's namespace and the bytes after it as its tokens:
            # a first block must never encode like a later one
            for rest in _as_tokens(data[end:]):
                add(_exact_encodings(piece, rest, len(rest)))


@pytest.mark.rubric("encoding")
@pytest.mark.parametrize("hash_fn", STRONG, ids=lambda f: f.__name__)
def test_long_namespaces_and_deep_chains(hash_fn):
    """Review: a one-byte length prefix fails (or wraps) at 256 bytes, and under ``exact``
    a parent hash grows with the depth of the chain.
    Rule: Hashing"""
    long_a = bh.block_hashes([5], 1, "a" * 256, hash_fn)
    empty = bh.block_hashes([0x61616161] * 64 + [5], 65, "", hash_fn)
    assert long_a[0] != empty[0], (
        "namespace 'a' * 256 with tokens [5] and namespace '' with tokens "
        "[0x61616161] * 64 + [5] are different blocks but hash alike: the namespace's "
        "length is not encoded in full")
    wide = bh.block_hashes([1, 2, 3], 1, "é" * 300, hash_fn)
    assert len(wide) == 3 and len(set(wide)) == 3
    deep = bh.block_hashes(list(range(40)), 1, "ns", hash_fn)
    assert len(deep) == 40 and len(set(deep)) == 40, "40 blocks of a 40-token chain"


@pytest.mark.rubric("encoding")
@pytest.mark.parametrize("hash_fn", [hashes.tiny, hashes.constant], ids=lambda f: f.__name__)
@given(toks=st.lists(st.integers(0, 9), max_size=12), ns=namespaces)
def test_every_hash_is_hash_fn_output(hash_fn, toks, ns):
    """Rule: Hashing"""
    hs = bh.block_hashes(toks, 3, ns, hash_fn)
    allowed = {bytes([v]) for v in range(4)} if hash_fn is hashes.tiny else {b"\x00"}
    assert len(hs) == len(toks) // 3 and all(h in allowed for h in hs), (
        f"block hashes must be hash_fn's outputs ({hash_fn.__name__}: {sorted(allowed)}), "
        f"got {hs!r}")


@pytest.mark.rubric("encoding")
@given(a=st.lists(st.integers(0, 2), min_size=4, max_size=10),
       b=st.lists(st.integers(0, 2), min_size=4, max_size=10))
def test_hash_i_depends_on_the_whole_prefix(a, b):
    """Rule: Hashing"""
    ha = bh.block_hashes(a, 2)
    hb = bh.block_hashes(b, 2)
    for i in range(min(len(ha), len(hb))):
        same = a[:(i + 1) * 2] == b[:(i + 1) * 2]
        assert (ha[i] == hb[i]) == same, (
            f"block {i} of {a} and of {b}: prefixes {'equal' if same else 'differ'}, so the "
            f"hashes must {'match' if same else 'differ'}")


@pytest.mark.rubric("encoding")
@pytest.mark.parametrize("args", [
    ([1, 2], 0), ([1, 2], -1), ([-1, 2], 2), ([2**32, 1], 2), ([1, 2.0], 2),
])
def test_block_hashes_rejects_bad_input(args):
    """Rule: Errors"""
    with pytest.raises((ValueError, TypeError)):
        bh.block_hashes(*args)


@pytest.mark.rubric("encoding")
def test_block_hashes_accepts_the_full_token_range():
    """Rule: Hashing"""
    hs = bh.block_hashes([0, 2**32 - 1, 2**31, 7], 2, hash_fn=hashes.exact)
    assert len(hs) == 2 and hs[0] != hs[1]


# =====================================================================================
# chaining: the pool hits only exact prefixes
# =====================================================================================
@pytest.mark.rubric("chaining")
@given(a=st.lists(st.integers(0, 1), min_size=1, max_size=12),
       b=st.lists(st.integers(0, 1), min_size=1, max_size=12),
       bs=st.integers(1, 3), hash_fn=st.sampled_from(STRONG))
def test_hits_stop_at_the_first_differing_block(a, b, bs, hash_fn):
    """Rules: Allocate; Content"""
    pool = bh.BlockPool(32, bs, hash_fn)
    pool.allocate("a", a)
    pool.free("a")
    common = 0
    while (common + 1) * bs <= min(len(a), len(b)) and \
            a[:(common + 1) * bs] == b[:(common + 1) * bs]:
        common += 1
    b = b + [9]          # a last token nobody cached: the last-token cap never binds here
    want = common * bs
    _, computed = pool.allocate("b", b)
    assert computed == want, (
        f"block_size={bs}: cached {a}, then allocate {b}: the first {common} blocks match, so "
        f"num_computed_tokens must be {want}, got {computed}")


@pytest.mark.rubric("chaining")
def test_matching_tail_blocks_after_a_different_head_do_not_hit():
    """Rule: Content"""
    pool = bh.BlockPool(16, 2)
    pool.allocate("a", [1, 2, 3, 4, 5, 6, 0])
    pool.free("a")
    _, computed = pool.allocate("b", [9, 9, 3, 4, 5, 6, 0])
    assert computed == 0, "blocks 1-2 match but block 0 does not: nothing may hit"
    pool.free("b")
    _, computed = pool.allocate("c", [1, 2, 9, 9, 5, 6, 0])
    assert computed == 2, "only block 0 matches: blocks 1-2 follow a different block 1"


@pytest.mark.rubric("chaining")
@given(ns_a=namespaces, ns_b=namespaces, toks=st.lists(st.integers(0, 2), min_size=3, max_size=9))
def test_namespace_is_part_of_every_block(ns_a, ns_b, toks):
    """Rule: Content"""
    pool = bh.BlockPool(16, 2)
    pool.allocate("a", toks, ns_a)
    pool.free("a")
    _, computed = pool.allocate("b", toks + [9], ns_b)
    want = len(toks) // 2 * 2 if ns_a == ns_b else 0
    assert computed == want, (f"cached {toks} under namespace {ns_a!r}; the same tokens under "
                              f"{ns_b!r} (+ one more token) must compute {want} tokens, got "
                              f"{computed}")


@pytest.mark.rubric("chaining")
def test_decode_blocks_chain_on_the_prompt():
    """Rules: Caching; Content"""
    pool = bh.BlockPool(16, 2)
    pool.allocate("a", [1, 2, 3])
    pool.append("a", [4, 5, 6, 7])     # [1,2][3,4][5,6][7]
    pool.free("a")
    _, computed = pool.allocate("b", [9, 9, 3, 4, 5, 6, 7])
    assert computed == 0, "decode blocks [3,4],[5,6] hang off block [1,2]: no hit after [9,9]"
    pool.free("b")
    _, computed = pool.allocate("c", [1, 2, 3, 4, 5, 6, 8])
    assert computed == 6


# =====================================================================================
# last_token_rule
# =====================================================================================
@pytest.mark.rubric("last_token_rule")
@given(bs=st.integers(1, 4), blocks=st.integers(0, 4), extra=st.integers(0, 4))
def test_cap_is_len_minus_one_block_aligned(bs, blocks, extra):
    """Rule: Allocate"""
    extra = extra % bs
    n = blocks * bs + extra
    assume(n >= 1)
    tokens = [t % 3 for t in range(n)]
    pool = bh.BlockPool(32, bs)
    pool.allocate("a", tokens + [0] * bs)   # caches every full block of tokens
    table, computed = pool.allocate("b", tokens)
    want = (n - 1) // bs * bs
    assert computed == want, (
        f"block_size={bs}, a fully cached {n}-token prompt: num_computed_tokens must be "
        f"{want} (block-aligned, at most len - 1), got {computed}")
    assert len(table) == -(-n // bs), f"the table needs {-(-n // bs)} blocks, got {table}"


@pytest.mark.rubric("last_token_rule")
def test_single_token_and_exact_block_prompts():
    """Rule: Allocate"""
    pool = bh.BlockPool(8, 1)
    pool.allocate("a", [5])
    _, computed = pool.allocate("b", [5])
    assert computed == 0, "a 1-token prompt computes its only token"
    pool = bh.BlockPool(8, 4)
    pool.allocate("a", [1, 2, 3, 4])
    table, computed = pool.allocate("b", [1, 2, 3, 4])
    assert computed == 0 and len(table) == 1, (
        f"one full block, cached: the last token must be computed, so nothing is reused "
        f"(0, one fresh block); got ({table}, {computed})")


@pytest.mark.rubric("last_token_rule")
def test_capped_block_is_a_fresh_block():
    """Rule: Allocate"""
    pool = bh.BlockPool(8, 2)
    t_a, _ = pool.allocate("a", [1, 2, 3, 4])
    t_b, computed = pool.allocate("b", [1, 2, 3, 4])
    assert computed == 2 and t_b[0] == t_a[0] and t_b[1] != t_a[1], (
        f"a's blocks {t_a}; b must reuse block 0 and compute block 1 into a fresh block, "
        f"got ({t_b}, {computed})")


# =====================================================================================
# lazy_eviction
# =====================================================================================
@pytest.mark.rubric("lazy_eviction")
def test_free_keeps_content_until_memory_is_needed():
    """Rules: Free and lazy eviction; Fresh blocks and eviction"""
    pool = bh.BlockPool(6, 2)
    t_a, _ = pool.allocate("a", [1, 2, 3, 4, 5, 6])
    pool.free("a")
    assert sorted(pool.cached_blocks()) == sorted(t_a), "freed blocks keep their content"
    t_b, _ = pool.allocate("b", [7, 7, 7, 7, 7, 7])  # exactly the 3 empty blocks
    assert not set(t_b) & set(t_a), f"3 empty blocks were free: no cached block may be taken ({t_b})"
    pool.free("b")
    t_c, computed = pool.allocate("c", [1, 2, 3, 4, 5, 6, 0])
    assert computed == 6 and t_c[:3] == t_a, (
        f"a's blocks were never needed, so they must all hit: got ({t_c}, {computed})")


@pytest.mark.rubric("lazy_eviction")
def test_only_as_many_cached_blocks_as_needed_are_evicted():
    """Rule: Fresh blocks and eviction"""
    pool = bh.BlockPool(4, 1)
    t_a, _ = pool.allocate("a", [1, 2, 3, 4])
    pool.free("a")                    # queue: [1,2,3,4], [1,2,3], [1,2], [1] (tail first)
    t_b, _ = pool.allocate("b", [9])  # evicts exactly one block: a's tail
    assert t_b == [t_a[3]], f"the one eviction must take a's tail block {t_a[3]}, got {t_b}"
    assert set(t_a[:3]) <= set(pool.cached_blocks()), f"a's blocks {t_a[:3]} stay cached"
    pool.free("b")
    _, computed = pool.allocate("c", [1, 2, 3, 7])
    assert computed == 3


@pytest.mark.rubric("lazy_eviction")
def test_hit_takes_a_free_block_out_of_the_queue():
    """Rules: Fresh blocks and eviction; Errors"""
    pool = bh.BlockPool(4, 2)
    t_a, _ = pool.allocate("a", [1, 2, 3, 4, 5])
    pool.free("a")
    t_b, computed = pool.allocate("b", [1, 2, 3, 4, 6])
    assert computed == 4
    assert pool.num_free_blocks() == 1, "b holds 3 blocks (2 hits taken back out of the queue)"
    with pytest.raises(bh.OutOfBlocks):
        pool.allocate("c", [8, 8, 8])   # needs 2; only 1 free: the held hits cannot be evicted
    pool.allocate("d", [8])
    assert pool.num_free_blocks() == 0
    assert set(t_b[:2]) <= set(pool.cached_blocks())


@pytest.mark.rubric("lazy_eviction")
def test_partial_block_is_not_cached_until_it_fills():
    """Rule: Caching"""
    pool = bh.BlockPool(8, 4)
    t, _ = pool.allocate("a", [1, 2, 3, 4, 5, 6])
    assert sorted(pool.cached_blocks()) == [t[0]], "only the full block is cached"
    pool.append("a", [7])
    assert sorted(pool.cached_blocks()) == [t[0]]
    new = pool.append("a", [8, 9])
    assert len(new) == 1 and sorted(pool.cached_blocks()) == sorted([t[0], t[1]]), (
        "the second block filled during decode: it is cached now")
    pool.free("a")
    _, computed = pool.allocate("b", [1, 2, 3, 4, 5, 6, 7, 8, 0])
    assert computed == 8


@pytest.mark.rubric("lazy_eviction")
def test_append_takes_its_blocks_before_caching():
    """The call evicts a's cached copy of [1,2,3,4] to make room and caches b's block for the
    same content: the content stays cached. (Under the kata's first rule, which left a
    duplicate uncached, the order of the two steps mattered; now both orders agree.)
    Rule: Fresh blocks and eviction"""
    pool = bh.BlockPool(3, 2)
    t_a, _ = pool.allocate("a", [1, 2, 3])
    t_b, computed = pool.allocate("b", [1, 2, 3])    # hits [1,2]; its block 1 is fresh
    assert computed == 2
    pool.append("a", [4])                            # a's block 1 caches [1,2,3,4]
    pool.free("a")                                   # ... and waits in the queue
    new = pool.append("b", [4, 5])                   # fills [1,2,3,4], needs one block
    assert new == [t_a[1]], f"the only free block is a's block {t_a[1]}: got {new}"
    assert sorted(pool.cached_blocks()) == sorted([t_b[0], t_b[1]]), (
        "append takes (and here evicts) its new blocks first and then caches b's filled "
        f"block {t_b[1]}: [1,2,3,4] must stay cached; cached: {pool.cached_blocks()}")
    pool.free("b")
    _, computed = pool.allocate("c", [1, 2, 3, 4, 0])
    assert computed == 4


# =====================================================================================
# eviction_order
# =====================================================================================
@pytest.mark.rubric("eviction_order")
@pytest.mark.parametrize("k", [1, 2, 3])
def test_evictions_take_the_tail_first(k):
    """Rule: Free and lazy eviction"""
    pool = bh.BlockPool(4, 2)
    pool.allocate("a", [1, 2, 3, 4, 5, 6, 7, 8])
    pool.free("a")
    for f in range(k):             # k one-token requests, no empty block: k evictions
        pool.allocate(f"f{f}", [9])
    for f in range(k):
        pool.free(f"f{f}")
    _, computed = pool.allocate("c", [1, 2, 3, 4, 5, 6, 7, 8][:8 - 2 * k] + [0])
    want = 2 * (4 - k)
    assert computed == want, (
        f"{k} evictions from a's 4 cached blocks must take the last {k}; the first {4 - k} "
        f"still hit ({want} tokens), got {computed}")


@pytest.mark.rubric("eviction_order")
def test_least_recently_freed_request_goes_first():
    """Rule: Fresh blocks and eviction"""
    pool = bh.BlockPool(4, 2)
    pool.allocate("a", [1, 1, 1, 1])
    pool.allocate("b", [2, 2, 2, 2])
    pool.free("a")
    pool.free("b")
    pool.allocate("x", [9, 9, 9])   # 2 evictions: a's two blocks
    pool.free("x")
    _, computed_b = pool.allocate("b2", [2, 2, 2, 2, 0])
    assert computed_b == 4, "b was freed after a: b's blocks must survive a's"


@pytest.mark.rubric("eviction_order")
def test_a_hit_refreshes_the_blocks():
    """Rule: Fresh blocks and eviction"""
    pool = bh.BlockPool(4, 2)
    pool.allocate("a", [1, 1, 1, 1])
    pool.allocate("b", [2, 2, 2, 2])
    pool.free("a")
    pool.free("b")
    pool.allocate("a2", [1, 1, 1, 1, 0])  # hits a's blocks: out of the queue, back at its end
    pool.free("a2")
    pool.allocate("x", [9, 9, 9])          # 2 evictions: b's two blocks now
    pool.free("x")
    _, computed = pool.allocate("a3", [1, 1, 1, 1, 0])
    assert computed == 4, "a's blocks were used after b was freed: b's go first"


@pytest.mark.rubric("eviction_order")
def test_shared_prefix_outlives_both_tails():
    """Rule: Free and lazy eviction"""
    pool = bh.BlockPool(6, 2)
    t_a, _ = pool.allocate("a", [1, 2, 3, 4, 5, 6])
    t_b, _ = pool.allocate("b", [1, 2, 3, 4, 7, 8])   # shares [1,2][3,4]
    pool.free("a")
    pool.free("b")     # queue: a's [5,6], b's [7,8], then [3,4], [1,2]
    for f in range(4):               # 2 empty blocks, then 2 evictions ([5,6] then [7,8])
        pool.allocate(f"f{f}", [9])
    assert sorted(pool.cached_blocks()) == sorted(t_a[:2]), (
        f"the tails go first: the shared prefix {t_a[:2]} must still be cached, "
        f"got cached blocks {pool.cached_blocks()}")
    for f in range(4):
        pool.free(f"f{f}")
    _, computed = pool.allocate("z", [1, 2, 3, 4, 0])
    assert computed == 4


@pytest.mark.rubric("eviction_order")
@given(lengths=st.lists(st.integers(1, 5), min_size=1, max_size=4), squeeze=st.integers(1, 12))
def test_no_block_outlives_its_parent(lengths, squeeze):
    """Free several requests (distinct first blocks), then force evictions with one-token
    requests (never cached): the survivors are exactly the most recently queued blocks, so
    every surviving block's parent survives too.
    Rule: Free and lazy eviction"""
    bs = 2
    pool = bh.BlockPool(sum(lengths) + len(lengths), bs)
    order = []
    for r, n in enumerate(lengths):
        toks = [r + 10, 0] + [t % 3 for t in range(2 * n - 2)]
        t, _ = pool.allocate(f"r{r}", toks + [0])
        order.append(t[:n])
    for r in range(len(lengths)):
        pool.free(f"r{r}")
    k = min(squeeze, sum(lengths))
    for f in range(len(lengths) + k):   # the empty (partial) blocks, then k evictions
        pool.allocate(f"f{f}", [99])
    queue = [b for blocks in order for b in reversed(blocks)]
    want = sorted(queue[k:])
    got = sorted(pool.cached_blocks())
    assert got == want, (
        f"requests freed in order with blocks {order} (head first): after {k} evictions the "
        f"cached blocks must be {want}, got {got}")


# =====================================================================================
# collision_safety
# =====================================================================================
@pytest.mark.rubric("collision_safety")
@pytest.mark.parametrize("hash_fn", [hashes.tiny, hashes.constant], ids=lambda f: f.__name__)
def test_same_tokens_under_another_parent(hash_fn):
    """Rule: Collisions"""
    pool = bh.BlockPool(16, 2, hash_fn)
    kv = KVRecord(2)
    for rid, toks in (("a", [1, 2, 3, 4, 0]), ("b", [5, 6, 0])):
        t, c = pool.allocate(rid, toks)
        kv.write(t, c // 2, "", toks)
    toks = [5, 6, 3, 4, 0]    # block 0 hits b's [5,6]; block [3,4] is cached only after [1,2]
    t, c = pool.allocate("c", toks)
    kv.check_hits(t, c // 2, "", toks, f"allocate('c', {toks}) with {hash_fn.__name__}: ")


@pytest.mark.rubric("collision_safety")
@pytest.mark.parametrize("hash_fn", [hashes.tiny, hashes.constant], ids=lambda f: f.__name__)
def test_same_tokens_under_another_namespace(hash_fn):
    """Rule: Collisions"""
    pool = bh.BlockPool(16, 2, hash_fn)
    kv = KVRecord(2)
    t, c = pool.allocate("a", [1, 2, 3, 4, 0], "lora-a")
    kv.write(t, c // 2, "lora-a", [1, 2, 3, 4, 0])
    t, c = pool.allocate("b", [1, 2, 3, 4, 0], "lora-b")
    kv.check_hits(t, c // 2, "lora-b", [1, 2, 3, 4, 0], f"{hash_fn.__name__}: ")


@pytest.mark.rubric("collision_safety")
@pytest.mark.parametrize("hash_fn", [hashes.tiny, hashes.constant], ids=lambda f: f.__name__)
@given(prompts=st.lists(st.tuples(st.sampled_from(["", "n"]),
                                  st.lists(st.integers(0, 2), min_size=1, max_size=8)),
                        min_size=2, max_size=10),
       keep=st.lists(st.booleans(), min_size=10, max_size=10))
def test_weak_hash_never_returns_other_content(hash_fn, prompts, keep):
    """Rule: Collisions"""
    pool = bh.BlockPool(64, 2, hash_fn)
    kv = KVRecord(2)
    for r, (ns, toks) in enumerate(prompts):
        t, c = pool.allocate(f"r{r}", toks, ns)
        kv.check_hits(t, c // 2, ns, toks, f"{hash_fn.__name__}, prompts {prompts[:r + 1]}: ")
        assert c % 2 == 0 and c <= len(toks)
        kv.write(t, c // 2, ns, toks)
        if not keep[r]:
            pool.free(f"r{r}")


@pytest.mark.rubric("collision_safety")
@pytest.mark.parametrize("hash_fn", [hashes.tiny, hashes.constant], ids=lambda f: f.__name__)
def test_weak_hash_after_eviction_and_reuse(hash_fn):
    """A block evicted and refilled with other content must not be found through the
    key of what it held before.
    Rule: Collisions"""
    pool = bh.BlockPool(3, 2, hash_fn)
    kv = KVRecord(2)
    steps = [("a", [1, 2, 3, 4, 0]), ("b", [3, 4, 1, 2, 0]), ("c", [1, 2, 1, 2, 0]),
             ("d", [3, 4, 3, 4, 0]), ("e", [1, 2, 3, 4, 1]), ("f", [3, 4, 1, 2, 1])]
    for rid, toks in steps:
        t, c = pool.allocate(rid, toks)
        kv.check_hits(t, c // 2, "", toks, f"{hash_fn.__name__}, allocate({rid!r}, {toks}): ")
        kv.write(t, c // 2, "", toks)
        pool.free(rid)


# =====================================================================================
# refcount: sharing, duplicates, errors
# =====================================================================================
@pytest.mark.rubric("refcount")
def test_refcounts_with_three_holders():
    """Rule: Free and lazy eviction"""
    pool = bh.BlockPool(8, 2)
    for rid in "abc":
        pool.allocate(rid, [1, 2, 3, 4, 5])
    assert pool.num_free_blocks() == 3, "2 shared blocks + 3 partial ones held"
    pool.free("b")
    pool.free("a")
    assert pool.num_free_blocks() == 5
    pool.allocate("x", [9] * 9)        # 5 blocks: must not take c's shared blocks
    pool.free("x")
    pool.free("c")
    assert pool.num_free_blocks() == 8
    _, computed = pool.allocate("d", [1, 2, 3, 4, 0])
    assert computed == 4, "the shared blocks were freed by c, last, and are still cached"


@pytest.mark.rubric("refcount")
def test_decode_duplicate_is_cached_and_outlives_the_first_copy():
    """Rule: Caching"""
    pool = bh.BlockPool(6, 2)
    t_a, _ = pool.allocate("a", [1, 2, 3])
    t_b, computed = pool.allocate("b", [1, 2, 3, 4, 5])   # hits [1,2]; computes [3,4]
    assert computed == 2
    pool.append("a", [4])          # a's block 1 fills with [1,2,3,4]: b's block already has it
    cached = set(pool.cached_blocks())
    assert {t_a[0], t_b[1], t_a[1]} <= cached, (
        f"b's block {t_b[1]} and a's duplicate {t_a[1]} both hold [1,2,3,4], and both are "
        f"cached (vLLM V1 does not de-duplicate); cached: {sorted(cached)}")
    pool.free("b")                 # b's copy joins the queue; its partial block is empty
    pool.allocate("x", [9] * 8)    # 3 empty blocks, then evicts b's copy (the only queued one)
    pool.free("x")
    t_c, computed = pool.allocate("c", [1, 2, 3, 4, 6])
    assert computed == 4 and t_c[:2] == [t_a[0], t_a[1]], (
        f"with b's copy evicted, a's duplicate {t_a[1]} still holds [1,2,3,4] and is hit; "
        f"got {(t_c, computed)}")


@pytest.mark.rubric("refcount")
def test_a_hit_takes_the_copy_cached_first():
    """Rule: Caching"""
    pool = bh.BlockPool(6, 2)
    t_a, _ = pool.allocate("a", [1, 2, 3])
    t_b, _ = pool.allocate("b", [1, 2, 3, 4, 5])   # b's block 1 caches [1,2,3,4] first
    pool.append("a", [4])                          # a's block 1: a second copy, cached later
    pool.free("a")
    pool.free("b")
    t_c, computed = pool.allocate("c", [1, 2, 3, 4, 0])
    assert (t_c[:2], computed) == ([t_a[0], t_b[1]], 4), (
        f"two cached copies of [1,2,3,4]: {t_b[1]} (cached first) and {t_a[1]}; a hit takes "
        f"the one cached first; got {(t_c, computed)}")


@pytest.mark.rubric("refcount")
def test_capped_recompute_is_a_cached_duplicate():
    """Rule: Caching"""
    pool = bh.BlockPool(4, 2)
    t_a, _ = pool.allocate("a", [1, 2, 3, 4])
    pool.free("a")                                     # queue: a's block 1, then block 0
    t_b, computed = pool.allocate("b", [1, 2, 3, 4])   # block 1 recomputed: a duplicate
    assert computed == 2 and t_b[0] == t_a[0] and t_b[1] != t_a[1]
    assert sorted(pool.cached_blocks()) == sorted(t_a + [t_b[1]]), (
        f"the recomputed block {t_b[1]} is cached beside a's copy {t_a[1]}; "
        f"cached: {pool.cached_blocks()}")
    pool.free("b")                      # queue: a's block 1, b's block 1, block 0
    pool.allocate("x", [7, 7, 7])       # the one empty block, then evicts a's block 1
    pool.free("x")
    t_c, computed = pool.allocate("c", [1, 2, 3, 4, 0])
    assert computed == 4 and t_c[:2] == [t_a[0], t_b[1]], (
        f"a's copy {t_a[1]} was evicted; b's duplicate {t_b[1]} still holds [1,2,3,4]; "
        f"got {(t_c, computed)}")


@pytest.mark.rubric("refcount")
def test_blocks_after_a_duplicate_stay_cached():
    """Review (issue 29): the kata once stopped caching a request after its first duplicate,
    which no engine does; a block-aligned chat prompt then cached none of its answer.
    Rule: Caching"""
    pool = bh.BlockPool(8, 2)
    t_a, _ = pool.allocate("a", [1, 2, 3, 4])
    t_b, _ = pool.allocate("b", [1, 2, 3, 4])       # block 1: a duplicate of a's
    new = pool.append("b", [5, 6, 7])               # [5,6] fills after the duplicate
    assert sorted(pool.cached_blocks()) == sorted(t_a + [t_b[1], new[0]]), (
        "blocks filled after a duplicate are cached as usual; expected cached "
        f"{sorted(t_a + [t_b[1], new[0]])}, got {pool.cached_blocks()} (b's table {t_b + new})")
    pool.free("b")
    pool.free("a")
    t_c, computed = pool.allocate("c", [1, 2, 3, 4, 5, 6, 0])
    assert (t_c[:3], computed) == ([t_a[0], t_a[1], new[0]], 6), (
        f"[1..6] was cached after b's duplicate; the lookup goes through a's copy {t_a[1]} "
        "(cached first) and must still find it: a block's identity is its content, not the "
        f"copy before it; got {(t_c, computed)}")


@pytest.mark.rubric("refcount")
def test_bad_calls_raise_and_change_nothing():
    """Rule: Errors"""
    pool = bh.BlockPool(4, 2)
    pool.allocate("a", [1, 2, 3])
    before = state(pool)
    bad = [
        (KeyError, lambda: pool.free("nope")),
        (KeyError, lambda: pool.append("nope", [1])),
        (ValueError, lambda: pool.allocate("a", [1, 2, 3])),
        (ValueError, lambda: pool.allocate("z", [])),
        (ValueError, lambda: pool.allocate("z", [1, -1])),
        (ValueError, lambda: pool.allocate("z", [1, 2**32])),
        (ValueError, lambda: pool.append("a", [2**32])),
        (bh.OutOfBlocks, lambda: pool.allocate("z", [5] * 5)),
        (bh.OutOfBlocks, lambda: pool.append("a", [5] * 6)),
    ]
    for exc, call in bad:
        with pytest.raises(exc):
            call()
        assert state(pool) == before, f"a call that raised {exc.__name__} changed the pool"
    pool.free("a")
    with pytest.raises(KeyError):
        pool.free("a")
    assert pool.num_free_blocks() == 4
    t, computed = pool.allocate("a", [1, 2, 3])
    assert computed == 2, "the request id can be used again after free; its prefix is cached"


@pytest.mark.rubric("refcount")
def test_failed_append_leaves_the_request_as_it_was():
    """Review: tokens added to the request before the check that raised stayed behind.
    Rule: Errors"""
    pool = bh.BlockPool(4, 2)
    pool.allocate("a", [1, 2, 3])
    with pytest.raises(bh.OutOfBlocks):
        pool.append("a", [4] * 6)           # needs 3 blocks, 2 are free
    with pytest.raises(ValueError):
        pool.append("a", [4, 2**32])        # a bad token after a good one
    pool.append("a", [9])                   # block 1 fills: [3, 9]
    pool.free("a")
    _, computed = pool.allocate("b", [1, 2, 3, 9, 0])
    assert computed == 4, (
        "appends that raised must add no token: a's second block holds [3, 9], so "
        f"[1, 2, 3, 9, 0] reuses 4 tokens; got {computed}")


@pytest.mark.rubric("refcount")
def test_failed_allocate_leaves_the_queue_order_alone():
    """Rule: Errors"""
    pool = bh.BlockPool(4, 2)
    pool.allocate("a", [1, 1, 1, 1])
    pool.allocate("b", [2, 2, 2, 2])
    pool.free("a")
    pool.free("b")
    with pytest.raises(bh.OutOfBlocks):
        pool.allocate("x", [1, 1, 1, 1, 9, 9, 9, 9, 9])   # hits a's 2 blocks, needs 3 more
    pool.allocate("y", [9, 9, 9])     # 2 evictions: still a's blocks (freed first)
    pool.free("y")
    _, computed = pool.allocate("z", [2, 2, 2, 2, 0])
    assert computed == 4, "a failed allocate must not have refreshed or evicted anything"


@pytest.mark.rubric("refcount")
@pytest.mark.parametrize("args", [(0, 2), (4, 0), (-1, 2), (4, -3)])
def test_constructor_rejects_bad_sizes(args):
    """Rule: Errors"""
    with pytest.raises(ValueError):
        bh.BlockPool(*args)
