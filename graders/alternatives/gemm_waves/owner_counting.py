"""A second correct gemm_waves, written by the kata author in a different style.

Differs from solutions/gemm_waves.py: divmod instead of negated floor division; the
efficiency and waste through fractions.Fraction; stream-K split tiles found by comparing the
workers owning a tile's first and last iteration; the trimmed chunk by walking rows of
M-tiles down from the budget; validation through one table-driven checker.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any


def _up(a: int, b: int) -> int:
    q, r = divmod(a, b)
    return q + (1 if r else 0)


def _check(**kw: Any) -> None:
    for name, value in kw.items():
        if type(value) is not int:
            raise TypeError(f"{name}: expected int, got {value!r}")
        if value < 1:
            raise ValueError(f"{name}: must be at least 1, got {value!r}")


def _check_time(name: str, value: Any, allow_zero: bool = False) -> float:
    if type(value) not in (int, float):
        raise TypeError(f"{name}: expected a time in microseconds, got {value!r}")
    ok = math.isfinite(value) and (value >= 0 if allow_zero else value > 0)
    if not ok:
        raise ValueError(f"{name}: invalid time {value!r}")
    return float(value)


def _unpack_tile(tile: Any) -> tuple[int, int, int]:
    if not isinstance(tile, (tuple, list)) or len(tile) != 3:
        raise TypeError(f"tile: expected (tile_m, tile_n, tile_k), got {tile!r}")
    tm, tn, tk = tile
    _check(tile_m=tm, tile_n=tn, tile_k=tk)
    return tm, tn, tk


def _unpack_candidates(candidates: Any, what: str) -> list[tuple[int, int, float]]:
    if not isinstance(candidates, (tuple, list)):
        raise TypeError(f"candidates: expected a list, got {candidates!r}")
    if len(candidates) == 0:
        raise ValueError("candidates: empty")
    out = []
    for c in candidates:
        if not isinstance(c, (tuple, list)) or len(c) != 3:
            raise TypeError(f"candidates: expected (tile_m, tile_n, {what}), got {c!r}")
        _check(tile_m=c[0], tile_n=c[1])
        out.append((c[0], c[1], _check_time(what, c[2])))
    return out


def output_tiles(m: int, n: int, tile_m: int, tile_n: int) -> int:
    _check(m=m, n=n, tile_m=tile_m, tile_n=tile_n)
    return _up(m, tile_m) * _up(n, tile_n)


def wave_count(tiles: int, num_sms: int, ctas_per_sm: int = 1) -> int:
    _check(tiles=tiles, num_sms=num_sms, ctas_per_sm=ctas_per_sm)
    return _up(tiles, num_sms * ctas_per_sm)


def wave_efficiency(tiles: int, num_sms: int, ctas_per_sm: int = 1) -> float:
    w = wave_count(tiles, num_sms, ctas_per_sm)
    return float(Fraction(tiles, w * num_sms * ctas_per_sm))


def gemm_time_us(m: int, n: int, tile_m: int, tile_n: int, num_sms: int, t_wave_us: float,
                 ctas_per_sm: int = 1) -> float:
    tiles = output_tiles(m, n, tile_m, tile_n)
    w = wave_count(tiles, num_sms, ctas_per_sm)
    return w * _check_time("t_wave_us", t_wave_us)


def wave_waste_us(m: int, n: int, tile_m: int, tile_n: int, num_sms: int, t_wave_us: float,
                  ctas_per_sm: int = 1) -> float:
    tiles = output_tiles(m, n, tile_m, tile_n)
    slots = num_sms * ctas_per_sm
    w = wave_count(tiles, num_sms, ctas_per_sm)
    t = _check_time("t_wave_us", t_wave_us)
    return float((w - Fraction(tiles, slots)) * Fraction(t))


def best_tile_shape(m: int, n: int, num_sms: int, candidates: Sequence[tuple[int, int, float]],
                    ctas_per_sm: int = 1) -> tuple[int, int, float]:
    _check(m=m, n=n, num_sms=num_sms, ctas_per_sm=ctas_per_sm)
    scored = [(wave_count(output_tiles(m, n, a, b), num_sms, ctas_per_sm) * t, i, a, b)
              for i, (a, b, t) in enumerate(_unpack_candidates(candidates, "t_wave_us"))]
    t, _, a, b = min(scored)
    return a, b, t


def split_k_time_us(m: int, n: int, k: int, tile: tuple[int, int, int], t_iter_us: float,
                    num_sms: int, splits: int, t_partial_us: float, ctas_per_sm: int = 1) -> float:
    tm, tn, tk = _unpack_tile(tile)
    _check(k=k, splits=splits)
    iters = _up(k, tk)
    if splits > iters:
        raise ValueError(f"splits: {splits} is more than the {iters} K-iterations")
    t_iter = _check_time("t_iter_us", t_iter_us)
    t_partial = _check_time("t_partial_us", t_partial_us, allow_zero=True)
    units = output_tiles(m, n, tm, tn) * splits
    longest = _up(iters, splits)
    total = wave_count(units, num_sms, ctas_per_sm) * longest * t_iter
    if splits > 1:
        total += splits * t_partial
    return total


def best_split_k(m: int, n: int, k: int, tile: tuple[int, int, int], t_iter_us: float,
                 num_sms: int, max_splits: int, t_partial_us: float,
                 ctas_per_sm: int = 1) -> tuple[int, float]:
    _, _, tk = _unpack_tile(tile)
    _check(k=k, max_splits=max_splits)
    limit = min(max_splits, _up(k, tk))
    options = [(split_k_time_us(m, n, k, tile, t_iter_us, num_sms, s, t_partial_us, ctas_per_sm), s)
               for s in range(1, limit + 1)]
    t, s = min(options)
    return s, t


def stream_k(m: int, n: int, k: int, tile: tuple[int, int, int], t_iter_us: float,
             num_sms: int, t_fixup_us: float, ctas_per_sm: int = 1) -> tuple[int, int, float]:
    tm, tn, tk = _unpack_tile(tile)
    _check(k=k, num_sms=num_sms, ctas_per_sm=ctas_per_sm)
    t_iter = _check_time("t_iter_us", t_iter_us)
    t_fix = _check_time("t_fixup_us", t_fixup_us, allow_zero=True)
    tiles = output_tiles(m, n, tm, tn)
    iters = _up(k, tk)
    q = _up(tiles * iters, num_sms * ctas_per_sm)
    split = sum(1 for t in range(tiles) if (t * iters) // q != ((t + 1) * iters - 1) // q)
    return q, split, q * t_iter + (t_fix if split > 0 else 0.0)


def wave_trimmed_chunk(budget: int, n: int, tile_m: int, tile_n: int, num_sms: int,
                       ctas_per_sm: int = 1) -> int:
    _check(budget=budget, n=n, tile_m=tile_m, tile_n=tile_n, num_sms=num_sms,
           ctas_per_sm=ctas_per_sm)
    slots = num_sms * ctas_per_sm
    capacity = (output_tiles(budget, n, tile_m, tile_n) // slots) * slots
    per_row = _up(n, tile_n)
    rows = _up(budget, tile_m)
    while rows > 0 and rows * per_row > capacity:
        rows -= 1
    if rows == 0:
        return budget
    return min(budget, rows * tile_m)


def compare_fixes(m: int, n: int, k: int, num_sms: int, tile: tuple[int, int, int],
                  t_iter_us: float, candidates: Sequence[tuple[int, int, float]],
                  max_splits: int, t_partial_us: float, t_fixup_us: float,
                  ctas_per_sm: int = 1) -> dict[str, tuple[int, float]]:
    tm, tn, tk = _unpack_tile(tile)
    _check(k=k)
    t_iter = _check_time("t_iter_us", t_iter_us)
    iters = _up(k, tk)
    per_iter = _unpack_candidates(candidates, "t_iter_us")
    wave = iters * t_iter
    result: dict[str, tuple[int, float]] = {}
    result["baseline"] = (m, gemm_time_us(m, n, tm, tn, num_sms, wave, ctas_per_sm))
    shapes = [(tm, tn, wave)] + [(a, b, iters * t) for a, b, t in per_iter]
    result["tile_shape"] = (m, best_tile_shape(m, n, num_sms, shapes, ctas_per_sm)[2])
    result["split_k"] = (m, best_split_k(m, n, k, tile, t_iter, num_sms, max_splits,
                                         t_partial_us, ctas_per_sm)[1])
    result["stream_k"] = (m, stream_k(m, n, k, tile, t_iter, num_sms, t_fixup_us, ctas_per_sm)[2])
    c = wave_trimmed_chunk(m, n, tm, tn, num_sms, ctas_per_sm)
    result["scheduler"] = (c, gemm_time_us(c, n, tm, tn, num_sms, wave, ctas_per_sm))
    return result

def plan_chunk(budget: int, n: int, k: int, num_sms: int,
               measured: dict[int, float] | None = None) -> int:
    """Scan multiples of 16 for the least waves per token (256 x 128 tiles), larger on ties;
    with a sweep, the measured chunk of least time per token, compared exactly (Fraction)."""
    _check(budget=budget, n=n, k=k, num_sms=num_sms)
    if budget < 16:
        raise ValueError(f"budget: must be at least 16, got {budget!r}")
    if measured is not None:
        if type(measured) is not dict:
            raise TypeError(f"measured: expected a dict of token count -> us, got {measured!r}")
        sweep: dict[int, float] = {}
        for m, t in measured.items():
            _check(measured=m)
            sweep[m] = _check_time(f"measured[{m}]", t)
        timed = [m for m in range(budget - budget % 16, 15, -16) if m in sweep]
        if timed:
            return min(timed, key=lambda m: Fraction(sweep[m]) / m)
    def cost(m: int) -> Fraction:
        return Fraction(wave_count(output_tiles(m, n, 256, 128), num_sms), m)
    return min(range(16, budget + 1, 16), key=lambda m: (cost(m), -m))
