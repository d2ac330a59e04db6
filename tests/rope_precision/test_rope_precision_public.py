"""Public tests for rope_precision: the prompt's examples and the basic rules.

Run: nox -s kata -- rope_precision
Every expected value here is worked out by hand from the prompt's rules.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from graders.impl import kata_impl
from tests.rope_precision.helpers import close, ints, llama, same_bits, small

rp = kata_impl("rope_precision")


def arr(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float64)


# ------------------------------------------------------------------ rounding
@pytest.mark.rubric("rounding")
def test_bf16_ties_go_to_even():
    """Rule: Round to nearest even"""
    x = arr(255, 256, 257, 258, 259, 1 + 2**-8, 1 + 3 * 2**-8, -257)
    same_bits(rp.round_to_dtype(x, "bfloat16"), arr(255, 256, 256, 258, 260, 1, 1 + 2**-6, -256),
              "round_to_dtype(x, 'bfloat16'): 8 significant bits, ties to the even neighbour", x)


@pytest.mark.rubric("rounding")
def test_round_once_from_float64():
    """Rule: Round to nearest even"""
    # just past the halfway point between 1 and 1 + 2**-7: float32 would see the exact tie
    x = arr(1 + 2**-8 + 2**-40)
    same_bits(rp.round_to_dtype(x, "bfloat16"), arr(1 + 2**-7),
              "1 + 2**-8 + 2**-40 is above the halfway point: it rounds up (rounding through "
              "float32 first would make it a tie and round down)", x)


@pytest.mark.rubric("rounding")
def test_float16_overflow_and_subnormals():
    """Rule: Round to nearest even"""
    x = arr(2048, 2049, 65504, 65519, 65520, 1e6, 2**-25, 1.5 * 2**-25, -math.inf)
    same_bits(rp.round_to_dtype(x, "float16"),
              arr(2048, 2048, 65504, 65504, math.inf, math.inf, 0, 2**-24, -math.inf),
              "round_to_dtype(x, 'float16'): 11 bits, 65520 and up overflow, subnormal grid 2**-24", x)


@pytest.mark.rubric("rounding")
def test_float64_is_unchanged_and_float32_rounds():
    """Rule: Round to nearest even"""
    x = arr(0.1, 1 / 3, 2**24 + 1, 1e-300)
    same_bits(rp.round_to_dtype(x, "float64"), x.copy(), "round_to_dtype(x, 'float64')", x)
    same_bits(rp.round_to_dtype(x, "float32"),
              arr(float(np.float32(0.1)), float(np.float32(1 / 3)), 2**24, 0.0),
              "round_to_dtype(x, 'float32')", x)


# ------------------------------------------------------------------ frequencies
@pytest.mark.rubric("frequencies")
def test_unscaled_frequencies():
    """Rules: Base frequencies; Head dim"""
    got = rp.inv_freq(small(theta=10000.0, head_dim=8))
    close(got, arr(1.0, 0.1, 0.01, 0.001), "theta 10000, head_dim 8, no rope_scaling", 1e-12,
          per_element=True)
    # head_dim absent: hidden_size // num_attention_heads = 6
    cfg = {"hidden_size": 24, "num_attention_heads": 4, "rope_theta": 64.0}
    close(rp.inv_freq(cfg), arr(1.0, 0.25, 0.0625), "theta 64, head_dim 24 // 4 = 6", 1e-12,
          per_element=True)


@pytest.mark.rubric("frequencies")
def test_llama_frequencies_example():
    """Rules: Llama3 scaling; Base frequencies"""
    f = rp.inv_freq(llama())
    assert f.shape == (64,), f"head_dim 128 has 64 frequencies, got shape {f.shape}"
    base = 500000.0 ** (-np.arange(0, 128, 2) / 128)
    wavelen = 2 * np.pi / base
    keep, divide = wavelen < 2048, wavelen > 8192
    close(f[keep], base[keep], "wavelength < 8192 / 4: kept", 1e-12, per_element=True)
    close(f[divide], base[divide] / 8, "wavelength > 8192 / 1: divided by 8", 1e-12,
          per_element=True)
    close(f[[0, 1, 63]], arr(1.0, base[1], base[63] / 8), "inv_freq(llama)[[0, 1, 63]]", 1e-12,
          per_element=True)


@pytest.mark.rubric("frequencies")
def test_llama_blend_band():
    """Rule: Llama3 scaling"""
    f = rp.inv_freq(llama())
    base = 500000.0 ** (-np.arange(0, 128, 2) / 128)
    wavelen = 2 * np.pi / base
    mid = (wavelen >= 2048) & (wavelen <= 8192)
    assert mid.any()
    s = (8192 / wavelen[mid] - 1) / (4 - 1)
    close(f[mid], (1 - s) * base[mid] / 8 + s * base[mid],
          "2048 <= wavelength <= 8192: (1 - s) f / 8 + s f", 1e-12, per_element=True)


# ------------------------------------------------------------------ rotation
@pytest.mark.rubric("rotation")
def test_split_halves_by_hand():
    """Rules: Split-halves pairing; Rotation angle"""
    cfg = small(theta=10000.0, head_dim=4)          # frequencies 1 and 0.01
    x = np.array([[[1.0, 2.0, 3.0, 4.0]]])          # pairs (x0, x2) = (1, 3) and (x1, x3) = (2, 4)
    a, b = 2.0, 0.02                                # position 2
    want = np.array([[[1 * math.cos(a) - 3 * math.sin(a), 2 * math.cos(b) - 4 * math.sin(b),
                       3 * math.cos(a) + 1 * math.sin(a), 4 * math.cos(b) + 2 * math.sin(b)]]])
    close(rp.apply_rope(x, ints(2), cfg), want, "apply_rope at position 2, head_dim 4", 1e-9)


@pytest.mark.rubric("rotation")
def test_position_zero_is_identity_and_norms_are_kept():
    """Rule: Rotation angle"""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 2, 8))
    out = rp.apply_rope(x, ints(0, 5, 1000), small(head_dim=8))
    close(out[0], x[0], "position 0 turns nothing", 1e-12)
    close(out[..., :4] ** 2 + out[..., 4:] ** 2, x[..., :4] ** 2 + x[..., 4:] ** 2,
          "each pair (j, j + d/2) keeps its length", 1e-9)


# ------------------------------------------------------------------ angle in a dtype
@pytest.mark.rubric("angle_dtype")
def test_bf16_positions_round():
    """Rule: Angle in a dtype"""
    got = rp.angles(ints(256, 257, 258, 259), llama(), "bfloat16")
    assert got.shape == (4, 64), f"angles shape: expected (4, 64), got {got.shape}"
    same_bits(got[:, 0], arr(256, 256, 258, 260),
              "bf16 angles at frequency 0 (f = 1): the position itself rounds")


@pytest.mark.rubric("angle_dtype")
def test_float64_angles_are_the_plain_product():
    """Rule: Angle in a dtype"""
    cfg = small(theta=10000.0, head_dim=4)
    close(rp.angles(ints(0, 3, 1000), cfg, "float64"),
          np.array([[0.0, 0.0], [3.0, 0.03], [1000.0, 10.0]]), "float64 angles = p * f", 1e-15)


# ------------------------------------------------------------------ fused bytes
@pytest.mark.rubric("fused_bytes")
def test_fused_bytes_llama_example():
    """Rule: Fused bytes"""
    assert rp.fused_bytes_saved(llama(), 2) == 655_360, "2 x (32 + 8) x 128 x 2 bytes x 32 layers"
    cfg = {"hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 3,
           "rope_theta": 10000.0}                      # no num_key_value_heads: 4, as MHA
    assert rp.fused_bytes_saved(cfg, 4) == 2 * (4 + 4) * 16 * 4 * 3


# ------------------------------------------------------------------ first bad position
@pytest.mark.rubric("first_bad")
def test_first_bad_respects_max_position():
    """Rule: Angle error"""
    assert rp.first_bad_position(llama(), "bfloat16", 0.5, max_position=160) == -1
    assert rp.first_bad_position(llama(), "bfloat16", 0.5, max_position=161) == 160


@pytest.mark.rubric("first_bad")
def test_first_bad_examples():
    """Rule: Angle error"""
    cfg = llama()
    assert rp.first_bad_position(cfg, "float64", 0.0, 1000) == -1, "float64 angles are the reference"
    assert rp.first_bad_position(cfg, "bfloat16", 0.5) == 160
    assert rp.first_bad_position(cfg, "float32", 1e-3) == 20120
    assert rp.first_bad_position(cfg, "float32", 0.01) == -1, "float32 stays within 0.01 to 128K"


# ------------------------------------------------------------------ resolution
@pytest.mark.rubric("resolution")
def test_resolution_examples():
    """Rule: Resolution"""
    cfg = llama()
    assert rp.position_resolution(cfg, "bfloat16", 131072) == 513
    assert rp.position_resolution(cfg, "float16", 131072) == 65552, "65520 .. 131071 are all inf"
    assert rp.position_resolution(cfg, "float32", 131072) == 1
    assert rp.position_resolution(cfg, "bfloat16", 257) == 1, "bf16 holds 0 .. 256 exactly"
    assert rp.position_resolution(cfg, "bfloat16", 258) == 2, "256 and 257 share an angle"


# ------------------------------------------------------------------ errors
@pytest.mark.rubric("errors")
@pytest.mark.parametrize("call", [
    lambda: rp.round_to_dtype(np.zeros(2), "fp8"),
    lambda: rp.inv_freq(small(head_dim=7)),
    lambda: rp.inv_freq(small(scaling={"rope_type": "yarn", "factor": 4.0})),
    lambda: rp.angles(ints(-1, 2), small(), "bfloat16"),
    lambda: rp.first_bad_position(small(), "bfloat16", -0.1),
    lambda: rp.position_resolution(small(head_dim=8), "bfloat16", 100, index=4),
], ids=["dtype", "odd_head_dim", "rope_type", "negative_position", "tolerance", "index"])
def test_bad_input_raises(call):
    """Rule: Errors"""
    with pytest.raises(ValueError):
        call()
