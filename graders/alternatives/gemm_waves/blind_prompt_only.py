"""gemm_waves, written blind: a helper session saw only the prompt and the stub (2026-12-01).

Its own structure: brute-force-free closed forms with explicit integer arithmetic, its own
input checks; it must score full marks like the reference.
The `measured` branch of plan_chunk was added by the kata author when the prompt gained
it (2026-12-04, issue 30); the rest is as written blind.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

__all__ = [
    "output_tiles", "wave_count", "wave_efficiency", "gemm_time_us", "wave_waste_us",
    "best_tile_shape", "split_k_time_us", "best_split_k", "stream_k",
    "wave_trimmed_chunk", "compare_fixes",
]


# --------------------------------------------------------------------------- checks

def _count(name: str, value) -> int:
    """An int >= 1 (bools and floats are not ints)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    value = int(value)
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return value


def _time(name: str, value, *, allow_zero: bool) -> float:
    """A finite real >= 0 (> 0 unless allow_zero)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return value


def _triple(name: str, value) -> tuple:
    if not isinstance(value, (tuple, list)) or len(value) != 3:
        raise TypeError(f"{name} must be a 3-tuple, got {value!r}")
    return tuple(value)


def _tile(tile) -> tuple[int, int, int]:
    tm, tn, tk = _triple("tile", tile)
    return _count("tile[0] (tile_m)", tm), _count("tile[1] (tile_n)", tn), _count("tile[2] (tile_k)", tk)


def _candidates(name: str, candidates, time_name: str) -> list[tuple[int, int, float]]:
    if isinstance(candidates, (str, bytes)) or not isinstance(candidates, Sequence):
        raise TypeError(f"{name} must be a sequence of 3-tuples, got {type(candidates).__name__}")
    if len(candidates) == 0:
        raise ValueError(f"{name} must not be empty")
    out = []
    for i, cand in enumerate(candidates):
        cm, cn, ct = _triple(f"{name}[{i}]", cand)
        out.append((_count(f"{name}[{i}] tile_m", cm), _count(f"{name}[{i}] tile_n", cn),
                    _time(f"{name}[{i}] {time_name}", ct, allow_zero=False)))
    return out


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _slots(num_sms, ctas_per_sm) -> int:
    return _count("num_sms", num_sms) * _count("ctas_per_sm", ctas_per_sm)


# --------------------------------------------------------------------------- core arithmetic

def _tiles(m: int, n: int, tile_m: int, tile_n: int) -> int:
    return _ceil(m, tile_m) * _ceil(n, tile_n)


def output_tiles(m: int, n: int, tile_m: int, tile_n: int) -> int:
    """Output tiles of an M x N result: ``ceil(m / tile_m) * ceil(n / tile_n)``."""
    return _tiles(_count("m", m), _count("n", n), _count("tile_m", tile_m), _count("tile_n", tile_n))


def wave_count(tiles: int, num_sms: int, ctas_per_sm: int = 1) -> int:
    """Waves needed to run ``tiles`` CTAs on ``slots`` at a time: ``ceil(tiles / slots)``."""
    tiles = _count("tiles", tiles)
    return _ceil(tiles, _slots(num_sms, ctas_per_sm))


def wave_efficiency(tiles: int, num_sms: int, ctas_per_sm: int = 1) -> float:
    """``tiles / (waves * slots)``: in (0, 1], exactly 1.0 iff tiles is a multiple of slots."""
    tiles = _count("tiles", tiles)
    slots = _slots(num_sms, ctas_per_sm)
    return tiles / (_ceil(tiles, slots) * slots)


def gemm_time_us(m: int, n: int, tile_m: int, tile_n: int, num_sms: int, t_wave_us: float,
                 ctas_per_sm: int = 1) -> float:
    """``waves * t_wave_us``: every wave costs the same, full or not."""
    tiles = output_tiles(m, n, tile_m, tile_n)
    slots = _slots(num_sms, ctas_per_sm)
    t_wave = _time("t_wave_us", t_wave_us, allow_zero=False)
    return _ceil(tiles, slots) * t_wave


def wave_waste_us(m: int, n: int, tile_m: int, tile_n: int, num_sms: int, t_wave_us: float,
                  ctas_per_sm: int = 1) -> float:
    """``(waves - tiles / slots) * t_wave_us``: the idle part of the last wave, in µs."""
    tiles = output_tiles(m, n, tile_m, tile_n)
    slots = _slots(num_sms, ctas_per_sm)
    t_wave = _time("t_wave_us", t_wave_us, allow_zero=False)
    idle_slots = _ceil(tiles, slots) * slots - tiles  # exact int; 0 on whole waves
    return idle_slots * t_wave / slots


# --------------------------------------------------------------------------- fixes

def best_tile_shape(m: int, n: int, num_sms: int, candidates: Sequence[tuple[int, int, float]],
                    ctas_per_sm: int = 1) -> tuple[int, int, float]:
    """The ``(tile_m, tile_n, t_wave_us)`` candidate with the least ``gemm_time_us``.

    Returns ``(tile_m, tile_n, time_us)``; on a tie, the candidate listed first.
    """
    m, n = _count("m", m), _count("n", n)
    slots = _slots(num_sms, ctas_per_sm)
    best = None
    for cm, cn, t_wave in _candidates("candidates", candidates, "t_wave_us"):
        t = _ceil(_tiles(m, n, cm, cn), slots) * t_wave
        if best is None or t < best[2]:  # strict: first listed wins ties
            best = (cm, cn, t)
    return best


def _split_k_time(tiles: int, k_iters: int, slots: int, s: int, t_iter: float,
                  t_partial: float) -> float:
    waves = _ceil(tiles * s, slots)
    reduction = s * t_partial if s > 1 else 0.0
    return waves * _ceil(k_iters, s) * t_iter + reduction


def split_k_time_us(m: int, n: int, k: int, tile: tuple[int, int, int], t_iter_us: float,
                    num_sms: int, splits: int, t_partial_us: float, ctas_per_sm: int = 1) -> float:
    """Split-K time: ``ceil(tiles*s/slots) * ceil(k_iters/s) * t_iter_us`` plus the reduction."""
    m, n, k = _count("m", m), _count("n", n), _count("k", k)
    tm, tn, tk = _tile(tile)
    t_iter = _time("t_iter_us", t_iter_us, allow_zero=False)
    slots = _slots(num_sms, ctas_per_sm)
    s = _count("splits", splits)
    t_partial = _time("t_partial_us", t_partial_us, allow_zero=True)
    k_iters = _ceil(k, tk)
    if s > k_iters:
        raise ValueError(f"splits must be <= k_iters = {k_iters}, got {s}")
    return _split_k_time(_tiles(m, n, tm, tn), k_iters, slots, s, t_iter, t_partial)


def best_split_k(m: int, n: int, k: int, tile: tuple[int, int, int], t_iter_us: float,
                 num_sms: int, max_splits: int, t_partial_us: float,
                 ctas_per_sm: int = 1) -> tuple[int, float]:
    """``(s, time_us)`` minimising ``split_k_time_us`` over ``s`` in 1 .. min(max_splits, k_iters)."""
    m, n, k = _count("m", m), _count("n", n), _count("k", k)
    tm, tn, tk = _tile(tile)
    t_iter = _time("t_iter_us", t_iter_us, allow_zero=False)
    slots = _slots(num_sms, ctas_per_sm)
    max_s = _count("max_splits", max_splits)
    t_partial = _time("t_partial_us", t_partial_us, allow_zero=True)
    tiles, k_iters = _tiles(m, n, tm, tn), _ceil(k, tk)
    best_s, best_t = 0, math.inf
    for s in range(1, min(max_s, k_iters) + 1):
        t = _split_k_time(tiles, k_iters, slots, s, t_iter, t_partial)
        if t < best_t:  # strict: smallest s wins ties
            best_s, best_t = s, t
    return best_s, best_t


def stream_k(m: int, n: int, k: int, tile: tuple[int, int, int], t_iter_us: float,
             num_sms: int, t_fixup_us: float, ctas_per_sm: int = 1) -> tuple[int, int, float]:
    """Stream-K: ``(q, split_tiles, time_us)``."""
    m, n, k = _count("m", m), _count("n", n), _count("k", k)
    tm, tn, tk = _tile(tile)
    t_iter = _time("t_iter_us", t_iter_us, allow_zero=False)
    slots = _slots(num_sms, ctas_per_sm)
    t_fixup = _time("t_fixup_us", t_fixup_us, allow_zero=True)
    tiles, k_iters = _tiles(m, n, tm, tn), _ceil(k, tk)
    q = _ceil(tiles * k_iters, slots)
    split = 0
    for t in range(tiles):
        start = t * k_iters
        next_boundary = (start // q + 1) * q  # first multiple of q strictly above start
        if next_boundary < start + k_iters:
            split += 1
    return q, split, q * t_iter + (t_fixup if split > 0 else 0.0)


def _trimmed(budget: int, n: int, tm: int, tn: int, slots: int) -> int:
    per_row = _ceil(n, tn)
    whole = (_tiles(budget, n, tm, tn) // slots) * slots  # tiles in the complete waves
    rows = whole // per_row
    if rows == 0:
        return budget
    return min(budget, rows * tm)


def wave_trimmed_chunk(budget: int, n: int, tile_m: int, tile_n: int, num_sms: int,
                       ctas_per_sm: int = 1) -> int:
    """The largest chunk ``c <= budget`` whose tiles fit in the budget's complete waves."""
    budget, n = _count("budget", budget), _count("n", n)
    tm, tn = _count("tile_m", tile_m), _count("tile_n", tile_n)
    return _trimmed(budget, n, tm, tn, _slots(num_sms, ctas_per_sm))


