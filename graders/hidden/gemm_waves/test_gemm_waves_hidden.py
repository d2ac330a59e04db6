"""Hidden tests for gemm_waves: oracles (enumeration, simulation) and properties aimed at
the traps: shapes exactly at, one below and one above a wave boundary, partial edge tiles,
CTAs per SM, rounding of K-iterations, ties, and the scheduler's fallback."""

from __future__ import annotations

import math
import re
from fractions import Fraction

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from graders.hidden.gemm_waves import oracle
from graders.impl import kata_impl
from tests.gemm_waves.helpers import (
    A100, H100_SXM, H200, LLAMA8, LLAMA70, QWEN7, close, config, exact_int, sms)

gw = kata_impl("gemm_waves")

SMS = st.sampled_from([1, 2, 3, 7, 16, 108, 114, 132, 148])
CTAS = st.sampled_from([1, 1, 2, 3])
TILE_DIM = st.sampled_from([16, 32, 64, 96, 112, 128, 192, 256])
TILE_K = st.sampled_from([16, 32, 64, 128])
DELTA = st.sampled_from([-1, 0, 1])
# Times exact in binary: quarters of an integer, so that ties are real ties.
QUARTER = st.integers(1, 400).map(lambda q: q / 4)
QUARTER0 = st.integers(0, 400).map(lambda q: q / 4)


@st.composite
def boundary_tiles(draw):
    """(tiles, num_sms, ctas): tiles at, one below or one above a multiple of the slots."""
    num_sms, ctas = draw(SMS), draw(CTAS)
    slots = num_sms * ctas
    j = draw(st.integers(1, 6))
    tiles = j * slots + draw(DELTA)
    assume(tiles >= 1)
    return tiles, num_sms, ctas


