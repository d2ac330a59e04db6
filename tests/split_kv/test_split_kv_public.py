"""Public tests for split_kv: the prompt's examples and one clear case per rule.

Run: nox -s kata -- split_kv
"""

import math

import numpy as np
import pytest

from graders.impl import kata_impl
from tests.split_kv.helpers import attention, check_result, decode_oracle, random_case

sk = kata_impl("split_kv")

Q = np.array([[1.0, 0.0]])
K = np.array([[[1.0, 0.0]], [[0.0, 1.0]]])
V = np.array([[[2.0]], [[4.0]]])


@pytest.mark.rubric("partial_attention")
def test_readme_example():
    """Rule: Attention over one split"""
    e = math.e
    want = (np.array([[(2 * e + 4) / (e + 1)]]), np.array([math.log(e + 1)]))
    check_result(sk.attend_partial(Q, K, V, 1.0), want, "attend_partial(README example)")
    check_result(sk.attend_partial(Q, K[:1], V[:1], 1.0), (np.array([[2.0]]), np.array([1.0])),
                 "attend_partial over the first key")


@pytest.mark.rubric("partial_attention")
def test_gqa_query_head_reads_kv_head_h_div_group():
    """Rule: Attention over one split"""
    rng = np.random.default_rng(1)
    q, k, v = random_case(rng, n=7, q_heads=6, kv_heads=2)   # group 3: heads 0-2 -> kv 0, 3-5 -> kv 1
    check_result(sk.attend_partial(q, k, v, 0.5), attention(q, k, v, 0.5),
                 "6 query heads over 2 kv heads (head h reads kv head h // 3)")


@pytest.mark.rubric("partial_attention")
def test_mask_drops_keys():
    """Rule: Attention over one split"""
    rng = np.random.default_rng(2)
    q, k, v = random_case(rng, n=6, q_heads=2, kv_heads=1)
    valid = np.array([True, False, True, True, False, True])
    check_result(sk.attend_partial(q, k, v, 1.0, valid), attention(q, k, v, 1.0, valid),
                 "attend_partial with keys 1 and 4 masked")


@pytest.mark.rubric("exact_merge")
def test_readme_merge():
    """Rule: The merge"""
    parts = [sk.attend_partial(Q, K[i:j], V[i:j], 1.0) for i, j in ((0, 1), (1, 2), (2, 2))]
    got = sk.merge_partials(np.stack([p[0] for p in parts]), np.stack([p[1] for p in parts]))
    check_result(got, attention(Q, K, V, 1.0), "merge of the README's three partials")


@pytest.mark.rubric("exact_merge")
def test_merge_of_uneven_splits_equals_full_attention():
    """Rule: The merge"""
    rng = np.random.default_rng(3)
    q, k, v = random_case(rng, n=20, q_heads=4, kv_heads=2)
    cuts = [(0, 3), (3, 4), (4, 15), (15, 20)]
    parts = [attention(q, k[a:b], v[a:b], 0.7) for a, b in cuts]
    got = sk.merge_partials(np.stack([p[0] for p in parts[::-1]]), np.stack([p[1] for p in parts[::-1]]))
    check_result(got, attention(q, k, v, 0.7), f"merge of key ranges {cuts} (given in reverse)")


@pytest.mark.rubric("empty_splits")
def test_empty_split_is_zeros_and_minus_inf():
    """Rule: Attention over one split"""
    got = sk.attend_partial(Q, K[:0], V[:0], 1.0)
    check_result(got, (np.zeros((1, 1)), np.array([-np.inf])), "attend_partial over no keys")
    masked = sk.attend_partial(Q, K, V, 1.0, np.array([False, False]))
    check_result(masked, (np.zeros((1, 1)), np.array([-np.inf])), "attend_partial, every key masked")


@pytest.mark.rubric("empty_splits")
def test_merging_only_empty_partials_gives_zeros_not_nan():
    """Rule: The merge"""
    outs = np.zeros((3, 2, 4))
    lses = np.full((3, 2), -np.inf)
    check_result(sk.merge_partials(outs, lses), (np.zeros((2, 4)), np.full(2, -np.inf)),
                 "merge of three empty partials")


@pytest.mark.rubric("empty_splits")
def test_split_ranges_leave_trailing_splits_empty():
    """Rule: The splits"""
    assert sk.split_ranges(144, 16, 4) == [(0, 48), (48, 96), (96, 144), (144, 144)], (
        "9 blocks in 4 splits: ceil(9/4) = 3 blocks each -> 3, 3, 3, 0")
    assert sk.split_ranges(10, 4, 2) == [(0, 8), (8, 10)], "3 blocks (the last short) in 2 splits: 2 + 1"