def compare_fixes(m: int, n: int, k: int, num_sms: int, tile: tuple[int, int, int],
                  t_iter_us: float, candidates: Sequence[tuple[int, int, float]],
                  max_splits: int, t_partial_us: float, t_fixup_us: float,
                  ctas_per_sm: int = 1) -> dict[str, tuple[int, float]]:
    """``{"baseline", "tile_shape", "split_k", "stream_k", "scheduler"} -> (tokens, time_us)``."""
    m, n, k = _count("m", m), _count("n", n), _count("k", k)
    num_sms, ctas_per_sm = _count("num_sms", num_sms), _count("ctas_per_sm", ctas_per_sm)
    tm, tn, tk = _tile(tile)
    t_iter = _time("t_iter_us", t_iter_us, allow_zero=False)
    cands = _candidates("candidates", candidates, "t_iter_us")
    max_s = _count("max_splits", max_splits)
    t_partial = _time("t_partial_us", t_partial_us, allow_zero=True)
    t_fixup = _time("t_fixup_us", t_fixup_us, allow_zero=True)

    k_iters = _ceil(k, tk)
    t_wave = k_iters * t_iter
    shapes = [(tm, tn, t_wave)] + [(cm, cn, k_iters * ct) for cm, cn, ct in cands]
    _, _, t_shape = best_tile_shape(m, n, num_sms, shapes, ctas_per_sm)
    _, t_split = best_split_k(m, n, k, (tm, tn, tk), t_iter, num_sms, max_s, t_partial, ctas_per_sm)
    _, _, t_stream = stream_k(m, n, k, (tm, tn, tk), t_iter, num_sms, t_fixup, ctas_per_sm)
    c = wave_trimmed_chunk(m, n, tm, tn, num_sms, ctas_per_sm)
    return {
        "baseline": (m, gemm_time_us(m, n, tm, tn, num_sms, t_wave, ctas_per_sm)),
        "tile_shape": (m, t_shape),
        "split_k": (m, t_split),
        "stream_k": (m, t_stream),
        "scheduler": (c, gemm_time_us(c, n, tm, tn, num_sms, t_wave, ctas_per_sm)),
    }

# plan_chunk was added to the API after the blind run; the lead wrote this one.
def plan_chunk(budget, n, k, num_sms, measured=None):
    """Trim the budget to whole waves of 128 x 128 tiles, rounded down to a multiple of 16;
    with a sweep, its least time per token among the measured chunks (the smaller on a tie)."""
    budget, n, k, num_sms = (_count(a, v) for a, v in
                             (("budget", budget), ("n", n), ("k", k), ("num_sms", num_sms)))
    if budget < 16:
        raise ValueError(f"budget must be >= 16, got {budget}")
    if measured is not None:
        if not isinstance(measured, dict):
            raise TypeError(f"measured must be a dict, got {type(measured).__name__}")
        sweep = {_count("measured token count", m): _time(f"measured time at {m!r}", t,
                                                          allow_zero=False)
                 for m, t in measured.items()}
        chunks = [m for m in sweep if m % 16 == 0 and m <= budget]
        if chunks:
            return min(chunks, key=lambda m: (sweep[m] / m, m))
    chunk = max(16, _trimmed(budget, n, 128, 128, num_sms) // 16 * 16)
    return min(chunk, budget // 16 * 16)