@st.composite
def boundary_shape(draw):
    """(m, n, tile_m, tile_n, num_sms, ctas) whose tile count sits at a wave boundary ±1 row
    of tiles, with M and N also at, just below or just above a tile edge."""
    tile_m, tile_n = draw(TILE_DIM), draw(TILE_DIM)
    num_sms, ctas = draw(SMS), draw(CTAS)
    n_tiles = draw(st.integers(1, 60))
    n = n_tiles * tile_n - draw(st.sampled_from([0, 0, 1, tile_n - 1]))
    slots = num_sms * ctas
    # rows of M-tiles just around the first few wave boundaries
    boundary_rows = max(1, (draw(st.integers(1, 4)) * slots) // n_tiles)
    rows = max(1, boundary_rows + draw(st.sampled_from([-1, 0, 1, 2])))
    m = rows * tile_m - draw(st.sampled_from([0, 0, 1, tile_m - 1]))
    assume(m >= 1 and n >= 1)
    return m, n, tile_m, tile_n, num_sms, ctas


# ---------------------------------------------------------------------------- tiles

@pytest.mark.rubric("tiles")
@given(st.integers(1, 700), st.integers(1, 700), TILE_DIM, TILE_DIM)
def test_tiles_match_enumeration(m, n, tile_m, tile_n):
    """Rules: Output tiles; Counts are ints"""
    exact_int(gw.output_tiles(m, n, tile_m, tile_n), oracle.count_tiles(m, n, tile_m, tile_n),
              f"output_tiles({m}, {n}, {tile_m}, {tile_n}) against counting tile corners")


@pytest.mark.rubric("tiles")
@given(boundary_shape())
def test_tiles_at_edges(shape):
    """Rule: Output tiles"""
    m, n, tile_m, tile_n, _, _ = shape
    exact_int(gw.output_tiles(m, n, tile_m, tile_n), oracle.count_tiles_fast(m, n, tile_m, tile_n),
              f"output_tiles({m}, {n}, {tile_m}, {tile_n}): a partial edge tile is a whole tile")


@pytest.mark.rubric("tiles")
@given(st.integers(1, 5000), st.integers(1, 5000), TILE_DIM, TILE_DIM)
def test_tiles_monotone_in_m(m, n, tile_m, tile_n):
    """Rule: Output tiles"""
    a, b = gw.output_tiles(m, n, tile_m, tile_n), gw.output_tiles(m + 1, n, tile_m, tile_n)
    assert b >= a, f"one more token gave fewer tiles: {a} -> {b}"
    assert b - a in (0, oracle.count_tiles_fast(1, n, 1, tile_n)), (
        f"M {m} -> {m + 1} adds either nothing or one row of tiles; got {a} -> {b}")


@pytest.mark.rubric("tiles")
@pytest.mark.parametrize("model,proj", [(LLAMA8, "up"), (LLAMA8, "down"), (LLAMA70, "up"),
                                        (QWEN7, "up"), (QWEN7, "down")])
def test_tiles_real_shapes(model, proj):
    """Rule: Output tiles"""
    cfg = config(model)
    n = cfg["intermediate_size"] if proj == "up" else cfg["hidden_size"]
    for m in (1, 127, 128, 129, 512, 640, 1000, 2048, 8192):
        for tm, tn in ((128, 128), (128, 256), (64, 128)):
            exact_int(gw.output_tiles(m, n, tm, tn), oracle.count_tiles_fast(m, n, tm, tn),
                      f"{model} {proj}-projection, M={m}, N={n}, tile {tm}x{tn}")


# ---------------------------------------------------------------------------- waves

@pytest.mark.rubric("waves")
@given(boundary_tiles())
def test_waves_by_simulation(case):
    """Rules: Waves; Slots; Counts are ints"""
    tiles, num_sms, ctas = case
    want = len(oracle.simulate_waves(tiles, num_sms * ctas))
    exact_int(gw.wave_count(tiles, num_sms, ctas), want,
              f"wave_count({tiles}, {num_sms}, ctas_per_sm={ctas}) (slots {num_sms * ctas})")


@pytest.mark.rubric("waves")
@given(SMS, CTAS, st.integers(1, 8))
def test_waves_step_exactly_at_multiples_of_slots(num_sms, ctas, j):
    """Rules: Waves; Slots"""
    slots = num_sms * ctas
    exact_int(gw.wave_count(j * slots, num_sms, ctas), j, f"{j} x {slots} tiles fill {j} waves")
    exact_int(gw.wave_count(j * slots + 1, num_sms, ctas), j + 1,
              f"{j} x {slots} + 1 tiles need a partial wave")
    if slots > 1:
        exact_int(gw.wave_count(j * slots - 1, num_sms, ctas), j,
                  f"{j} x {slots} - 1 tiles still fit {j} waves")


@pytest.mark.rubric("waves")
@given(boundary_tiles())
def test_efficiency_against_simulation(case):
    """Rules: Wave efficiency; Times are floats"""
    tiles, num_sms, ctas = case
    slots = num_sms * ctas
    want = oracle.efficiency(tiles, slots)
    got = gw.wave_efficiency(tiles, num_sms, ctas)
    close(got, float(want), f"wave_efficiency({tiles}, {num_sms}, {ctas})")
    assert 0 < got <= 1, f"efficiency must lie in (0, 1]; got {got}"
    assert (got == 1.0) == (tiles % slots == 0), (
        f"efficiency is exactly 1.0 iff tiles ({tiles}) is a multiple of slots ({slots}); got {got!r}")


@pytest.mark.rubric("waves")
@pytest.mark.parametrize("gpu", [H100_SXM, H200, A100])
def test_llama_prefill_waves_on_real_gpus(gpu):
    """Rule: Waves"""
    n_sms = sms(gpu)
    n = config(LLAMA8)["intermediate_size"]
    for m in range(128, 8193, 128):
        tiles = oracle.count_tiles_fast(m, n, 128, 256)
        exact_int(gw.wave_count(tiles, n_sms), len(oracle.simulate_waves(tiles, n_sms)),
                  f"Llama-3.1-8B up-projection, {m} tokens, 128x256 tiles, {gpu} ({n_sms} SMs)")


# ---------------------------------------------------------------------------- waste

@pytest.mark.rubric("waste")
@given(boundary_shape(), QUARTER)
def test_time_and_waste(shape, t_wave):
    """Rules: Time; Waste"""
    m, n, tile_m, tile_n, num_sms, ctas = shape
    slots = num_sms * ctas
    tiles = oracle.count_tiles_fast(m, n, tile_m, tile_n)
    waves = len(oracle.simulate_waves(tiles, slots))
    what = f"M={m} N={n} tile {tile_m}x{tile_n}, {num_sms} SMs x {ctas}, t_wave {t_wave}"
    close(gw.gemm_time_us(m, n, tile_m, tile_n, num_sms, t_wave, ctas), waves * t_wave,
          f"gemm_time_us: {waves} waves, {what}")
    want = float(oracle.idle_slot_waves(tiles, slots) * Fraction(t_wave))
    got = gw.wave_waste_us(m, n, tile_m, tile_n, num_sms, t_wave, ctas)
    close(got, want, f"wave_waste_us: the idle slots of the last wave, {what}")
    if tiles % slots == 0:
        assert got == 0.0, f"whole waves waste nothing; got {got!r} ({what})"
    ideal = tiles / slots * t_wave
    close(gw.gemm_time_us(m, n, tile_m, tile_n, num_sms, t_wave, ctas) - got, ideal,
          f"time - waste is the ideal tiles / slots x t_wave ({what})", rel=1e-7)


@pytest.mark.rubric("waste")
@pytest.mark.parametrize("gpu", [H100_SXM, A100])
def test_waste_real_prefill(gpu):
    """Llama-3.1-8B down projection (N = 4096) priced at a 50 us wave, M around boundaries.

    Rule: Waste"""
    n_sms = sms(gpu)
    n = config(LLAMA8)["hidden_size"]
    for m in range(64, 6000, 64):
        tiles = oracle.count_tiles_fast(m, n, 128, 128)
        want = float(oracle.idle_slot_waves(tiles, n_sms) * 50)
        close(gw.wave_waste_us(m, n, 128, 128, n_sms, 50.0), want,
              f"Llama-3.1-8B down-projection, {m} tokens, {tiles} tiles on {n_sms} SMs")


# ---------------------------------------------------------------------------- tile_fix

CANDIDATE = st.tuples(TILE_DIM, TILE_DIM, QUARTER)


@pytest.mark.rubric("tile_fix")
@given(boundary_shape(), st.lists(CANDIDATE, min_size=1, max_size=6))
@example((640, 3584, 128, 128, 132, 1), [(64, 64, 1.25), (128, 128, 3.0), (128, 64, 2.0)])
def test_best_tile_is_cheapest_first_on_ties(shape, cands):
    """Rule: 1. Tile shape"""
    m, n, _, _, num_sms, ctas = shape
    slots = num_sms * ctas
    times = [len(oracle.simulate_waves(oracle.count_tiles_fast(m, n, a, b), slots)) * t
             for a, b, t in cands]
    best = min(times)
    first = times.index(best)
    got = gw.best_tile_shape(m, n, num_sms, cands, ctas)
    assert tuple(got[:2]) == tuple(cands[first][:2]), (
        f"M={m} N={n} slots {slots}: predicted times {times}; want candidate {first} "
        f"{cands[first][:2]} (cheapest, first on a tie), got {got!r}")
    close(got[2], best, "best_tile_shape time")


@pytest.mark.rubric("tile_fix")
@given(boundary_shape(), st.lists(CANDIDATE, min_size=1, max_size=5), QUARTER)
def test_best_tile_never_worse_than_the_plain_tile(shape, cands, t_wave):
    """Rule: 1. Tile shape"""
    m, n, tile_m, tile_n, num_sms, ctas = shape
    base = len(oracle.simulate_waves(oracle.count_tiles_fast(m, n, tile_m, tile_n),
                                     num_sms * ctas)) * t_wave
    got = gw.best_tile_shape(m, n, num_sms, [(tile_m, tile_n, t_wave)] + cands, ctas)
    assert got[2] <= base, f"with the plain tile among the candidates, {got!r} beats {base}"


# ---------------------------------------------------------------------------- split_k

@pytest.mark.rubric("split_k")
@given(boundary_shape(), st.integers(1, 3000), TILE_K, st.integers(1, 16), QUARTER, QUARTER0)
def test_split_k_time_by_units(shape, k, tile_k, s, t_iter, t_partial):
    """Rules: 2a. Split-K; Cost model"""
    m, n, tile_m, tile_n, num_sms, ctas = shape
    iters = oracle.k_iterations(k, tile_k)
    assume(s <= iters)
    tiles = oracle.count_tiles_fast(m, n, tile_m, tile_n)
    want = oracle.split_k_time(tiles, iters, s, num_sms * ctas, t_iter, t_partial)
    got = gw.split_k_time_us(m, n, k, (tile_m, tile_n, tile_k), t_iter, num_sms, s, t_partial, ctas)
    close(got, want, f"split_k_time_us: {tiles} tiles x {s} splits of {iters} K-iterations, "
                     f"slots {num_sms * ctas}, t_iter {t_iter}, t_partial {t_partial}")


@pytest.mark.rubric("split_k")
@given(boundary_shape(), st.integers(1, 3000), TILE_K, QUARTER)
def test_split_k_one_is_the_plain_gemm(shape, k, tile_k, t_iter):
    """Rules: 2a. Split-K; Cost model"""
    m, n, tile_m, tile_n, num_sms, ctas = shape
    iters = oracle.k_iterations(k, tile_k)
    tiles = oracle.count_tiles_fast(m, n, tile_m, tile_n)
    waves = len(oracle.simulate_waves(tiles, num_sms * ctas))
    close(gw.split_k_time_us(m, n, k, (tile_m, tile_n, tile_k), t_iter, num_sms, 1, 100.0, ctas),
          waves * iters * t_iter, "s = 1: no reduction, a wave is k_iters x t_iter")


@pytest.mark.rubric("split_k")
@given(boundary_shape(), st.integers(1, 2000), TILE_K, st.integers(1, 12), QUARTER, QUARTER0)
def test_best_split_k(shape, k, tile_k, max_splits, t_iter, t_partial):
    """Rule: 2a. Split-K"""
    m, n, tile_m, tile_n, num_sms, ctas = shape
    iters = oracle.k_iterations(k, tile_k)
    tiles = oracle.count_tiles_fast(m, n, tile_m, tile_n)
    times = [oracle.split_k_time(tiles, iters, s, num_sms * ctas, t_iter, t_partial)
             for s in range(1, min(max_splits, iters) + 1)]
    best = min(times)
    s_want = times.index(best) + 1
    s_got, t_got = gw.best_split_k(m, n, k, (tile_m, tile_n, tile_k), t_iter, num_sms,
                                   max_splits, t_partial, ctas)
    exact_int(s_got, s_want, f"best split count (smallest on a tie); times by s = {times}")
    close(t_got, best, "best split-K time")
    assert t_got <= times[0], "split-K includes s = 1, so it never loses to the plain GEMM"


@pytest.mark.rubric("split_k")
def test_split_k_reduction_is_paid():
    """Rule: 2a. Split-K"""
    # 1 tile, 132 slots, 64 K-iterations: s = 2 halves the loop but pays 2 partial reads.
    got = gw.split_k_time_us(128, 128, 64 * 64, (128, 128, 64), 1.0, 132, 2, 5.0)
    close(got, 32 * 1.0 + 2 * 5.0, "s = 2: 32 iterations plus two partials of 5 us")
    s, t = gw.best_split_k(128, 128, 64 * 64, (128, 128, 64), 1.0, 132, 64, 5.0)
    # times: s -> ceil(64/s) + 5 s (s > 1): s=3: 22+15=37, s=4: 16+20=36, s=5: 13+25=38
    exact_int(s, 4, "the reduction stops the split count from growing: s = 4")
    close(t, 36.0, "best split-K time with its reduction")


@pytest.mark.rubric("split_k")
@given(st.integers(1, 5000), TILE_K)
def test_k_iterations_round_up(k, tile_k):
    """Rule: Cost model"""
    iters = oracle.k_iterations(k, tile_k)
    # 1 tile, 1 slot: the plain GEMM time is k_iters x t_iter.
    close(gw.split_k_time_us(1, 1, k, (16, 16, tile_k), 1.0, 1, 1, 0.0), float(iters),
          f"K={k} in steps of {tile_k} is {iters} K-iterations (a partial step is a whole step)")


# ---------------------------------------------------------------------------- stream_k

@pytest.mark.rubric("stream_k")
@given(boundary_shape(), st.integers(1, 1500), TILE_K, QUARTER, QUARTER0)
def test_stream_k_by_enumeration(shape, k, tile_k, t_iter, t_fixup):
    """Rules: 2b. Stream-K; Counts are ints"""
    m, n, tile_m, tile_n, num_sms, ctas = shape
    tiles = oracle.count_tiles_fast(m, n, tile_m, tile_n)
    assume(tiles <= 3000)
    iters = oracle.k_iterations(k, tile_k)
    busiest, split = oracle.stream_k(tiles, iters, num_sms * ctas)
    q, s, t = gw.stream_k(m, n, k, (tile_m, tile_n, tile_k), t_iter, num_sms, t_fixup, ctas)
    what = f"{tiles} tiles x {iters} K-iterations over {num_sms * ctas} workers"
    exact_int(q, busiest, f"iterations per worker, {what}")
    exact_int(s, split, f"tiles split across workers, {what}")
    close(t, busiest * t_iter + (t_fixup if split else 0.0), f"stream-K time, {what}")


@pytest.mark.rubric("stream_k")
@given(SMS, CTAS, st.integers(1, 5), st.integers(1, 300), QUARTER, QUARTER)
def test_stream_k_on_whole_waves_splits_nothing(num_sms, ctas, j, k_iters, t_iter, t_fixup):
    """Rule: 2b. Stream-K"""
    slots = num_sms * ctas
    tiles = j * slots
    # tiles x 16 columns of 16-wide tiles: one row of `tiles` tiles.
    q, split, t = gw.stream_k(16, 16 * tiles, 16 * k_iters, (16, 16, 16), t_iter, num_sms,
                              t_fixup, ctas)
    exact_int(q, j * k_iters, "whole waves: each worker gets whole tiles")
    exact_int(split, 0, "whole waves: no tile is split")
    close(t, j * k_iters * t_iter, "no fix-up when nothing is split")


# ---------------------------------------------------------------------------- scheduler

@pytest.mark.rubric("scheduler")
@given(st.integers(1, 4096), st.integers(1, 40), TILE_DIM, TILE_DIM, SMS, CTAS)
def test_trimmed_chunk_by_search(budget, n_tiles, tile_m, tile_n, num_sms, ctas):
    """Rule: 3. Scheduler"""
    n = n_tiles * tile_n
    want = oracle.trimmed_chunk(budget, n, tile_m, tile_n, num_sms * ctas)
    exact_int(gw.wave_trimmed_chunk(budget, n, tile_m, tile_n, num_sms, ctas), want,
              f"budget {budget}, N={n} ({n_tiles} tile columns), tile {tile_m}x{tile_n}, "
              f"slots {num_sms * ctas}")


@pytest.mark.rubric("scheduler")
@given(boundary_shape())
def test_trimmed_chunk_at_boundaries(shape):
    """Rule: 3. Scheduler"""
    m, n, tile_m, tile_n, num_sms, ctas = shape
    slots = num_sms * ctas
    got = gw.wave_trimmed_chunk(m, n, tile_m, tile_n, num_sms, ctas)
    want = oracle.trimmed_chunk(m, n, tile_m, tile_n, slots)
    exact_int(got, want, f"budget {m}, N={n}, tile {tile_m}x{tile_n}, slots {slots}")
    assert 1 <= got <= m, f"the chunk must lie in 1 .. budget; got {got}"
    tiles = oracle.count_tiles_fast(m, n, tile_m, tile_n)
    if tiles % slots == 0:
        exact_int(got, m, "a budget already on whole waves is not trimmed")


@pytest.mark.rubric("scheduler")
@pytest.mark.parametrize("gpu", [H100_SXM, A100])
@pytest.mark.parametrize("model", [LLAMA8, QWEN7])
def test_trimmed_chunk_real_shapes(gpu, model):
    """Rule: 3. Scheduler"""
    n_sms = sms(gpu)
    cfg = config(model)
    for n in (cfg["hidden_size"], cfg["intermediate_size"]):
        for budget in (256, 384, 512, 640, 1000, 2048, 4096, 8192):
            want = oracle.trimmed_chunk(budget, n, 128, 128, n_sms)
            exact_int(gw.wave_trimmed_chunk(budget, n, 128, 128, n_sms), want,
                      f"{model} N={n}, budget {budget} tokens, {gpu} ({n_sms} SMs)")


@pytest.mark.rubric("scheduler")
def test_trimmed_chunk_fallbacks():
    """Rule: 3. Scheduler"""
    exact_int(gw.wave_trimmed_chunk(300, 128, 128, 128, 132), 300,
              "3 tiles on 132 SMs: less than one full wave, run the budget")
    # 1 row of 200 tiles on 132 slots: one complete wave holds 132 tiles, no whole row fits.
    exact_int(gw.wave_trimmed_chunk(100, 200 * 16, 128, 16, 132), 100,
              "a single row of M-tiles already spills: run the budget")
    exact_int(gw.wave_trimmed_chunk(128 * 33, 512, 128, 128, 132), 128 * 33,
              "132 tiles: a whole wave, nothing to trim")
    exact_int(gw.wave_trimmed_chunk(128 * 33 + 1, 512, 128, 128, 132), 128 * 33,
              "one token past a whole wave is trimmed back")


# ---------------------------------------------------------------------------- compare

def _compare_oracle(m, n, k, num_sms, tile, t_iter, cands, max_splits, t_partial, t_fixup, ctas=1):
    tm, tn, tk = tile
    slots = num_sms * ctas
    iters = oracle.k_iterations(k, tk)

    def plain(mm, a, b, t):
        return len(oracle.simulate_waves(oracle.count_tiles_fast(mm, n, a, b), slots)) * iters * t

    tiles = oracle.count_tiles_fast(m, n, tm, tn)
    split = min(oracle.split_k_time(tiles, iters, s, slots, t_iter, t_partial)
                for s in range(1, min(max_splits, iters) + 1))
    busiest, n_split = oracle.stream_k(tiles, iters, slots)
    chunk = oracle.trimmed_chunk(m, n, tm, tn, slots)
    return {
        "baseline": (m, plain(m, tm, tn, t_iter)),
        "tile_shape": (m, min(plain(m, a, b, t) for a, b, t in [(tm, tn, t_iter)] + list(cands))),
        "split_k": (m, split),
        "stream_k": (m, busiest * t_iter + (t_fixup if n_split else 0.0)),
        "scheduler": (chunk, plain(chunk, tm, tn, t_iter)),
    }


REAL = [
    # (model, projection N, K, GPU, tokens)
    (LLAMA8, "up", H100_SXM, 384), (LLAMA8, "up", H100_SXM, 1000), (LLAMA8, "up", A100, 2048),
    (LLAMA8, "down", H200, 640), (QWEN7, "down", H100_SXM, 640), (QWEN7, "up", A100, 512),
    (LLAMA70, "up", H100_SXM, 300),
]


@pytest.mark.rubric("compare")
@pytest.mark.parametrize("model,proj,gpu,tokens", REAL)
def test_compare_real_prefill(model, proj, gpu, tokens):
    """Rule: Comparison"""
    cfg = config(model)
    n, k = ((cfg["intermediate_size"], cfg["hidden_size"]) if proj == "up"
            else (cfg["hidden_size"], cfg["intermediate_size"]))
    tile, t_iter = (128, 256, 64), 0.5
    cands = [(128, 128, 0.25), (256, 128, 0.5), (64, 256, 0.25), (128, 64, 0.125)]
    args = (tokens, n, k, sms(gpu), tile, t_iter, cands, 8, 3.0, 2.0)
    want = _compare_oracle(*args)
    got = gw.compare_fixes(*args)
    assert set(got) == set(want), f"keys: got {sorted(got)}, want {sorted(want)}"
    for key, (w_tokens, w_time) in want.items():
        exact_int(got[key][0], w_tokens, f"{key} tokens ({model} {proj}, {tokens} tokens, {gpu})")
        close(got[key][1], w_time, f"{key} time ({model} {proj}, {tokens} tokens, {gpu})")
    base = got["baseline"][1]
    assert got["tile_shape"][1] <= base and got["split_k"][1] <= base, (
        "the tile and split-K fixes include the plain GEMM, so they never predict more time")
    assert got["scheduler"][1] <= base and got["scheduler"][0] <= tokens, (
        "the scheduler runs at most the budget, never slower than the whole budget")


@pytest.mark.rubric("compare")
@given(boundary_shape(), st.integers(1, 2000), TILE_K, QUARTER,
       st.lists(CANDIDATE, min_size=1, max_size=3), st.integers(1, 6), QUARTER0, QUARTER0)
def test_compare_properties(shape, k, tile_k, t_iter, cands, max_splits, t_partial, t_fixup):
    """Rule: Comparison"""
    m, n, tile_m, tile_n, num_sms, ctas = shape
    tiles = oracle.count_tiles_fast(m, n, tile_m, tile_n)
    assume(tiles <= 3000)
    args = (m, n, k, num_sms, (tile_m, tile_n, tile_k), t_iter, cands, max_splits,
            t_partial, t_fixup, ctas)
    want = _compare_oracle(*args)
    got = gw.compare_fixes(*args)
    for key, (w_tokens, w_time) in want.items():
        exact_int(got[key][0], w_tokens, f"{key} tokens")
        close(got[key][1], w_time, f"{key} time")


# ---------------------------------------------------------------------------- bad_input

GOOD = {
    "output_tiles": (lambda: gw.output_tiles, (640, 3584, 128, 128)),
    "wave_count": (lambda: gw.wave_count, (140, 132, 1)),
    "wave_efficiency": (lambda: gw.wave_efficiency, (140, 132, 1)),
    "gemm_time_us": (lambda: gw.gemm_time_us, (640, 3584, 128, 128, 132, 74.0, 1)),
    "wave_waste_us": (lambda: gw.wave_waste_us, (640, 3584, 128, 128, 132, 74.0, 1)),
    "wave_trimmed_chunk": (lambda: gw.wave_trimmed_chunk, (640, 3584, 128, 128, 132, 1)),
}


@pytest.mark.rubric("bad_input")
@pytest.mark.parametrize("name", sorted(GOOD))
def test_int_arguments_are_checked(name):
    """Rules: Type errors; Value errors"""
    get, args = GOOD[name]
    fn = get()
    fn(*args)   # the good call works
    for i, value in enumerate(args):
        if not isinstance(value, int):
            continue
        for bad, exc in ((0, ValueError), (-3, ValueError), (float(value), TypeError),
                         (True, TypeError), ("8", TypeError)):
            broken = list(args)
            broken[i] = bad
            with pytest.raises(exc):
                fn(*broken)


@pytest.mark.rubric("bad_input")
def test_times_are_checked():
    """Rules: Type errors; Value errors"""
    for bad, exc in ((0.0, ValueError), (-1.0, ValueError), (math.inf, ValueError),
                     (math.nan, ValueError), ("74", TypeError)):
        with pytest.raises(exc):
            gw.gemm_time_us(640, 3584, 128, 128, 132, bad)
        with pytest.raises(exc):
            gw.split_k_time_us(640, 3584, 4096, (128, 128, 64), bad, 132, 2, 1.0)
    # 140 tiles x 2 splits = 280 units: 3 waves of 32 K-iterations, a free reduction
    close(gw.split_k_time_us(640, 3584, 4096, (128, 128, 64), 1.0, 132, 2, 0.0), 96.0,
          "t_partial_us = 0 is allowed (and makes the reduction free)")
    gw.stream_k(640, 3584, 4096, (128, 128, 64), 1.0, 132, 0.0)
    with pytest.raises(ValueError):
        gw.stream_k(640, 3584, 4096, (128, 128, 64), 1.0, 132, -1.0)
    with pytest.raises(ValueError):
        gw.split_k_time_us(640, 3584, 4096, (128, 128, 64), 1.0, 132, 2, -0.5)


@pytest.mark.rubric("bad_input")
def test_tiles_candidates_and_splits_are_checked():
    """Rules: Type errors; Value errors"""
    with pytest.raises(TypeError):
        gw.split_k_time_us(640, 3584, 4096, (128, 128), 1.0, 132, 2, 1.0)
    with pytest.raises(TypeError):
        gw.stream_k(640, 3584, 4096, 128, 1.0, 132, 1.0)
    with pytest.raises(ValueError):
        gw.split_k_time_us(640, 3584, 4096, (128, 128, 0), 1.0, 132, 2, 1.0)
    with pytest.raises(ValueError):
        gw.split_k_time_us(640, 3584, 4096, (128, 128, 64), 1.0, 132, 65, 1.0)   # 64 K-iterations
    with pytest.raises(ValueError):
        gw.split_k_time_us(640, 3584, 4096, (128, 128, 64), 1.0, 132, 0, 1.0)
    with pytest.raises(ValueError):
        gw.best_split_k(640, 3584, 4096, (128, 128, 64), 1.0, 132, 0, 1.0)
    with pytest.raises(ValueError):
        gw.best_tile_shape(640, 3584, 132, [])
    with pytest.raises(TypeError):
        gw.best_tile_shape(640, 3584, 132, [(128, 128)])
    with pytest.raises(ValueError):
        gw.best_tile_shape(640, 3584, 132, [(128, 128, 0.0)])
    with pytest.raises(TypeError):
        gw.best_tile_shape(640, 3584, 132, [(128.0, 128, 1.0)])
    with pytest.raises(ValueError):
        gw.compare_fixes(640, 3584, 4096, 132, (128, 128, 64), 1.0, [], 4, 1.0, 1.0)


# ---------------------------------------------------------------- review additions

@pytest.mark.rubric("stream_k")
def test_stream_k_tile_cut_twice_counts_once():
    """Rule: 2b. Stream-K"""
    # 4 tiles x 10 K-iterations on 7 workers: q = ceil(40 / 7) = 6, boundaries at
    # 6, 12, 18, 24, 30, 36. Tile 1 [10, 20) holds two of them (12 and 18) and tile 2
    # [20, 30) holds 24; 30 is tile 3's start. Split tiles: 0, 1, 2, 3 = 4 (not 5 boundaries).
    q, split, t = gw.stream_k(16, 64, 160, (16, 16, 16), 1.0, 7, 3.0)
    exact_int(q, 6, "ceil(4 x 10 / 7) iterations per worker")
    exact_int(split, 4, "tiles split (tile 1 is cut twice but is one split tile)")
    close(t, 6 * 1.0 + 3.0, "q iterations plus one fix-up")


@st.composite
def few_tiles(draw):
    """(num_sms, ctas, tiles) with fewer tiles than workers."""
    num_sms, ctas = draw(st.sampled_from([2, 3, 7, 16, 108, 132])), draw(CTAS)
    return num_sms, ctas, draw(st.integers(1, num_sms * ctas - 1))


@pytest.mark.rubric("stream_k")
@given(few_tiles(), st.integers(1, 300), QUARTER, QUARTER)
def test_stream_k_fewer_tiles_than_workers(case, k_iters, t_iter, t_fixup):
    """Fewer tiles than workers: q < k_iters, so one tile can hold several worker boundaries.

    Rule: 2b. Stream-K"""
    num_sms, ctas, tiles = case
    slots = num_sms * ctas
    busiest, split = oracle.stream_k(tiles, k_iters, slots)
    q, s, t = gw.stream_k(16, 16 * tiles, 16 * k_iters - 3, (16, 16, 16), t_iter, num_sms,
                          t_fixup, ctas)
    what = f"{tiles} tiles x {k_iters} K-iterations over {slots} workers"
    exact_int(q, busiest, f"iterations per worker, {what}")
    exact_int(s, split, f"tiles split across workers (a tile cut twice counts once), {what}")
    close(t, busiest * t_iter + (t_fixup if split else 0.0), f"stream-K time, {what}")


TILE3 = (128, 128, 64)
CANDS = [(128, 64, 0.5), (256, 128, 1.0)]
# name -> (function getter, good args, argument names by position)
ALL = {
    "output_tiles": (lambda: gw.output_tiles, (640, 3584, 128, 128), ("m", "n", "tile_m", "tile_n")),
    "wave_count": (lambda: gw.wave_count, (140, 132, 1), ("tiles", "num_sms", "ctas_per_sm")),
    "wave_efficiency": (lambda: gw.wave_efficiency, (140, 132, 1), ("tiles", "num_sms", "ctas_per_sm")),
    "gemm_time_us": (lambda: gw.gemm_time_us, (640, 3584, 128, 128, 132, 74.0, 1),
                     ("m", "n", "tile_m", "tile_n", "num_sms", "t_wave_us", "ctas_per_sm")),
    "wave_waste_us": (lambda: gw.wave_waste_us, (640, 3584, 128, 128, 132, 74.0, 1),
                      ("m", "n", "tile_m", "tile_n", "num_sms", "t_wave_us", "ctas_per_sm")),
    "best_tile_shape": (lambda: gw.best_tile_shape, (640, 3584, 132, CANDS, 1),
                        ("m", "n", "num_sms", "candidates", "ctas_per_sm")),
    "split_k_time_us": (lambda: gw.split_k_time_us, (640, 3584, 4096, TILE3, 1.0, 132, 2, 1.0, 1),
                        ("m", "n", "k", "tile", "t_iter_us", "num_sms", "splits", "t_partial_us",
                         "ctas_per_sm")),
    "best_split_k": (lambda: gw.best_split_k, (640, 3584, 4096, TILE3, 1.0, 132, 4, 1.0, 1),
                     ("m", "n", "k", "tile", "t_iter_us", "num_sms", "max_splits", "t_partial_us",
                      "ctas_per_sm")),
    "stream_k": (lambda: gw.stream_k, (640, 3584, 4096, TILE3, 1.0, 132, 1.0, 1),
                 ("m", "n", "k", "tile", "t_iter_us", "num_sms", "t_fixup_us", "ctas_per_sm")),
    "wave_trimmed_chunk": (lambda: gw.wave_trimmed_chunk, (640, 3584, 128, 128, 132, 1),
                           ("budget", "n", "tile_m", "tile_n", "num_sms", "ctas_per_sm")),
    "compare_fixes": (lambda: gw.compare_fixes,
                      (640, 3584, 4096, 132, TILE3, 1.0, CANDS, 4, 1.0, 1.0, 1),
                      ("m", "n", "k", "num_sms", "tile", "t_iter_us", "candidates", "max_splits",
                       "t_partial_us", "t_fixup_us", "ctas_per_sm")),
    "plan_chunk": (lambda: gw.plan_chunk, (640, 3584, 4096, 132), ("budget", "n", "k", "num_sms")),
}
ZERO_OK = {"t_partial_us", "t_fixup_us"}


def _bad_values(name, value):
    """(bad value, exception) for one argument of a good call, by the prompt's rules."""
    if isinstance(value, int):
        return [(0, ValueError), (-3, ValueError), (float(value), TypeError), (True, TypeError),
                ("8", TypeError)]
    if isinstance(value, float):
        out = [(-1.0, ValueError), (math.inf, ValueError), (math.nan, ValueError),
               (True, TypeError), ("1", TypeError)]
        return out if name in ZERO_OK else out + [(0.0, ValueError), (0, ValueError)]
    if name == "tile":
        return [((128, 128), TypeError), ((128, 128, 64, 1), TypeError), (128, TypeError),
                ((128, 128, 64.0), TypeError), ((128.0, 128, 64), TypeError),
                ((128, True, 64), TypeError), ((128, 128, 0), ValueError), ((-1, 128, 64), ValueError)]
    if name == "candidates":
        return [([], ValueError), ([(128, 64)], TypeError), ([(128, 64, 0.5, 1)], TypeError),
                ([(128, 64, True)], TypeError), ([(128, 64, "0.5")], TypeError),
                ([(128, 64, math.nan)], ValueError), ([(128, 64, math.inf)], ValueError),
                ([(128, 64, -0.5)], ValueError), ([(128, 64, 0)], ValueError),
                ([(128, 64.0, 0.5)], TypeError), ([(True, 64, 0.5)], TypeError),
                ([(0, 64, 0.5)], ValueError)]
    raise AssertionError(name)


def _names(msg, name):
    """Does an error message name the argument (a whole word for one-letter names)?"""
    if name in ("tile", "candidates"):
        return name.rstrip("s") in msg
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])", msg) is not None


