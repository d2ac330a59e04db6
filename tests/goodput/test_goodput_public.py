"""Public tests for goodput: the prompt's examples and one check per rule."""

from __future__ import annotations

import math

import pytest

from graders.impl import kata_impl
from tests.goodput.helpers import (H100_SXM, H200_SXM, LLAMA8, LLAMA70, as_pair, close, config,
                                   gpu)

gp = kata_impl("goodput")

P8 = 7_504_658_432                     # Llama-3.1-8B, by the prompt's template
KV8 = 131_072                          # bytes per token, bf16
T0 = P8 * 2 / 3.35e12
T1 = 4096 * KV8 / 3.35e12


# ------------------------------------------------------------------ step line
@pytest.mark.rubric("step_line")
def test_step_line_example():
    """Rule: Step line"""
    t0, t1 = gp.step_line(config(LLAMA8), gpu(H100_SXM), 4096)
    close(t0, T0, "t0 of Llama-3.1-8B bf16 on an H100 SXM: 7,504,658,432 x 2 bytes / 3.35e12 B/s")
    close(t1, T1, "t1 at 4,096 tokens: 4,096 x 131,072 bytes / 3.35e12 B/s")


@pytest.mark.rubric("step_line")
def test_step_line_overhead_and_fp8():
    """Rule: Step line"""
    t0, t1 = gp.step_line(config(LLAMA8), gpu(H100_SXM), 1000, 1, 1, 0.001)
    close(t0, 0.001 + P8 / 3.35e12, "overhead + fp8 weights")
    close(t1, 1000 * KV8 / 2 / 3.35e12, "fp8 KV at 1,000 tokens")


@pytest.mark.rubric("step_line")
def test_step_line_rejects_moe():
    """Rule: Bad input"""
    with pytest.raises(ValueError):
        gp.step_line(config("Qwen--Qwen3-30B-A3B"), gpu(H100_SXM), 1000)
    with pytest.raises(ValueError):
        gp.step_line(config(LLAMA8), gpu(H100_SXM), -1)


# ------------------------------------------------------------------ shared step
@pytest.mark.rubric("shared_step")
def test_one_step_for_everyone_example():
    """Rule: One step for everyone"""
    user, total, good = gp.speeds(T0, T1, 64, 0.020)
    step = T0 + 64 * T1
    close(user, 1 / step, "per-user tokens/s at batch 64")
    close(total, 64 / step, "batch tokens/s at batch 64")
    close(good, 64 / step, "goodput at batch 64: the 14.7 ms step meets 20 ms")
    user, total, good = gp.speeds(T0, T1, 128, 0.020)
    close(total, 128 / (T0 + 128 * T1), "batch tokens/s at batch 128")
    assert good == 0.0, f"batch 128 steps in 25 ms: every sequence misses 20 ms, goodput 0, got {good!r}"


@pytest.mark.rubric("shared_step")
def test_a_step_equal_to_the_target_meets_it():
    """Rule: One step for everyone"""
    _, total, good = gp.speeds(0.5, 0.25, 4, 1.5)
    close(total, 4 / 1.5, "batch tokens/s at t(4) = 1.5")
    close(good, 4 / 1.5, "t(4) = 1.5 = tpot meets the target: goodput is the batch's tokens/s")


@pytest.mark.rubric("shared_step")
def test_exact_comparisons_at_the_target():
    """Rule: Exact comparisons"""
    _, _, good = gp.speeds(0.003, 0.0002, 131, 0.0292)
    assert good == 0.0, ("0.003 + 131 x 0.0002 in exact arithmetic is above the float 0.0292: "
                         f"the target is missed, got goodput {good!r}")


@pytest.mark.rubric("shared_step")
def test_speeds_bad_input():
    """Rule: Bad input"""
    for args in [(0.0, 0.0, 1, 1.0), (-1.0, 0.1, 1, 1.0), (0.1, 0.1, 0, 1.0), (0.1, 0.1, 1, 0.0),
                 (0.1, 0.1, True, 1.0), (float("nan"), 0.1, 1, 1.0), (0.1, 0.1, 2.0, 1.0)]:
        with pytest.raises(ValueError):
            gp.speeds(*args)


# ------------------------------------------------------------------ best batch
@pytest.mark.rubric("best_batch")
def test_goodput_optimal_batch_example():
    """Rule: Goodput-optimal batch"""
    assert gp.best_batch(T0, T1, 0.020, 10**6) == 96
    assert gp.best_batch(T0, T1, 0.020, 50) == 50, "capped by max_batch"
    assert gp.best_batch(T0, T1, 0.004, 100) == 0, "t0 alone is 4.48 ms: no batch meets 4 ms"


@pytest.mark.rubric("best_batch")
def test_best_batch_ties_and_exact_floor():
    """Rules: Goodput-optimal batch; Exact comparisons"""
    assert gp.best_batch(0.5, 0.25, 1.5, 100) == 4, "t(4) = 1.5 exactly meets the target"
    assert gp.best_batch(0.0, 0.25, 1.0, 100) == 4, "t0 = 0: all batches tie on goodput, the largest feasible wins"
    assert gp.best_batch(0.5, 0.0, 1.0, 7) == 7, "t1 = 0: every batch steps in t0"
    assert gp.best_batch(0.003, 0.0002, 0.0292, 1000) == 130, \
        "0.003 + 131 x 0.0002 exceeds the float 0.0292 exactly: 130"


