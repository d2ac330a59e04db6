"""Hidden tests for rope_precision: every rule and trap, exact against an independent oracle.

The oracle (oracle.py) rounds with ml_dtypes' and numpy's casts from float64, computes the
frequencies its own way and scans positions by brute force. Answers are compared exactly
wherever the prompt makes them exact; cases whose answer would move with frequencies
within 1e-12 of the true ones are skipped (``assume``), as the prompt promises.
"""

from __future__ import annotations

import copy
import math

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import assume, example, given

from graders.hidden.rope_precision import oracle as o
from graders.impl import kata_impl
from graders.support import inputs
from tests.rope_precision.helpers import close, ints, llama, same_bits, small

rp = kata_impl("rope_precision")
dtypes = st.sampled_from(o.LOW)
all_dtypes = st.sampled_from(("float64",) + o.LOW)


def arr(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float64)


# ------------------------------------------------------------------ rounding
BOUNDS = {"float32": (24, -126, 127), "bfloat16": (8, -126, 127), "float16": (11, -14, 15)}


@st.composite
def hard_values(draw, dtype):
    """float64 values at the traps of rounding to ``dtype``: its own values, the halfway
    points between neighbours, a float64 ulp or a float32-invisible nudge either side of
    them, the subnormal range, the overflow threshold, signs, zeros, infinities, NaN."""
    bits, emin, emax = BOUNDS[dtype]
    n = draw(st.integers(1, 24))
    out = []
    for _ in range(n):
        kind = draw(st.integers(0, 7))
        e = draw(st.integers(emin - bits - 1, emax))
        m = draw(st.integers(2 ** (bits - 1), 2**bits - 1))           # a significand
        grid = math.ldexp(m, e - bits + 1)
        half = math.ldexp(1, e - bits)                                  # half a spacing
        if e < emin:                                                    # subnormal spacing
            half = math.ldexp(1, emin - bits)
        mid = grid + half
        if kind == 0:
            v = grid
        elif kind == 1:
            v = mid
        elif kind == 2:
            v = math.nextafter(mid, draw(st.sampled_from([-math.inf, math.inf])))
        elif kind == 3:   # past the halfway point by less than float32 can see
            v = mid + draw(st.sampled_from([1, -1])) * mid * 2.0**-40
        elif kind == 4:
            v = draw(st.floats(allow_nan=False, allow_infinity=False, width=64))
        elif kind == 5:   # around the overflow threshold
            top = (2 - 2.0 ** (1 - bits)) * 2.0**emax
            v = top + draw(st.sampled_from([-1.0, -0.5, 0.0, 0.49, 0.5, 0.5001, 1.0, 2.0])) \
                * 2.0 ** (emax - bits + 1)
        elif kind == 6:
            v = draw(st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan]))
        else:             # deep in and below the subnormal range
            v = draw(st.floats(0, math.ldexp(1, emin + 1))) * draw(st.sampled_from([1, 0.5, 1e-3]))
        out.append(-v if draw(st.booleans()) else v)
    return np.array(out, dtype=np.float64)


@pytest.mark.rubric("rounding")
@given(st.data())
def test_rounding_matches_ml_dtypes(data):
    """Rule: Round to nearest even"""
    dtype = data.draw(dtypes, label="dtype")
    x = data.draw(hard_values(dtype), label="x")
    same_bits(rp.round_to_dtype(x, dtype), o.R(x, dtype), f"round_to_dtype(x, {dtype!r})", x)