@pytest.mark.rubric("bad_input")
@pytest.mark.parametrize("fn_name", sorted(ALL))
def test_every_argument_is_checked(fn_name):
    """Every int, time, tile and candidate argument of every function, by the prompt's rules.

    Rules: Type errors; Value errors"""
    get, args, names = ALL[fn_name]
    fn = get()
    fn(*args)   # the good call works
    for i, (name, value) in enumerate(zip(names, args)):
        for bad, exc in _bad_values(name, value):
            broken = list(args)
            broken[i] = bad
            with pytest.raises(exc):
                fn(*broken)


@pytest.mark.rubric("bad_input")
@pytest.mark.parametrize("fn_name", sorted(ALL))
def test_messages_name_the_argument(fn_name):
    """Rule: Messages name the argument"""
    get, args, names = ALL[fn_name]
    fn = get()
    for i, (name, value) in enumerate(zip(names, args)):
        for bad, exc in _bad_values(name, value)[:3]:
            broken = list(args)
            broken[i] = bad
            with pytest.raises(exc) as info:
                fn(*broken)
            msg = str(info.value)
            assert _names(msg, name), (
                f"{fn_name}({name}={bad!r}) raised {exc.__name__}({msg!r}): the message must "
                f"name the argument {name!r}")


@pytest.mark.rubric("bad_input")
def test_plan_chunk_budget_below_16():
    """Rules: Chunk contract; Value errors"""
    for budget in (1, 8, 15):
        with pytest.raises(ValueError):
            gw.plan_chunk(budget, 3584, 4096, 132)


