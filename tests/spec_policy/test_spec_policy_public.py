"""Public tests for spec_policy: the prompt's examples and one check per rule."""

from __future__ import annotations

import pytest

from graders.impl import kata_impl
from tests.spec_policy.helpers import (H100_SXM, KEYS, LLAMA8, LLAMA70, NGRAM, close, config, gpu,
                                       llama8_stage, llama70_stage, stage)

sp = kata_impl("spec_policy")
RATES = [0.8, 0.75, 0.7, 0.65, 0.6]
EDGES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]


# ------------------------------------------------------------------ expected tokens
@pytest.mark.rubric("expected_tokens")
def test_expected_tokens_example():
    """Rule: Expected tokens"""
    for k, want in enumerate([1.0, 1.8, 2.4, 2.82, 3.093, 3.2568]):
        close(sp.expected_tokens(RATES, k), want,
              f"expected_tokens({RATES}, {k}): 1 + a1 + a1 a2 + ... (conditional rates multiplied)")


@pytest.mark.rubric("expected_tokens")
def test_expected_tokens_uses_only_the_first_k_rates():
    """Rule: Expected tokens"""
    close(sp.expected_tokens([0.5, 1.0, 1.0], 1), 1.5, "k = 1 reads only accept[0]")
    close(sp.expected_tokens([1.0, 1.0], 2), 3.0, "two certain drafts + the bonus token")
    close(sp.expected_tokens([0.0, 1.0], 2), 1.0,
          "a first draft never accepted: only the target's token")


@pytest.mark.rubric("expected_tokens")
def test_expected_tokens_bad_input():
    """Rule: Bad input"""
    for accept, k in [([0.5], 2), ([1.5], 1), ([-0.1], 1), ([float("nan")], 1), ([True], 1),
                      ([0.5], -1), ([0.5], 1.0)]:
        with pytest.raises(ValueError):
            sp.expected_tokens(accept, k)


# ------------------------------------------------------------------ step model
@pytest.mark.rubric("step_model")
def test_stage_from_config_llama70_tp8():
    """Rule: Stage from a config"""
    got = sp.stage_from_config(config(LLAMA70), gpu(H100_SXM), 8, 2, 2)
    want = llama70_stage()
    assert set(got) >= set(KEYS), f"a stage has the keys {KEYS}, got {sorted(got)}"
    for key in KEYS:
        close(got[key], want[key], f"Llama-3.3-70B bf16 on 8 x H100 SXM: {key}")


@pytest.mark.rubric("step_model")
def test_stage_from_config_rejects_moe_and_bad_tp():
    """Rules: Stage from a config; Bad input"""
    with pytest.raises(ValueError):
        sp.stage_from_config(config("Qwen--Qwen3-30B-A3B"), gpu(H100_SXM), 1, 2, 2)
    with pytest.raises(ValueError):
        sp.stage_from_config(config(LLAMA70), gpu(H100_SXM), 3, 2, 2)
    with pytest.raises(ValueError):
        sp.stage_from_config(config(LLAMA70), gpu(H100_SXM), 8, 2, 2, dtype="int4")


@pytest.mark.rubric("step_model")
def test_pass_time_example():
    """Rule: Pass time"""
    want = (17_375_428_608 + 4096 * 40_960) / 3.35e12
    close(sp.pass_time_s(llama70_stage(), 1, 1, 4096), want,
          "a plain step of Llama-3.3-70B at batch 1, 4096 tokens of context (memory-bound)")


@pytest.mark.rubric("step_model")
def test_pass_time_is_a_max_plus_overhead():
    """Rule: Pass time"""
    s = stage(100.0, 1.0, 2.0, 1.0, 1.0, 5.0)
    close(sp.pass_time_s(s, 2, 10, 3), 5.0 + max(10.0, 100.0 + 2 * 3 * 2.0),
          "memory-bound: weights once + KV of 2 sequences x 3 tokens")
    close(sp.pass_time_s(s, 2, 200, 3), 5.0 + 200.0,
          "compute-bound: 200 tokens x 1 FLOP (max, not sum)")
    close(sp.pass_time_s(s, 2, 20, 3), sp.pass_time_s(s, 2, 2, 3),
          "scoring more tokens per sequence reads no more KV")


@pytest.mark.rubric("step_model")
def test_pass_time_bad_input():
    """Rule: Bad input"""
    s = stage(1.0, 1.0)
    for args in [(s, 0, 1, 0), (s, 2, 1, 0), (s, 1, 1, -1), (dict(s, bandwidth=0), 1, 1, 0),
                 ({k: v for k, v in s.items() if k != "overhead_s"}, 1, 1, 0)]:
        with pytest.raises(ValueError):
            sp.pass_time_s(*args)


# ------------------------------------------------------------------ speedup
@pytest.mark.rubric("speedup")
def test_speedup_example():
    """Rules: Verification step; Speedup"""
    t, d = llama70_stage(), llama8_stage()
    for k, want in enumerate([1.0, 1.62, 1.965, 2.117, 2.143, 2.096]):
        close(sp.speedup(t, d, RATES, k, 1, 4096), want,
              f"speedup at k = {k}, batch 1, 4096 tokens of context (prompt example)", rel=5e-4)


@pytest.mark.rubric("speedup")
def test_speedup_by_hand():
    """Rules: Verification step; Speedup"""
    t = stage(100.0, 1.0)            # a pass: max(tokens, 100)
    d = stage(10.0, 0.1)             # a drafter pass: max(0.1 tokens, 10)
    # batch 4, k = 2: drafter 2 x 10, target max(12, 100) = 100; E = 1 + 0.5 + 0.25
    close(sp.speedup(t, d, [0.5, 0.5], 2, 4, 0), 1.75 * 100 / 120, "batch 4, k = 2")
    # batch 50, k = 2: target scores 150 tokens: compute-bound
    close(sp.speedup(t, d, [0.5, 0.5], 2, 50, 0), 1.75 * 100 / (20 + 150), "batch 50, k = 2")
    assert sp.speedup(t, d, [0.5, 0.5], 0, 50, 0) == 1.0, "k = 0 is plain decoding"


