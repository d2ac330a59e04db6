"""Public tests for fp8_block_gemm: the prompt's example and each rule on hand-worked values.

Run: nox -s kata -- fp8_block_gemm
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from graders.impl import kata_impl
from tests.fp8_block_gemm.helpers import DEEPSEEK_V3_MLA, frac, pair, same

fb = kata_impl("fp8_block_gemm")
F32 = np.float32


@pytest.mark.rubric("scales")
def test_prompt_example_scales():
    """Rules: The scale; Partial tiles"""
    x = np.zeros((1, 130), F32)
    x[0, 0], x[0, 1], x[0, 129] = 448.0, 1.0, 3.0
    q, s = pair(fb.quantize_activations(x), "quantize_activations")
    same(s, np.array([[1.0, F32(3.0) / F32(448.0)]], F32), "activation scales")
    want = np.zeros((1, 130), F32)
    want[0, 0], want[0, 1], want[0, 129] = 448.0, 1.0, 448.0
    same(q, want, "activation values")


@pytest.mark.rubric("scales")
def test_zero_tiles_have_scale_one_and_weight_blocks_are_square():
    """Rules: The scale; Partial tiles"""
    w = np.zeros((130, 200), F32)
    w[129, 0] = 7.0            # block (1, 0): rows 128.., columns 0..127
    w[0, 199] = -2.0           # block (0, 1)
    q, s = pair(fb.quantize_weights(w), "quantize_weights")
    same(s, np.array([[1.0, F32(2.0) / F32(448.0)], [F32(7.0) / F32(448.0), 1.0]], F32),
         "weight scales: (ceil(130/128), ceil(200/128)) blocks, zero blocks 1.0")
    want = np.zeros((130, 200), F32)
    want[129, 0], want[0, 199] = 448.0, -448.0
    same(q, want, "weight values")


@pytest.mark.rubric("e4m3_rounding")
def test_rounding_to_e4m3_ties_subnormals():
    """Rule: Rounding to E4M3"""
    # tile max 448 -> scale 1.0, so q is x rounded to E4M3 directly
    vals = [448.0, 17.0, 19.0, 1.0625, 1.1875, 2.0**-10, 3 * 2.0**-10, 2.0**-9, 0.3, -17.0]
    want = [448.0, 16.0, 20.0, 1.0, 1.25, 0.0, 2.0**-8, 2.0**-9, 0.3125, -16.0]
    x = np.array([vals], F32)
    q, s = pair(fb.quantize_activations(x), "quantize_activations")
    same(s, np.array([[1.0]], F32), "scale")
    same(q, np.array([want], F32), "E4M3 values: ties to even, subnormals")


@pytest.mark.rubric("promotion")
def test_prompt_example_gemm():
    """Rules: The K-block partial sum; Promotion order"""
    x = np.zeros((1, 130), F32)
    x[0, 0], x[0, 1], x[0, 129] = 448.0, 1.0, 3.0
    qa, sa = pair(fb.quantize_activations(x), "quantize_activations")
    qw, sw = pair(fb.quantize_weights(np.ones((1, 130), F32)), "quantize_weights")
    y = fb.block_gemm(qa, sa, qw, sw)
    s_w = F32(1.0) / F32(448.0)
    t0 = (F32(448 * 448 + 448) * F32(1.0)) * s_w
    t1 = (F32(448 * 448) * (F32(3.0) / F32(448.0))) * s_w
    same(y, np.array([[F32(F32(0.0) + t0) + t1]], F32), "block_gemm(prompt example)")


@pytest.mark.rubric("promotion")
def test_partial_sum_is_exact_before_float32():
    """Rule: The K-block partial sum"""
    # 448*448*84 = 16859136 is above 2**24 (float32 step 2 there); + 1 is a tie, and the
    # 2**-18 product decides it: the exact sum rounds up to 16859138 once
    qa = np.zeros((1, 128), F32)
    qw = np.zeros((1, 128), F32)
    qa[0, :84], qw[0, :84] = 448.0, 448.0
    qa[0, 84:100], qw[0, 84:100] = 0.25, 0.25          # 16 * 1/16 = 1
    qa[0, 100], qw[0, 100] = 2.0**-9, 2.0**-9          # 2**-18 pushes past the tie
    one = np.ones((1, 1), F32)
    y = fb.block_gemm(qa, one, qw, one)
    exact = 448 * 448 * 84 + 1 + 2.0**-18
    same(y, np.array([[F32(exact)]], F32), "exact partial sum rounded once")


@pytest.mark.rubric("accumulator_model")
def test_accumulator_truncates_per_group():
    """Rule: The limited accumulator"""
    qa = np.zeros((1, 64), F32)
    qw = np.zeros((1, 64), F32)
    qa[0, 0], qw[0, 0] = 448.0, 448.0          # group 0: 200704 = 0b110001000000000000
    qa[0, 32], qw[0, 32] = 3.0, 1.0            # group 1: + 3
    one = np.ones((1, 1), F32)
    # 4 bits: 200704 -> trunc to 4 significant bits = 196608; + 3 -> 196611 -> 196608
    same(fb.block_gemm(qa, one, qw, one, accum_bits=4), np.array([[196608.0]], F32), "4 bits")
    same(fb.block_gemm(qa, one, qw, one), np.array([[200707.0]], F32), "exact")


@pytest.mark.rubric("gguf_bits")
def test_gguf_bits_per_weight():
    """Rules: GGUF bits per weight; Q4_K_M's layer rule"""
    assert frac(fb.gguf_bits_per_weight({"a": ("Q4_K", (4096, 4096))}), "Q4_K") == Fraction(9, 2)
    assert frac(fb.gguf_bits_per_weight({"a": ("Q6_K", (8, 256))}), "Q6_K") == Fraction(105, 16)
    assert frac(fb.gguf_bits_per_weight({"a": ("Q8_0", (2, 64))}), "Q8_0") == Fraction(17, 2)
    mix = {"a": ("Q4_K", (1, 256)), "b": ("Q6_K", (1, 256)), "n": ("F32", (256,))}
    assert frac(fb.gguf_bits_per_weight(mix), "mix") == Fraction(144 * 8 + 210 * 8 + 256 * 32, 768)
    got = [i for i in range(32) if fb.q4_k_m_more_bits(i, 32)]
    assert got == [0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31], got