@pytest.mark.rubric("bad_input")
def test_lists_are_accepted_as_tiles_and_candidates():
    """The prompt allows a tile or candidate as a 3-tuple or a 3-list: same answers.

    Rule: Type errors"""
    close(gw.split_k_time_us(640, 3584, 4096, [128, 128, 64], 1.0, 132, 2, 1.0),
          gw.split_k_time_us(640, 3584, 4096, (128, 128, 64), 1.0, 132, 2, 1.0), "tile as a list")
    assert tuple(gw.best_split_k(640, 3584, 4096, [128, 128, 64], 1.0, 132, 4, 1.0)) == \
        tuple(gw.best_split_k(640, 3584, 4096, (128, 128, 64), 1.0, 132, 4, 1.0)), "tile as a list"
    assert tuple(gw.stream_k(640, 3584, 4096, [128, 128, 64], 1.0, 132, 1.0)) == \
        tuple(gw.stream_k(640, 3584, 4096, (128, 128, 64), 1.0, 132, 1.0)), "tile as a list"
    assert tuple(gw.best_tile_shape(640, 3584, 132, [[128, 64, 1.0], [256, 128, 2.0]])) == \
        tuple(gw.best_tile_shape(640, 3584, 132, [(128, 64, 1.0), (256, 128, 2.0)])), \
        "candidates as lists"
    got = gw.compare_fixes(640, 3584, 4096, 132, [128, 128, 64], 1.0, [[128, 64, 0.5]], 4, 1.0, 1.0)
    want = gw.compare_fixes(640, 3584, 4096, 132, (128, 128, 64), 1.0, [(128, 64, 0.5)], 4, 1.0, 1.0)
    assert {k: tuple(v) for k, v in got.items()} == {k: tuple(v) for k, v in want.items()}, \
        "tile and candidates as lists"


