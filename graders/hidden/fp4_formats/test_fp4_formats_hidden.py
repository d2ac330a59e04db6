"""Hidden tests for fp4_formats: values built to sit on the traps, checked against ml_dtypes.

Oracle: graders/hidden/fp4_formats/oracle.py, every rounding an ml_dtypes cast (E2M1,
E4M3, E8M0), never the reference. Strategies place values on E2M1 and E4M3 ties (exactly
representable: the tensor scale is made a power of two times a short mantissa), just below
powers of two (where a float32 log2 rounds up), at the clipping edge (block maxima in
(6, 8) * 2**X), in E4M3's subnormal range and below it (blocks flushed to zero), in short
tails and rows, and in blocks holding NaN, infinity or only zeros.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from graders.hidden.fp4_formats import oracle as o
from graders.impl import kata_impl
from graders.support import inputs
from tests.fp4_formats.helpers import f32, same, unpack

fp = kata_impl("fp4_formats")

E2M1_GRID = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])
E2M1_TIES = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0])
# the block maximum's position in [4, 8) * 2**X: the grid top, the clipping edge, ties
MX_TOPS = [4.0, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 7.9999995, 4.0000005, 6.0000005, 5.9999995]


def check_mx(x: np.ndarray, what: str) -> None:
    got = unpack(fp.mxfp4(x), 2, f"mxfp4 ({what})")
    want = o.mxfp4(x)
    same(got[1], want[1], f"mxfp4 scales ({what})")
    same(got[0], want[0], f"mxfp4 values ({what})", x)


def check_nv(x: np.ndarray, what: str) -> None:
    got = unpack(fp.nvfp4(x), 3, f"nvfp4 ({what})")
    want = o.nvfp4(x)
    assert isinstance(got[2], (float, np.floating)) and float(got[2]) == want[2], \
        f"nvfp4 tensor scale ({what}): expected {want[2]!r}, got {got[2]!r}"
    same(got[1], want[1], f"nvfp4 block scales ({what})")
    same(got[0], want[0], f"nvfp4 values ({what})", x)


# ------------------------------------------------------------------ strategies
@st.composite
def mx_rows(draw, specials=False):
    """(rows, n) float32: each 32-block has its own exponent, a top value from MX_TOPS
    (or a random one) and elements on E2M1 ties or grid points of its scale."""
    rows = draw(st.integers(1, 3))
    n = draw(st.integers(1, 100))
    nb = -(-n // 32)
    x = np.zeros((rows, nb * 32), dtype=np.float64)
    seeds = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seeds)
    for r in range(rows):
        for b in range(nb):
            e = draw(st.one_of(st.integers(-12, 12), st.sampled_from([-140, -130, -127, -126, -125, 100, 120])))
            kind = draw(st.sampled_from(["ties", "random", "zero", "top_only"]))
            blk = np.zeros(32)
            if kind == "ties":
                blk = rng.choice(np.concatenate([E2M1_TIES, E2M1_GRID, [0.3, 4.9, 5.1]]), 32)
                blk *= rng.choice([-1.0, 1.0], 32)
            elif kind == "random":
                blk = rng.standard_normal(32)
            if kind != "zero":
                top = draw(st.sampled_from(MX_TOPS))
                blk = np.clip(blk, -top, top)
                blk[draw(st.integers(0, 31))] = top * draw(st.sampled_from([1.0, -1.0]))
            x[r, b * 32:(b + 1) * 32] = np.ldexp(blk, e)
    x = x[:, :n].astype(np.float32)
    if specials:
        for _ in range(draw(st.integers(0, 3))):
            i, j = draw(st.integers(0, rows - 1)), draw(st.integers(0, n - 1))
            x[i, j] = draw(st.sampled_from([math.nan, math.inf, -math.inf, 0.0]))
    return x


@st.composite
def nv_rows(draw, specials=False):
    """(rows, n) float32 with an exact tensor scale 2**j * c, so that block maxima can be put
    on E4M3 values and ties (normal and subnormal) and elements on E2M1 ties of the step."""
    rows = draw(st.integers(1, 3))
    n = draw(st.integers(1, 70))
    nb = -(-n // 16)
    j = draw(st.integers(-20, 20))
    c = draw(st.sampled_from([1.0, 1.5, 1.25, 1.75]))
    s_t = math.ldexp(c, j)
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    x = np.zeros((rows, nb * 16), dtype=np.float64)
    for r in range(rows):
        for b in range(nb):
            kind = draw(st.sampled_from(["e4m3_tie", "e4m3_value", "subnormal", "flush",
                                         "random", "zero"]))
            if kind == "zero":
                continue
            if kind == "random":
                x[r, b * 16:(b + 1) * 16] = rng.standard_normal(16) * s_t * 2.0 ** rng.integers(-12, 8)
                continue
            if kind == "e4m3_value":          # an E4M3 value: 1.m * 2**e, 3 mantissa bits
                target = math.ldexp(1 + draw(st.integers(0, 7)) / 8, draw(st.integers(-6, 8)))
            elif kind == "e4m3_tie":          # halfway between two normal E4M3 values
                target = math.ldexp(1 + (2 * draw(st.integers(0, 7)) + 1) / 16, draw(st.integers(-6, 7)))
            elif kind == "subnormal":         # k/2 * 2**-9: subnormal values and their ties
                target = draw(st.integers(1, 15)) * 2.0**-10
            else:                             # below half of E4M3's smallest: scale 0
                target = draw(st.sampled_from([2.0**-11, 2.0**-10, 1.5 * 2.0**-11]))
            amax_b = 6 * s_t * target
            scale = float(o.e4m3(np.array([target]))[0])
            blk = rng.choice(np.concatenate([E2M1_TIES, E2M1_GRID]), 16) * scale * s_t
            blk = np.minimum(blk, amax_b) * rng.choice([-1.0, 1.0], 16)
            blk[draw(st.integers(0, 15))] = amax_b
            x[r, b * 16:(b + 1) * 16] = blk
    x = x[:, :n]
    # the tensor max: 2688 * s_t, which makes the tensor scale exactly s_t
    x[draw(st.integers(0, rows - 1)), draw(st.integers(0, n - 1))] = 2688 * s_t * draw(st.sampled_from([1.0, -1.0]))
    x = x.astype(np.float32)
    if specials:
        for _ in range(draw(st.integers(0, 3))):
            i, k = draw(st.integers(0, rows - 1)), draw(st.integers(0, n - 1))
            x[i, k] = draw(st.sampled_from([math.nan, math.inf, -math.inf, 0.0, 1e30]))
    return x


@st.composite
def any_shape(draw):
    """Random tensors of 1 to 3 axes with wide magnitudes and injected specials."""
    lead = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))
    n = draw(st.integers(1, 70))
    shape = tuple(lead) + (n,)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = (rng.standard_normal(shape) * 2.0 ** rng.integers(-25, 25, shape)).astype(np.float32)
    for _ in range(draw(st.integers(0, 4))):
        idx = tuple(draw(st.integers(0, d - 1)) for d in shape)
        x[idx] = draw(st.sampled_from([math.nan, math.inf, -math.inf, 0.0]))
    if draw(st.booleans()):              # zero a whole leading span: all-zero blocks
        x[..., : draw(st.integers(0, n))] = 0.0
    return x


# ------------------------------------------------------------------ e2m1_grid
def _sweep() -> np.ndarray:
    base = np.arange(-800, 801, dtype=np.float64) / 64           # every multiple of 1/64 to 12.5
    ties = np.concatenate([E2M1_TIES, -E2M1_TIES]).astype(np.float32)
    up = np.nextafter(ties, np.float32(np.inf))
    down = np.nextafter(ties, np.float32(-np.inf))
    big = np.array([6.0000005, 6.5, 7.0, 8.0, 1e10, 3.4e38, math.inf, -7.0, -1e30, -math.inf,
                    math.nan, 1e-45, -1e-45, 0.0, -0.0])
    return np.concatenate([base, ties, up, down, big]).astype(np.float32)


@pytest.mark.rubric("e2m1_grid")
def test_e2m1_matches_ml_dtypes_on_a_sweep():
    """Rules: The E2M1 grid; Ties to even; Saturation"""
    x = _sweep()
    same(fp.round_e2m1(x), o.e2m1(x.astype(np.float64)).astype(np.float32), "round_e2m1 sweep", x)


@pytest.mark.rubric("e2m1_grid")
def test_e2m1_keeps_the_subnormal_half():
    """Rule: The E2M1 grid"""
    x = f32(0.26, 0.3, 0.5, 0.6, 0.74, -0.3, -0.74)
    same(fp.round_e2m1(x), f32(0.5, 0.5, 0.5, 0.5, 0.5, -0.5, -0.5), "values near 0.5", x)


@pytest.mark.rubric("e2m1_grid")
def test_e2m1_keeps_the_shape():
    """Rule: The E2M1 grid"""
    x = _sweep()[:60].reshape(3, 4, 5)
    same(fp.round_e2m1(x), o.e2m1(x.astype(np.float64)).astype(np.float32), "round_e2m1 (3, 4, 5)", x)


@pytest.mark.rubric("e2m1_grid")
@given(st.lists(st.floats(width=32, allow_nan=True, allow_infinity=True), min_size=1, max_size=40),
       st.integers(-3, 3))
def test_e2m1_matches_ml_dtypes_on_any_float32(values, shift):
    """Rules: The E2M1 grid; Ties to even; Saturation"""
    x = np.array(values, dtype=np.float32)
    x = np.where(np.abs(x) < 1e30, np.ldexp(np.clip(x, -1e6, 1e6) % 16 - 8, shift), x).astype(np.float32)
    same(fp.round_e2m1(x), o.e2m1(x.astype(np.float64)).astype(np.float32), "round_e2m1", x)


# ------------------------------------------------------------------ mx_scale
@pytest.mark.rubric("mx_scale")
def test_mx_exponent_just_below_powers_of_two():
    """Rule: The MX scale"""
    # amax = the float32 just below 2**k: floor(log2) = k - 1, which a float32 log2 gets wrong
    ks = np.arange(-120, 121)
    tops = np.nextafter(np.ldexp(np.float32(1.0), ks).astype(np.float32), np.float32(0))
    x = np.zeros((len(ks), 32), dtype=np.float32)
    x[:, 0] = tops
    x[:, 1] = (np.ldexp(np.float32(2.5), ks - 3)).astype(np.float32)   # a tie of the right scale
    check_mx(x, "block maxima just below 2**k, k = -120..120")


@pytest.mark.rubric("mx_scale")
def test_mx_clipping_edge():
    """Rules: The clipping trap; The MX scale"""
    tops = np.array([6.0, 6.0000005, 6.5, 7.0, 7.5, 7.9999995, 8.0, 12.0, 13.0, 15.9999990])
    x = np.zeros((len(tops), 32), dtype=np.float32)
    x[:, 0] = tops
    x[:, 1] = -tops * 0.9
    x[:, 2] = 5.0
    check_mx(x, "block maxima around 6 * 2**X")
    q, _ = unpack(fp.mxfp4(x), 2, "mxfp4")
    assert np.asarray(q)[3, 0] == 6.0, "a block whose max is 7 gets scale 1 and clips 7 to 6"


@pytest.mark.rubric("mx_scale")
def test_mx_scale_clamps_at_minus_127():
    """Rule: The MX scale"""
    tiny = np.array([2.0**-125, 2.0**-126, 1.5 * 2.0**-127, 2.0**-128, 2.0**-130, 2.0**-140, 2.0**-149],
                    dtype=np.float32)
    x = np.zeros((len(tiny), 32), dtype=np.float32)
    x[:, 0] = tiny
    x[:, 1] = tiny / 2
    check_mx(x, "tiny blocks")
    _, scales = unpack(fp.mxfp4(x), 2, "mxfp4")
    assert (np.asarray(scales)[2:, 0] == np.float32(2.0**-127)).all(), "scales below 2**-127 clamp to it"


@pytest.mark.rubric("mx_scale")
@given(mx_rows())
def test_mx_matches_ml_dtypes(x):
    """Rules: The MX scale; The clipping trap; Ties to even"""
    check_mx(x, f"shape {x.shape}")


# ------------------------------------------------------------------ nv_scale
@pytest.mark.rubric("nv_scale")
@given(nv_rows())
def test_nv_matches_ml_dtypes(x):
    """Rules: The NVFP4 tensor scale; The NVFP4 block scale; Rounded once; Ties to even"""
    check_nv(x, f"shape {x.shape}")


@pytest.mark.rubric("nv_scale")
@given(st.integers(0, 2**32 - 1), st.integers(-30, 30))
def test_nv_generic_tensor_scale_rounded_once(seed, shift):
    """Rules: Rounded once; The NVFP4 tensor scale; The NVFP4 block scale"""
    # a tensor scale with a full 24-bit mantissa: block_scale * tensor_scale is not a
    # float32, so a product or quotient rounded to float32 on the way shows
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((4, 64)) * 2.0 ** rng.integers(-6, 6, (4, 1)) * 2.0**shift)
    check_nv(x.astype(np.float32), f"random tensor, seed {seed}")


@pytest.mark.rubric("nv_scale")
def test_nv_e4m3_ties_and_subnormals():
    """Rules: The NVFP4 block scale; Rounded once"""
    # tensor max 2688 -> tensor scale 1; block amax = 6 * target, target on E4M3 ties
    targets = [1.0625, 1.1875, 17.0, 19.0, 3 * 2.0**-10, 5 * 2.0**-10, 2.0**-10, 2.0**-11, 0.01, 450.0]
    x = np.zeros((1, 16 * (len(targets) + 1)), dtype=np.float32)
    x[0, 0] = 2688.0
    for i, t in enumerate(targets, start=1):
        x[0, 16 * i] = 6 * t if t < 448 else 2688.0
        x[0, 16 * i + 1] = 2.5 * t
    check_nv(x, "block maxima on E4M3 ties and in its subnormal range")
    _, block, _ = unpack(fp.nvfp4(x), 3, "nvfp4")
    want = f32(448, 1.0, 1.25, 16, 20, 2.0**-8, 2.0**-8, 0, 0, 0.009765625, 448)
    same(block, want.reshape(1, -1), "E4M3 block scales: ties to even, subnormals, flush")


@pytest.mark.rubric("nv_scale")
def test_nv_tensor_scale_is_float32_of_amax_over_2688():
    """Rule: The NVFP4 tensor scale"""
    for amax in (1.0, 3.0, 7.0, 1e-20, 12345.678, 3e30, 2688.0):
        x = f32(amax, -amax / 3, amax / 7)
        _, _, t = unpack(fp.nvfp4(x), 3, "nvfp4")
        want = float(np.float32(float(np.float32(amax)) / 2688.0))
        assert t == want, f"tensor scale for amax {amax}: expected {want!r}, got {t!r}"


@pytest.mark.rubric("nv_scale")
def test_nv_block_scale_divides_by_the_rounded_tensor_scale():
    """The block scale is E4M3 of amax_b / (6 * tensor_scale) with the float32 tensor scale
    the function returns, not 448 * amax_b / amax_t: they straddle an E4M3 tie here (found
    blind: hunt_2).

    Rule: The NVFP4 block scale
    """
    x = np.zeros(17, dtype=np.float32)
    x[0], x[16] = 51.41234588623047, 1.7787753343582153
    amax_t = float(x[0])
    t = float(np.float32(amax_t / 2688.0))
    assert o.e4m3(np.array([float(x[16]) / (6.0 * t)]))[0] != \
        o.e4m3(np.array([448.0 * float(x[16]) / amax_t]))[0], "the check needs a straddled tie"
    check_nv(x, "a block ratio near an E4M3 tie")


@pytest.mark.rubric("nv_scale")
def test_nv_elements_are_divided_exactly_once():
    """606.4344 / (1.0829185 * 448) lies just above the 1.25 tie, so it rounds up to 1.5;
    dividing in float32 by the two scales in turn lands on 1.25 and rounds to even, 1.0
    (found blind: hunt2_1).

    Rule: The NVFP4 block scale
    """
    x = f32(2910.885009765625, 606.4343872070312)
    _, s_b, s_t = o.nvfp4(x)
    two_steps = (x / np.float32(s_t)) / np.float32(s_b[0])
    assert o.e2m1(two_steps.astype(np.float64))[1] != \
        o.e2m1(np.array([float(x[1]) / (float(s_t) * float(s_b[0]))]))[0], \
        "the check needs an element that two float32 divisions round to the other side"
    check_nv(x, "an element just above an E2M1 tie")


@pytest.mark.rubric("nv_scale")
def test_nv_small_block_far_below_the_max_is_flushed_or_kept():
    """Rules: The NVFP4 block scale; All-zero blocks"""
    x = np.zeros(64, dtype=np.float32)
    x[0] = 1.0
    x[16:18] = (2.0**-17, 2.0**-18)     # target 2**-17 * 448 / 6 ~ 0.0034: subnormal E4M3
    x[32:34] = (2.0**-21, 2.0**-22)     # target ~ 2.1e-4 < 2**-10: flushed to 0
    x[48] = 1e-30
    check_nv(x, "blocks far below the tensor max")


# ------------------------------------------------------------------ blocks_and_specials
@pytest.mark.rubric("blocks_and_specials")
@given(any_shape())
def test_any_shape_matches_ml_dtypes(x):
    """Rules: Blocks along the last axis; All-zero blocks; NaN and infinity"""
    check_mx(x, f"shape {x.shape}")
    check_nv(x, f"shape {x.shape}")


@pytest.mark.rubric("blocks_and_specials")
@given(mx_rows(specials=True))
def test_mx_specials_match_ml_dtypes(x):
    """Rules: NaN and infinity; All-zero blocks"""
    check_mx(x, f"shape {x.shape}")


@pytest.mark.rubric("blocks_and_specials")
@given(nv_rows(specials=True))
def test_nv_specials_match_ml_dtypes(x):
    """Rules: NaN and infinity; All-zero blocks"""
    check_nv(x, f"shape {x.shape}")


@pytest.mark.rubric("blocks_and_specials")
def test_rows_never_share_a_block():
    """Rule: Blocks along the last axis"""
    x = np.zeros((2, 20), dtype=np.float32)
    x[0, :] = 100.0
    x[1, :] = 0.7
    check_mx(x, "a large row above a small one")
    check_nv(x, "a large row above a small one")
    q, _ = unpack(fp.mxfp4(x), 2, "mxfp4")
    assert np.asarray(q)[1, 0] == np.float32(0.75), "row 1's block is its own: 0.7 -> 0.75"


@pytest.mark.rubric("blocks_and_specials")
def test_short_tail_has_its_own_amax():
    """Rule: Blocks along the last axis"""
    for n in (33, 40, 47, 63, 17, 31):
        x = np.full(n, 50.0, dtype=np.float32)
        x[32 if n > 32 else 16:] = 0.3
        check_mx(x, f"n = {n}")
        check_nv(x, f"n = {n}")


@pytest.mark.rubric("blocks_and_specials")
def test_bad_block_does_not_spread():
    """Rule: NaN and infinity"""
    x = np.zeros((2, 48), dtype=np.float32)
    x[0, 5] = math.nan
    x[0, 6] = 1e6                       # the largest finite value sits in the bad block
    x[1, 40] = -math.inf
    x[1, 0:3] = (1.0, -2.0, 0.4)
    x[0, 40] = 3.0
    check_mx(x, "NaN and -inf blocks")
    check_nv(x, "NaN and -inf blocks")


@pytest.mark.rubric("blocks_and_specials")
def test_all_nan_and_all_zero_tensors():
    """Rules: NaN and infinity; All-zero blocks"""
    for x in (np.full(20, math.nan, dtype=np.float32), np.zeros((2, 3), dtype=np.float32),
              f32(math.inf, 0.0), f32(-0.0)):
        check_mx(x, f"{x!r}")
        check_nv(x, f"{x!r}")


# ------------------------------------------------------------------ bits_per_weight
SHAPES = [(1,), (16,), (17,), (32,), (33,), (1, 32), (2, 40), (7, 16), (4096, 4096),
          (3, 5, 48), (128, 100), (1, 1, 1), (5, 1), (11008, 4096)]


@pytest.mark.rubric("bits_per_weight")
def test_bits_per_weight_counts_every_scale():
    """Rule: Bits per weight"""
    for shape in SHAPES:
        for fmt in ("mxfp4", "nvfp4"):
            got = fp.bits_per_weight(fmt, shape)
            want = o.bits_per_weight(fmt, shape)
            assert got == pytest.approx(want, rel=1e-12), \
                f"bits_per_weight({fmt!r}, {shape}): expected {want!r}, got {got!r}"


# ------------------------------------------------------------------ error_comparison
def _tensors() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(20250624)
    return {"uniform": rng.uniform(-1, 1, (64, 512)).astype(np.float32),
            "heavy-tailed (Student-t, 2 dof)": rng.standard_t(2, (64, 512)).astype(np.float32)}


@pytest.mark.rubric("error_comparison")
def test_relative_errors_and_which_format_wins():
    """Rule: Relative error"""
    for name, x in _tensors().items():
        errs = {}
        for fmt in ("mxfp4", "nvfp4"):
            got = fp.relative_error(x, fmt)
            want = o.relative_error(x, fmt)
            assert got == pytest.approx(want, rel=1e-9), \
                f"relative_error({name}, {fmt!r}): expected {want!r}, got {got!r}"
            errs[fmt] = got
        assert errs["nvfp4"] < errs["mxfp4"], f"{name}: NVFP4 should have the lower error: {errs}"


@pytest.mark.rubric("error_comparison")
def test_relative_error_on_edge_tensors():
    """Rule: Relative error"""
    for x in (np.zeros((2, 7), dtype=np.float32), f32(7.0, 2.5, -0.25), f32(1e-30, 3e30)):
        for fmt in ("mxfp4", "nvfp4"):
            got = fp.relative_error(x, fmt)
            assert got == pytest.approx(o.relative_error(x, fmt), rel=1e-9, abs=1e-300), \
                f"relative_error({x!r}, {fmt!r})"


# ------------------------------------------------------------------ errors
def raises_value_error(fn, *args, what: str) -> None:
    try:
        fn(*args)
    except ValueError:
        return
    raise AssertionError(f"{what}: expected ValueError, got a result")


BAD_X = [np.ones(3, dtype=np.float64), np.ones(3, dtype=np.float16), np.ones(3, dtype=np.int64),
         np.array(1.0, dtype=np.float32), np.zeros((0,), dtype=np.float32),
         np.zeros((3, 0), dtype=np.float32), np.array([True, False])]


@pytest.mark.rubric("errors")
def test_bad_x_raises():
    """Rule: Bad input"""
    for x in BAD_X:
        for name in ("round_e2m1", "mxfp4", "nvfp4"):
            raises_value_error(getattr(fp, name), x, what=f"{name}(dtype {x.dtype}, shape {x.shape})")
        raises_value_error(fp.relative_error, x, "nvfp4", what=f"relative_error(dtype {x.dtype}, shape {x.shape})")


@pytest.mark.rubric("errors")
def test_bad_format_and_shape_raise():
    """Rule: Bad input"""
    for fmt in ("MXFP4", "fp4", "", "nvfp8"):
        with pytest.raises(ValueError):
            fp.bits_per_weight(fmt, (4, 32))
        with pytest.raises(ValueError):
            fp.relative_error(f32(1.0, 2.0), fmt)
    for shape in ((), (4, 0), (0,), (-1, 32), (3, -16)):
        with pytest.raises(ValueError):
            fp.bits_per_weight("mxfp4", shape)
    for bad in (math.inf, -math.inf, math.nan):
        with pytest.raises(ValueError):
            fp.relative_error(f32(1.0, bad), "mxfp4")


@pytest.mark.rubric("errors")
def test_inputs_are_never_modified():
    """Rule: Bad input"""
    x = np.array([[7.0, 2.5, -0.25, math.nan] * 10, [0.0] * 40], dtype=np.float32)
    before = x.copy()
    for name in ("round_e2m1", "mxfp4", "nvfp4"):
        inputs.leaves_inputs_alone(getattr(fp, name), x, what=name)
    inputs.leaves_inputs_alone(fp.relative_error, np.nan_to_num(x), "mxfp4", what="relative_error")
    assert np.array_equal(x, before, equal_nan=True)
