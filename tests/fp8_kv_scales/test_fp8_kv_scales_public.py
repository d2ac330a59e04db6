"""Public tests for fp8_kv_scales: the prompt's examples and the basic behaviours.

Run: nox -s kata -- fp8_kv_scales
Expected codes come from the prompt's table (tests/fp8_kv_scales/helpers.py), searched
for the nearest value; expected errors from a float64 model of the simulator.
"""

import numpy as np
import pytest

from graders.impl import kata_impl
from tests.fp8_kv_scales import helpers as h

fp8 = kata_impl("fp8_kv_scales")


def f64(*values):
    return np.array(values, dtype=np.float64)


@pytest.mark.rubric("e4m3_format")
def test_prompt_example_codes():
    """Rules: Round to nearest even; Subnormals are kept; Signed zero; Saturation"""
    x = f64(1.0, 448.0, 500.0, -np.inf, 2.0 ** -9, 2.0 ** -10, -0.0, 1.0625)
    h.check_codes(fp8.encode_e4m3(x), [0x38, 0x7E, 0x7E, 0xFE, 0x01, 0x00, 0x80, 0x38], x,
                  what="the prompt's example: ")


@pytest.mark.rubric("e4m3_format")
def test_decoding_reads_the_table():
    """Rule: Decoding"""
    got = np.asarray(fp8.decode_e4m3(np.array([0x7E, 0x01, 0x08, 0xC0, 0x38, 0x80], np.uint8)))
    assert got.dtype == np.float32, f"decode_e4m3 must return float32, got {got.dtype}"
    want = np.array([448.0, 2.0 ** -9, 2.0 ** -6, -2.0, 1.0, -0.0], np.float32)
    assert np.array_equal(got, want), f"decode_e4m3([0x7E, 0x01, 0x08, 0xC0, 0x38, 0x80]) = {got}"
    assert np.signbit(got[-1]), "0x80 decodes to -0.0"


@pytest.mark.rubric("e4m3_format")
def test_ties_round_to_nearest_even():
    """Rule: Round to nearest even"""
    x = f64(1.0625, 1.1875, 1.96875, 3.125, -3.125, 0.5 * (2.0 ** -9 + 2.0 ** -8),
            1.0625 + 2.0 ** -30, 432.0)
    # 3.125 is halfway between 3.0 (0x44) and 3.25 (0x45): the even one is 0x44;
    # 1.5 x 2^-9 is halfway between subnormals 0x01 and 0x02; 432 between 416 and 448
    want = [0x38, 0x3A, 0x40, 0x44, 0xC4, 0x02, 0x39, 0x7E]
    h.check_codes(fp8.encode_e4m3(x), want, x, what="ties and near-ties: ")


@pytest.mark.rubric("e4m3_format")
def test_subnormals_are_kept_not_flushed():
    """Rules: Subnormals are kept; Signed zero"""
    x = f64(*(m * 2.0 ** -9 for m in range(8)), 2.0 ** -10 * 1.001, -(2.0 ** -10), -1e-9)
    want = [0, 1, 2, 3, 4, 5, 6, 7, 0x01, 0x80, 0x80]
    h.check_codes(fp8.encode_e4m3(x), want, x, what="the subnormal range: ")


@pytest.mark.rubric("e4m3_format")
def test_every_code_round_trips():
    """Rules: Decoding; Round to nearest even"""
    codes = np.array([c for c in range(256) if c not in h.NAN_CODES], dtype=np.uint8)
    values = np.asarray(fp8.decode_e4m3(codes))
    want = h.TABLE[codes.astype(int)].astype(np.float32)
    assert np.array_equal(values, want) and np.array_equal(np.signbit(values), np.signbit(want)), (
        "decode_e4m3 disagrees with the prompt's table")
    h.check_codes(fp8.encode_e4m3(values), codes, values, what="encode(decode(code)) == code: ")


@pytest.mark.rubric("saturation_and_nan")
def test_beyond_448_saturates():
    """Rule: Saturation"""
    x = f64(449.0, 464.0, 465.0, 480.0, 1e6, np.inf, -500.0, -np.inf)
    h.check_codes(fp8.encode_e4m3(x), [0x7E] * 6 + [0xFE] * 2, x, what="beyond 448: ")
    x32 = np.array([3e38, -3e38], np.float32)
    h.check_codes(fp8.encode_e4m3(x32), [0x7E, 0xFE], x32, what="float32 extremes: ")