@pytest.mark.rubric("waste")
@pytest.mark.parametrize("t_wave", [0.1, 0.3, 0.7, 1.1, 13.37, 74.3])
def test_waste_exactly_zero_on_whole_waves_for_any_time(t_wave):
    """The prompt: waste is 0.0 exactly on whole waves, whatever t_wave (not only dyadic ones).

    Rules: Waste; Times are floats"""
    for num_sms, ctas in ((132, 1), (108, 1), (66, 2), (7, 3), (148, 1), (114, 2)):
        slots = num_sms * ctas
        for j in range(1, 9):
            for m, n in ((16 * j * slots, 16), (16, 16 * j * slots), (16 * j, 16 * slots - 5)):
                got = gw.wave_waste_us(m, n, 16, 16, num_sms, t_wave, ctas)
                assert got == 0.0, (
                    f"M={m} N={n} in 16x16 tiles: {j} whole waves on {slots} slots waste exactly "
                    f"0.0, got {got!r} (t_wave {t_wave})")
            close(gw.wave_waste_us(16 * j * slots + 16, 16, 16, 16, num_sms, t_wave, ctas),
                  (slots - 1) / slots * t_wave, f"one tile past {j} whole waves, t_wave {t_wave}")


# ---------------------------------------------------------------- review additions (2026-12-02)

