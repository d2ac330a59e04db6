"""Public tests for gemm_waves: the prompt's examples and the basic rules."""

from __future__ import annotations

import pytest

from graders.impl import kata_impl
from tests.gemm_waves.helpers import H100_SXM, QWEN7, close, config, exact_int, sms

gw = kata_impl("gemm_waves")

TILE = (128, 128, 64)
CANDIDATES = [(128, 64, 0.15), (256, 128, 0.5), (128, 256, 0.5), (64, 128, 0.15)]


def qwen_down() -> tuple[int, int]:
    """Qwen2.5-7B MLP down projection: N = hidden size, K = intermediate size."""
    cfg = config(QWEN7)
    return cfg["hidden_size"], cfg["intermediate_size"]


@pytest.mark.rubric("tiles")
def test_tiles_example():
    """Rule: Output tiles"""
    n, _ = qwen_down()
    exact_int(gw.output_tiles(640, n, 128, 128), 140, "640 tokens x N=3584 in 128x128 tiles: 5 x 28")
    exact_int(gw.output_tiles(512, n, 128, 128), 112, "512 tokens: 4 x 28")


@pytest.mark.rubric("tiles")
def test_partial_edge_tiles_count():
    """Rule: Output tiles"""
    exact_int(gw.output_tiles(129, 128, 128, 128), 2, "M = 129 needs a second, nearly empty row of tiles")
    exact_int(gw.output_tiles(1, 1, 128, 256), 1, "a 1x1 output is still one tile")


@pytest.mark.rubric("waves")
def test_waves_example():
    """Rules: Waves; Slots"""
    exact_int(gw.wave_count(140, sms(H100_SXM)), 2, "140 tiles on 132 SMs: eight tiles too many")
    exact_int(gw.wave_count(132, 132), 1, "132 tiles on 132 SMs: one full wave")
    exact_int(gw.wave_count(133, 132), 2, "one tile past a full wave starts another")
    exact_int(gw.wave_count(140, 66, 2), 2, "66 SMs x 2 CTAs each = 132 slots")


@pytest.mark.rubric("waves")
def test_efficiency_example():
    """Rule: Wave efficiency"""
    close(gw.wave_efficiency(140, 132), 140 / 264, "140 tiles over two waves of 132")
    assert gw.wave_efficiency(264, 132) == 1.0, "whole waves are exactly 1.0"


@pytest.mark.rubric("waste")
def test_time_and_waste_example():
    """Rules: Time; Waste"""
    n, _ = qwen_down()
    close(gw.gemm_time_us(640, n, 128, 128, 132, 74.0), 148.0, "two waves of 74 us")
    close(gw.wave_waste_us(640, n, 128, 128, 132, 74.0), 124 / 132 * 74.0,
          "the idle part of the last wave: 124 of its 132 slots")
    close(gw.wave_waste_us(512, n, 128, 128, 132, 74.0), 20 / 132 * 74.0,
          "512 tokens: 112 tiles in one wave, 20 slots idle")
    assert gw.wave_waste_us(128 * 33, 512, 128, 128, 132, 74.0) == 0.0, \
        "33 x 4 = 132 tiles: one full wave, no waste"


@pytest.mark.rubric("tile_fix")
def test_best_tile_example():
    """Rule: 1. Tile shape"""
    # DeepGEMM's example shape: 112 tiles of 128x128 vs 128 tiles of 128x112, one wave each.
    got = gw.best_tile_shape(256, 7168, 132, [(128, 128, 10.0), (128, 112, 8.75)])
    assert tuple(got[:2]) == (128, 112), f"the 128x112 tile has the shorter wave; got {got!r}"
    close(got[2], 8.75, "one wave of the 128x112 tile")