# ------------------------------------------------------------------ Little's law
@pytest.mark.rubric("littles_law")
def test_littles_law_residency_example():
    """Rule: Little's law residency"""
    close(gp.resident_sequences(2.0, 1000, T0, T1), 2 * 1000 * T0 / (1 - 2 * 1000 * T1),
          "two 1,000-token requests a second: N = lambda n t0 / (1 - lambda n t1)")
    close(gp.resident_sequences(2.0, 1000, T0, T1, 0.2),
          2 * (0.2 + 1000 * T0) / (1 - 2 * 1000 * T1), "with 0.2 s of prefill each")
    assert gp.resident_sequences(0.0, 1000, T0, T1) == 0.0


@pytest.mark.rubric("littles_law")
def test_littles_law_has_no_solution_past_saturation():
    """Rule: Little's law residency"""
    assert gp.resident_sequences(7.0, 1000, T0, T1) is None, "lambda n t1 = 1.12 > 1: no fixed point"
    assert gp.resident_sequences(1.0, 4, 0.5, 0.25) is None, "lambda n t1 = 1 exactly: no fixed point"
    assert gp.resident_sequences(2.0, 1000, T0, T1, max_seqs=13) is None, "N = 13.19 > 13"
    got = gp.resident_sequences(1.0, 2, 0.5, 0.25, max_seqs=2)
    close(got, 2.0, "N = 1 / (1 - 0.5) = 2 = max_seqs is allowed")


# ------------------------------------------------------------------ continuous batching
@pytest.mark.rubric("continuous_gain")
def test_continuous_batching_gain_example():
    """Rule: Continuous batching gain"""
    num, den = as_pair(gp.continuous_gain({100: 1, 1000: 1}, 8), "gain of {100: 1, 1000: 1} at 8")
    assert (num, den) == (2551, 1408), f"E[max of 8] / E[L] = 996.48... / 550 = 2551/1408, got {num}/{den}"
    assert tuple(gp.continuous_gain({1: 1, 2: 1}, 2)) == (7, 6), "E[max of 2] = 7/4, E[L] = 3/2"
    assert tuple(gp.continuous_gain({5: 3}, 10)) == (1, 1), "one length: no gain"
    assert tuple(gp.continuous_gain({1: 1, 9: 3}, 1)) == (1, 1), "batch 1: no gain"


# ------------------------------------------------------------------ KV growth
@pytest.mark.rubric("kv_growth")
def test_kv_grows_after_admission():
    """Rule: KV grows after admission"""
    assert gp.kv_peak_tokens([]) == 0
    assert gp.kv_peak_tokens([(0, 10, 5)]) == 15, "one request peaks at prompt + output"
    assert gp.kv_peak_tokens([(0, 10, 5), (0, 10, 5)]) == 30, "admitted together: both peak at step 4"
    # (0, 10, 5) holds 11..15 in steps 0..4; (3, 0, 4) holds 1..4 in steps 3..6
    assert gp.kv_peak_tokens([(0, 10, 5), (3, 0, 4)]) == 17, "step 4: 15 + 2"


@pytest.mark.rubric("kv_growth")
def test_batch_from_the_pool_example():
    """Rule: Batch from the pool"""
    assert gp.max_batch_for_pool(100_000, 100, 2_000, 0, 10**6) == 47
    assert gp.max_batch_for_pool(100_000, 100, 2_000, 22, 10**6) == 85
    assert gp.max_batch_for_pool(100_000, 100, 2_000, 41, 10**6) == 10**6, \
        "41 steps apart at most 49 overlap: the peak stops growing"
    assert gp.max_batch_for_pool(2_099, 100, 2_000, 0, 5) == 0


# ------------------------------------------------------------------ upgrade
@pytest.mark.rubric("upgrade")
def test_three_regimes_example():
    """Rule: Three regimes"""
    params = 69_501_714_432
    pools = (80 * 10**9 * 9 // 10 - params, 141 * 10**9 * 9 // 10 - params)
    got = gp.upgrade_gains(config(LLAMA70), gpu(H100_SXM), gpu(H200_SXM), 4096, *pools, 1, 1,
                           "fp8")
    assert isinstance(got, dict) and set(got) >= {"bandwidth", "compute", "capacity"}, got
    close(got["bandwidth"], 4800 / 3350, "bandwidth regime: decode at batch 1")
    close(got["compute"], 1979 / 1978.9, "compute regime: dense fp8 peaks")
    kv_seq = 4096 * 163_840
    rate = [b / ((params + b * kv_seq) / bw) for b, bw in
            ((pools[0] // kv_seq, 3.35e12), (pools[1] // kv_seq, 4.8e12))]
    close(got["capacity"], rate[1] / rate[0], "capacity regime: 85 sequences against 3")
    assert got["capacity"] > 10 * got["bandwidth"], "here the capacity regime is the big win"


@pytest.mark.rubric("upgrade")
def test_upgrade_rejects_a_pool_without_a_sequence():
    """Rule: Bad input"""
    with pytest.raises(ValueError):
        gp.upgrade_gains(config(LLAMA8), gpu(H100_SXM), gpu(H200_SXM), 4096, 1000, 10**12)
    with pytest.raises(ValueError):
        gp.upgrade_gains(config(LLAMA8), gpu(H100_SXM), gpu(H200_SXM), 4096, 10**11, 10**12,
                         dtype="tf32")