@pytest.mark.rubric("stability")
def test_scores_near_1e4_do_not_overflow():
    """Rules: Attention over one split; The merge"""
    q = np.array([[100.0, 0.0]])
    k = np.array([[[100.0, 0.0]], [[99.99, 0.0]], [[-100.0, 0.0]]])   # scores 1e4, 9999, -1e4
    v = np.array([[[1.0]], [[3.0]], [[5.0]]])
    want = attention(q, k, v, 1.0)
    check_result(sk.attend_partial(q, k, v, 1.0), want, "attend_partial with scores ~1e4")
    parts = [sk.attend_partial(q, k[i:i + 1], v[i:i + 1], 1.0) for i in range(3)]
    got = sk.merge_partials(np.stack([p[0] for p in parts]), np.stack([p[1] for p in parts]))
    check_result(got, want, "merge of partials with lse ~1e4")


@pytest.mark.rubric("batched_decode")
def test_split_kv_decode_matches_attention_per_sequence():
    """Rule: Batched decode"""
    rng = np.random.default_rng(4)
    batch, max_len, q_heads, kv_heads = 3, 37, 4, 2
    q = rng.normal(size=(batch, q_heads, 8))
    kc = rng.normal(size=(batch, max_len, kv_heads, 8))
    vc = rng.normal(size=(batch, max_len, kv_heads, 5))
    lens = [37, 5, 0]
    want = decode_oracle(q, kc, vc, lens, 0.35)
    check_result(sk.split_kv_decode(q, kc, vc, lens, 0.35, 4, 3), want,
                 "split_kv_decode, lengths [37, 5, 0], blocks of 4, 3 splits")
    outs, lses = sk.decode_partials(q, kc, vc, lens, 0.35, 4, 3)
    assert np.asarray(outs).shape == (3, batch, q_heads, 5) and np.asarray(lses).shape == (3, batch, q_heads)
    assert np.all(np.isneginf(np.asarray(lses)[1:, 1])), (
        "sequence 1 (5 keys) has no key in splits 1 and 2 (keys 16..): their lse must be -inf")


@pytest.mark.rubric("split_rule")
@pytest.mark.parametrize("args, want", [
    ((1, 8, 800, 132), 14),
    ((1, 8, 9, 132), 9),
    ((4, 32, 800, 132), 1),
    ((1, 6, 200, 132), 17),
])
def test_readme_split_counts(args, want):
    """Rules: The split count; Full grid; Candidates; Smallest near the best"""
    got = sk.choose_num_splits(*args)
    assert got == want, f"choose_num_splits{args}: expected {want} (see the README example), got {got!r}"


@pytest.mark.rubric("split_rule")
def test_wave_efficiency_is_an_exact_pair():
    """Rule: The split count"""
    assert tuple(sk.wave_efficiency(6, 17, 132)) == (17, 22), "102 blocks on 132 SMs: one wave, 102/132 = 17/22"
    assert tuple(sk.wave_efficiency(8, 115, 132)) == (230, 231), "920 blocks on 132 SMs: 7 waves, 920/924"


@pytest.mark.rubric("split_rule")
def test_never_an_ineligible_count():
    """Rule: Eligible counts"""
    # 64 blocks: 12 splits would be 6 blocks each, the same as 11 splits plus an empty one.
    for work in range(1, 40):
        s = sk.choose_num_splits(1, work, 64, 132)
        assert s == 1 or math.ceil(64 / s) != math.ceil(64 / (s - 1)), (
            f"choose_num_splits(1, {work}, 64, 132) = {s}: not eligible (same blocks per split as {s - 1})")


@pytest.mark.rubric("bad_input")
def test_bad_input_raises():
    with pytest.raises(ValueError):
        sk.attend_partial(np.zeros((3, 2)), np.zeros((4, 2, 2)), np.zeros((4, 2, 1)), 1.0)  # 3 % 2
    with pytest.raises(ValueError):
        sk.attend_partial(Q, K, V, 0.0)
    with pytest.raises(TypeError):
        sk.attend_partial(Q, K, V, 1.0, np.array([1, 0]))
    with pytest.raises(ValueError):
        sk.merge_partials(np.zeros((0, 1, 1)), np.zeros((0, 1)))
    with pytest.raises(TypeError):
        sk.choose_num_splits(True, 8, 64, 132)
    with pytest.raises(TypeError):
        sk.choose_num_splits(1, 8, 64, 132, efficiency_fraction=0.85)
    with pytest.raises(ValueError):
        sk.split_ranges(10, 0, 2)