@pytest.mark.rubric("rounding")
@pytest.mark.parametrize("dtype", o.LOW)
def test_rounding_every_halfway_point_of_a_binade(dtype):
    """Rule: Round to nearest even"""
    bits = BOUNDS[dtype][0]
    k = np.arange(2 ** (bits - 1), 2**bits, max(1, 2 ** (bits - 1) // 4096), dtype=np.float64)
    for scale in (1.0, 2.0**-130 if dtype != "float16" else 2.0**-20, 2.0**10):
        x = np.concatenate([(k + 0.5) * scale, (k + 0.5 + 2.0**-30) * scale, k * scale])
        same_bits(rp.round_to_dtype(x, dtype), o.R(x, dtype),
                  f"round_to_dtype(halfway points, {dtype!r})", x)
    # the subnormal grid: halfway points between its neighbours, and just past them
    emin = BOUNDS[dtype][1]
    j = k - 2 ** (bits - 1)
    tiny = math.ldexp(1.0, emin - bits + 1)               # the smallest subnormal
    x = np.concatenate([(j + 0.5) * tiny, (j + 0.5 + 2.0**-30) * tiny, -(j + 0.5) * tiny])
    same_bits(rp.round_to_dtype(x, dtype), o.R(x, dtype),
              f"round_to_dtype(subnormal halfway points, {dtype!r})", x)


@pytest.mark.rubric("rounding")
def test_rounding_keeps_shape_and_leaves_input_alone():
    """Rule: Round to nearest even"""
    x = np.array([[1.0, 257.0, 65520.0], [2.0**-25, -0.0, 3.0]])
    got = inputs.leaves_inputs_alone(rp.round_to_dtype, x, "float16", what="round_to_dtype")
    same_bits(got, o.R(x, "float16"), "round_to_dtype of a 2-D array keeps its shape")
    same_bits(rp.round_to_dtype(np.zeros(0), "bfloat16"), np.zeros(0), "empty input")
    same_bits(rp.round_to_dtype(np.arange(3, dtype=np.float64) + 0.5, "float64"),
              arr(0.5, 1.5, 2.5), "float64 changes nothing")


# ------------------------------------------------------------------ frequencies
@pytest.mark.rubric("frequencies")
@given(o.configs(max_head_dim=128))
def test_frequencies_match_the_rule(cfg):
    """Rules: Base frequencies; Llama3 scaling; Head dim; Precision of the frequencies"""
    before = copy.deepcopy(cfg)
    want = o.freqs(cfg)
    close(rp.inv_freq(cfg), want, f"inv_freq({before})", 1e-12, per_element=True)


@pytest.mark.rubric("frequencies")
@pytest.mark.parametrize("theta", [10000.0, 500000.0, 1e6])
@pytest.mark.parametrize("d", [64, 128, 256])
def test_frequencies_real_shapes(theta, d):
    """Rules: Base frequencies; Llama3 scaling"""
    cfg = llama()
    cfg["rope_theta"], cfg["head_dim"] = theta, d      # head_dim wins over hidden / heads
    close(rp.inv_freq(cfg), o.freqs(cfg), f"inv_freq(Llama-3.1 scaling, theta {theta}, d {d})",
          1e-12, per_element=True)
    cfg["rope_scaling"] = None
    close(rp.inv_freq(cfg), o.freqs(cfg), f"inv_freq(no scaling, theta {theta}, d {d})", 1e-12,
          per_element=True)


@pytest.mark.rubric("frequencies")
def test_each_band_of_llama():
    """Rule: Llama3 scaling"""
    f = rp.inv_freq(llama())
    base = o.freqs({**llama(), "rope_scaling": None})
    w = 2 * np.pi / base
    assert (w < 2048).any() and (w > 8192).any() and ((w >= 2048) & (w <= 8192)).any()
    close(f[w < 2048], base[w < 2048], "short wavelengths are kept", 1e-12, per_element=True)
    close(f[w > 8192], base[w > 8192] / 8, "long wavelengths are divided by the factor", 1e-12,
          per_element=True)
    close(f, o.freqs(llama()), "the blended band", 1e-12, per_element=True)


# ------------------------------------------------------------------ rotation
@st.composite
def rope_case(draw):
    cfg = draw(o.configs(max_head_dim=16))
    d = o.head_dim(cfg)
    p = draw(o.positions.filter(lambda v: v.size > 0))
    heads = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**32 - 1))
    x = np.random.default_rng(seed).standard_normal((p.size, heads, d)) * draw(
        st.sampled_from([1.0, 1e-3, 50.0]))
    return cfg, x, p