def _floats(got, what):
    assert isinstance(got, float), f"{what}: times are floats, also from int inputs; got {got!r}"


@pytest.mark.rubric("waste")
def test_int_wave_time_gives_float_times():
    """Rule: Times are floats"""
    _floats(gw.gemm_time_us(640, 3584, 128, 128, 132, 74), "gemm_time_us(..., t_wave_us=74)")
    close(gw.gemm_time_us(640, 3584, 128, 128, 132, 74), 148.0, "two waves of 74 us")
    _floats(gw.wave_waste_us(640, 3584, 128, 128, 132, 74), "wave_waste_us(..., 74)")
    _floats(gw.wave_waste_us(128 * 33, 512, 128, 128, 132, 74), "wave_waste_us on a whole wave")


@pytest.mark.rubric("tile_fix")
def test_int_candidate_times_give_a_float_time():
    """Rule: Times are floats"""
    got = gw.best_tile_shape(640, 3584, 132, [(128, 128, 74), (128, 64, 40)])
    _floats(got[2], f"best_tile_shape with int candidate times -> {got!r}")


@pytest.mark.rubric("split_k")
def test_int_split_k_times_give_float_times():
    """Rule: Times are floats"""
    for s, t_partial in ((1, 0), (2, 0), (2, 3)):
        _floats(gw.split_k_time_us(640, 3584, 4096, (128, 128, 64), 1, 132, s, t_partial),
                f"split_k_time_us(..., t_iter_us=1, splits={s}, t_partial_us={t_partial})")
    _floats(gw.best_split_k(640, 3584, 4096, (128, 128, 64), 1, 132, 4, 1)[1], "best_split_k time")


