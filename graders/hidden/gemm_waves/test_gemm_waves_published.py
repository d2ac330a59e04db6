"""gemm_waves against published examples (hardware_fixtures/gemm_waves_published.json).

Only what the prompt defines is graded: DeepGEMM's tile counts for M=256, N=7168 on 132
SMs (one wave, so the tiles are the busy SMs), and the K-iteration count behind the
ml-engineering d_ff sweep, where the wave model predicts no difference between d_ff 10922
and 10944 (d_ff is the reduction dimension). See PUBLISHED.md.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import pytest

from graders.impl import kata_impl
from tests.gemm_waves.helpers import ROOT, close, exact_int

gw = kata_impl("gemm_waves")
FIXTURE = ROOT / "hardware_fixtures" / "gemm_waves_published.json"


@lru_cache(maxsize=None)
def fixture() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def deepgemm_rows() -> list[dict[str, Any]]:
    return fixture()["tables"]["deepgemm_unaligned_blocks"]  # type: ignore[no-any-return]


def dff_rows() -> dict[int, dict[str, Any]]:
    return {r["d_ff"]: r for r in fixture()["tables"]["ml_engineering_swiglu_dff"]}


@pytest.mark.rubric("tiles")
@pytest.mark.parametrize("row", deepgemm_rows(), ids=lambda r: r["id"])
def test_deepgemm_tile_count(row):
    got = gw.output_tiles(row["m"], row["n"], row["block_m"], row["block_n"])
    exact_int(got, row["sms_utilized"],
              f"DeepGEMM README: {row['printed']!r} (M={row['m']}, N={row['n']}, "
              f"{row['block_m']}x{row['block_n']} blocks)")


@pytest.mark.rubric("waves")
@pytest.mark.parametrize("row", deepgemm_rows(), ids=lambda r: r["id"])
def test_deepgemm_one_wave_efficiency(row):
    tiles = row["sms_utilized"]
    exact_int(gw.wave_count(tiles, row["sms"]), 1, f"{tiles} tiles on {row['sms']} SMs: one wave")
    close(gw.wave_efficiency(tiles, row["sms"]), tiles / row["sms"],
          f"DeepGEMM README: {tiles} of {row['sms']} SMs busy")


@pytest.mark.rubric("split_k")
def test_ml_engineering_dff_is_the_reduction_dimension():
    # swiglu-maf-bench.py: torch.bmm([4, 4096, d_ff] x [4, d_ff, 4096]): the output is four
    # 4096 x 4096 matrices (M = 4 x 4096 rows stacked), and d_ff is K.
    rows = dff_rows()
    base, best = rows[10922], rows[10944]
    tile = (128, 128, 64)
    t_base = gw.split_k_time_us(4 * 4096, 4096, base["d_ff"], tile, 1.0, 132, 1, 0.0)
    t_best = gw.split_k_time_us(4 * 4096, 4096, best["d_ff"], tile, 1.0, 132, 1, 0.0)
    waves = -(-4 * 32 * 32 // 132)
    close(t_base, waves * 171.0, "d_ff = 10922 in 64-wide K-iterations is 171 (the last one partial)")
    close(t_best, waves * 171.0, "d_ff = 10944 = 171 x 64")
    assert t_base == t_best, (
        f"the wave model predicts the same time for d_ff 10922 and 10944; the published "
        f"{base['tflops']} vs {best['tflops']} TFLOPS gap is not a wave effect (alignment)")