@pytest.mark.rubric("rotation")
@given(rope_case(), all_dtypes)
def test_rotation_matches_the_rule(case, dtype):
    """Rules: Split-halves pairing; Rotation angle; Angle in a dtype"""
    cfg, x, p = case
    f = o.freqs(cfg)
    assume(o.min_ok(f) and o.robust_freqs(f, dtype))
    got = inputs.leaves_inputs_alone(rp.apply_rope, x, p, cfg, dtype, what="apply_rope")
    want = o.rope(x, p, f, dtype)
    scale = float(np.abs(x).max())
    close(got / scale, want / scale,
          f"apply_rope(positions {p.tolist()}, angle_dtype {dtype!r}, config {cfg})", 1e-9)


@pytest.mark.rubric("rotation")
@pytest.mark.parametrize("dtype", ["float32", "float16", "int64"])
def test_rotation_returns_float64_whatever_x_holds(dtype):
    """"It returns a new float64 array": a float32 or integer x is rotated in float64, not
    written back into x's dtype (found blind: hunt_4).

    Rule: Rotation angle
    """
    cfg = small(head_dim=8)
    x = np.arange(16).reshape(2, 1, 8).astype(dtype)
    p = np.array([3, 70])
    got = np.asarray(rp.apply_rope(x, p, cfg))
    assert got.dtype == np.float64, f"apply_rope of a {dtype} x returned {got.dtype}"
    want = o.rope(x.astype(np.float64), p, o.freqs(cfg), "float64")
    close(got / 15.0, want / 15.0, f"apply_rope of a {dtype} x", 1e-9)


@pytest.mark.rubric("rotation")
@given(rope_case(), st.integers(0, 5000))
def test_dot_products_depend_on_distance_only(case, shift):
    """Rules: Rotation angle; Split-halves pairing"""
    cfg, x, p = case
    p = p % 20000
    q, k = x, x[::-1].copy()
    a = np.einsum("thd,thd->th", rp.apply_rope(q, p, cfg), rp.apply_rope(k, p[::-1].copy(), cfg))
    b = np.einsum("thd,thd->th", rp.apply_rope(q, p + shift, cfg),
                  rp.apply_rope(k, p[::-1] + shift, cfg))
    scale = max(1.0, float(np.abs(x).max()) ** 2 * x.shape[-1])
    close(a / scale, b / scale, f"q.k at positions (m, n) and (m + {shift}, n + {shift})", 1e-8)


@pytest.mark.rubric("rotation")
def test_bf16_angle_merges_neighbours_in_the_rotation():
    """Rules: Rotation angle; Angle in a dtype"""
    cfg = llama()
    x = np.ones((2, 1, 128))
    out = rp.apply_rope(x, ints(256, 257), cfg, "bfloat16")
    assert out.shape == (2, 1, 128)
    close(out[0, 0, [0, 64]], out[1, 0, [0, 64]], "pair (0, 64) turns by the same bf16 angle "
          "at positions 256 and 257", 1e-15)
    f64 = rp.apply_rope(x, ints(256, 257), cfg)
    assert abs(f64[0, 0, 0] - f64[1, 0, 0]) > 0.1, "in float64 they differ by one radian"


# ------------------------------------------------------------------ angles in a dtype
@pytest.mark.rubric("angle_dtype")
@given(o.configs(max_head_dim=32), o.positions, all_dtypes)
@example(llama(), np.array(o.TRAP_POSITIONS, dtype=np.int64), "bfloat16")
@example(llama(), np.array(o.TRAP_POSITIONS, dtype=np.int64), "float16")
@example(llama(), np.array(o.TRAP_POSITIONS, dtype=np.int64), "float32")
def test_angles_bit_exact(cfg, p, dtype):
    """Rule: Angle in a dtype"""
    f = o.freqs(cfg)
    assume(o.min_ok(f) and o.robust_freqs(f, dtype))
    got = inputs.leaves_inputs_alone(rp.angles, p, cfg, dtype, what="angles")
    want = o.angles(p, f, dtype)
    what = f"angles(positions {p.tolist()}, {dtype!r}, config {cfg})"
    if dtype == "float64":
        close(got, want, what, 1e-12, per_element=True)
    else:
        same_bits(got, want, what, p)


