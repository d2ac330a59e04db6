"""Public tests for fp4_formats: the prompt's examples and the basic rules.

Run: nox -s kata -- fp4_formats
Every expected value here is worked out by hand from the prompt's rules.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from graders.impl import kata_impl
from tests.fp4_formats.helpers import f32, same, unpack

fp = kata_impl("fp4_formats")
EXAMPLE = (7.0, 2.5, -0.25, 0.8, 5.2)


@pytest.mark.rubric("e2m1_grid")
def test_prompt_example_round_e2m1():
    """Rules: The E2M1 grid; Ties to even; Saturation"""
    x = f32(*EXAMPLE)
    same(fp.round_e2m1(x), f32(6, 2, -0.0, 1, 6), "round_e2m1(prompt example)", x)


@pytest.mark.rubric("e2m1_grid")
def test_every_grid_value_and_every_tie():
    """Rules: The E2M1 grid; Ties to even"""
    grid = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
    x = f32(*grid, *[-g for g in grid])
    same(fp.round_e2m1(x), x, "grid values are kept", x)
    ties = f32(0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, -0.25, -2.5, -5.0)
    same(fp.round_e2m1(ties), f32(0, 1, 1, 2, 2, 4, 4, -0.0, -2, -4), "ties go to even", ties)
    near = f32(0.3, 0.2, 1.3, 4.9, 5.1, -0.7)
    same(fp.round_e2m1(near), f32(0.5, 0, 1.5, 4, 6, -0.5), "nearest value", near)


@pytest.mark.rubric("e2m1_grid")
def test_saturation_and_nan():
    """Rules: Saturation"""
    x = f32(6.5, 7.0, 100.0, 3e38, math.inf, -8.0, -math.inf, math.nan)
    same(fp.round_e2m1(x), f32(6, 6, 6, 6, 6, -6, -6, math.nan), "saturation and NaN", x)


@pytest.mark.rubric("mx_scale")
def test_prompt_example_mxfp4():
    """Rules: The MX scale; The clipping trap"""
    x = f32(*EXAMPLE)
    q, scales = unpack(fp.mxfp4(x), 2, "mxfp4")
    same(scales, f32(1.0), "mxfp4 scales: floor(log2 7) - 2 = 0")
    same(q, f32(6, 2, -0.0, 1, 6), "mxfp4(prompt example): 7 clips to 6", x)


@pytest.mark.rubric("mx_scale")
def test_mx_scale_is_a_power_of_two_from_the_floor():
    """Rule: The MX scale"""
    # amax 1.0 -> X = -2, scale 0.25: 1.0 / 0.25 = 4 is on the grid; 0.3 / 0.25 = 1.2 -> 1
    x = np.zeros(32, dtype=np.float32)
    x[:3] = (1.0, 0.3, -0.55)
    q, scales = unpack(fp.mxfp4(x), 2, "mxfp4")
    same(scales, f32(0.25), "scale for amax 1.0")
    want = np.zeros(32, dtype=np.float32)
    want[:3] = (1.0, 0.25, -0.5)
    same(q, want, "mxfp4 values, amax 1.0", x)


@pytest.mark.rubric("mx_scale")
def test_the_clipping_trap():
    """Rule: The clipping trap"""
    # amax 15 -> floor(log2 15) = 3, X = 1, scale 2: 15 / 2 = 7.5 saturates to 6 -> 12
    x = f32(15.0, 13.0, 9.0, 1.0)
    q, scales = unpack(fp.mxfp4(x), 2, "mxfp4")
    same(scales, f32(2.0), "scale for amax 15: the floor, not the ceiling")
    same(q, f32(12, 12, 8, 1), "values above 6 * scale clip to 12", x)


@pytest.mark.rubric("nv_scale")
def test_prompt_example_nvfp4():
    """Rules: The NVFP4 tensor scale; The NVFP4 block scale; Rounded once"""
    x = f32(*EXAMPLE)
    q, block, tensor = unpack(fp.nvfp4(x), 3, "nvfp4")
    assert float(tensor) == float(np.float32(7.0 / 2688.0)), f"tensor scale: expected 7 / 2688, got {tensor!r}"
    same(block, f32(448.0), "block scale of the block holding the tensor max")
    step = np.float64(448.0) * np.float64(np.float32(7.0 / 2688.0))
    want = (np.array([6, 2, -0.0, 0.5, 4]) * step).astype(np.float32)
    same(q, want, "nvfp4(prompt example)", x)


@pytest.mark.rubric("nv_scale")
def test_nvfp4_block_scale_is_e4m3_not_float32():
    """Rule: The NVFP4 block scale"""
    # tensor max 2688 -> tensor scale 1.0; second block amax 100 -> 100 / 6 = 16.67 -> E4M3 16
    x = np.zeros(32, dtype=np.float32)
    x[0] = 2688.0
    x[16:19] = (100.0, 50.0, -10.0)
    q, block, tensor = unpack(fp.nvfp4(x), 3, "nvfp4")
    assert float(tensor) == 1.0, f"tensor scale: expected 1.0, got {tensor!r}"
    same(block, f32(448.0, 16.0), "block scales (100 / 6 rounds to the E4M3 value 16)")
    want = np.zeros(32, dtype=np.float32)
    want[0] = 2688.0
    want[16:19] = (96.0, 48.0, -8.0)       # 100/16 = 6.25 -> 6; 50/16 = 3.125 -> 3; 10/16 -> 0.5
    same(q, want, "nvfp4 values", x)


@pytest.mark.rubric("blocks_and_specials")
def test_blocks_along_the_last_axis():
    """Rule: Blocks along the last axis"""
    x = np.zeros((3, 40), dtype=np.float32)
    x[0, 0] = 1.0          # row 0, block 0
    x[1, 35] = 3.0         # row 1, the 8-element tail block
    x[2, 20] = 0.5
    q, scales = unpack(fp.mxfp4(x), 2, "mxfp4")
    assert np.asarray(scales).shape == (3, 2), f"mxfp4 scales shape: expected (3, 2), got {np.asarray(scales).shape}"
    same(q, x, "mxfp4 of one grid value per block", x)
    q, block, _ = unpack(fp.nvfp4(x), 3, "nvfp4")
    assert np.asarray(block).shape == (3, 3), f"nvfp4 block scales shape: expected (3, 3), got {np.asarray(block).shape}"


@pytest.mark.rubric("blocks_and_specials")
def test_all_zero_blocks():
    """Rule: All-zero blocks"""
    x = np.zeros(40, dtype=np.float32)
    x[33] = 2.0
    q, scales = unpack(fp.mxfp4(x), 2, "mxfp4")
    same(q, x, "mxfp4 with an all-zero block", x)
    same(scales, f32(2.0**-127, 0.5), "mxfp4 scales: 2**-127 for the zero block")
    q, block, _ = unpack(fp.nvfp4(x), 3, "nvfp4")
    same(q, x, "nvfp4 with all-zero blocks", x)
    same(block, f32(0.0, 0.0, 448.0), "nvfp4 block scales: 0 for zero blocks")
    q, block, tensor = unpack(fp.nvfp4(np.zeros(5, dtype=np.float32)), 3, "nvfp4(zeros)")
    assert float(tensor) == 1.0, f"tensor scale of an all-zero tensor: expected 1.0, got {tensor!r}"


@pytest.mark.rubric("blocks_and_specials")
def test_nan_and_infinity_blocks():
    """Rule: NaN and infinity"""
    x = np.zeros(48, dtype=np.float32)
    x[0], x[1] = math.nan, 1.0          # MX block 0 / NV block 0
    x[40] = 4.0                          # MX block 1 / NV block 2
    q, scales = unpack(fp.mxfp4(x), 2, "mxfp4")
    want = np.zeros(48, dtype=np.float32)
    want[:32] = math.nan
    want[40] = 4.0
    same(q, want, "mxfp4: the NaN's block is all NaN, the other block is untouched", x)
    same(scales, f32(math.nan, 1.0), "mxfp4 scales")
    x[0] = math.inf
    q, block, tensor = unpack(fp.nvfp4(x), 3, "nvfp4")
    want = np.zeros(48, dtype=np.float32)
    want[:16] = math.nan
    want[40] = 4.0
    assert float(tensor) == float(np.float32(4.0 / 2688.0)), f"tensor scale over finite values: got {tensor!r}"
    same(q, want, "nvfp4: the inf's block is all NaN, the others are untouched", x)


@pytest.mark.rubric("bits_per_weight")
def test_bits_per_weight_headlines():
    """Rule: Bits per weight"""
    assert fp.bits_per_weight("mxfp4", (4096, 4096)) == pytest.approx(4.25, rel=1e-12)
    assert fp.bits_per_weight("nvfp4", (4096, 4096)) == pytest.approx(4.5 + 32 / 4096**2, rel=1e-12)
    assert fp.bits_per_weight("mxfp4", (1, 32)) == pytest.approx(4.25, rel=1e-12)
    assert fp.bits_per_weight("nvfp4", (1, 32)) == pytest.approx(5.5, rel=1e-12), \
        "one row of 32: 128 element bits + 2 block scales + the 32-bit tensor scale, over 32"


@pytest.mark.rubric("error_comparison")
def test_relative_error_small_case():
    """Rule: Relative error"""
    x = f32(*EXAMPLE)
    # mxfp4 errors: 1, 0.5, 0, 0.2, 0.8 (float32 inputs)
    xs = x.astype(np.float64)
    want_mx = math.sqrt(np.sum((np.array([6, 2, 0, 1, 6]) - xs) ** 2) / np.sum(xs**2))
    assert fp.relative_error(x, "mxfp4") == pytest.approx(want_mx, rel=1e-9)
    assert fp.relative_error(np.zeros(3, dtype=np.float32), "nvfp4") == 0.0


@pytest.mark.rubric("errors")
def test_bad_input_raises():
    """Rule: Bad input"""
    for bad in (np.ones(4, dtype=np.float64), np.ones(4, dtype=np.int32),
                np.float32(1.0) * np.ones((), dtype=np.float32), np.zeros(0, dtype=np.float32)):
        with pytest.raises(ValueError):
            fp.mxfp4(bad)
        with pytest.raises(ValueError):
            fp.nvfp4(bad)
    with pytest.raises(ValueError):
        fp.bits_per_weight("fp4", (4, 4))
    with pytest.raises(ValueError):
        fp.bits_per_weight("nvfp4", (4, 0))
    with pytest.raises(ValueError):
        fp.relative_error(f32(1.0, math.nan), "mxfp4")