@pytest.mark.rubric("split_k")
def test_split_k_example():
    """Rule: 2a. Split-K"""
    n, k = qwen_down()
    close(gw.split_k_time_us(640, n, k, TILE, 0.25, 132, 1, 4.0), 148.0, "s = 1 is the plain GEMM")
    close(gw.split_k_time_us(640, n, k, TILE, 0.25, 132, 4, 4.0), 5 * 74 * 0.25 + 16.0,
          "s = 4: 560 units in 5 waves of 74 iterations, plus 4 partials")
    s, t = gw.best_split_k(640, n, k, TILE, 0.25, 132, 8, 4.0)
    exact_int(s, 4, "best split count")
    close(t, 108.5, "best split-K time")


@pytest.mark.rubric("stream_k")
def test_stream_k_example():
    """Rule: 2b. Stream-K"""
    n, k = qwen_down()
    q, split, t = gw.stream_k(640, n, k, TILE, 0.25, 132, 2.0)
    exact_int(q, 314, "ceil(140 x 296 / 132) iterations per worker")
    exact_int(split, 131, "tiles cut by a worker boundary")
    close(t, 314 * 0.25 + 2.0, "q iterations plus the fix-up")


@pytest.mark.rubric("scheduler")
def test_trimmed_chunk_example():
    """Rule: 3. Scheduler"""
    n, _ = qwen_down()
    exact_int(gw.wave_trimmed_chunk(640, n, 128, 128, 132), 512,
              "640 tokens spill 8 tiles into a second wave; 512 fill the first")
    exact_int(gw.wave_trimmed_chunk(100, n, 128, 128, 132), 100,
              "100 tokens make 28 tiles, less than a wave: nothing to trim")


@pytest.mark.rubric("scheduler")
def test_plan_chunk_reads_a_measured_sweep():
    """The prompt's kernel-switch sweep (vidur, H100, Llama-2-70B TP2 down projection): the
    answer is a measured multiple of 16 within the budget, within 15% of the best per token.

    Rules: Chunk contract; Measured sweep"""
    sweep = {16: 82.0, 24: 84.0, 504: 140.0, 512: 140.0, 520: 375.0, 528: 372.0, 576: 256.5,
             640: 404.0, 648: 248.0, 656: 250.0}
    for budget in (600, 700):
        got = gw.plan_chunk(budget, 8192, 14336, 132, sweep)
        chunks = {m: t / m for m, t in sweep.items() if m % 16 == 0 and m <= budget}
        assert type(got) is int and got in chunks, (
            f"plan_chunk({budget}, ..., sweep) must return one of the measured multiples of 16 "
            f"within the budget, {sorted(chunks)}; got {got!r}")
        assert chunks[got] <= 1.15 * min(chunks.values()) * (1 + 1e-9), (
            f"budget {budget}: chunk {got} costs {chunks[got]:.3f} us per token, more than 15% "
            f"above the best measured chunk ({min(chunks.values()):.3f})")


@pytest.mark.rubric("compare")
def test_compare_example():
    """Rule: Comparison"""
    n, k = qwen_down()
    got = gw.compare_fixes(640, n, k, 132, TILE, 0.25, CANDIDATES, 8, 4.0, 2.0)
    want = {"baseline": (640, 148.0), "tile_shape": (640, 133.2), "split_k": (640, 108.5),
            "stream_k": (640, 80.5), "scheduler": (512, 74.0)}
    assert set(got) == set(want), f"keys: got {sorted(got)}"
    for key, (tokens, t) in want.items():
        exact_int(got[key][0], tokens, f"{key} tokens")
        close(got[key][1], t, f"{key} time")


@pytest.mark.rubric("bad_input")
def test_bad_input():
    """Rules: Type errors; Value errors"""
    with pytest.raises(ValueError):
        gw.output_tiles(0, 128, 128, 128)
    with pytest.raises(TypeError):
        gw.wave_count(140.0, 132)
    with pytest.raises(ValueError):
        gw.split_k_time_us(128, 128, 128, TILE, 0.25, 132, 3, 0.0)   # only 2 K-iterations