@pytest.mark.rubric("angle_dtype")
def test_float16_positions_overflow():
    """Rules: Angle in a dtype; Round to nearest even"""
    got = rp.angles(ints(65504, 65519, 65520, 131071), llama(), "float16")
    assert np.isfinite(got[:2]).all(), "65504 and 65519 are float16 65504: finite angles"
    assert np.isposinf(got[2:]).all(), "positions from 65520 are inf in float16: so are their angles"


@pytest.mark.rubric("angle_dtype")
def test_angle_rounds_the_product_in_the_dtype():
    """Rule: Angle in a dtype"""
    cfg = small(theta=10000.0, head_dim=4)       # f = 1, 0.01
    got = rp.angles(ints(3, 300), cfg, "bfloat16")
    f1 = o.R(0.01, "bfloat16")
    same_bits(got, np.array([[3.0, float(o.R(3 * f1, "bfloat16"))],
                             [300.0, float(o.R(300 * f1, "bfloat16"))]]),
              "bf16 angles of positions 3 and 300 (the product rounded to bf16, not float32)")


# ------------------------------------------------------------------ fused bytes
@pytest.mark.rubric("fused_bytes")
@given(st.sampled_from([1, 2, 4, 8, 32, 64, 128]), st.sampled_from([1, 2, 4, 8]),
       st.sampled_from([32, 64, 80, 128, 256]), st.integers(1, 128), st.sampled_from([1, 2, 4]),
       st.integers(0, 2))