@pytest.mark.rubric("saturation_and_nan")
def test_nan_stays_nan():
    """Rule: NaN stays NaN"""
    x = f64(np.nan, -np.nan, 1.0)
    got = np.asarray(fp8.encode_e4m3(x))
    assert int(got[0]) in h.NAN_CODES and int(got[1]) in h.NAN_CODES, (
        f"NaN must encode to 0x7F or 0xFF, got {h.hexes(got)}")
    back = np.asarray(fp8.decode_e4m3(np.array([0x7F, 0xFF], np.uint8)))
    assert np.isnan(back).all(), f"0x7F and 0xFF decode to NaN, got {back}"


@pytest.mark.rubric("scale_invariance")
def test_scaling_example_and_per_head():
    """Rule: Scaling"""
    x = f64(3.0, 900.0)
    h.check_codes(fp8.quantize(x, 2.0), [0x3C, 0x7E], x, what="quantize(x, 2.0): ")
    got = np.asarray(fp8.dequantize(np.array([0x3C, 0x7E], np.uint8), 2.0))
    assert got.dtype == np.float64 and np.array_equal(got, f64(3.0, 896.0)), (
        f"dequantize([0x3C, 0x7E], 2.0) = {got!r}, expected float64 [3.0, 896.0]")
    # per head: (T=2, H=3, D=3), head h divided by scale[h] (not the last axis!)
    x = np.ones((2, 3, 3)) * f64(1.0, 2.0, 4.0)[:, None]
    scale = f64(1.0, 2.0, 4.0)
    h.check_codes(fp8.quantize(x, scale), np.full((2, 3, 3), 0x38), x,
                  what="a per-head scale applies along axis -2: ")
    back = np.asarray(fp8.dequantize(np.full((2, 3, 3), 0x38, np.uint8), scale))
    assert np.array_equal(back, x), f"dequantize per head gave {back}"


@pytest.mark.rubric("scale_invariance")
def test_rounding_hardly_depends_on_the_scale():
    """Rule: Rounding hardly depends on the scale"""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(4096) * 3.0
    base = 8.0 * np.abs(x).max() / 448.0          # keeps |x / scale| <= 56: no clipping
    errors = []
    for scale in (base, base * 2.0 ** -3, base * 2.0 ** 2):
        keep = np.abs(x / scale) >= h.MIN_NORMAL
        y = np.asarray(fp8.dequantize(fp8.quantize(x, scale), scale))
        rel = np.abs(y - x)[keep] / np.abs(x)[keep]
        assert rel.max() <= h.UNIT_ROUNDOFF, f"relative error {rel.max()} > 2^-4 at scale {scale}"
        errors.append(np.abs(y - x) / np.abs(x))
    both = np.abs(x / (base * 4.0)) >= h.MIN_NORMAL   # normal at every scale above
    for e in errors[1:]:
        assert np.array_equal(e[both], errors[0][both]), (
            "scales a power of two apart must give exactly the same relative errors")


@pytest.mark.rubric("scale_invariance")
def test_small_values_fall_into_the_subnormals():
    """Rule: Except in the subnormal range"""
    x = f64(0.004, 0.0005, 0.02)
    got = np.asarray(fp8.dequantize(fp8.quantize(x, 1.0), 1.0))
    assert np.array_equal(got, f64(0.00390625, 0.0, 0.01953125)), f"scale 1.0: {got}"
    finer = np.asarray(fp8.dequantize(fp8.quantize(x, 1.0 / 64), 1.0 / 64))
    rel = np.abs(finer - x) / x
    assert rel.max() <= h.UNIT_ROUNDOFF, f"scale 1/64 keeps them normal: relative errors {rel}"


@pytest.mark.rubric("clipping")
def test_clipping_example():
    """Rule: Clipping"""
    x = f64(3.0, 900.0, -1000.0, 10.0)
    assert fp8.clip_fraction(x, 2.0) == 0.5
    assert fp8.clip_fraction(f64(896.0, -896.0), 2.0) == 0.0, "|x| / scale == 448 does not clip"
    y = np.asarray(fp8.dequantize(fp8.quantize(x, 2.0), 2.0))
    assert y[1] == 896.0 and y[2] == -896.0, f"clipped entries come back as +-448 x scale: {y}"