@pytest.mark.rubric("stream_k")
def test_int_stream_k_times_give_a_float_time():
    """Rule: Times are floats"""
    for t_fixup in (0, 2):
        got = gw.stream_k(640, 3584, 4096, (128, 128, 64), 1, 132, t_fixup)
        _floats(got[2], f"stream_k(..., t_iter_us=1, t_fixup_us={t_fixup}) -> {got!r}")


@pytest.mark.rubric("compare")
def test_int_times_give_float_comparison_times():
    """Rule: Times are floats"""
    got = gw.compare_fixes(640, 3584, 4096, 132, (128, 128, 64), 1, [(128, 64, 1)], 4, 1, 0)
    for key, (_, t) in got.items():
        _floats(t, f"compare_fixes {key!r} time with int inputs")


@pytest.mark.rubric("bad_input")
def test_too_many_splits_names_splits():
    """Rules: Value errors; Messages name the argument"""
    with pytest.raises(ValueError) as info:
        gw.split_k_time_us(640, 3584, 4096, (128, 128, 64), 1.0, 132, 65, 1.0)   # 64 K-iterations
    assert _names(str(info.value), "splits"), (
        f"more splits than K-iterations: the message must name 'splits'; got {str(info.value)!r}")


@pytest.mark.rubric("scheduler")
@pytest.mark.parametrize("budget", [16, 17, 100, 1000, 2047, 4096])
def test_plan_chunk_is_a_multiple_of_16_within_the_budget(budget):
    """Rule: Chunk contract"""
    for n, k, num_sms in ((3584, 18944, 132), (14336, 4096, 132), (4096, 14336, 108)):
        got = gw.plan_chunk(budget, n, k, num_sms)
        assert type(got) is int and got % 16 == 0 and 16 <= got <= budget, (
            f"plan_chunk({budget}, {n}, {k}, {num_sms}) must return an int multiple of 16 in "
            f"16..{budget}; got {got!r}")