def test_fused_bytes_formula(q, kv_div, d, layers, nbytes, head_dim_style):
    """Rule: Fused bytes"""
    kv = max(1, q // kv_div)
    cfg = {"num_attention_heads": q, "num_key_value_heads": kv, "num_hidden_layers": layers,
           "rope_theta": 10000.0}
    if head_dim_style == 0:
        cfg["hidden_size"] = q * d
    else:
        cfg["hidden_size"] = q * d * 2            # head_dim given: hidden_size is not q x d
        cfg["head_dim"] = d
    got = rp.fused_bytes_saved(cfg, nbytes)
    want = 2 * (q + kv) * d * nbytes * layers
    assert isinstance(got, (int, np.integer)) and got == want, (
        f"fused_bytes_saved({cfg}, {nbytes}): expected {want} = 2 x ({q} + {kv}) x {d} x "
        f"{nbytes} x {layers}, got {got!r}")


@pytest.mark.rubric("fused_bytes")
def test_fused_bytes_real_models():
    """Rule: Fused bytes"""
    cfg70 = {**llama(), "hidden_size": 8192, "num_attention_heads": 64, "num_hidden_layers": 80}
    assert rp.fused_bytes_saved(cfg70, 2) == 2 * (64 + 8) * 128 * 2 * 80, "Llama-3.1-70B bf16"
    assert rp.fused_bytes_saved(llama(), 1) == 327_680, "Llama-3.1-8B fp8"
    mha = {k: v for k, v in llama().items() if k != "num_key_value_heads"}
    assert rp.fused_bytes_saved(mha, 2) == 2 * 64 * 128 * 2 * 32, "no num_key_value_heads: MHA"
    null = {**llama(), "num_key_value_heads": None}
    assert rp.fused_bytes_saved(null, 2) == 2 * 64 * 128 * 2 * 32, \
        "num_key_value_heads null (None) means absent: MHA"


# ------------------------------------------------------------------ first bad position
TOLERANCES = st.sampled_from([0.0, 1e-6, 1e-4, 1e-3, 0.01, 0.05, 0.25, 0.5, 1.0, 3.0, 100.0])


@pytest.mark.rubric("first_bad")
@given(o.configs(max_head_dim=8), all_dtypes, TOLERANCES, st.integers(1, 3000))
def test_first_bad_matches_a_scan(cfg, dtype, tol, maxp):
    """Rule: Angle error"""
    f = o.freqs(cfg)
    assume(o.min_ok(f))
    want, robust = o.robust_first_bad(f, dtype, tol, maxp)
    assume(robust)
    got = rp.first_bad_position(cfg, dtype, tol, maxp)
    assert got == want, (f"first_bad_position({cfg}, {dtype!r}, {tol}, max_position={maxp}): "
                         f"expected {want}, got {got}")


@pytest.mark.rubric("first_bad")
@pytest.mark.parametrize("dtype,tol", [("bfloat16", 1e-3), ("bfloat16", 0.05), ("bfloat16", 2.0),
                                       ("float16", 1e-3), ("float16", 0.9), ("float16", 30.0),
                                       ("float32", 2e-3), ("float32", 1e-4)])
def test_first_bad_llama(dtype, tol):
    """Rule: Angle error"""
    f = o.freqs(llama())
    want, robust = o.robust_first_bad(f, dtype, tol, 131072)
    assert robust, "test data: a clear case"
    got = rp.first_bad_position(llama(), dtype, tol)
    assert got == want, f"first_bad_position(Llama-3.1-8B, {dtype!r}, {tol}): expected {want}, got {got}"


@pytest.mark.rubric("first_bad")
def test_first_bad_is_strictly_more_than_the_tolerance():
    """Rule: Angle error"""
    cfg = small(theta=10000.0, head_dim=2)           # one frequency, exactly 1: angle = R(p)
    # bf16 errors: |R(p) - p| is 1 at 257 and first 2 at 514 (514 is a tie, to even 512)
    assert rp.first_bad_position(cfg, "bfloat16", 1.0) == 514, "an error equal to the tolerance is fine"
    assert rp.first_bad_position(cfg, "bfloat16", 0.999) == 257
    assert rp.first_bad_position(cfg, "bfloat16", 0.999, max_position=257) == -1
    assert rp.first_bad_position(cfg, "bfloat16", 0.999, max_position=258) == 257
    # float16: exact to 2048, then |R(p) - p| = 1 at 2049; inf from 65520
    assert rp.first_bad_position(cfg, "float16", 0.0) == 2049
    assert rp.first_bad_position(cfg, "float16", 1e6) == 65520, "an infinite angle is off by infinity"


# ------------------------------------------------------------------ resolution
@pytest.mark.rubric("resolution")
@given(o.configs(max_head_dim=8), all_dtypes,
       st.one_of(st.integers(1, 3000), st.sampled_from([256, 257, 258, 2049, 2050, 65521, 70000])),
       st.integers(0, 3))
def test_resolution_matches_a_count(cfg, dtype, context, index):
    """Rule: Resolution"""
    f = o.freqs(cfg)
    assume(o.min_ok(f) and o.robust_freqs(f, dtype))
    index = min(index, f.size - 1)
    want = o.resolution(f, dtype, context, index)
    got = rp.position_resolution(cfg, dtype, context, index)
    assert got == want, (f"position_resolution({cfg}, {dtype!r}, context={context}, index={index}): "
                         f"expected {want}, got {got}")


@pytest.mark.rubric("resolution")
def test_resolution_is_the_longest_run():
    """Rule: Resolution"""
    cfg = small(theta=10000.0, head_dim=2)                 # angle = R(p)
    # bf16, 512 .. 1023 are 4 apart: 512 takes 510 .. 514 (both ties go to it), 516 takes 3
    assert rp.position_resolution(cfg, "bfloat16", 1024) == 5
    assert rp.position_resolution(cfg, "bfloat16", 513) == 3, "the run of 512 is cut at the context"
    assert rp.position_resolution(cfg, "bfloat16", 1) == 1
    assert rp.position_resolution(cfg, "float16", 65520) == 33, "32768 .. 65519 are 32 apart"
    assert rp.position_resolution(cfg, "float16", 65560) == 40, "65520 .. 65559 are all inf"


@pytest.mark.rubric("resolution")
@pytest.mark.parametrize("dtype,context,index", [("bfloat16", 131072, 5), ("bfloat16", 20000, 30),
                                                 ("float16", 60000, 0), ("float16", 60000, 63),
                                                 ("float32", 131072, 63)])
def test_resolution_llama(dtype, context, index):
    """Rule: Resolution"""
    f = o.freqs(llama())
    assert o.robust_freqs(f, dtype)
    want = o.resolution(f, dtype, context, index)
    got = rp.position_resolution(llama(), dtype, context, index)
    assert got == want, f"position_resolution(Llama, {dtype!r}, {context}, {index}): expected {want}, got {got}"


# ------------------------------------------------------------------ errors
def _bad_scaling(**change):
    sc = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 8192}
    sc.update(change)
    return small(scaling={k: v for k, v in sc.items() if v is not None})