@pytest.mark.rubric("mla_costs")
def test_mla_deepseek_v3():
    """Rule: MLA's costs per cached token"""
    assert tuple(fb.mla_decode_cost(DEEPSEEK_V3_MLA, "mha")) == (81920, 81920)
    assert tuple(fb.mla_decode_cost(DEEPSEEK_V3_MLA, "absorbed")) == (278528, 1152)
    assert tuple(fb.mla_decode_cost(DEEPSEEK_V3_MLA, "unabsorbed")) == (33636352, 1152)
    assert tuple(fb.mla_decode_cost(DEEPSEEK_V3_MLA, "absorbed", 2, 1)) == (557056, 576)


@pytest.mark.rubric("calibration")
def test_calibration_tokens():
    """Rule: Calibration tokens per expert"""
    got = fb.expert_calibration_tokens(1000, 2, [1, 1, 2])
    assert [frac(g, "tokens") for g in got] == [500, 500, 1000], got
    got = fb.expert_calibration_tokens(10, 1, [1, 2])
    assert [frac(g, "tokens") for g in got] == [Fraction(10, 3), Fraction(20, 3)], got
    assert fb.calibration_tokens_needed(100, 2, [1, 1, 2]) == 200
    assert fb.calibration_tokens_needed(101, 2, [1, 1, 2]) == 202
    with pytest.raises(ValueError):
        fb.expert_calibration_tokens(10, 2, [3, 1])      # 3/4 > 1/2


@pytest.mark.rubric("errors")
def test_bad_input():
    """Rule: Bad input"""
    with pytest.raises(ValueError):
        fb.quantize_activations(np.ones((2, 3), np.float64))
    with pytest.raises(ValueError):
        fb.quantize_weights(np.array([[1.0, np.nan]], F32))
    one = np.ones((1, 1), F32)
    with pytest.raises(ValueError):
        fb.block_gemm(np.array([[1.1]], F32), one, np.ones((1, 1), F32), one)
    with pytest.raises(ValueError):
        fb.block_gemm(one, one, one, one, accum_bits=True)
    with pytest.raises(ValueError):
        fb.gguf_bits_per_weight({"a": ("Q4_K", (1, 100))})
    with pytest.raises(ValueError):
        fb.mla_decode_cost(DEEPSEEK_V3_MLA, "gqa")
