"""Public tests for roofline: the prompt's examples and the basic rules."""

from __future__ import annotations

import pytest

from graders.impl import kata_impl
from tests.roofline.helpers import GIB, H100_PCIE, H100_SXM, close, config, gpu

rf = kata_impl("roofline")
LLAMA8 = "meta-llama--Meta-Llama-3.1-8B"


@pytest.mark.rubric("ridge")
def test_ridge_h100_sxm_bf16():
    """Rule: Ridge point"""
    close(rf.ridge_point(gpu(H100_SXM), "bf16"), 989.4e12 / 3.35e12,
          "ridge_point(H100 SXM, bf16): dense 989.4 TFLOP/s over 3.35 TB/s")


@pytest.mark.rubric("ridge")
def test_ridge_unknown_dtype_is_an_error():
    """Rule: Bad input"""
    with pytest.raises(ValueError):
        rf.ridge_point(gpu("nvidia-h200-sxm-141gb"), "tf32")   # the entry gives no tf32 figure


@pytest.mark.rubric("moe_bytes")
def test_experts_touched_basics():
    """Rule: Weights read"""
    assert rf.expected_experts_touched(8, 2, 0) == 0, "no tokens touch no experts"
    close(rf.expected_experts_touched(8, 2, 1), 2.0, "one token touches its top_k experts")
    close(rf.expected_experts_touched(8, 2, 2), 8 * (1 - 0.75**2), "two tokens, 8 experts, top-2")


@pytest.mark.rubric("moe_bytes")
def test_weights_read_llama_example():
    """Rules: Weights read; Parameter template"""
    close(rf.weight_bytes_read(config(LLAMA8), 1, 2), 7_504_658_432 * 2,
          "Llama-3.1-8B bf16: layers + LM head, not the input embedding")


@pytest.mark.rubric("floors")
def test_decode_floor_example():
    """Rule: Decode step"""
    want = (7_504_658_432 * 2 + 16_000 * 131_072) / 3.35e12
    close(rf.decode_step_floor_s(config(LLAMA8), gpu(H100_SXM), [1000] * 16, 1, 2, 2), want,
          "16 x 1000-token sequences of Llama-3.1-8B on one H100 SXM (memory-bound)")


@pytest.mark.rubric("floors")
def test_crossover_examples():
    """Rule: Crossover"""
    assert rf.crossover_prompt_len(config(LLAMA8), gpu(H100_SXM), 2) == 316
    assert rf.crossover_prompt_len(config("Qwen--Qwen3-30B-A3B"), gpu(H100_SXM), 2) == 2732


@pytest.mark.rubric("floors")
def test_prefill_long_prompt_is_compute_bound():
    """Rules: Prefill cost; A floor is a max"""
    cfg, g = config(LLAMA8), gpu(H100_SXM)
    n = 8192
    flops = 2 * n * 6_979_321_856 + 2 * 32 * 32 * 128 * n * n + 2 * 128256 * 4096
    close(rf.prefill_time_s(cfg, g, n, 2), flops / 989.4e12, "prefill of 8192 tokens at mfu 1")
    close(rf.prefill_time_s(cfg, g, n, 2, mfu=0.5), 2 * flops / 989.4e12, "same at mfu 0.5")


@pytest.mark.rubric("mbu_operands")
def test_mbu_example():
    """Rule: MBU"""
    bytes_ = 7_504_658_432 * 2 + 16_000 * 131_072
    close(rf.mbu(config(LLAMA8), gpu(H100_SXM), [1000] * 16, 6e-3, 1, 2, 2),
          bytes_ / 6e-3 / 3.35e12, "MBU of a 6 ms step: weights + KV read, over 3.35 TB/s")


@pytest.mark.rubric("units")
def test_per_user_and_aggregate():
    """Rule: Tokens per second"""
    per_user, agg = rf.decode_tok_s(config(LLAMA8), gpu(H100_SXM), [1000] * 16, 1, 2, 2)
    close(agg, 16 * per_user, "the batch produces 16 tokens per step, each user one")


@pytest.mark.rubric("units")
def test_kv_max_batch_uses_gib():
    """Rule: KV-limited batch"""
    # Llama-3.1-8B bf16: 131072 bytes per token; 8192 tokens = 1 GiB per sequence.
    assert rf.kv_max_batch(config(LLAMA8), 10.0, 8192, 1, 2) == 10


@pytest.mark.rubric("units")
def test_pcie_is_not_sxm():
    """Rule: Datasheet units"""
    cfg = config(LLAMA8)
    sxm = rf.decode_step_floor_s(cfg, gpu(H100_SXM), [512], 1, 2, 2)
    pcie = rf.decode_step_floor_s(cfg, gpu(H100_PCIE), [512], 1, 2, 2)
    close(pcie / sxm, 3350 / 2000, "batch-1 decode is memory-bound: the time scales with 1/bandwidth")


@pytest.mark.rubric("knee")
def test_knee_example():
    """Rule: The knee"""
    knee, ceiling, at_kv = rf.throughput_knee(0.010, 0.0002, 64)
    close(knee, 50.0, "knee = t_fixed / t_per_seq")
    close(ceiling, 5000.0, "ceiling = 1 / t_per_seq")
    close(at_kv, 64 / (0.010 + 64 * 0.0002), "throughput at the KV-limited batch")


@pytest.mark.rubric("knee")
def test_knee_rejects_bad_input():
    """Rules: The knee; Bad input"""
    for args in [(0.01, 0.0, 8), (0.01, 0.001, 0), (-1.0, 0.001, 8)]:
        with pytest.raises(ValueError):
            rf.throughput_knee(*args)