BAD_CALLS = {
    "dtype_name": lambda: rp.angles(ints(1), small(), "bf16"),
    "dtype_first_bad": lambda: rp.first_bad_position(small(), "int8", 0.1),
    "dtype_resolution": lambda: rp.position_resolution(small(), "float8", 10),
    "dtype_rope": lambda: rp.apply_rope(np.zeros((1, 1, 8)), ints(1), small(), "half"),
    "odd_head_dim": lambda: rp.angles(ints(1), small(head_dim=5), "float32"),
    "odd_derived_head_dim": lambda: rp.inv_freq({"hidden_size": 12, "num_attention_heads": 4,
                                                 "rope_theta": 100.0}),
    "no_theta": lambda: rp.inv_freq({"head_dim": 8}),
    "theta_one": lambda: rp.inv_freq(small(theta=1.0)),
    "theta_negative": lambda: rp.inv_freq(small(theta=-10000.0)),
    "no_rope_type": lambda: rp.inv_freq(_bad_scaling(rope_type=None)),
    "linear_type": lambda: rp.inv_freq(_bad_scaling(rope_type="linear")),
    "factor_below_one": lambda: rp.inv_freq(_bad_scaling(factor=0.5)),
    "high_not_above_low": lambda: rp.inv_freq(_bad_scaling(high_freq_factor=1.0)),
    "no_original_length": lambda: rp.inv_freq(_bad_scaling(original_max_position_embeddings=None)),
    # a length is an int: a float is refused, even a whole one
    "float_original_length": lambda: rp.inv_freq(
        _bad_scaling(original_max_position_embeddings=8192.0)),
    "kv_heads_zero": lambda: rp.fused_bytes_saved({**llama(), "num_key_value_heads": 0}, 2),
    "float_positions": lambda: rp.angles(np.array([1.5, 2.0]), small(), "bfloat16"),
    # found blind: hunt2_1 (HF's legacy "type" key is no rope_type), hunt2_2 (whole floats
    # are still floats), hunt2_5 (one position broadcast over three tokens)
    "legacy_type_key": lambda: rp.inv_freq(_bad_scaling(rope_type=None, type="llama3")),
    "whole_float_positions": lambda: rp.angles(np.array([1.0, 2.0]), small(), "bfloat16"),
    "x_tokens_broadcast": lambda: rp.apply_rope(np.zeros((3, 1, 8)), ints(5), small()),
    "2d_positions": lambda: rp.angles(np.zeros((2, 2), dtype=np.int64), small(), "bfloat16"),
    "negative_position": lambda: rp.apply_rope(np.zeros((2, 1, 8)), ints(3, -1), small()),
    "x_wrong_head_dim": lambda: rp.apply_rope(np.zeros((2, 1, 6)), ints(0, 1), small()),
    "x_wrong_tokens": lambda: rp.apply_rope(np.zeros((3, 1, 8)), ints(0, 1), small()),
    "x_2d": lambda: rp.apply_rope(np.zeros((2, 8)), ints(0, 1), small()),
    "tolerance_nan": lambda: rp.first_bad_position(small(), "bfloat16", math.nan),
    "tolerance_inf": lambda: rp.first_bad_position(small(), "bfloat16", math.inf),
    "max_position_zero": lambda: rp.first_bad_position(small(), "bfloat16", 0.1, 0),
    "context_zero": lambda: rp.position_resolution(small(), "bfloat16", 0),
    "index_negative": lambda: rp.position_resolution(small(), "bfloat16", 10, -1),
    "dtype_bytes_zero": lambda: rp.fused_bytes_saved(llama(), 0),
    "no_layers": lambda: rp.fused_bytes_saved({k: v for k, v in llama().items()
                                               if k != "num_hidden_layers"}, 2),
}


@pytest.mark.rubric("errors")
@pytest.mark.parametrize("name", sorted(BAD_CALLS))
def test_errors(name):
    """Rule: Errors"""
    with pytest.raises(ValueError):
        BAD_CALLS[name]()