# -- plan_chunk with a measured sweep (profile-guided) -----------------------------------

NEAR_BEST = 1.15   # the prompt's "within 15% of the least measured time per token"


def _check_sweep_choice(budget, measured, what):
    got = gw.plan_chunk(budget, 4096, 4096, 132, dict(measured))
    eligible = {m: t for m, t in measured.items() if m % 16 == 0 and 16 <= m <= budget}
    assert eligible, "the test's sweep must hold a chunk"
    best = min(t / m for m, t in eligible.items())
    assert type(got) is int and got in eligible, (
        f"{what}: plan_chunk({budget}, ..., measured) must return a measured multiple of 16 in "
        f"16..{budget}; got {got!r} (measured chunks there: {sorted(eligible)[:12]}...)")
    assert eligible[got] / got <= NEAR_BEST * best * (1 + 1e-9), (   # the prompt's 1e-9
        f"{what}: chunk {got} costs {eligible[got] / got:.4f} us per token; the best measured "
        f"chunk within the budget costs {best:.4f} (more than 15% better)")


@pytest.mark.rubric("scheduler")
def test_plan_chunk_takes_the_best_measured_chunk_per_token():
    """Traps in one sweep: the least total time (16 tokens), the cheapest per token above the
    budget (2048) and at counts that are not multiples of 16 (1000, 24), and the budget itself
    unmeasured. Only the measured multiples of 16 within the budget count.

    Rules: Chunk contract; Measured sweep"""
    measured = {16: 20.0, 24: 1.0, 512: 120.0, 640: 300.0, 768: 180.0, 992: 400.0,
                1000: 100.0, 1008: 410.0, 2048: 200.0}
    _check_sweep_choice(1015, measured, "a sweep with traps")
    _check_sweep_choice(700, measured, "a sweep with traps, budget 700")


@pytest.mark.rubric("scheduler")
def test_plan_chunk_follows_a_kernel_switch_the_waves_miss():
    """A slow band between wave steps (a kernel switch: Llama-2-70B TP2 down projection on
    H100 in vidur's profile, 512 tokens 140 us, 528..640 about 370 us, 656 250 us): the
    measured sweep decides, whatever the wave model says.

    Rules: Measured sweep"""
    measured = {512: 140.0, 528: 372.0, 544: 377.0, 560: 374.0, 576: 256.5, 592: 358.5,
                608: 357.5, 624: 357.5, 640: 404.0, 656: 250.0, 672: 239.0, 688: 238.5}
    _check_sweep_choice(700, measured, "a kernel-switch band")
    for budget in (600, 650):
        _check_sweep_choice(budget, measured, f"budget {budget}")


@pytest.mark.rubric("scheduler")
@given(st.integers(16, 3000), st.lists(st.tuples(st.integers(1, 3200), st.integers(1, 4000)),
                                       min_size=1, max_size=40),
       st.sampled_from([16, 32, 64]))
def test_plan_chunk_on_random_sweeps(budget, pairs, step):
    """Any sweep: a measured multiple of 16 in 16..budget within 15% of the best per token;
    with no such chunk in it, still a multiple of 16 in 16..budget.

    Rules: Chunk contract; Measured sweep"""
    measured = {m: t / 4 for m, t in pairs}
    measured[max(16, budget // step * step // 16 * 16)] = 1000.0   # at least one chunk
    _check_sweep_choice(budget, measured, f"budget {budget}")


@pytest.mark.rubric("scheduler")
@pytest.mark.parametrize("measured", [{}, {8: 1.0, 24: 2.0}, {4096: 10.0, 1000: 5.0}],
                         ids=["empty", "no-multiple-of-16", "none-within-budget"])
def test_plan_chunk_sweep_without_a_chunk_falls_back(measured):
    """Rules: Chunk contract; Measured sweep"""
    for budget in (16, 100, 999):
        got = gw.plan_chunk(budget, 14336, 4096, 132, measured)
        assert type(got) is int and got % 16 == 0 and 16 <= got <= budget, (
            f"plan_chunk({budget}, ..., measured={measured}) holds no measured chunk within the "
            f"budget: it must still return a multiple of 16 in 16..{budget}; got {got!r}")


@pytest.mark.rubric("bad_input")
@pytest.mark.parametrize("bad,exc", [
    ([(512, 100.0)], TypeError), ("512:100", TypeError), ({True: 100.0}, TypeError),
    ({500.0: 100.0}, TypeError), ({"512": 100.0}, TypeError), ({0: 100.0}, ValueError),
    ({-16: 100.0}, ValueError), ({512: "100"}, TypeError), ({512: True}, TypeError),
    ({512: None}, TypeError), ({512: math.nan}, ValueError), ({512: math.inf}, ValueError),
    ({512: -1.0}, ValueError), ({512: 0.0}, ValueError), ({512: 0}, ValueError),
    ({4096: math.nan}, ValueError), ({4096: "x"}, TypeError), ({8: -2.5}, ValueError)],
    ids=lambda v: repr(v)[:24])
def test_plan_chunk_checks_the_sweep(bad, exc):
    """A bad entry anywhere in the sweep (also beside good ones, also outside the budget).

    Rules: Measured sweep; Type errors; Value errors; Messages name the argument"""
    for extra in ({}, {256: 50.0, 512: 90.0}):
        sweep = {**extra, **bad} if isinstance(bad, dict) else bad
        with pytest.raises(exc) as info:
            gw.plan_chunk(1000, 4096, 4096, 132, sweep)
        assert _names(str(info.value), "measured"), (
            f"plan_chunk(measured={sweep!r}) raised {exc.__name__}({str(info.value)!r}): the "
            "message must name the argument 'measured'")