# ------------------------------------------------------------------ draft length
@pytest.mark.rubric("draft_length")
def test_best_draft_length_example():
    """Rule: Best draft length"""
    t, d = llama70_stage(), llama8_stage()
    assert sp.best_draft_length(t, d, RATES, 5, 1, 4096) == 4
    assert sp.best_draft_length(t, d, RATES, 3, 1, 4096) == 3, "never look past max_k"
    assert sp.best_draft_length(t, d, RATES, 5, 512, 0) == 0, "compute-bound: do not speculate"


@pytest.mark.rubric("draft_length")
def test_ties_go_to_the_smaller_k():
    """Rules: Tie tolerance; Best draft length"""
    t, free = stage(100.0, 1.0), stage(0.0, 0.0)
    # a second draft that is never accepted adds nothing and (with a free drafter, memory-bound
    # verification) costs nothing: k = 1 and k = 2 tie exactly
    assert sp.best_draft_length(t, free, [0.5, 0.0, 0.0], 3, 1, 0) == 1


@pytest.mark.rubric("draft_length")
def test_bucket_table_example():
    """Rule: Buckets"""
    t, d = llama70_stage(), llama8_stage()
    assert sp.bucket_draft_lengths(t, d, RATES, 5, EDGES, 0) == [4, 4, 4, 4, 4, 4, 3, 1, 0, 0]
    assert sp.bucket_draft_lengths(t, d, RATES, 5, EDGES, 4096) == [4, 4, 4, 4, 3, 3, 3, 2, 2, 2]


@pytest.mark.rubric("draft_length")
def test_bucket_is_priced_at_its_worst_batch():
    """Rule: Buckets"""
    # a memory-bound target that reads 10 bytes of KV per sequence and a drafter with a flat
    # cost of 30 per pass: at batch 100 k = 2 is best (1.66 against 1.46 for k = 1), at batch 1
    # k = 1 (1.18 against 1.13); both are worst at batch 1, so the bucket 1..100 keeps k = 1
    t, d = stage(100.0, 0.001, 1.0), stage(30.0, 0.0)
    assert sp.best_draft_length(t, d, [0.5, 0.5], 2, 100, 10) == 2
    assert sp.best_draft_length(t, d, [0.5, 0.5], 2, 1, 10) == 1
    assert sp.bucket_draft_lengths(t, d, [0.5, 0.5], 2, [100], 10) == [1]
    assert sp.bucket_draft_lengths(t, d, [0.5, 0.5], 2, [10, 100], 10) == [1, 2]


@pytest.mark.rubric("draft_length")
def test_bucket_bad_edges():
    """Rule: Bad input"""
    t, d = stage(100.0, 1.0), stage(1.0, 0.0)
    for edges in ([], [0, 4], [4, 4], [8, 4], [2.0]):
        with pytest.raises(ValueError):
            sp.bucket_draft_lengths(t, d, [0.5], 1, edges, 0)


# ------------------------------------------------------------------ flip
@pytest.mark.rubric("flip")
def test_flip_batch_example():
    """Rule: Drafter flip"""
    t, d = llama70_stage(), llama8_stage()
    good, poor = [0.9, 0.85, 0.8, 0.75, 0.7], [0.6, 0.5, 0.4, 0.3, 0.2]
    assert sp.flip_batch(t, d, good, NGRAM, poor, 5, 1, 512, 4096) == 61
    assert sp.flip_batch(t, d, good, NGRAM, poor, 5, 1, 512, 32768) == 8
    assert sp.flip_batch(t, d, good, NGRAM, poor, 5, 1, 60, 4096) is None, "no flip in range"


@pytest.mark.rubric("flip")
def test_flip_ties_go_to_a():
    """Rule: Drafter flip"""
    t = stage(100.0, 1.0)
    d = stage(0.0, 0.0)
    # the same drafter twice: b never beats a
    assert sp.flip_batch(t, d, [0.5], d, [0.5], 1, 1, 300, 0) is None


# ------------------------------------------------------------------ per request
@pytest.mark.rubric("per_request")
def test_per_request_turns_off_the_hopeless():
    """Rule: Per-request policy"""
    t, d = stage(100.0, 1.0), stage(5.0, 0.0)
    # batch of 4 (pass: max(4 + 2m, 100) = 100): drafting costs 2 x 5 per step whoever drafts
    # two certain requests and two that never match: only the first two should draft
    got = sp.per_request_draft_lengths(t, d, [[1.0, 1.0], [0.0, 0.0], [1.0, 1.0], [0.0, 0.0]], 2, 0)
    assert got == [2, 0, 2, 0], got


@pytest.mark.rubric("per_request")
def test_per_request_plain_when_nothing_pays():
    """Rule: Per-request policy"""
    t, d = stage(100.0, 1.0), stage(5.0, 0.0)
    assert sp.per_request_draft_lengths(t, d, [[0.0], [0.01]], 1, 0) == [0, 0]


@pytest.mark.rubric("per_request")
def test_per_request_bad_input():
    """Rule: Bad input"""
    t, d = stage(100.0, 1.0), stage(5.0, 0.0)
    for accepts, max_k in [([], 1), ([[0.5], [0.5, 0.5]], 2), ([[2.0]], 1)]:
        with pytest.raises(ValueError):
            sp.per_request_draft_lengths(t, d, accepts, max_k, 0)