@pytest.mark.rubric("clipping")
def test_a_default_scale_of_one_clips_large_activations():
    """Rule: Clipping"""
    rng = np.random.default_rng(5)
    k = rng.standard_normal((256, 2, 16)) * 20.0
    k[:, 0, 3] += 600.0                       # an outlier channel with a large bias
    assert fp8.clip_fraction(k, 1.0) > 0.0
    y = np.asarray(fp8.dequantize(fp8.quantize(k, 1.0), 1.0))
    assert np.abs(y).max() == 448.0
    assert fp8.clip_fraction(k, fp8.calibrate_scale(k, margin=1.01)) == 0.0


@pytest.mark.rubric("calibration")
def test_calibration_examples():
    """Rule: Calibration"""
    s = fp8.calibrate_scale(np.array([[[1.0, -2.0]], [[0.5, 896.0]]]))
    assert isinstance(s, float) and s == 2.0, f"amax 896 / 448 = 2.0, got {s!r}"
    assert fp8.calibrate_scale(f64(-224.0, 1.0), margin=1.5) == 224.0 * 1.5 / 448.0
    z = np.asarray(fp8.calibrate_scale(np.zeros((3, 2, 4)), per_head=True))
    assert z.shape == (2,) and np.array_equal(z, f64(1.0, 1.0)), f"zero amax gives 1.0: {z}"
    x = np.zeros((4, 3, 2))
    x[1, 0, 1], x[2, 1, 0], x[3, 2, 1] = -44.8, 448.0, 4.48
    got = np.asarray(fp8.calibrate_scale(x, per_head=True))
    assert np.array_equal(got, f64(44.8, 448.0, 4.48) / 448.0), (
        f"per head: amax over tokens and head_dim, got {got}")


@pytest.mark.rubric("attention_growth")
def test_simulator_matches_float64_attention():
    """Rule: The simulator"""
    q, k, v = h.gaussian_cache(11, tokens=64, heads=2, dim=4)
    sk, sv = h.model_scale(k, True), h.model_scale(v, True)
    got = np.asarray(fp8.attention_error(q, k, v, sk, sv))
    want = h.model_error(q, k, v, sk, sv)
    assert got.shape == (2,) and np.allclose(got, want, rtol=1e-6, atol=1e-12), (
        f"attention_error = {got}, expected {want}")
    grid = h.model_roundtrip(k, 0.5)              # every k / 0.5 is an E4M3 value
    zero = np.asarray(fp8.attention_error(q, grid, grid, 0.5, 0.5))
    assert np.abs(zero).max() <= 1e-12, f"representable K and V must give error 0, got {zero}"


@pytest.mark.rubric("attention_growth")
def test_clipping_grows_with_context():
    """Rule: Clipping grows with context"""
    q, k, v = h.outlier_cache(0)
    sk, sv = fp8.calibrate_scale(k[:h.SHORT]), fp8.calibrate_scale(v[:h.SHORT])
    short = np.asarray(fp8.attention_error(q, k[:h.SHORT], v[:h.SHORT], sk, sv))
    long = np.asarray(fp8.attention_error(q, k, v, sk, sv))
    want_short = h.model_error(q, k[:h.SHORT], v[:h.SHORT], sk, sv)
    want_long = h.model_error(q, k, v, sk, sv)
    assert np.allclose(short, want_short, rtol=1e-6) and np.allclose(long, want_long, rtol=1e-6), (
        f"errors {short}, {long}; expected {want_short}, {want_long}")
    assert fp8.clip_fraction(k[:h.SHORT], sk) == 0.0 < fp8.clip_fraction(k, sk) < 1e-3
    assert long[0] >= 5 * short[0], f"1K error {short}, 128K error {long}"


@pytest.mark.rubric("errors")
def test_bad_scales_and_codes_raise():
    """Rule: Errors"""
    x = np.ones((2, 3, 4))
    for scale in (0.0, -1.0, np.nan, np.inf, f64(1.0, 2.0), np.ones((3, 1)), f64(1.0, 0.0, 1.0)):
        with pytest.raises(ValueError):
            fp8.quantize(x, scale)
    for codes in (np.array([256]), np.array([-1]), np.array([1.0])):
        with pytest.raises(ValueError):
            fp8.decode_e4m3(codes)
    with pytest.raises(ValueError):
        fp8.calibrate_scale(np.array([]))
    with pytest.raises(ValueError):
        fp8.calibrate_scale(f64(1.0, np.nan))
